"""Figures of the attention page's Real model tab: pure builders, arrays in -> go.Figure out
(no st.* calls). Axes are laid out by hand (make_subplots is slow) with fixed margins."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from topics.attention.figures import WEIGHT_SCALE

LINE_LEVELS = 8          # line opacities: one trace per level (plotly has one colour per trace)
MIN_LINE = 0.03          # weights below this are not drawn (they would only grey the picture)
HIGHLIGHT = "#d62728"
LINE_RGB = "31, 119, 180"


def figure_height(n_tokens: int) -> int:
    """Tall enough for the token labels, short enough for a projector's first screen."""
    return int(np.clip(110 + 17 * n_tokens, 340, 450))


def _head_lines(w: np.ndarray, focus: int | None) -> list[go.Scatter]:
    """Lines from each query (left, x = 0) to the keys (right, x = 1), opacity ∝ weight;
    with a focus token, only its row, in the highlight colour."""
    T = w.shape[0]
    rows = [focus] if focus is not None else range(T)
    thin = min(1.0, 16 / T)            # long texts: thinner lines, as their rows are closer
    traces = []
    for level in range(1, LINE_LEVELS + 1):
        lo, hi = (level - 1) / LINE_LEVELS, level / LINE_LEVELS
        xs, ys = [], []
        for i in rows:
            for j in np.nonzero((w[i] > max(lo, MIN_LINE)) & (w[i] <= hi))[0]:
                xs += [0.0, 1.0, None]
                ys += [-i, -int(j), None]
        if not xs:
            continue
        colour = (f"rgba(214, 39, 40, {0.25 + 0.75 * hi:.2f})" if focus is not None
                  else f"rgba({LINE_RGB}, {hi:.2f})")
        traces.append(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line=dict(color=colour, width=(1 + 3 * hi) * thin),
                                 name=f"weights ≤ {hi:.2f}", xaxis="x", yaxis="y"))
    return traces


def _token_column(tokens: Sequence[str], x: float, side: str, focus: int | None,
                  w_row: np.ndarray | None) -> go.Scatter:
    T = len(tokens)
    colours = ["#111111"] * T
    text = list(tokens)
    if focus is not None and side == "left":
        colours[focus] = HIGHLIGHT
    if w_row is not None:              # the focused row's weights beside the keys
        text = [f"{t} {w_row[j]:.2f}" if w_row[j] >= MIN_LINE else t
                for j, t in enumerate(tokens)]
    font = dict(color=colours)
    if T > 20:                         # long texts: labels as small as their rows
        font["size"] = max(7, int((figure_height(T) - 60) / T) - 2)
    return go.Scatter(
        x=[x] * T, y=[-i for i in range(T)], mode="text", text=text, showlegend=False,
        textposition="middle left" if side == "left" else "middle right",
        textfont=font, name="queries" if side == "left" else "keys",
        hovertemplate="%{text}<extra></extra>", xaxis="x", yaxis="y")


