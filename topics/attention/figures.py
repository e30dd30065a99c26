"""Figures of the attention page: pure builders, data in -> go.Figure out (no st.* calls)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

WEIGHT_SCALE = "Blues"
SIGNED_SCALE = "RdBu_r"


def _every(n: int, most: int) -> int:
    """Label every k-th of n categories so at most `most` labels share an axis (projector
    tick labels are 19 px: 16 tokens on a 150 px axis printed over one another)."""
    return max(1, -(-n // most))


def _fmt(value: float) -> str:
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "∞"
    return f"{value:.2f}"


def matrix_heatmap(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str],
                   title: str, *, weights: bool = False, show_values: bool = True,
                   row_title: str = "query", col_title: str = "key") -> go.Figure:
    """Annotated heatmap. weights=True: colour range [0, 1] (attention weights); else a
    diverging scale centred at 0. -inf entries (masked logits) are drawn blank and
    labelled "−∞"."""
    m = np.asarray(matrix, dtype=float)
    z = np.where(np.isfinite(m), m, np.nan)
    text = [[_fmt(v) for v in row] for row in m] if show_values else None
    cols = [f"{i}:{c}" for i, c in enumerate(col_labels)]
    rows = [f"{i}:{r}" for i, r in enumerate(row_labels)]
    if weights:
        color = dict(colorscale=WEIGHT_SCALE, zmin=0.0, zmax=1.0)
    else:
        lim = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
        color = dict(colorscale=SIGNED_SCALE, zmid=0.0, zmin=-lim, zmax=lim)
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, text=text, texttemplate="%{text}" if show_values else None,
        hovertemplate=f"{row_title} %{{y}}<br>{col_title} %{{x}}<br>value %{{z:.3f}}<extra></extra>",
        colorbar=dict(thickness=12), **color))
    fig.update_layout(title=title, height=max(260, 40 * len(rows) + 120),
                      margin=dict(l=70, r=10, t=50, b=60))
    fig.update_yaxes(autorange="reversed", title=row_title, type="category", showgrid=False,
                     dtick=_every(len(rows), 10))
    fig.update_xaxes(title=col_title, type="category", side="bottom", showgrid=False,
                     dtick=_every(len(cols), 10), tickangle=-90 if len(cols) > 4 else None)
    return fig


def _heat_trace(matrix: np.ndarray, rows: list[str], cols: list[str], *, weights: bool,
                show_values: bool, name: str, axes: tuple[str, str],
                row_title: str = "query", col_title: str = "key") -> go.Heatmap:
    m = np.asarray(matrix, dtype=float)
    z = np.where(np.isfinite(m), m, np.nan)
    if weights:
        color = dict(colorscale=WEIGHT_SCALE, zmin=0.0, zmax=1.0)
    else:
        lim = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
        color = dict(colorscale=SIGNED_SCALE, zmid=0.0, zmin=-lim, zmax=lim)
    return go.Heatmap(
        z=z, x=cols, y=rows, name=name, xaxis=axes[0], yaxis=axes[1], showscale=False,
        text=[[_fmt(v) for v in row] for row in m] if show_values else None,
        texttemplate="%{text}" if show_values else None,
        hovertemplate=f"{name}<br>{row_title} %{{y}}<br>{col_title} %{{x}}<br>"
                      f"value %{{z:.3f}}<extra></extra>", **color)


def mechanics_figure(scores: np.ndarray, logits: np.ndarray, weights: np.ndarray,
                     out: np.ndarray, tokens: Sequence[str], titles: Sequence[str],
                     show_out_values: bool = True) -> go.Figure:
    """The four steps of one head in ONE figure (2 × 2 panels: scores, scaled scores,
    softmax weights, output), each cell labelled with its value. One chart instead of four:
    a slider move redraws one Plotly graph (the browser's cost is mostly per chart). Traces
    are named "scores", "logits", "weights", "out"; axes are laid out by hand (make_subplots
    is slow) with fixed margins (no automargin passes)."""
    labels = [f"{i}:{t}" for i, t in enumerate(tokens)]
    dims = [f"d{i}" for i in range(np.asarray(out).shape[1])]
    n = len(labels)
    cell = [(0.0, 0.43), (0.57, 1.0)]                   # x domains; y: top row first
    # the gap between the rows holds the top row's tick labels and the bottom row's titles
    rows = [(0.59, 1.0), (0.0, 0.41)]
    panels = [("scores", scores, labels, False, True), ("logits", logits, labels, False, True),
              ("weights", weights, labels, True, True), ("out", out, dims, False,
                                                         show_out_values)]
    data, layout, notes = [], {}, []
    for i, (name, matrix, cols, is_w, values) in enumerate(panels):
        ax = "" if i == 0 else str(i + 1)
        (x0, x1), (y0, y1) = cell[i % 2], rows[i // 2]
        data.append(_heat_trace(matrix, labels, cols, weights=is_w, show_values=values,
                                name=name, axes=(f"x{ax}", f"y{ax}"),
                                col_title="output dimension" if name == "out" else "key"))
        # no axis titles (rows are queries, columns keys: the caption and hover say so), so
        # a classroom-size tick label never meets one with the margins fixed
        layout[f"xaxis{ax}"] = dict(domain=[x0, x1], anchor=f"y{ax}", type="category",
                                    showgrid=False, dtick=_every(len(cols), 12),
                                    automargin=False,
                                    tickangle=-90 if len(cols) > 8 else 0)
        layout[f"yaxis{ax}"] = dict(domain=[y0, y1], anchor=f"x{ax}", type="category",
                                    autorange="reversed", showgrid=False, dtick=1,
                                    automargin=False)
        notes.append(dict(text=f"<b>{titles[i]}</b>", x=x0, xref="paper", xanchor="left",
                          y=y1 + 0.01, yref="paper", yanchor="bottom", showarrow=False))
    height = max(520, 2 * (34 * n + 90) + 60)
    return go.Figure(data=data, layout=dict(
        height=height, margin=dict(l=90, r=10, t=40, b=60), annotations=notes,
        **layout))


def entropy_figure(dims: Sequence[int], scaled: np.ndarray, unscaled: np.ndarray,
                   max_entropy: float, current_dk: int | None = None) -> go.Figure:
    """Mean softmax entropy of attention rows vs d_k, with and without 1/sqrt(d_k)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(dims), y=scaled, mode="lines+markers",
                             name="scaled: q·k / √d_k"))
    fig.add_trace(go.Scatter(x=list(dims), y=unscaled, mode="lines+markers",
                             name="unscaled: q·k"))
    fig.add_hline(y=max_entropy, line_dash="dot", line_color="#7f7f7f",
                  annotation_text="uniform (log n)", annotation_position="top left")
    if current_dk is not None:
        fig.add_vline(x=current_dk, line_dash="dash", line_color="#2ca02c",
                      annotation_text=f"d_k = {current_dk}")
    fig.update_layout(title="Why scale: softmax entropy vs d_k", height=360,
                      legend=dict(x=0.02, y=0.05))
    fig.update_xaxes(type="log", title="d_k (key/query dimension)",
                     range=[np.log10(min(dims)) - 0.1, np.log10(max(dims)) + 0.1])
    fig.update_yaxes(title="mean row entropy (nats)", rangemode="tozero")
    return fig


