"""Figure builders of the network page: plain data in, a Plotly figure out (no st.*). The
network view is redrawn every live frame, so it is one plain dict figure (ui/fastfig.py):

    left  (paper x 0 .. NET_W)   the drawn network: a column of small heat maps per layer
                                 (inputs, hidden layers, output), edges as wide as |w|,
                                 blue for w > 0, orange for w < 0 (the playground's colours)
    right (paper x RIGHT .. 1)   the output's heat map with the points; the loss curves"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import f32, plain_figure
from ui.screen import block_means

HEIGHT = 540
NET_W = 0.62             # the network's share of the figure's width
RIGHT = 0.69             # where the output map and the loss curves start
POSITIVE, NEGATIVE = "#0877bd", "#f59322"
DIVERGING = [[0.0, NEGATIVE], [0.5, "#f7f7f7"], [1.0, POSITIVE]]
WIDTH_BINS = 5           # edges are drawn in this many widths per sign
BARE = dict(showgrid=False, zeroline=False, showticklabels=False, ticks="",
            title=dict(text=""), fixedrange=True)


def _column_x(n_cols: int) -> np.ndarray:
    """Centres (paper x) of the network's columns."""
    return np.linspace(0.07, NET_W - 0.05, n_cols)


def _cell(n_cols: int, max_rows: int) -> tuple[float, float]:
    """(width, height) of one neuron's map in paper units."""
    h = min(0.9 / max(max_rows, 1) * 0.78, 0.16)
    w = min((NET_W - 0.1) / max(n_cols - 1, 1) * 0.5, 0.09)
    return w, h


def gap_rows(res: int) -> int:
    """Rows of empty space between two stacked neuron maps of res rows (0.28 of a map)."""
    return max(1, round(res * 0.22 / 0.78))


def _row_y(n: int, h: float, res: int) -> np.ndarray:
    """Centres (paper y) of n cells in a column, centred around 0.47, a gap of
    gap_rows(res) / res cell heights between two cells."""
    step = h * (res + gap_rows(res)) / res
    return 0.47 + (np.arange(n)[::-1] - (n - 1) / 2) * step