def head_view_figure(w: np.ndarray, tokens: Sequence[str], title: str,
                     focus: int | None = None) -> go.Figure:
    """Head view (left: the sentence twice, a line from each query token to each key it
    attends to) beside the same head's weight matrix (right). `w` is (T, T)."""
    w = np.asarray(w, dtype=float)
    T = len(tokens)
    data = _head_lines(w, focus)
    data.append(_token_column(tokens, -0.04, "left", focus, None))
    data.append(_token_column(tokens, 1.04, "right", focus, w[focus] if focus is not None
                              else None))
    lab = [f"{i}:{t}" for i, t in enumerate(tokens)]
    data.append(go.Heatmap(
        z=w, x=lab, y=lab, colorscale=WEIGHT_SCALE, zmin=0.0, zmax=1.0, name="weights",
        xaxis="x2", yaxis="y2", colorbar=dict(thickness=10, x=1.0, len=0.9),
        hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>"))
    layout = dict(
        height=figure_height(T), margin=dict(l=10, r=10, t=46, b=10),
        title=dict(text=title, automargin=False),
        xaxis=dict(domain=[0.0, 0.46], range=[-0.8, 2.1], visible=False, fixedrange=True),
        yaxis=dict(range=[-T + 0.5, 0.5], visible=False, fixedrange=True),
        xaxis2=dict(domain=[0.56, 0.95], anchor="y2", type="category", showticklabels=False,
                    showgrid=False, ticks=""),
        yaxis2=dict(domain=[0.0, 1.0], anchor="x2", type="category", autorange="reversed",
                    showticklabels=False, showgrid=False, ticks=""),
    )
    if focus is not None:              # the isolated token's row in the matrix too
        layout["shapes"] = [dict(type="rect", xref="x2 domain", yref="y2", x0=0, x1=1,
                                 y0=focus - 0.5, y1=focus + 0.5,
                                 line=dict(color=HIGHLIGHT, width=2))]
    return go.Figure(data=data, layout=layout)


def tiled(weights: np.ndarray) -> np.ndarray:
    """(L, H, T, T) -> one (L (T+1) - 1, H (T+1) - 1) matrix, blank (NaN) lines between
    the heads: the model view as ONE heatmap trace instead of L·H charts."""
    L, H, T, _ = weights.shape
    out = np.full((L * (T + 1) - 1, H * (T + 1) - 1), np.nan)
    for l in range(L):
        for h in range(H):
            out[l * (T + 1):l * (T + 1) + T, h * (T + 1):h * (T + 1) + T] = weights[l, h]
    return out


def model_view_figure(weights: np.ndarray, tokens: Sequence[str], sel: tuple[int, int],
                      title: str) -> go.Figure:
    """All layers × heads as small weight maps (left; the selected one framed, a click on
    a map picks it) beside the selected head enlarged (right)."""
    L, H, T, _ = weights.shape
    big, step = tiled(weights), T + 1
    centres = [(h * step + (T - 1) / 2, l * step + (T - 1) / 2, l + 1, h + 1)
               for l in range(L) for h in range(H)]
    lab = [f"{i}:{t}" for i, t in enumerate(tokens)]
    l0, h0 = sel
    data = [
        go.Heatmap(z=big, colorscale=WEIGHT_SCALE, zmin=0.0, zmax=1.0, showscale=False,
                   name="all heads", hoverinfo="skip", xaxis="x", yaxis="y"),
        go.Scatter(x=[c[0] for c in centres], y=[c[1] for c in centres], mode="markers",
                   marker=dict(size=14, color="rgba(0,0,0,0.01)", symbol="square"),
                   customdata=[[c[2], c[3]] for c in centres], name="heads", showlegend=False,
                   hovertemplate="layer %{customdata[0]} · head %{customdata[1]}"
                                 "<extra>click to enlarge</extra>", xaxis="x", yaxis="y"),
        go.Heatmap(z=weights[l0, h0], x=lab, y=lab, colorscale=WEIGHT_SCALE, zmin=0.0,
                   zmax=1.0, name="enlarged", xaxis="x2", yaxis="y2",
                   colorbar=dict(thickness=10, x=1.0, len=0.9),
                   hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>")]
    frame = dict(type="rect", xref="x", yref="y", x0=h0 * step - 0.5, x1=h0 * step + T - 0.5,
                 y0=l0 * step - 0.5, y1=l0 * step + T - 0.5, line=dict(color=HIGHLIGHT, width=3))
    layout = dict(
        height=figure_height(T), margin=dict(l=60, r=10, t=46, b=36),
        title=dict(text=title, automargin=False), shapes=[frame], dragmode=False,
        xaxis=dict(domain=[0.0, 0.64], showgrid=False, zeroline=False, fixedrange=True,
                   tickvals=[h * step + (T - 1) / 2 for h in range(H)],
                   ticktext=[str(h + 1) for h in range(H)], tickangle=0, automargin=False),
        yaxis=dict(showgrid=False, zeroline=False, autorange="reversed", fixedrange=True,
                   tickvals=[l * step + (T - 1) / 2 for l in range(L)],
                   ticktext=[f"L{l + 1}" for l in range(L)], automargin=False),
        xaxis2=dict(domain=[0.70, 0.95], anchor="y2", type="category", showticklabels=False,
                    showgrid=False, ticks=""),
        yaxis2=dict(domain=[0.1, 0.9], anchor="x2", type="category", autorange="reversed",
                    showticklabels=False, showgrid=False, ticks=""))
    return go.Figure(data=data, layout=layout)


def masking_figure(effects: np.ndarray, sel: tuple[int, int]) -> go.Figure:
    """1 − cos(embedding, embedding with head (l, h) masked) for every head."""
    L, H = effects.shape
    fig = go.Figure(go.Heatmap(
        z=effects, x=[f"H{h + 1}" for h in range(H)], y=[f"L{l + 1}" for l in range(L)],
        colorscale="Oranges", zmin=0.0, name="masking effect",
        text=[[f"{v:.3f}" for v in row] for row in effects], texttemplate="%{text}",
        hovertemplate="layer %{y} · head %{x}<br>1 − cos %{z:.4f}<extra></extra>",
        colorbar=dict(thickness=10)))
    fig.add_shape(type="rect", x0=sel[1] - 0.5, x1=sel[1] + 0.5, y0=sel[0] - 0.5,
                  y1=sel[0] + 0.5, line=dict(color=HIGHLIGHT, width=3))
    fig.update_layout(title="Masking one head: change of the sentence embedding (1 − cos)",
                      height=320, margin=dict(l=50, r=10, t=50, b=30))
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(showgrid=False, side="bottom")
    return fig