def encoding_heatmap(pe: np.ndarray) -> go.Figure:
    """PE[pos, dim] as a heatmap (positions down, dimensions across)."""
    fig = go.Figure(go.Heatmap(z=pe, colorscale=SIGNED_SCALE, zmid=0, zmin=-1, zmax=1,
                               hovertemplate="position %{y}<br>dimension %{x}<br>"
                                             "PE %{z:.3f}<extra></extra>",
                               colorbar=dict(thickness=12)))
    fig.update_layout(title="Sinusoidal encoding PE[position, dimension]", height=380)
    fig.update_yaxes(autorange="reversed", title="position", showgrid=False)
    fig.update_xaxes(title="dimension (even: sin, odd: cos)")
    return fig


def similarity_figure(sim: np.ndarray, offsets: np.ndarray, by_offset: np.ndarray) -> go.Figure:
    """Left: PE·PE^T between positions; right: the same as a function of the offset p - q."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45],
                        subplot_titles=("PE[p] · PE[q]", "depends only on the offset p − q"))
    fig.add_trace(go.Heatmap(z=sim, colorscale="Viridis", showscale=False,
                             hovertemplate="p %{y}<br>q %{x}<br>PE[p]·PE[q] %{z:.2f}"
                                           "<extra></extra>"), 1, 1)
    fig.add_trace(go.Scatter(x=offsets, y=by_offset, mode="lines+markers",
                             name="PE[p]·PE[p+Δ]", showlegend=False), 1, 2)
    fig.update_yaxes(autorange="reversed", title="position p", row=1, col=1)
    fig.update_xaxes(title="position q", row=1, col=1)
    fig.update_xaxes(title="offset Δ = q − p", row=1, col=2)
    fig.update_yaxes(title="dot product", row=1, col=2)
    fig.update_layout(height=380)
    return fig


def attention_grid(maps: np.ndarray, labels: Sequence[str], answer_start: int | None = None,
                   selected: tuple[int, int] | None = None) -> go.Figure:
    """Grid of attention heatmaps, rows = layers, columns = heads; maps (L, H, T, T).
    Axes carry the tokens; a dashed line marks where the answer starts (queries below it
    produce answer tokens); the selected head gets a title marker."""
    n_layers, n_heads, t, _ = maps.shape
    ticks = [f"{i}:{c}" for i, c in enumerate(labels)]
    titles = [f"{'▶ ' if selected == (l, h) else ''}layer {l + 1} · head {h + 1}"
              for l in range(n_layers) for h in range(n_heads)]
    fig = make_subplots(rows=n_layers, cols=n_heads, subplot_titles=titles,
                        horizontal_spacing=0.06, vertical_spacing=0.12 / max(1, n_layers - 1)
                        if n_layers > 1 else 0.1)
    for l in range(n_layers):
        for h in range(n_heads):
            fig.add_trace(go.Heatmap(
                z=maps[l, h], x=ticks, y=ticks, colorscale=WEIGHT_SCALE, zmin=0, zmax=1,
                showscale=(l == 0 and h == n_heads - 1), colorbar=dict(thickness=10),
                hovertemplate=f"layer {l + 1} head {h + 1}<br>query %{{y}}<br>key %{{x}}"
                              "<br>weight %{z:.3f}<extra></extra>"), l + 1, h + 1)
            # tokens on the outer axes only, every k-th: the enlarged head beside the grid
            # has them all; inner labels fell on the next panel's title
            fig.update_yaxes(autorange="reversed", type="category", row=l + 1, col=h + 1,
                             showgrid=False, dtick=_every(t, 5), showticklabels=h == 0)
            fig.update_xaxes(type="category", row=l + 1, col=h + 1, showgrid=False,
                             dtick=_every(t, 5), tickangle=-90,
                             showticklabels=l == n_layers - 1)
            if answer_start is not None:
                fig.add_hline(y=answer_start - 0.5, line_dash="dot", line_color="#d62728",
                              line_width=1, row=l + 1, col=h + 1)
    fig.update_layout(height=300 * n_layers + 60, margin=dict(l=50, r=10, t=50, b=40))
    return fig


def training_curves(steps: np.ndarray, loss: np.ndarray, acc_steps: np.ndarray,
                    accuracy: np.ndarray) -> go.Figure:
    """Loss (left axis, log) and answer-token accuracy (right axis) vs iteration."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=steps, y=loss, mode="lines", name="loss"), secondary_y=False)
    fig.add_trace(go.Scatter(x=acc_steps, y=accuracy, mode="lines", name="accuracy"),
                  secondary_y=True)
    fig.update_layout(title="Training", height=280, legend=dict(orientation="h", y=-0.3))
    fig.update_yaxes(title="cross-entropy", type="log", secondary_y=False)
    fig.update_yaxes(title="token accuracy", range=[0, 1.02], secondary_y=True)
    fig.update_xaxes(title="iteration")
    return fig


