"""Figure builders of the representation-learning page: plain data in, a Plotly figure out
(no st.*). Figures redrawn every live frame are plain dicts (ui/fastfig.py: the canvas paints
them)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, colorscale, f32, plain_figure
from ui.screen import block_means

# ten distinguishable colours (cluster / class index modulo 10); grey for noise or "none yet"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#393b79")
GREY = "#b0b0b0"


def _colours(labels: np.ndarray) -> list[str]:
    return [GREY if c < 0 else PALETTE[int(c) % len(PALETTE)] for c in np.asarray(labels)]


def shapes_figure(x: np.ndarray, panels: list[tuple[str, np.ndarray | None, str]],
                  height: int = 330) -> go.Figure:
    """One small scatter per method, side by side: panels = (name, labels (n,) or None when
    the method failed, subtitle). DBSCAN's noise (-1) is grey."""
    return scatter_panels([(name, x, labels, subtitle) for name, labels, subtitle in panels],
                          height, match_y=True)


def scatter_panels(panels: list[tuple[str, np.ndarray, np.ndarray | None, str]],
                   height: int = 330, match_y: bool = False) -> go.Figure:
    """Small scatters side by side: panels = (name, points (n, 2), colour labels (n,) or None
    for an empty panel, subtitle); label -1 is grey. match_y: one y axis for all panels (the
    same points), else each panel keeps its own axes."""
    m = len(panels)
    gap = 0.02
    width = (1 - gap * (m - 1)) / m
    traces, layout = [], {}
    annotations = []
    for i, (name, x, labels, subtitle) in enumerate(panels):
        ax = "" if i == 0 else str(i + 1)
        lo = i * (width + gap)
        layout[f"xaxis{ax}"] = dict(domain=[lo, lo + width], showticklabels=False,
                                    zeroline=False, showgrid=False)
        layout[f"yaxis{ax}"] = dict(showticklabels=False, zeroline=False, showgrid=False,
                                    anchor=f"x{ax}",
                                    **({"matches": "y"} if match_y and i else {}))
        if labels is not None:
            traces.append(dict(type="scattergl", x=f32(x[:, 0]), y=f32(x[:, 1]), mode="markers",
                               xaxis=f"x{ax}", yaxis=f"y{ax}", name=name, showlegend=False,
                               marker=dict(color=_colours(labels), size=4)))
        annotations.append(dict(text=f"<b>{name}</b><br>{subtitle}", x=lo + width / 2,
                                y=1.0, xref="paper", yref="paper", xanchor="center",
                                yanchor="bottom", showarrow=False))
    return plain_figure(traces, dict(height=height, annotations=annotations,
                                     margin=dict(l=10, r=10, t=120, b=10), **layout))


def _span(*arrays: np.ndarray, pad: float = 0.05) -> list[float]:
    """[lo, hi] of all finite values, widened by `pad` of the span (an explicit axis range:
    the live canvas and Plotly then draw the same axes)."""
    v = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in arrays])
    v = v[np.isfinite(v)]
    if not len(v):
        return [0.0, 1.0]
    lo, hi = float(v.min()), float(v.max())
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    return [lo - pad * width, hi + pad * width]


def codes_figure(points: np.ndarray, cluster: np.ndarray, centres: np.ndarray,
                 title: str) -> go.Figure:
    """The digits' codes in 2-D, coloured by their cluster, the centres as crosses."""
    return plain_figure(
        [dict(type="scattergl", x=f32(points[:, 0]), y=f32(points[:, 1]), mode="markers",
              name="digits", marker=dict(color=_colours(cluster), size=4, opacity=0.7)),
         dict(type="scatter", x=f32(centres[:, 0]), y=f32(centres[:, 1]), mode="markers",
              name="centres μ_j", marker=dict(color="black", size=12, symbol="x"))],
        dict(title=dict(text=title), height=400, legend=LEGEND_BELOW,
             xaxis=dict(title=dict(text="principal axis 1 of the code"),
                        range=_span(points[:, 0], centres[:, 0])),
             yaxis=dict(title=dict(text="axis 2"), range=_span(points[:, 1], centres[:, 1]))))


