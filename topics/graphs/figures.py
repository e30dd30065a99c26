"""Figure builders of the graphs page: plain data in, a Plotly figure out (no st.*). Figures
redrawn every live frame are plain dicts (ui/fastfig.py: the canvas paints them)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.screen import block_means
from ui.theme import COLORWAY

HEIGHT = 420
BARE = dict(showgrid=False, zeroline=False, showticklabels=False, title=dict(text=""))
EDGE = "#b0b0b0"
MESSAGE = "#ff7f0e"


def _edge_lines(positions: np.ndarray, edges: np.ndarray) -> tuple[list, list]:
    """x, y of every edge as one polyline broken by None."""
    xs, ys = [], []
    for i, j in edges:
        xs += [float(positions[i, 0]), float(positions[j, 0]), None]
        ys += [float(positions[i, 1]), float(positions[j, 1]), None]
    return xs, ys


def _range(values: np.ndarray, pad: float = 0.12) -> list[float]:
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    span = max(hi - lo, 1e-9)
    return [lo - pad * span, hi + pad * span]


def messages_figure(positions: np.ndarray, edges: np.ndarray, color: np.ndarray,
                    cmax: float, node: int, weights: np.ndarray, title: str) -> go.Figure:
    """The graph with each node coloured by `color` (n,) on [-cmax, cmax]; the edges into
    `node` drawn thick, and beside each neighbour j (and the node itself) its weight
    weights[j] = a_hat[node, j]."""
    xs, ys = _edge_lines(positions, edges)
    into = np.flatnonzero(weights > 0)
    mx, my = _edge_lines(positions, np.array([(node, j) for j in into if j != node],
                                             dtype=int).reshape(-1, 2))
    traces = [
        dict(type="scatter", x=xs, y=ys, mode="lines", line=dict(color=EDGE, width=1),
             hoverinfo="skip", name="edges"),
        dict(type="scatter", x=mx, y=my, mode="lines", line=dict(color=MESSAGE, width=4),
             hoverinfo="skip", name="messages into the node"),
        dict(type="scatter", x=f32(positions[:, 0]), y=f32(positions[:, 1]), mode="markers",
             name="nodes", text=[f"node {i}" for i in range(len(color))],
             marker=dict(color=f32(color), colorscale="RdBu", cmin=-cmax, cmax=cmax, size=13,
                         line=dict(color="#333333", width=1),
                         colorbar=dict(title=dict(text="z₁"), thickness=12))),
        dict(type="scatter", x=[float(positions[node, 0])], y=[float(positions[node, 1])],
             mode="markers", name=f"node {node}", hoverinfo="skip",
             marker=dict(size=22, color="rgba(0,0,0,0)", line=dict(color=MESSAGE, width=3))),
        dict(type="scatter", x=f32(positions[into, 0]), y=f32(positions[into, 1]),
             mode="text", text=[f"{weights[j]:.2f}" for j in into], textposition="top center",
             hoverinfo="skip", name="Â weights", textfont=dict(color="#7a3d00")),
    ]
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                                     xaxis=dict(BARE, range=_range(positions[:, 0])),
                                     yaxis=dict(BARE, range=_range(positions[:, 1]))))


def features_figure(z: np.ndarray, z0: np.ndarray, node: int, title: str) -> go.Figure:
    """The degree-rescaled 2-D features z (n, 2) as points, on the axes of layer 0's z0; the
    chosen node ringed."""
    traces = [dict(type="scatter", x=f32(z[:, 0]), y=f32(z[:, 1]), mode="markers",
                   name="nodes", text=[f"node {i}" for i in range(len(z))],
                   marker=dict(color=COLORWAY[0], size=9, opacity=0.8)),
              dict(type="scatter", x=[float(z[node, 0])], y=[float(z[node, 1])],
                   mode="markers", name=f"node {node}",
                   marker=dict(size=16, color="rgba(0,0,0,0)",
                               line=dict(color=MESSAGE, width=3)))]
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                                     xaxis=dict(title=dict(text="z₁"), range=_range(z0[:, 0])),
                                     yaxis=dict(title=dict(text="z₂"), range=_range(z0[:, 1]))))


def spread_figure(spread: np.ndarray, k: int) -> go.Figure:
    """The spread of the rescaled features over layer 0's, against the depth; k marked."""
    depth = np.arange(len(spread))
    traces = [dict(type="scatter", x=depth, y=f32(spread), mode="lines+markers",
                   name="spread", line=dict(color=COLORWAY[0])),
              dict(type="scatter", x=[int(k)], y=[float(spread[k])], mode="markers",
                   name=f"{k} layers", marker=dict(size=14, color=MESSAGE))]
    return plain_figure(traces, dict(
        title=dict(text="Over-smoothing: spread / spread at layer 0"), height=HEIGHT,
        showlegend=False, xaxis=dict(title=dict(text="layers k")),
        yaxis=dict(title=dict(text="relative spread"), range=[0, 1.05])))