def mask_figure(allowed: np.ndarray, title: str) -> go.Figure:
    """Allowed (query, key) pairs: filled = attends, blank = -inf."""
    n = allowed.shape[0]
    fig = go.Figure(go.Heatmap(z=allowed.astype(float), colorscale=[[0, "#f4f4f4"],
                                                                    [1, "#1f77b4"]],
                               zmin=0, zmax=1, showscale=False, xgap=1, ygap=1,
                               hovertemplate="query %{y}<br>key %{x}<br>allowed %{z}"
                                             "<extra></extra>"))
    fig.update_layout(title=title, height=420, width=None)
    fig.update_yaxes(title="query position", range=[n - 0.5, -0.5], showgrid=False)
    fig.update_xaxes(title="key position", scaleanchor="y", showgrid=False)
    return fig


def nonzeros_figure(ns: Sequence[int], counts: Mapping[str, np.ndarray]) -> go.Figure:
    """Allowed entries vs sequence length n for each mask pattern (log-log)."""
    fig = go.Figure()
    for name, c in counts.items():
        fig.add_trace(go.Scatter(x=list(ns), y=c, mode="lines+markers", name=name))
    fig.update_layout(title="Entries computed vs length n", height=420,
                      legend=dict(x=0.02, y=0.98))
    fig.update_xaxes(type="log", title="sequence length n")
    fig.update_yaxes(type="log", title="allowed (query, key) pairs")
    return fig


def weights_frame(weights: np.ndarray, labels: list[str], **extra) -> pd.DataFrame:
    """Long table: (query, key, tokens, weight) for one map."""
    t = weights.shape[-1]
    qi, ki = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")
    return pd.DataFrame({**extra,
                         "query": qi.ravel(), "query_token": np.asarray(labels)[qi.ravel()],
                         "key": ki.ravel(), "key_token": np.asarray(labels)[ki.ravel()],
                         "weight": weights.ravel()})