def accuracy_figure(steps: np.ndarray, accuracy: np.ndarray, kmeans_code: float,
                    kmeans_pixels: float) -> go.Figure:
    """DEC's cluster accuracy against the iteration, beside k-means on the code (its start)
    and on the raw pixels (horizontal lines)."""
    s, v = block_means(np.asarray(steps), np.asarray(accuracy, dtype=float))
    right = float(s[-1]) if len(s) else 1.0
    lines = [dict(type="scatter", x=[0, max(right, 1.0)], y=[value, value], mode="lines",
                  name=name, line=dict(dash=dash, color=colour))
             for name, value, dash, colour in (
                 ("k-means, code", kmeans_code, "dash", "#2ca02c"),
                 ("k-means, pixels", kmeans_pixels, "dot", "#ff7f0e"))]
    return plain_figure(
        [dict(type="scatter", x=s, y=f32(v), mode="lines+markers", name="DEC",
              line=dict(color="#1f77b4")), *lines],
        dict(title=dict(text="Cluster accuracy"), height=300,
             legend=LEGEND_BELOW,
             xaxis=dict(title=dict(text="iteration"), range=[0, max(right, 1.0)]),
             yaxis=dict(title=dict(text="accuracy"), tickformat=".0%",
                        range=_span(v, [kmeans_code, kmeans_pixels]))))


def pull_figure(q: np.ndarray, pull: np.ndarray, j: int) -> go.Figure:
    """The loss's pull of each code toward centre j against its soft assignment q_ij."""
    return plain_figure(
        [dict(type="scattergl", x=f32(q), y=f32(pull), mode="markers", name="digits",
              marker=dict(color=PALETTE[j % len(PALETTE)], size=4, opacity=0.6))],
        dict(title=dict(text=f"Pull toward μ_{j} vs q"), height=300,
             showlegend=False,
             xaxis=dict(title=dict(text=f"soft assignment q_i{j}"), range=_span(q, [0.0])),
             yaxis=dict(title=dict(text="−∂L/∂z_i along μ_j − z_i"), range=_span(pull))))


