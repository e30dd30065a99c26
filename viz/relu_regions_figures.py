"""Figures of the ReLU-regions page: pure builders (engine results in, go.Figure out)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from engine.regions import BudgetRow, Edges, Partition, Pieces1D

# pastel fills: neighbouring regions get different colours often enough; edges are drawn
PALETTE = ["#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
           "#dbdb8d", "#9edae5", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#bcbddc",
           "#e5d8bd", "#b3de69"]
EDGE = "#333333"
LAYER_COLORS = ["#111111", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"]


def _closed_index(offsets: np.ndarray, regions: np.ndarray | None = None) -> np.ndarray:
    """Indices into the flat vertex array that trace every chosen region's polygon, closed
    (first vertex repeated), with -1 as a separator after each: one polyline for all."""
    starts, counts = offsets[:-1], np.diff(offsets)
    if regions is not None:
        starts, counts = starts[regions], counts[regions]
    if len(counts) == 0:
        return np.zeros(0, int)
    seg = counts + 2
    group_start = np.repeat(np.cumsum(seg) - seg, seg)
    within = np.arange(seg.sum()) - group_start
    n_rep, s_rep = np.repeat(counts, seg), np.repeat(starts, seg)
    return np.where(within < n_rep, s_rep + within, np.where(within == n_rep, s_rep, -1))


def _polyline(part: Partition, regions: np.ndarray | None = None,
              values: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """x, y (and values at the vertices, if given) of the closed, NaN-separated outlines."""
    idx = _closed_index(part.offsets, regions)
    gap = idx < 0
    out = [np.where(gap, np.nan, part.vertices[idx, 0]),
           np.where(gap, np.nan, part.vertices[idx, 1])]
    if values is not None:
        out.append(np.where(gap, np.nan, values[idx]))
    return tuple(out)


def svg_path(xs: np.ndarray, ys: np.ndarray, close: bool = False) -> str:
    """NaN-separated polylines as ONE SVG path string ("M x,y L x,y ... [Z]" per piece), for a
    layout shape. Plotly draws every NaN-separated piece of a scatter line as its own SVG
    element, so 1,000 edges were 1,000 elements restyled on every redraw (~25,000 DOM
    mutations per slider move); a path shape is one element however many pieces it has."""
    x, y = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    parts, start = [], True
    for xi, yi, good in zip(x.tolist(), y.tolist(), ok.tolist()):
        if not good:
            if not start and close:
                parts.append("Z")
            start = True
            continue
        parts.append(f"{'M' if start else 'L'}{xi:.5g},{yi:.5g}")
        start = False
    if close and not start:
        parts.append("Z")
    return "".join(parts)


def _add_path(fig: go.Figure, xs, ys, close: bool = False, **shape) -> None:
    if np.isfinite(np.asarray(xs, np.float64)).any():
        fig.add_shape(type="path", path=svg_path(xs, ys, close), xref="x", yref="y",
                      layer="below", **shape)


def _nan_joined(part: Partition) -> tuple[np.ndarray, np.ndarray]:
    return _polyline(part)


def vertex_outputs(part: Partition) -> np.ndarray:
    """f at every flat vertex, from its region's affine map (V,)."""
    region_of = np.repeat(np.arange(part.count), np.diff(part.offsets))
    return (np.einsum("vd,vd->v", part.vertices, part.out_w[region_of, 0])
            + part.out_b[region_of, 0])


def pattern_string(pattern: np.ndarray, widths: Sequence[int]) -> str:
    """On/off pattern as 1/0 digits, one group per layer: '1010 | 0111'."""
    bits = "".join("1" if b else "0" for b in pattern)
    groups, i = [], 0
    for w in widths:
        groups.append(bits[i:i + w])
        i += w
    return " | ".join(groups) if groups else bits


def affine_string(w: np.ndarray, b: float) -> str:
    return f"f = {w[0]:+.3f}·x₁ {w[1]:+.3f}·x₂ {b:+.3f}"


def region_colors(part: Partition) -> np.ndarray:
    """A palette index per region, from its activation pattern (stable across redraws while
    the pattern exists)."""
    if part.patterns.shape[1] == 0:
        return np.zeros(part.count, int)
    weights = np.random.default_rng(0).integers(1, 2**31, part.patterns.shape[1])
    return (part.patterns.astype(np.int64) @ weights) % len(PALETTE)


