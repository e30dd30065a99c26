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
KNOCKED = [[0.0, "#bdbdbd"], [1.0, "#bdbdbd"]]
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


def _row_y(n: int, h: float) -> np.ndarray:
    """Centres (paper y) of n cells in a column, centred around 0.47."""
    step = h / 0.78
    return 0.47 + (np.arange(n)[::-1] - (n - 1) / 2) * step


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
    loss)."""
    cols = [inputs, *hidden]
    sizes = [len(c) for c in cols] + [1]
    n_cols = len(sizes)
    cx = _column_x(n_cols)
    w, h = _cell(n_cols, max(sizes))
    centres = [np.stack([np.full(n, cx[i]), _row_y(n, h)], 1) for i, n in enumerate(sizes)]
    traces: list[dict] = []
    layout: dict = dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                        # room for the input labels left of the first column (a narrower
                        # margin Plotly widens itself, the live canvas does not)
                        margin=dict(l=48, r=10, t=60, b=40),
                        xaxis=dict(BARE, domain=[0, NET_W], range=[0, NET_W]),
                        yaxis=dict(BARE, domain=[0, 1], range=[0, 1]))
    # edges, grouped by sign and width (one trace per group: few traces per frame)
    top = max((float(np.abs(W).max()) for W, _ in layers if W.size), default=1.0) or 1.0
    groups: dict[tuple[int, int], tuple[list, list]] = {}
    for li, (W, _) in enumerate(layers):
        src, dst = centres[li], centres[li + 1]
        for j in range(W.shape[0]):
            for i in range(W.shape[1]):
                mag = abs(float(W[j, i])) / top
                if not np.isfinite(mag):
                    continue
                key = (int(W[j, i] >= 0), min(int(mag * WIDTH_BINS), WIDTH_BINS - 1))
                xs, ys = groups.setdefault(key, ([], []))
                xs += [float(src[i, 0] + w / 2), float(dst[j, 0] - w / 2), None]
                ys += [float(src[i, 1]), float(dst[j, 1]), None]
    dense = sum(a * b for a, b in zip(sizes[:-1], sizes[1:])) > 100     # thinner lines
    for (sign, b), (xs, ys) in sorted(groups.items()):
        traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", hoverinfo="skip",
                           line=dict(color=POSITIVE if sign else NEGATIVE,
                                     width=(0.6 + 1.4 * b) * (0.5 if dense else 1.0)),
                           opacity=0.6 if dense else 0.75, xaxis="x", yaxis="y"))
    # one small heat map per neuron, each on its own pair of axes
    annotations = []
    axis = 2
    for ci, maps in enumerate(cols):
        for j, z in enumerate(maps):
            out = knocked and (ci - 1, j) in knocked
            zmax = float(np.nanmax(np.abs(z))) if z.size and np.isfinite(z).any() else 1.0
            if ci == 0:
                label = feature_names[j]
                hover = f"{label}: %{{z:.3g}}<extra></extra>"
            else:
                wi = layers[ci - 1][0][j]
                incoming = ", ".join(f"{v:+.2f}" for v in wi[:8])
                label = f"L{ci} n{j + 1}"
                hover = (f"layer {ci}, neuron {j + 1}" + (" (knocked out)" if out else "")
                         + f"<br>incoming w: {incoming}<br>output %{{z:.3g}}<extra></extra>")
            x0, y0 = centres[ci][j]
            traces.append(dict(type="heatmap", z=f32(np.nan_to_num(z)), showscale=False,
                               colorscale=KNOCKED if out else DIVERGING,
                               zmin=-(zmax or 1.0), zmax=zmax or 1.0, hovertemplate=hover,
                               xaxis=f"x{axis}", yaxis=f"y{axis}"))
            layout[f"xaxis{axis}"] = dict(BARE, domain=[float(x0 - w / 2), float(x0 + w / 2)],
                                          anchor=f"y{axis}")
            layout[f"yaxis{axis}"] = dict(BARE, domain=[float(y0 - h / 2), float(y0 + h / 2)],
                                          anchor=f"x{axis}")
            if ci == 0:
                annotations.append(dict(text=label, x=float(x0 - w / 2 - 0.005), y=float(y0),
                                        xref="paper", yref="paper", xanchor="right",
                                        showarrow=False, font=dict(size=11)))
            axis += 1
        head = "input" if ci == 0 else f"L{ci}: {len(maps)}"
        annotations.append(dict(text=head, x=float(cx[ci]), y=0.97, xref="paper",
                                yref="paper", xanchor="center", yanchor="bottom",
                                showarrow=False, font=dict(size=11)))
    # a clickable dot on each hidden neuron (points selection: knock it out or back in)
    dots = [(float(centres[ci][j][0]), float(centres[ci][j][1]), f"L{ci} n{j + 1}")
            for ci in range(1, len(cols)) for j in range(len(cols[ci]))]
    if dots:
        traces.append(dict(type="scatter", x=[d[0] for d in dots], y=[d[1] for d in dots],
                           customdata=[d[2] for d in dots], mode="markers", name="neurons",
                           marker=dict(size=12, color="rgba(40,40,40,0.05)",
                                       line=dict(color="rgba(40,40,40,0.35)", width=1)),
                           hovertemplate="%{customdata}: click to knock out or bring back"
                                         "<extra></extra>", xaxis="x", yaxis="y"))
    # the output neuron's small map, then the large output map with the data
    xo, yo = centres[-1][0]
    small = f32(np.where(output > 0.5, 1.0, 0.0) if discretize else output)
    traces.append(dict(type="heatmap", z=small[::4, ::4], showscale=False,
                       colorscale=DIVERGING, zmin=0, zmax=1,
                       hovertemplate="output P(class 1) %{z:.2f}<extra></extra>",
                       xaxis=f"x{axis}", yaxis=f"y{axis}"))
    layout[f"xaxis{axis}"] = dict(BARE, domain=[float(xo - w / 2), float(xo + w / 2)],
                                  anchor=f"y{axis}")
    layout[f"yaxis{axis}"] = dict(BARE, domain=[float(yo - h / 2), float(yo + h / 2)],
                                  anchor=f"x{axis}")
    annotations.append(dict(text="output", x=float(xo), y=0.97, xref="paper", yref="paper",
                            xanchor="center", yanchor="bottom", showarrow=False,
                            font=dict(size=11)))
    big = axis + 1
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
