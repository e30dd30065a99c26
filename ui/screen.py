"""Screen resolution for figure data (pure numpy, no Streamlit: figure builders use it). See
ui/render.py's docstring for why: in the browser every Plotly marker is an SVG node, so a
figure should carry no more vertices and markers than the screen can show.

One thinner per kind of data, all here:
  path_points   a 2-D path (optimizer trajectories): drop points within min_step of the last
  screen_series a 1-D series whose spikes matter (a loss gap on a log axis): min and max per
                pixel column
  block_means   a noisy training curve (GAN losses, a live loss): the mean of each block
                (engine/series.py, re-exported: the GAN's worker bins its mode history too)
(live.handle.decimate_history strides a live view's history before it leaves a worker, and
engine.series.thin_older_half bounds what a trainer keeps.)"""
from __future__ import annotations

import numpy as np

from engine.series import MAX_CURVE_POINTS, block_means  # noqa: F401 - one home for thinners


def path_points(xy: np.ndarray, min_step: float) -> np.ndarray:
    """Indices of the points of a 2-D path (n, 2) to draw: the first, then each point at
    least `min_step` away from the last one kept, and the last. Points closer than that lie
    within min_step of a drawn vertex, i.e. within a few pixels when min_step is ~1% of the
    view: a converged tail of 900 iterates collapses to a handful of vertices."""
    xy = np.asarray(xy, dtype=np.float64)
    n = len(xy)
    if n <= 2 or not min_step > 0:
        return np.arange(n)
    keep, last = [0], xy[0]
    finite = np.isfinite(xy).all(1)
    for i in range(1, n - 1):
        if finite[i] and (xy[i, 0] - last[0]) ** 2 + (xy[i, 1] - last[1]) ** 2 >= min_step ** 2:
            keep.append(i)
            last = xy[i]
    keep.append(n - 1)
    return np.asarray(keep)


def screen_series(y: np.ndarray, width_px: int = 800) -> np.ndarray:
    """Indices of y (1-D) to draw on ~width_px pixel columns: every point when len(y) <=
    2 * width_px, else per bucket of consecutive points the index of its min and of its
    max (so an oscillation or a spike keeps its extent on screen), plus the last point."""
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    if n <= 2 * width_px:
        return np.arange(n)
    edges = np.linspace(0, n, width_px + 1).astype(int)
    keep = [n - 1]
    with np.errstate(invalid="ignore"):
        for a, b in zip(edges[:-1], edges[1:]):
            seg = y[a:b]
            if not len(seg) or not np.isfinite(seg).any():
                keep.append(a)
                continue
            keep += [a + int(np.nanargmin(seg)), a + int(np.nanargmax(seg))]
    return np.unique(keep)



# ----------------------------------------------------------------------- figure heights
# Every large figure is sized to the window (ui/viewport.py reports its height): what lies
# above a figure's top on the projector is the one-line header, the tab row and paddings
# (assets/classroom.css keeps them at about FIGURE_TOP_PX; a laptop's header, title over
# the page's sentence, is LAPTOP_HEADER_PX taller), and the figure's bottom edge keeps a
# small margin, so a whole figure is on the first screen at any window height. (Until the
# browser has reported where the figure starts, these estimate it.)
FIGURE_TOP_PX = 126
LAPTOP_HEADER_PX = 60
FIGURE_BOTTOM_PX = 12
LIVE_ROW_PX = 110           # a live view's Play row and status line (live/controls.py)
METRIC_ROW_PX = 104         # a row of st.metric under a figure, with the gap above it
MIN_PRESENT_PX = 300        # a figure smaller than this (a strip, a bar) keeps its own height


def present_height(viewport_height: int, above_px: int = 0) -> int:
    """Height (px) of a large figure in classroom mode: viewport_height - FIGURE_TOP_PX -
    above_px - FIGURE_BOTTOM_PX (above_px: controls over the figure in its column), never
    under MIN_PRESENT_PX."""
    return max(MIN_PRESENT_PX,
               int(viewport_height) - FIGURE_TOP_PX - int(above_px) - FIGURE_BOTTOM_PX)


def is_large(height: float | None) -> bool:
    """A figure the present layout resizes: its own height (Plotly's 450 when unset) is at
    least MIN_PRESENT_PX."""
    return (450 if height is None else float(height)) >= MIN_PRESENT_PX
