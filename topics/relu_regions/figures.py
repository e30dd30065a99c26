"""Figures of the ReLU-regions page: pure builders (engine results in, go.Figure out)."""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go

from engine.regions import BudgetRow, Edges, Partition, Pieces1D
from ui.fastfig import LEGEND_BELOW, colorscale, f32, plain_figure

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


_CMD = ("L%.4g,%.4g", "M%.4g,%.4g")


def svg_path(xs: np.ndarray, ys: np.ndarray, close: bool = False) -> str:
    """NaN-separated polylines as ONE SVG path string ("M x,y L x,y ... [Z]" per piece), for a
    layout shape. Plotly draws every NaN-separated piece of a scatter line as its own SVG
    element, so 1,000 edges were 1,000 elements restyled on every redraw (~25,000 DOM
    mutations per slider move); a path shape is one element however many pieces it has.
    Built with one %-format over a template (4 significant digits: 1/1000 of the box or
    finer, below a screen pixel), ~10x faster than formatting point by point."""
    x, y = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return ""
    prev = np.r_[False, ok[:-1]]
    nxt = np.r_[ok[1:], False]
    start = (ok & ~prev)[ok]
    end = (ok & ~nxt)[ok] if close else np.zeros(int(ok.sum()), bool)
    table = [c + z for z in ("", "Z") for c in _CMD]          # index: start + 2 * end
    template = "".join([table[k] for k in (start + 2 * end).tolist()])
    return template % tuple(np.column_stack([x[ok], y[ok]]).ravel().tolist())


def path_shape(path: str, **shape) -> dict:
    """A layout path shape in data coordinates, under the traces (clipped to the axes)."""
    return {"type": "path", "path": path, "xref": "x", "yref": "y", "layer": "below", **shape}


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


def pattern_strings(patterns: np.ndarray, widths: Sequence[int]) -> list[str]:
    """pattern_string of every row of `patterns` (n, units) at once: the digits and the
    " | " separators as one byte array, decoded once and cut into equal-length rows."""
    n, units = patterns.shape
    if n == 0:
        return []
    if units == 0 or sum(widths) != units:
        return [pattern_string(p, widths) for p in patterns]
    digits = patterns.astype(np.uint8) + ord("0")
    sep = np.frombuffer(b" | ", np.uint8)
    cuts = np.cumsum(widths)[:-1]
    pieces = []
    for i, chunk in enumerate(np.split(digits, cuts, axis=1)):
        if i:
            pieces.append(np.broadcast_to(sep, (n, 3)))
        pieces.append(chunk)
    rows = np.ascontiguousarray(np.hstack(pieces))
    text, w = rows.tobytes().decode("ascii"), rows.shape[1]
    return [text[i * w:(i + 1) * w] for i in range(n)]


def region_colors(part: Partition) -> np.ndarray:
    """A palette index per region, from its activation pattern (stable across redraws while
    the pattern exists)."""
    if part.patterns.shape[1] == 0:
        return np.zeros(part.count, int)
    weights = _colour_weights(part.patterns.shape[1])
    return (part.patterns.astype(np.int64) @ weights) % len(PALETTE)


@functools.lru_cache(maxsize=16)
def _colour_weights(units: int) -> np.ndarray:
    return np.random.default_rng(0).integers(1, 2**31, units)


TOP = 72                  # top margin of the two 2-D figures: a title and a subtitle
POINT_BINS = 9            # colour levels of the training points (RdBu, low blue -> high red)
POINT_HALF = 0.009        # half-side of a point's square, as a share of the box width


@functools.lru_cache(maxsize=1)
def _point_colours() -> tuple[str, ...]:
    return tuple(plotly.colors.sample_colorscale(plotly.colors.get_colorscale("RdBu_r"),
                                                 (np.arange(POINT_BINS) + 0.5) / POINT_BINS))


