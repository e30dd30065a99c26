"""Figure builders of the graphs page: plain data in, a Plotly figure out (no st.*). Figures
redrawn every live frame are plain dicts (ui/fastfig.py: the canvas paints them)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.screen import block_means
from ui.theme import COLORWAY

HEIGHT = 420
BARE = dict(showgrid=False, zeroline=False, showticklabels=False, ticks="",
            title=dict(text=""))
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
    """The graph with each node coloured by `color` (n,) on [-cmax, cmax] (blue negative, red
    positive); the edges into `node` drawn thick, each as wide as its weight
    weights[j] = a_hat[node, j] (the largest 7 px)."""
    xs, ys = _edge_lines(positions, edges)
    into = [j for j in np.flatnonzero(weights > 0) if j != node]
    top = float(weights.max()) or 1.0
    messages = [dict(type="scatter", mode="lines", hoverinfo="skip", showlegend=False,
                     x=[float(positions[j, 0]), float(positions[node, 0])],
                     y=[float(positions[j, 1]), float(positions[node, 1])],
                     line=dict(color=MESSAGE, width=1.5 + 5.5 * float(weights[j]) / top),
                     name=f"Â[{node},{j}]") for j in into]
    traces = [
        dict(type="scatter", x=xs, y=ys, mode="lines", line=dict(color=EDGE, width=1),
             hoverinfo="skip", name="edges"),
        *messages,
        dict(type="scatter", x=f32(positions[:, 0]), y=f32(positions[:, 1]), mode="markers",
             name="nodes", text=[f"node {i}" for i in range(len(color))],
             marker=dict(color=f32(color), colorscale="RdBu", reversescale=True, cmin=-cmax,
                         cmax=cmax, size=13, line=dict(color="#333333", width=1))),
        dict(type="scatter", x=[float(positions[node, 0])], y=[float(positions[node, 1])],
             mode="markers", name=f"node {node}", hoverinfo="skip",
             marker=dict(size=22, color="rgba(0,0,0,0)", line=dict(color=MESSAGE, width=3))),
    ]
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                                     xaxis=dict(BARE, range=_range(positions[:, 0])),
                                     yaxis=dict(BARE, range=_range(positions[:, 1]))))


def weights_spread_figure(deg: np.ndarray, weights: np.ndarray, node: int,
                          spread: np.ndarray, k: int) -> go.Figure:
    """Two panels. Top: the weights a_hat[node, j] of the messages into `node` against the
    sender's deg_j (deg = 1 + neighbours), on the curve 1 / sqrt(deg_node deg_j). Bottom: the
    spread of the rescaled features over layer 0's against the depth, k marked."""
    into = np.flatnonzero(weights > 0)
    grid = np.linspace(1, max(float(deg.max()), 2.0), 60)
    depth = np.arange(len(spread))
    traces = [dict(type="scatter", x=f32(grid), y=f32(1 / np.sqrt(deg[node] * grid)),
                   mode="lines", name="1/√(deg_i deg_j)", line=dict(color=EDGE, dash="dash"),
                   xaxis="x", yaxis="y"),
              dict(type="scatter", x=f32(deg[into]), y=f32(weights[into]), mode="markers",
                   name="Â_ij", text=[f"j = {j}" for j in into], xaxis="x", yaxis="y",
                   marker=dict(color=MESSAGE, size=10, opacity=0.8)),
              dict(type="scatter", x=depth, y=f32(spread), mode="lines+markers",
                   name="spread", line=dict(color=COLORWAY[0]), xaxis="x2", yaxis="y2"),
              dict(type="scatter", x=[int(k)], y=[float(spread[k])], mode="markers",
                   name=f"{k} layers", marker=dict(size=14, color=MESSAGE),
                   xaxis="x2", yaxis="y2")]
    return plain_figure(traces, dict(
        title=dict(text="Weights Â_ij; spread"), height=HEIGHT, showlegend=False,
        xaxis=dict(anchor="y", domain=[0, 1], title=dict(text="deg_j")),
        yaxis=dict(anchor="x", domain=[0.62, 1], title=dict(text="Â_ij"), rangemode="tozero"),
        xaxis2=dict(anchor="y2", domain=[0, 1], title=dict(text="layers k")),
        yaxis2=dict(anchor="x2", domain=[0, 0.38], title=dict(text="spread"),
                    range=[0, 1.05])))


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


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[k:k + 2], 16) for k in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.3f})"