def members_figure(images: np.ndarray, title: str) -> go.Figure:
    """A (rows, cols, 8, 8) grid of digit images as one heatmap (white = 0, so the one-pixel
    gaps and a missing image are blank)."""
    r, c = images.shape[:2]
    grid = np.zeros((r * 9 - 1, c * 9 - 1), dtype=np.float32)
    for i in range(r):
        for k in range(c):
            grid[i * 9:i * 9 + 8, k * 9:k * 9 + 8] = images[i, k]
    return plain_figure(
        [dict(type="heatmap", z=f32(grid[::-1]), colorscale=colorscale("Greys"), showscale=False,
              zmin=0, zmax=1, hoverinfo="skip")],
        dict(title=dict(text=title), height=400,
             xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x")))


def few_labels_figure(per_class: tuple[int, ...], curves: Mapping[str, list[float]],
                      names: Mapping[str, str], marked: int) -> go.Figure:
    """Held-out accuracy against labelled digits per class (log axis), a curve per
    representation; a vertical line at the settings' number."""
    traces: list[dict[str, Any]] = [
        dict(type="scatter", x=list(per_class), y=f32(curves[key]), mode="lines+markers",
             name=names[key], line=dict(color=PALETTE[i])) for i, key in enumerate(curves)]
    return plain_figure(traces, dict(
        title=dict(text="Accuracy vs labels"), height=420,
        legend=LEGEND_BELOW, shapes=[dict(type="line", x0=marked, x1=marked, y0=0, y1=1,
                                          yref="paper", line=dict(color=GREY, dash="dot"))],
        xaxis=dict(title=dict(text="labelled digits per class"), type="log"),
        yaxis=dict(title=dict(text="accuracy"), tickformat=".0%")))


def spread_figure(x: np.ndarray, predicted: np.ndarray, confidence: np.ndarray,
                  labelled: np.ndarray, y: np.ndarray, title: str) -> go.Figure:
    """2-D points coloured by the label spread to them (grey: none yet, opacity: its
    weight), the labelled points as large diamonds in their class's colour."""
    hidden = ~labelled
    op = np.clip(0.25 + 0.75 * np.asarray(confidence)[hidden], 0, 1)
    return plain_figure(
        [dict(type="scattergl", x=f32(x[hidden, 0]), y=f32(x[hidden, 1]), mode="markers",
              name="unlabelled", marker=dict(color=_colours(predicted[hidden]), size=6,
                                             opacity=f32(op))),
         dict(type="scatter", x=f32(x[labelled, 0]), y=f32(x[labelled, 1]), mode="markers",
              name="labelled", marker=dict(color=_colours(y[labelled]), size=14,
                                           symbol="diamond", line=dict(color="black",
                                                                       width=1.5)))],
        dict(title=dict(text=title), height=420, legend=LEGEND_BELOW,
             xaxis=dict(title=dict(text="x₁")), yaxis=dict(title=dict(text="x₂"))))


def prototypes_figure(points: np.ndarray, nearest: np.ndarray, support: np.ndarray,
                      support_y: np.ndarray, protos: np.ndarray, classes: np.ndarray,
                      title: str) -> go.Figure:
    """Held-out codes coloured by their nearest prototype, the labelled support codes as
    small diamonds and the prototypes (their class means) as large stars, in their class's
    colour."""
    return plain_figure(
        [dict(type="scattergl", x=f32(points[:, 0]), y=f32(points[:, 1]), mode="markers",
              name="held-out", marker=dict(color=_colours(nearest), size=4, opacity=0.5)),
         dict(type="scatter", x=f32(support[:, 0]), y=f32(support[:, 1]), mode="markers",
              name="labelled", marker=dict(color=_colours(support_y), size=9,
                                           symbol="diamond", line=dict(color="black",
                                                                       width=1))),
         dict(type="scatter", x=f32(protos[:, 0]), y=f32(protos[:, 1]), mode="markers",
              name="prototypes", marker=dict(color=_colours(classes), size=18, symbol="star",
                                             line=dict(color="black", width=1.5)))],
        dict(title=dict(text=title), height=420, legend=LEGEND_BELOW,
             xaxis=dict(title=dict(text="principal axis 1 of the code")),
             yaxis=dict(title=dict(text="axis 2"))))


def similarity_figure(sim: np.ndarray, title: str) -> go.Figure:
    """The cosine similarities s_ik (2m, 2m) of m digits' two views (rows and columns: view 1
    of digits 1..m, then view 2); a digit's two views meet on the two off-centre diagonals."""
    m2 = len(sim)
    ticks = [f"{'ab'[i // (m2 // 2)]}{i % (m2 // 2) + 1}" for i in range(m2)]
    return plain_figure(
        [dict(type="heatmap", z=f32(sim), x=ticks, y=ticks, zmin=-1, zmax=1,
              colorscale=colorscale("RdBu"), reversescale=True, showscale=False,
              hovertemplate="s = %{z:.2f} (red +1, blue -1)<extra></extra>")],
        dict(title=dict(text=title), height=400,
             xaxis=dict(title=dict(text="view (a: first, b: second) and digit"),
                        range=[-0.5, m2 - 0.5]),
             yaxis=dict(range=[m2 - 0.5, -0.5])))


def contrastive_loss_figure(steps: np.ndarray, loss: np.ndarray) -> go.Figure:
    """The NT-Xent loss against the iteration (block means of the logged values)."""
    s, v = block_means(np.asarray(steps), np.asarray(loss, dtype=float))
    right = float(s[-1]) if len(s) else 1.0
    return plain_figure(
        [dict(type="scatter", x=s, y=f32(v), mode="lines", name="NT-Xent",
              line=dict(color="#d62728"))],
        dict(title=dict(text="NT-Xent loss"), height=300, showlegend=False,
             xaxis=dict(title=dict(text="iteration"), range=[0, max(right, 1.0)]),
             yaxis=dict(title=dict(text="loss"), range=_span(v))))


def probe_figure(steps: np.ndarray, accuracy: np.ndarray, code: float, pixels: float,
                 labels: int) -> go.Figure:
    """The linear probe's held-out accuracy on the SimCLR features against the iteration,
    beside the same probe on the autoencoder's code and on raw pixels (horizontal lines)."""
    s, v = np.asarray(steps, dtype=float), np.asarray(accuracy, dtype=float)
    right = max(float(s[-1]) if len(s) else 1.0, 1.0)
    lines = [dict(type="scatter", x=[0, right], y=[value, value], mode="lines", name=name,
                  line=dict(dash=dash, color=colour))
             for name, value, dash, colour in (("AE code", code, "dash", "#2ca02c"),
                                               ("raw pixels", pixels, "dot", "#ff7f0e"))]
    return plain_figure(
        [dict(type="scatter", x=f32(s), y=f32(v), mode="lines+markers",
              name="SimCLR features", line=dict(color="#1f77b4")), *lines],
        dict(title=dict(text=f"Linear probe, {labels} labels per class"), height=300,
             legend=LEGEND_BELOW, xaxis=dict(title=dict(text="iteration"), range=[0, right]),
             yaxis=dict(title=dict(text="held-out accuracy"), tickformat=".0%",
                        range=_span(v, [code, pixels]))))