def _segments(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments as one NaN-separated polyline: x0, x1, nan, x0, x1, nan, ..."""
    nan = np.full(len(start), np.nan)
    return (np.stack([start[:, 0], end[:, 0], nan], 1).ravel(),
            np.stack([start[:, 1], end[:, 1], nan], 1).ravel())


def regions_figure(part: Partition, points: np.ndarray | None = None,
                   labels: np.ndarray | None = None, title: str | None = None,
                   max_hover: int = 4000, edges: Edges | None = None) -> go.Figure:
    """The input plane: every linear region filled in its own colour, edges drawn (coloured
    by the hidden layer that cut them when `edges` is given), and a hover marker at each
    region's centroid with its pattern, area and affine map."""
    fig = go.Figure()
    colors = region_colors(part)
    for ci in np.unique(colors):                      # one filled path shape per colour
        xs, ys = _polyline(part, np.flatnonzero(colors == ci))
        _add_path(fig, xs, ys, close=True, fillcolor=PALETTE[ci], line=dict(width=0))
    if edges is None:
        ex, ey = _nan_joined(part)
        _add_path(fig, ex, ey, line=dict(color=EDGE, width=1), name="edges")
    else:
        for layer in np.unique(edges.layer[edges.layer >= 0]):
            sel = edges.layer == layer
            ex, ey = _segments(edges.start[sel], edges.end[sel])
            _add_path(fig, ex, ey, line=dict(color=LAYER_COLORS[layer % len(LAYER_COLORS)],
                                             width=1.5 if layer == 0 else 1.2),
                      name=f"cut by layer {layer + 1}", showlegend=True)
        # below the x axis (the plot area is square and narrow: a legend beside it or at the
        # top would sit on the title)
        fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=-0.22,
                                      yanchor="top"))
    if points is not None and len(points):
        fig.add_trace(go.Scatter(x=points[:, 0].astype(np.float32),
                                 y=points[:, 1].astype(np.float32), mode="markers",
                                 marker=dict(size=4, color=np.asarray(labels, np.float32),
                                             colorscale="RdBu",
                                             line=dict(width=0), opacity=0.6),
                                 hoverinfo="skip", showlegend=False, name="data"))
    n = min(part.count, max_hover)
    # hover: the pattern as text, the numbers as one (n, 4) float32 typed array (area, w1,
    # w2, b) formatted by the browser: ~3x fewer bytes than a preformatted string per region
    numbers = np.column_stack([part.area[:n], part.out_w[:n, 0, 0], part.out_w[:n, 0, 1],
                               part.out_b[:n, 0]]).astype(np.float32)
    fig.add_trace(go.Scatter(x=part.centroid[:n, 0].astype(np.float32),
                             y=part.centroid[:n, 1].astype(np.float32), mode="markers",
                             marker=dict(size=5, color="rgba(0,0,0,0.25)"),
                             text=[pattern_string(p, part.widths) for p in part.patterns[:n]],
                             customdata=numbers,
                             hovertemplate="region %{pointNumber}<br>pattern %{text}<br>"
                                           "area %{customdata[0]:.4g}<br>f = "
                                           "%{customdata[1]:+.3f}·x₁ %{customdata[2]:+.3f}·x₂ "
                                           "%{customdata[3]:+.3f}<extra></extra>",
                             showlegend=False, name="regions"))
    xmin, xmax, ymin, ymax = part.box
    fig.update_layout(title=title or f"{part.count} linear regions",
                      xaxis=dict(range=[xmin, xmax], title="x₁", constrain="domain"),
                      yaxis=dict(range=[ymin, ymax], title="x₂", scaleanchor="x", scaleratio=1,
                                 constrain="domain"),
                      height=520, margin=dict(l=50, r=10, t=50, b=40))
    return fig


def surface_figure(part: Partition,
                   title: str = "Network output: one plane per region") -> go.Figure:
    """The output f(x) as an exact piecewise-planar 3-D surface: each region's polygon is
    fan-triangulated and lifted by its own affine map z = w·v + b."""
    colors = region_colors(part)
    z = vertex_outputs(part)
    starts, counts = part.offsets[:-1], np.diff(part.offsets)
    ntri = counts - 2                                   # fan triangulation of each polygon
    first = np.repeat(starts, ntri)
    k = np.arange(ntri.sum()) - np.repeat(np.cumsum(ntri) - ntri, ntri) + 1
    face_colors = np.asarray(PALETTE)[np.repeat(colors, ntri)]
    fig = go.Figure(go.Mesh3d(x=part.vertices[:, 0], y=part.vertices[:, 1], z=z,
                              i=first, j=first + k, k=first + k + 1, facecolor=face_colors,
                              flatshading=True, hoverinfo="skip",
                              lighting=dict(ambient=0.7, diffuse=0.5)))
    ex, ey, ez = _polyline(part, values=z)
    fig.add_trace(go.Scatter3d(x=ex, y=ey, z=ez, mode="lines", line=dict(color=EDGE, width=2),
                               hoverinfo="skip", showlegend=False))
    fig.update_layout(title=title, height=520, margin=dict(l=0, r=0, t=50, b=0),
                      scene=dict(xaxis_title="x₁", yaxis_title="x₂", zaxis_title="f(x)",
                                 aspectmode="manual", aspectratio=dict(x=1, y=1, z=0.6)))
    return fig