def classes_figure(positions: np.ndarray, edges: np.ndarray, predicted: np.ndarray,
                   confidence: np.ndarray, labelled: np.ndarray, title: str) -> go.Figure:
    """The karate club coloured by the predicted faction, each node as opaque as the
    prediction is confident (0.5 -> faint); the labelled nodes as large diamonds."""
    xs, ys = _edge_lines(positions, edges)
    traces = [dict(type="scatter", x=xs, y=ys, mode="lines", line=dict(color=EDGE, width=1),
                   hoverinfo="skip", name="edges")]
    for c, name in ((0, "Mr. Hi's"), (1, "Officer's")):
        for mark, symbol, size in ((~labelled, "circle", 13), (labelled, "diamond", 18)):
            keep = (predicted == c) & mark
            alpha = 0.15 + 0.85 * (2 * np.clip(confidence[keep], 0.5, 1) - 1)
            traces.append(dict(
                type="scatter", x=f32(positions[keep, 0]), y=f32(positions[keep, 1]),
                mode="markers", name=f"{name}{' (labelled)' if symbol == 'diamond' else ''}",
                marker=dict(color=COLORWAY[c], size=size, symbol=symbol, opacity=f32(alpha),
                            line=dict(color="#222222", width=1))))
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, legend=LEGEND_BELOW,
                                     xaxis=dict(BARE, range=_range(positions[:, 0])),
                                     yaxis=dict(BARE, range=_range(positions[:, 1]))))


def loss_figure(steps: np.ndarray, losses: np.ndarray) -> go.Figure:
    """The training loss against the iteration (block means: no more points than the screen
    shows)."""
    s, v = block_means(np.asarray(steps), np.asarray(losses, dtype=float))
    return plain_figure([dict(type="scatter", x=s, y=f32(v), mode="lines", name="loss")],
                        dict(title=dict(text="Loss on the labelled nodes"),
                             height=HEIGHT, showlegend=False,
                             xaxis=dict(title=dict(text="iteration")),
                             yaxis=dict(title=dict(text="cross-entropy"))))


def equivariance_figure(out: np.ndarray, out_p: np.ndarray, title: str) -> go.Figure:
    """f(P X, P A Pᵀ) against P f(X, A), both output components: on the diagonal when the
    network is permutation-equivariant."""
    lo, hi = _range(np.concatenate([out.ravel(), out_p.ravel()]), 0.05)
    traces = [dict(type="scatter", x=[lo, hi], y=[lo, hi], mode="lines", name="y = x",
                   line=dict(color=EDGE, dash="dash"))]
    traces += [dict(type="scatter", x=f32(out[:, c]), y=f32(out_p[:, c]), mode="markers",
                    name=f"output {c + 1}", marker=dict(color=COLORWAY[c], size=9))
               for c in range(out.shape[1])]
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, legend=LEGEND_BELOW,
                                     xaxis=dict(title=dict(text="P f(X, A)"), range=[lo, hi]),
                                     yaxis=dict(title=dict(text="f(PX, PAPᵀ)"),
                                                range=[lo, hi])))


def adjacency_figure(adjacency: np.ndarray, title: str) -> go.Figure:
    """The adjacency matrix as a picture (rows top to bottom)."""
    return plain_figure([dict(type="heatmap", z=f32(adjacency), showscale=False,
                              colorscale=[[0, "#ffffff"], [1, "#1f2f4f"]])],
                        dict(title=dict(text=title), height=HEIGHT,
                             xaxis=dict(title=dict(text="node j"), constrain="domain"),
                             yaxis=dict(title=dict(text="node i"), autorange="reversed")))