def point_shapes(points: np.ndarray, labels: np.ndarray, box, opacity: float = 0.6
                 ) -> list[dict]:
    """The training points as small filled squares, one path shape per colour level (the
    target quantised to POINT_BINS levels of RdBu): ~10 SVG elements instead of one marker
    element per point (400 markers were ~7,500 DOM mutations per redraw)."""
    pts = np.asarray(points, np.float64)
    y = np.asarray(labels, np.float64)
    lo, hi = float(np.min(y)), float(np.max(y))
    level = np.zeros(len(y), int) if hi <= lo else \
        np.minimum((POINT_BINS * (y - lo) / (hi - lo)).astype(int), POINT_BINS - 1)
    colours = _point_colours()
    r = POINT_HALF * (box[1] - box[0])
    shapes = []
    for k in np.unique(level):
        p = pts[level == k]
        x0, x1, y0, y1 = p[:, 0] - r, p[:, 0] + r, p[:, 1] - r, p[:, 1] + r
        template = "M%.4g,%.4gL%.4g,%.4gL%.4g,%.4gL%.4g,%.4gZ" * len(p)
        path = template % tuple(np.column_stack([x0, y0, x1, y0, x1, y1, x0, y1])
                                .ravel().tolist())
        shapes.append(path_shape(path, fillcolor=colours[k], opacity=opacity,
                                 line={"width": 0}, layer="above"))
    return shapes