def classes_figure(positions: np.ndarray, edges: np.ndarray, predicted: np.ndarray,
                   confidence: np.ndarray, labelled: np.ndarray, labels: np.ndarray,
                   title: str) -> go.Figure:
    """The karate club: each unlabelled node coloured by its predicted faction (blue: Mr.
    Hi's, red: the Officer's), as opaque as the prediction is confident (0.5 -> faint); the
    labelled nodes as large solid diamonds in the colour of their given label."""
    xs, ys = _edge_lines(positions, edges)
    alpha = 0.2 + 0.8 * (2 * np.clip(confidence, 0.5, 1) - 1)                  # (n,)
    colors = [COLORWAY[int(y)] if known else _rgba(COLORWAY[int(c)], float(a))
              for c, a, y, known in zip(predicted, alpha, labels, labelled)]
    traces = [dict(type="scatter", x=xs, y=ys, mode="lines", line=dict(color=EDGE, width=1),
                   hoverinfo="skip", name="edges")]
    for keep, symbol, size, name in ((~labelled, "circle", 13, "unlabelled"),
                                     (labelled, "diamond", 19, "labelled")):
        idx = np.flatnonzero(keep)
        traces.append(dict(
            type="scatter", x=f32(positions[idx, 0]), y=f32(positions[idx, 1]),
            mode="markers", name=name, text=[f"node {i}" for i in idx],
            marker=dict(color=[colors[i] for i in idx], size=size, symbol=symbol,
                        line=dict(color="#222222", width=1))))
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, showlegend=False,
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


def _paths(xs: np.ndarray) -> tuple[list, list]:
    """x, y of every ball's path xs (T + 1, n, 2) as one polyline broken by None."""
    px, py = [], []
    for i in range(xs.shape[1]):
        px += [*f32(xs[:, i, 0]), None]
        py += [*f32(xs[:, i, 1]), None]
    return px, py


def rollout_figure(springs: np.ndarray, truth: np.ndarray, learned: np.ndarray,
                   title: str) -> go.Figure:
    """Two rollouts of the same spring system from the same start: the exact paths (grey,
    dashed) and the learned simulator's (blue), each ending in its balls and springs at the
    last step (exact: hollow grey circles; learned: filled). The axes follow the exact paths."""
    edges = np.stack(np.nonzero(np.triu(springs, 1)), 1)
    traces = []
    for xs, color, dash, name in ((truth, EDGE, "dash", "exact"),
                                  (learned, COLORWAY[0], "solid", "learned")):
        px, py = _paths(xs)
        ex, ey = _edge_lines(xs[-1], edges)
        traces += [dict(type="scatter", x=f32(px), y=f32(py), mode="lines",
                        name=f"{name} paths", hoverinfo="skip",
                        line=dict(color=color, width=1, dash=dash)),
                   dict(type="scatter", x=f32(ex), y=f32(ey), mode="lines",
                        name=f"{name} springs",
                        hoverinfo="skip", line=dict(color=color, width=2))]
    traces += [dict(type="scatter", x=f32(truth[-1, :, 0]), y=f32(truth[-1, :, 1]),
                    mode="markers", name="exact balls",
                    marker=dict(size=14, color="rgba(0,0,0,0)", line=dict(color="#555555",
                                                                          width=2))),
               dict(type="scatter", x=f32(learned[-1, :, 0]), y=f32(learned[-1, :, 1]),
                    mode="markers", name="learned balls",
                    marker=dict(size=10, color=COLORWAY[0]))]
    xr, yr = _range(truth[..., 0].ravel(), 0.2), _range(truth[..., 1].ravel(), 0.2)
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                                     xaxis=dict(BARE, range=xr),
                                     yaxis=dict(BARE, range=yr, scaleanchor="x")))