def column_image(maps: np.ndarray, silenced: Sequence[int] = ()) -> np.ndarray:
    """One column of the drawn network as one picture (rows, res): the maps (n, res, res)
    stacked top (map 0) to bottom with gap_rows(res) NaN rows (transparent) between them,
    row 0 at the bottom as a heatmap draws it. Each map is divided by its own largest |value|
    (each neuron on its own colour scale, in [-1, 1]); a silenced map is SILENCED
    everywhere (grey in COLUMN_SCALE)."""
    n, res = maps.shape[0], maps.shape[-1]
    g = gap_rows(res)
    out = np.full((n * res + (n - 1) * g, res), np.nan, np.float32)     # (rows, res)
    finite = np.nan_to_num(np.asarray(maps, np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    top = np.abs(finite).reshape(n, -1).max(1) if finite.size else np.zeros(n)   # (n,)
    scaled = finite / np.where(top > 0, top, 1.0)[:, None, None]        # (n, res, res)
    for j in range(n):
        row = (n - 1 - j) * (res + g)
        out[row:row + res] = SILENCED if j in silenced else scaled[j]
    return out


SILENCED = 2.0           # the value of a knocked-out neuron's cells in column_image
# [-1, 1] diverging as DIVERGING, SILENCED grey
COLUMN_SCALE = [[0.0, NEGATIVE], [1 / 3, "#f7f7f7"], [2 / 3, POSITIVE], [0.67, "#bdbdbd"],
                [1.0, "#bdbdbd"]]


def _edge_traces(layers, centres, w: float, sizes: list[int]) -> list[dict]:
    """Every weight as a line from its source's right edge to its target's left edge, in
    one trace per (sign, width bin): WIDTH_BINS widths of |w| / max |w| per sign."""
    top = max((float(np.abs(W[np.isfinite(W)]).max(initial=0.0)) for W, _ in layers),
              default=1.0) or 1.0
    dense = sum(a * b for a, b in zip(sizes[:-1], sizes[1:])) > 100     # thinner lines
    xs_all, ys_all, keys_all = [], [], []
    for li, (W, _) in enumerate(layers):
        src, dst = centres[li], centres[li + 1]                        # (d_in, 2), (d_out, 2)
        jj, ii = np.meshgrid(np.arange(W.shape[0]), np.arange(W.shape[1]), indexing="ij")
        wv = np.asarray(W, np.float64).ravel()                          # (d_out * d_in,)
        ok = np.isfinite(wv)
        jj, ii, wv = jj.ravel()[ok], ii.ravel()[ok], wv[ok]
        bins = np.minimum((np.abs(wv) / top * WIDTH_BINS).astype(int), WIDTH_BINS - 1)
        keys_all.append((wv >= 0).astype(int) * WIDTH_BINS + bins)
        xs_all.append(np.stack([src[ii, 0] + w / 2, dst[jj, 0] - w / 2,
                                np.full(len(wv), np.nan)], 1))          # (e, 3)
        ys_all.append(np.stack([src[ii, 1], dst[jj, 1], np.full(len(wv), np.nan)], 1))
    keys = np.concatenate(keys_all)
    xs, ys = np.concatenate(xs_all), np.concatenate(ys_all)
    traces = []
    for key in np.unique(keys):
        sign, b = divmod(int(key), WIDTH_BINS)
        pick = keys == key
        traces.append(dict(type="scatter", x=f32(xs[pick].ravel()), y=f32(ys[pick].ravel()),
                           mode="lines", hoverinfo="skip",
                           line=dict(color=POSITIVE if sign else NEGATIVE,
                                     width=(0.6 + 1.4 * b) * (0.5 if dense else 1.0)),
                           opacity=0.6 if dense else 0.75, xaxis="x", yaxis="y"))
    return traces


def _column_trace(image: np.ndarray, x0: float, w: float, y_top: float, h: float, res: int,
                  colorscale, zmin: float, zmax: float) -> dict:
    """A heatmap on the network's axes (paper units) whose cells of h / res fill the column
    from y_top down, w wide around x0."""
    rows, cols = image.shape
    d = h / res
    xs = x0 - w / 2 + (np.arange(cols) + 0.5) * (w / cols)
    ys = y_top - rows * d + (np.arange(rows) + 0.5) * d
    return dict(type="heatmap", x=f32(xs), y=f32(ys), z=image, showscale=False,
                colorscale=colorscale, zmin=zmin, zmax=zmax, hoverinfo="skip",
                xaxis="x", yaxis="y")


def network_figure(inputs: np.ndarray, feature_names: Sequence[str], hidden: list[np.ndarray],
                   output: np.ndarray, out_xs: np.ndarray, out_ys: np.ndarray,
                   layers: Sequence[tuple[np.ndarray, np.ndarray]], knocked: set,
                   points: tuple[np.ndarray, np.ndarray], test_points: tuple | None,
                   curves: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                   title: str, discretize: bool = False) -> go.Figure:
    """The whole network view. inputs (k, r, r) and hidden [(d_l, r, r)] are every neuron's
    map [iy, ix]; output (R, R) is P(class 1) on the grid out_xs, out_ys; layers the (W, b)
    of each Linear (input first); knocked the (layer, unit) pairs drawn grey; points and
    test_points (x (n, 2), y (n,)); curves (train steps, train loss, test steps, test
    loss). Each column of neuron maps is one heatmap on the network's axes (column_image):
    a frame has a dozen traces and three pairs of axes whatever the network's size."""
    cols = [inputs, *hidden]
    res = inputs.shape[-1]
    sizes = [len(c) for c in cols] + [1]
    n_cols = len(sizes)
    cx = _column_x(n_cols)
    w, h = _cell(n_cols, max(sizes))
    centres = [np.stack([np.full(n, cx[i]), _row_y(n, h, res)], 1)
               for i, n in enumerate(sizes)]
    layout: dict = dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                        # room for the input labels left of the first column (a narrower
                        # margin Plotly widens itself, the live canvas does not)
                        margin=dict(l=48, r=10, t=60, b=40),
                        xaxis=dict(BARE, domain=[0, NET_W], range=[0, NET_W]),
                        yaxis=dict(BARE, domain=[0, 1], range=[0, 1]))
    traces = _edge_traces(layers, centres, w, sizes)
    annotations = []
    for ci, maps in enumerate(cols):
        silenced = [j for j in range(len(maps)) if knocked and (ci - 1, j) in knocked]
        top = float(centres[ci][0][1] + h / 2)
        traces.append(_column_trace(column_image(maps, silenced), float(cx[ci]), w, top, h,
                                    res, COLUMN_SCALE, -1.0, SILENCED))
        if ci == 0:
            for j, label in enumerate(feature_names):
                annotations.append(dict(text=label, x=float(cx[0] - w / 2 - 0.005),
                                        y=float(centres[0][j][1]), xref="paper",
                                        yref="paper", xanchor="right", showarrow=False,
                                        font=dict(size=11)))
        head = "input" if ci == 0 else f"L{ci}: {len(maps)}"
        annotations.append(dict(text=head, x=float(cx[ci]), y=0.97, xref="paper",
                                yref="paper", xanchor="center", yanchor="bottom",
                                showarrow=False, font=dict(size=11)))
    # a dot on each hidden neuron: its incoming weights on hover, a click (points selection)
    # knocks it out or brings it back
    dots = []
    for ci in range(1, len(cols)):
        for j in range(len(cols[ci])):
            label = f"L{ci} n{j + 1}"
            incoming = ", ".join(f"{v:+.2f}" for v in layers[ci - 1][0][j][:8])
            gone = " (knocked out)" if (ci - 1, j) in knocked else ""
            dots.append((float(centres[ci][j][0]), float(centres[ci][j][1]), label,
                         f"layer {ci}, neuron {j + 1}{gone}<br>incoming w: {incoming}<br>"
                         "click to knock out or bring back"))
    if dots:
        traces.append(dict(type="scatter", x=[d[0] for d in dots], y=[d[1] for d in dots],
                           customdata=[d[2] for d in dots], hovertext=[d[3] for d in dots],
                           mode="markers", name="neurons",
                           marker=dict(size=12, color="rgba(40,40,40,0.05)",
                                       line=dict(color="rgba(40,40,40,0.35)", width=1)),
                           hovertemplate="%{hovertext}<extra></extra>", xaxis="x",
                           yaxis="y"))
    # the output neuron's small map, then the large output map with the data
    xo, yo = centres[-1][0]
    small = f32(np.where(output > 0.5, 1.0, 0.0) if discretize else output)
    tiny = small[::4, ::4]
    traces.append(_column_trace(tiny, float(xo), w, float(yo + h / 2), h, tiny.shape[0],
                                DIVERGING, 0.0, 1.0))
    annotations.append(dict(text="output", x=float(xo), y=0.97, xref="paper", yref="paper",
                            xanchor="center", yanchor="bottom", showarrow=False,
                            font=dict(size=11)))
    big = 2
    traces.append(dict(type="heatmap", x=f32(out_xs), y=f32(out_ys), z=small,
                       showscale=False, colorscale=DIVERGING, zmin=0, zmax=1,
                       hovertemplate="x1 %{x:.2f}, x2 %{y:.2f}: P(class 1) %{z:.2f}"
                                     "<extra></extra>",
                       xaxis=f"x{big}", yaxis=f"y{big}"))
    for (px, py), edge, name in ((points, "#ffffff", "train"),
                                 *(((test_points, "#000000", "test"),) if test_points else ())):
        traces.append(dict(type="scatter", x=f32(px[:, 0]), y=f32(px[:, 1]), mode="markers",
                           name=name, hoverinfo="skip", xaxis=f"x{big}", yaxis=f"y{big}",
                           marker=dict(size=5, color=[POSITIVE if c > 0.5 else NEGATIVE
                                                      for c in py],
                                       line=dict(color=edge, width=1))))
    lo, hi = float(out_xs[0]), float(out_xs[-1])
    layout[f"xaxis{big}"] = dict(domain=[RIGHT, 1.0], range=[lo, hi], anchor=f"y{big}",
                                 showgrid=False, zeroline=False, fixedrange=True)
    layout[f"yaxis{big}"] = dict(domain=[0.42, 1.0], range=[lo, hi], anchor=f"x{big}",
                                 showgrid=False, zeroline=False, fixedrange=True)
    # the loss curves
    loss = big + 1
    ts, tv, es, ev = curves
    for (s, v), color, name in (((ts, tv), "#777777", "train loss"),
                                ((es, ev), NEGATIVE, "test loss")):
        s, v = block_means(np.asarray(s), np.asarray(v, dtype=float))
        traces.append(dict(type="scatter", x=s, y=f32(np.nan_to_num(v, posinf=0.0)),
                           mode="lines", name=name, line=dict(color=color, width=2),
                           xaxis=f"x{loss}", yaxis=f"y{loss}"))
    layout[f"xaxis{loss}"] = dict(domain=[RIGHT, 1.0], anchor=f"y{loss}",
                                  title=dict(text="iteration"))
    layout[f"yaxis{loss}"] = dict(domain=[0.0, 0.28], anchor=f"x{loss}", rangemode="tozero",
                                  title=dict(text="loss"))
    layout["annotations"] = annotations
    return plain_figure(traces, layout)


def data_figure(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
                box: Sequence[float], title: str) -> go.Figure:
    """The dataset: train points filled, test points ringed, blue class 1, orange class 0."""
    traces = []
    for px, py, name, symbol in ((x, y, "train", "circle"), (x_test, y_test, "test",
                                                             "circle-open")):
        for c, color in ((1, POSITIVE), (0, NEGATIVE)):
            keep = py == c
            traces.append(dict(type="scatter", x=f32(px[keep, 0]), y=f32(px[keep, 1]),
                               mode="markers", name=f"{name}, class {c}",
                               marker=dict(color=color, size=7, symbol=symbol)))
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT,
                                     xaxis=dict(title=dict(text="x₁"), range=[box[0], box[1]]),
                                     yaxis=dict(title=dict(text="x₂"), range=[box[2], box[3]],
                                                scaleanchor="x")))