def _sides(part: Partition) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of every side of every region polygon, (V, 2) each."""
    counts = np.diff(part.offsets)
    idx = np.arange(len(part.vertices))
    last = np.repeat(part.offsets[1:] - 1, counts)
    first = np.repeat(part.offsets[:-1], counts)
    return part.vertices, part.vertices[np.where(idx == last, first, idx + 1)]


def segments_path(start: np.ndarray, end: np.ndarray) -> str:
    """Segments as one SVG path ("M a L b" each), each drawn once: a side shared by two
    neighbouring regions (listed once from each side) or repeated is kept one time."""
    if len(start) == 0:
        return ""
    swap = (start[:, 0] > end[:, 0]) | ((start[:, 0] == end[:, 0]) & (start[:, 1] > end[:, 1]))
    seg = np.where(swap[:, None], np.hstack([end, start]), np.hstack([start, end]))
    seg = np.unique(np.round(seg, 9), axis=0)
    return ("M%.4g,%.4gL%.4g,%.4g" * len(seg)) % tuple(seg.ravel().tolist())


def _edge_shapes(part: Partition, edges: Edges | None) -> list[dict]:
    """Region edges: one path shape for all (dark), or one per hidden layer (coloured,
    in the legend), each edge once."""
    if edges is None:
        return [path_shape(segments_path(*_sides(part)), line={"color": EDGE, "width": 1},
                           name="edges")]
    shapes = []
    for layer in np.unique(edges.layer[edges.layer >= 0]):
        sel = edges.layer == layer
        shapes.append(path_shape(segments_path(edges.start[sel], edges.end[sel]),
                                 line={"color": LAYER_COLORS[layer % len(LAYER_COLORS)],
                                       "width": 1.5 if layer == 0 else 1.2},
                                 name=f"cut by layer {layer + 1}", showlegend=True))
    return shapes


def regions_figure(part: Partition, points: np.ndarray | None = None,
                   labels: np.ndarray | None = None, title: str | None = None,
                   max_hover: int = 4000, edges: Edges | None = None) -> go.Figure:
    """The input plane: every linear region filled in its own colour, edges drawn (coloured
    by the hidden layer that cut them when `edges` is given), the training points coloured
    by their target, and a hover marker at each region's centroid with its pattern, area and
    affine map. Built as plain dicts (ui.fastfig.plain_figure): redrawn every live frame."""
    colors = region_colors(part)
    shapes = []
    for ci in np.unique(colors):                      # one filled path shape per colour
        xs, ys = _polyline(part, np.flatnonzero(colors == ci))
        shapes.append(path_shape(svg_path(xs, ys, close=True), fillcolor=PALETTE[ci],
                                 line={"width": 0}))
    shapes += _edge_shapes(part, edges)
    if points is not None and len(points):
        shapes += point_shapes(points, labels, part.box)
    n = min(part.count, max_hover)
    # hover: the pattern as text, the numbers as one (n, 4) float32 typed array (area, w1,
    # w2, b) formatted by the browser: ~3x fewer bytes than a preformatted string per region
    numbers = np.column_stack([part.area[:n], part.out_w[:n, 0, 0], part.out_w[:n, 0, 1],
                               part.out_b[:n, 0]]).astype(np.float32)
    # drawn as an invisible line, not markers: Plotly hovers the nearest data point of a
    # lines trace (within 20 px) all the same, and one path replaces one SVG element per
    # region
    hover = {"type": "scatter", "x": part.centroid[:n, 0].astype(np.float32),
             "y": part.centroid[:n, 1].astype(np.float32), "mode": "lines",
             "line": {"width": 0, "color": "rgba(0,0,0,0)"},
             "text": pattern_strings(part.patterns[:n], part.widths),
             "customdata": numbers,
             "hovertemplate": "region %{pointNumber}<br>pattern %{text}<br>"
                              "area %{customdata[0]:.4g}<br>f = %{customdata[1]:+.3f}·x₁ "
                              "%{customdata[2]:+.3f}·x₂ %{customdata[3]:+.3f}<extra></extra>",
             "showlegend": False, "name": "regions"}
    xmin, xmax, ymin, ymax = part.box
    layout = {"title": {"text": title or f"{part.count} linear regions", "automargin": False},
              "hovermode": "closest",
              # x automargin on: the bottom margin grows to hold tick labels, axis title
              # and the layer legend under them (a fixed one let the legend cover the ticks)
              "xaxis": {"range": [xmin, xmax], "title": {"text": "x₁"}, "constrain": "domain"},
              "yaxis": {"range": [ymin, ymax], "title": {"text": "x₂"}, "scaleanchor": "x",
                        "scaleratio": 1, "constrain": "domain", "automargin": False},
              "height": 520, "margin": {"l": 50, "r": 10, "t": TOP, "b": 40},
              "shapes": shapes}
    if edges is not None:
        # below the x axis (the plot area is square and narrow: a legend beside it or at the
        # top would sit on the title), anchored as ui.theme would move it
        layout["legend"] = {"x": 0, "xanchor": "left", **LEGEND_BELOW}
    return plain_figure([hover], layout)


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
    """The output on a grid (float32: a screen needs no more) under the region outlines. The
    colour range is written under the title instead of a colour bar (the bar's ticks and
    gradient were ~1/5 of a slider move's DOM work); hover reads f at any point."""
    lo, hi = float(np.nanmin(f)), float(np.nanmax(f))
    heat = {"type": "heatmap", "x": f32(xs), "y": f32(ys), "z": f32(f),
            "colorscale": colorscale("Viridis"), "showscale": False,
            "hovertemplate": "x₁ %{x:.2f}, x₂ %{y:.2f}<br>f %{z:.3f}<extra></extra>"}
    outline = path_shape(segments_path(*_sides(part)), line={"color": "white", "width": 0.8},
                         layer="above")                 # over the heatmap
    layout = {"title": {"text": title, "automargin": False,
                        "subtitle": {"text": f"colour: f from {lo:.3g} (dark purple) to "
                                             f"{hi:.3g} (yellow)"}},
              "height": 520, "shapes": [outline], "margin": {"t": TOP},
              "xaxis": {"range": [float(xs[0]), float(xs[-1])], "title": {"text": "x₁"},
                        "constrain": "domain"},
              "yaxis": {"range": [float(ys[0]), float(ys[-1])], "title": {"text": "x₂"},
                        "scaleanchor": "x", "scaleratio": 1, "constrain": "domain",
                        "automargin": False}}
    return plain_figure([heat], layout)


def count_history_figure(steps: np.ndarray, counts: np.ndarray, loss_steps: np.ndarray,
                         losses: np.ndarray) -> go.Figure:
    """Exact region count (solid, left axis) and loss (dotted, log right axis) vs step."""
    every = max(1, len(loss_steps) // 600)          # no more points than the screen shows
    many = len(steps) > 60                          # markers only while they are few
    data = [{"type": "scatter", "x": f32(steps), "y": f32(counts),
             "mode": "lines" if many else "lines+markers", "name": "regions",
             "marker": {"size": 5}},
            {"type": "scatter", "x": f32(loss_steps[::every]), "y": f32(losses[::every]),
             "mode": "lines", "name": "loss", "yaxis": "y2", "line": {"dash": "dot"}}]
    layout = {"title": {"text": "Region count (solid, left) and loss (dotted, right)"},
              "height": 320, "showlegend": False,
              "xaxis": {"title": {"text": "step"}},
              "yaxis": {"title": {"text": "exact region count"}},
              # its own ticks: synced to the count's ticks (Plotly's default for an overlaying
              # axis) a log axis labels arbitrary positions by their leading digit only
              "yaxis2": {"title": {"text": "loss"}, "overlaying": "y", "side": "right",
                         "type": "log", "showgrid": False, "tickmode": "auto"}}
    return plain_figure(data, layout)


def _budget_top(rows: Sequence[BudgetRow]) -> float:
    """The largest count or bound drawn. The log axis starts at 1 region, so that each bar is
    tall enough to hold its mean under the seeds' dots."""
    return max(max(float(r.counts.max()), *map(float, r.bounds.values())) for r in rows)


def budget_figure(rows: Sequence[BudgetRow], total: int) -> go.Figure:
    """Exact counts (one dot per seed, mean as a bar) against the bounds, log scale (plain
    dicts, fastfig)."""
    names = [" × ".join([str(len(r.widths)), str(r.widths[0])]) for r in rows]
    means = [float(r.counts.mean()) for r in rows]
    data = [{"type": "bar", "x": names, "y": means,
             "name": "exact count (mean over seeds)", "marker": {"color": "#1f77b4"},
             "opacity": 0.8, "hovertemplate": "%{x}: mean %{y:.0f} regions<extra></extra>",
             "text": [f"{m:.0f}" for m in means], "textposition": "inside",
             "insidetextanchor": "start", "textangle": 0, "textfont": {"color": "white"}},
            {"type": "scatter", "x": [n for n, r in zip(names, rows) for _ in r.counts],
             "y": np.concatenate([r.counts for r in rows]).astype(np.float64),
             "mode": "markers", "name": "exact count, each seed",
             "marker": {"color": "#222", "size": 7}}]
    for bname, dash in zip(rows[0].bounds, ["dot", "dash", "solid"]):
        data.append({"type": "scatter", "x": names, "y": [r.bounds[bname] for r in rows],
                     "mode": "lines+markers", "name": bname, "line": {"dash": dash}})
    layout = {"title": {"text": f"{total} ReLUs as depth × width: regions in the box vs bounds",
                        "automargin": False},
              "xaxis": {"title": {"text": "depth × width"}},
              "yaxis": {"type": "log", "title": {"text": "regions"},
                        "range": [0.0, np.log10(_budget_top(rows)) + 0.3]},
              "height": 440, "legend": {"orientation": "h", "y": -0.25}}
    return plain_figure(data, layout)


def pieces_figure(pieces: Pieces1D, title: str, show_breaks: bool = True,
                  subtitle: str = "") -> go.Figure:
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
    fig.update_layout(title=dict(text=title, subtitle=dict(text=subtitle)), height=360,
                      xaxis_title="x", yaxis_title="f(x)",
                      showlegend=False)         # red dots: breakpoints (the page's caption)
    return fig


def slope_figure(pieces: Pieces1D, title: str) -> go.Figure:
    """The derivative df/dx of a 1-D ReLU net: constant on each piece, a step at each
    breakpoint."""
    slope = np.append(pieces.slope, pieces.slope[-1])
    fig = go.Figure(go.Scatter(x=pieces.edges, y=slope, mode="lines", line_shape="hv",
                               name="df/dx", line=dict(width=2)))
    fig.add_hline(y=0.0, line=dict(color="#888", width=1))
    fig.update_layout(title=title, height=360, xaxis_title="x", yaxis_title="df/dx",
                      showlegend=False)
    return fig
