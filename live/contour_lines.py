"""One contour level of a grid as line segments (marching squares), for the live canvas.

A playing frame with a Plotly `contour` trace could not be painted on the canvas, so that page
reran per frame (the generalization page's 0.5 decision boundary). A contour drawn as a single
line (one level, coloring "none") is just a polyline: live_canvas.to_spec replaces the trace
by a scatter line through these segments.

For cell (i, j) of z[i, j] (row i at y[i], column j at x[j]) the corners above `level` give
a case c = b0 + 2 b1 + 4 b2 + 8 b3 (b0 bottom-left z[i, j], b1 bottom-right z[i, j+1],
b2 top-right z[i+1, j+1], b3 top-left z[i+1, j]); SEGMENTS[c] lists which cell edges the
line joins (0 bottom, 1 right, 2 top, 3 left), the crossing on an edge linearly interpolated:
t = (level - z_a) / (z_b - z_a). The saddles (5, 10) take one of their two readings.
"""
from __future__ import annotations

import numpy as np

SEGMENTS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((3, 0),), 2: ((0, 1),), 3: ((3, 1),), 4: ((1, 2),), 5: ((3, 0), (1, 2)),
    6: ((0, 2),), 7: ((3, 2),), 8: ((2, 3),), 9: ((0, 2),), 10: ((0, 1), (2, 3)),
    11: ((1, 2),), 12: ((3, 1),), 13: ((0, 1),), 14: ((3, 0),)}


def _edge_points(x: np.ndarray, y: np.ndarray, z: np.ndarray, level: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The crossing point on each of the 4 edges of every cell: arrays (4, ny-1, nx-1)."""
    z00, z01, z11, z10 = z[:-1, :-1], z[:-1, 1:], z[1:, 1:], z[1:, :-1]
    x0, x1 = x[None, :-1], x[None, 1:]
    y0, y1 = y[:-1, None], y[1:, None]

    def t(a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.clip(np.where(b != a, (level - a) / (b - a), 0.5), 0.0, 1.0)
    shape = z00.shape
    px = np.stack([x0 + t(z00, z01) * (x1 - x0),          # bottom
                   np.broadcast_to(x1, shape),              # right
                   x0 + t(z10, z11) * (x1 - x0),           # top
                   np.broadcast_to(x0, shape)])             # left
    py = np.stack([np.broadcast_to(y0, shape),
                   y0 + t(z01, z11) * (y1 - y0),
                   np.broadcast_to(y1, shape),
                   y0 + t(z00, z10) * (y1 - y0)])
    return px, py


def level_segments(x, y, z, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The `level` line of z over the grid (x, y) as (xs, ys): segment after segment, each
    two points followed by NaN (a gap), float32."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    z = np.asarray(z, np.float64)
    if z.ndim != 2 or z.shape != (len(y), len(x)) or min(z.shape) < 2:
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    above = np.nan_to_num(z, nan=-np.inf) > level
    case = (above[:-1, :-1] * 1 + above[:-1, 1:] * 2 + above[1:, 1:] * 4
            + above[1:, :-1] * 8)
    px, py = _edge_points(x, y, z, level)
    xs, ys = [], []
    for c, pairs in SEGMENTS.items():
        cells = np.nonzero(case == c)
        if not len(cells[0]):
            continue
        for a, b in pairs:
            n = len(cells[0])
            seg_x = np.column_stack([px[a][cells], px[b][cells], np.full(n, np.nan)])
            seg_y = np.column_stack([py[a][cells], py[b][cells], np.full(n, np.nan)])
            xs.append(seg_x.ravel())
            ys.append(seg_y.ravel())
    if not xs:
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.float32)