def rollout_error_figure(errors: dict[str, np.ndarray], title: str) -> go.Figure:
    """The mean distance between learned and exact balls against the step, one line per
    system (name -> (T + 1,) errors)."""
    traces = [dict(type="scatter", x=list(range(len(e))), y=f32(e), mode="lines", name=name,
                   line=dict(color=COLORWAY[k]))
              for k, (name, e) in enumerate(errors.items())]
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT,
                                     legend=LEGEND_BELOW,
                                     xaxis=dict(title=dict(text="step (dt = 0.02)")),
                                     yaxis=dict(title=dict(text="mean |learned − exact|"),
                                                rangemode="tozero")))


def sudoku_figure(grid: np.ndarray, digits: np.ndarray, confidence: np.ndarray,
                  solution: np.ndarray | None, title: str) -> go.Figure:
    """A 4x4 Sudoku: each cell the network's digit, its colour the network's confidence
    (white 0.25 to dark 1); given cells' digits in bold, a digit that differs from the
    solution marked with ✗. Thick lines around the 2x2 boxes."""
    text = []
    for i in range(16):
        d = str(int(digits[i]))
        if grid[i]:
            d = f"<b>{d}</b>"
        elif solution is not None and digits[i] != solution[i]:
            d = f"{d} ✗"
        text.append(d)
    z = np.asarray(confidence, dtype=float).reshape(4, 4)
    shapes = [dict(type="line", x0=x, x1=x, y0=-0.5, y1=3.5, line=dict(color="#222222", width=3))
              for x in (-0.5, 1.5, 3.5)]
    shapes += [dict(type="line", y0=y, y1=y, x0=-0.5, x1=3.5, line=dict(color="#222222", width=3))
               for y in (-0.5, 1.5, 3.5)]
    trace = dict(type="heatmap", z=[f32(row) for row in z], zmin=0.25, zmax=1,
                 colorscale="Blues", text=[text[4 * r:4 * r + 4] for r in range(4)],
                 texttemplate="%{text}", textfont=dict(size=22), xgap=2, ygap=2,
                 colorbar=dict(title=dict(text="confidence"), thickness=12),
                 hovertemplate="confidence %{z:.2f}<extra></extra>")
    return plain_figure([trace], dict(title=dict(text=title), height=HEIGHT, shapes=shapes,
                                      xaxis=dict(BARE, range=[-0.5, 3.5], constrain="domain"),
                                      yaxis=dict(BARE, range=[3.5, -0.5], scaleanchor="x")))


def iterations_figure(solved: np.ndarray, confidence: np.ndarray, t: int) -> go.Figure:
    """Against the iteration: the share of held-out puzzles solved, and the typed puzzle's
    mean confidence over its empty cells; iteration t marked."""
    its = list(range(1, len(solved) + 1))
    traces: list[dict] = [dict(type="scatter", x=its, y=f32(solved), mode="lines+markers",
                   name="held-out puzzles solved", line=dict(color=COLORWAY[0])),
              dict(type="scatter", x=its, y=f32(confidence), mode="lines+markers",
                   name="this puzzle: mean confidence", line=dict(color=COLORWAY[1])),
              dict(type="scatter", x=[int(t), int(t)], y=[0, 1], mode="lines",
                   name=f"iteration {t}", line=dict(color=EDGE, dash="dash"))]
    return plain_figure(traces, dict(title=dict(text="Iterations of message passing"),
                                     height=HEIGHT, legend=LEGEND_BELOW,
                                     xaxis=dict(title=dict(text="iteration")),
                                     yaxis=dict(range=[0, 1.02])))