def heatmap_figure(xs: np.ndarray, ys: np.ndarray, f: np.ndarray, part: Partition,
                   title: str = "Output f(x) and region edges") -> go.Figure:
    """The output on a grid (float32: a screen needs no more) under the region outlines."""
    fig = go.Figure(go.Heatmap(x=xs, y=ys, z=np.asarray(f, np.float32), colorscale="Viridis",
                               colorbar=dict(title="f(x)"),
                               hovertemplate="x₁ %{x:.2f}, x₂ %{y:.2f}<br>f %{z:.3f}"
                                             "<extra></extra>"))
    ex, ey = _nan_joined(part)
    _add_path(fig, ex, ey, line=dict(color="white", width=0.8))
    fig.layout.shapes[-1].layer = "above"             # over the heatmap
    fig.update_layout(title=title, height=520,
                      xaxis=dict(range=[xs[0], xs[-1]], title="x₁", constrain="domain"),
                      yaxis=dict(range=[ys[0], ys[-1]], title="x₂", scaleanchor="x", scaleratio=1,
                                 constrain="domain"))
    return fig


def count_history_figure(steps: np.ndarray, counts: np.ndarray, loss_steps: np.ndarray,
                         losses: np.ndarray) -> go.Figure:
    fig = go.Figure()
    every = max(1, len(loss_steps) // 600)          # no more points than the screen shows
    fig.add_trace(go.Scatter(x=steps, y=counts, mode="lines+markers", name="regions",
                             marker=dict(size=5)))
    fig.add_trace(go.Scatter(x=loss_steps[::every], y=losses[::every], mode="lines",
                             name="loss", yaxis="y2", line=dict(dash="dot")))
    fig.update_layout(title="Region count (solid, left) and loss (dotted, right)", height=320,
                      xaxis_title="step", yaxis_title="exact region count", showlegend=False,
                      yaxis2=dict(title="loss", overlaying="y", side="right", type="log",
                                  showgrid=False))
    return fig


def budget_figure(rows: Sequence[BudgetRow], total: int) -> go.Figure:
    """Exact counts (one dot per seed, mean as a bar) against the bounds, log scale."""
    names = [" × ".join([str(len(r.widths)), str(r.widths[0])]) for r in rows]
    fig = go.Figure()
    means = [float(r.counts.mean()) for r in rows]
    fig.add_trace(go.Bar(x=names, y=means, name="exact count (mean over seeds)",
                         marker_color="#1f77b4", opacity=0.8,
                         hovertemplate="%{x}: mean %{y:.0f} regions<extra></extra>"))
    fig.add_trace(go.Scatter(x=[n for n, r in zip(names, rows) for _ in r.counts],
                             y=np.concatenate([r.counts for r in rows]), mode="markers",
                             name="exact count, each seed", marker=dict(color="#222", size=7)))
    dashes = ["dot", "dash", "solid"]
    for (bname, dash) in zip(rows[0].bounds, dashes):
        fig.add_trace(go.Scatter(x=names, y=[r.bounds[bname] for r in rows], mode="lines+markers",
                                 name=bname, line=dict(dash=dash)))
    fig.update_layout(title=f"{total} ReLUs as depth × width: regions in the box vs bounds",
                      xaxis_title="depth × width", yaxis=dict(type="log", title="regions"),
                      height=440, legend=dict(orientation="h", y=-0.25))
    return fig


def pieces_figure(pieces: Pieces1D, title: str, show_breaks: bool = True) -> go.Figure:
    """A 1-D ReLU net: exact piecewise-linear graph through its breakpoints."""
    x = pieces.edges
    y_left = pieces.slope * x[:-1] + pieces.intercept
    y_end = pieces.slope[-1] * x[-1] + pieces.intercept[-1]
    y = np.append(y_left, y_end)
    fig = go.Figure(go.Scatter(x=x, y=y, mode="lines", name="f(x)", line=dict(width=2.5)))
    kinks = pieces.kinks()
    if show_breaks and len(kinks):
        ky = np.interp(kinks, x, y)
        fig.add_trace(go.Scatter(x=kinks, y=ky, mode="markers", name="breakpoints (slope changes)",
                                 marker=dict(size=7, color="#d62728")))
    fig.update_layout(title=title, height=360, xaxis_title="x", yaxis_title="f(x)",
                      showlegend=False)         # red dots: breakpoints (the page's caption)
    return fig
