"""Figures of the language models page: pure builders (arrays in, plain Plotly figures out,
no Streamlit; ui/fastfig.py dicts, redrawn on every slider move and live frame), and the
continuation as HTML coloured by each character's probability."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.screen import block_means

KEPT, CUT, RAW = "#1f77b4", "#c7c7c7", "#ff7f0e"
TRAIN, HELD, UNIGRAM, BIGRAM = "#9ecae1", "#1f77b4", "#7f7f7f", "#d62728"


def next_token_figure(labels: tuple[str, ...], raw: np.ndarray, final: np.ndarray,
                      keep: np.ndarray, title: str) -> go.Figure:
    """Bars: the probability each of the top tokens is sampled with (after temperature,
    top-k, top-p and renormalising; cut tokens grey at 0 with their T = 1 probability
    outlined), and markers: the model's own probability at T = 1."""
    x = list(labels)
    colors = [KEPT if k else CUT for k in keep]
    shown = np.where(keep, final, raw)
    text = [f"{v:.0%}" if k and v >= 0.01 else ("cut" if not k else "") for v, k in
            zip(final, keep)]
    traces = [dict(type="bar", x=x, y=f32(shown), marker=dict(color=colors),
                   name="sampled with (grey: cut off)", text=text, textposition="outside",
                   cliponaxis=False, hovertemplate="%{x}: %{y:.3f}<extra></extra>"),
              dict(type="scatter", x=x, y=f32(raw), mode="markers", name="model at T = 1",
                   marker=dict(color=RAW, symbol="line-ew-open", size=22,
                               line=dict(width=3, color=RAW)),
                   hovertemplate="%{x}: %{y:.3f} at T = 1<extra></extra>")]
    top = float(max(shown.max(), raw.max(), 0.05))
    return plain_figure(traces, dict(
        height=430, title=dict(text=title),
        xaxis=dict(title=dict(text="next character (↵ newline, ␣ space)"), type="category",
                   tickfont=dict(size=15)),
        yaxis=dict(title=dict(text="probability"), range=[0, min(1.0, top * 1.18) + 0.02]),
        legend=LEGEND_BELOW, bargap=0.25))


def loss_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]], unigram: float,
                bigram: float, steps_max: int, start: float | None = None) -> go.Figure:
    """Training and held-out cross-entropy (nats per character) against the iteration, with
    the unigram and bigram baselines' held-out cross-entropy as horizontal lines (`start`: the
    untrained model's held-out value, a dot at iteration 0)."""
    traces = []
    if start is not None:
        traces.append(dict(type="scatter", x=[0], y=[float(start)], mode="markers",
                           name=f"untrained {start:.2f}", marker=dict(color=HELD, size=10)))
    for (name, (st, v)), color in zip(curves.items(), (TRAIN, HELD)):
        s, m = block_means(np.asarray(st), np.asarray(v, dtype=float))
        if not len(s):              # nothing logged yet: Plotly shows no legend entry for it
            continue
        traces.append(dict(type="scatter", x=s, y=f32(m), mode="lines", name=name,
                           line=dict(color=color, width=2.5 if name == "held-out" else 1.5)))
    end = max(int(steps_max), 1)
    for name, value, color in (("unigram baseline", unigram, UNIGRAM),
                               ("bigram baseline", bigram, BIGRAM)):
        traces.append(dict(type="scatter", x=[0, end], y=[value, value], mode="lines",
                           name=f"{name} {value:.2f}", line=dict(color=color, dash="dash")))
    return plain_figure(traces, dict(
        height=330, title=dict(text="cross-entropy on the text (nats per character)"),
        xaxis=dict(title=dict(text="iteration")), yaxis=dict(title=dict(text="nats/char")),
        legend=LEGEND_BELOW))


def colour_of(p: float) -> str:
    """A background from red (improbable) through yellow to green (probable)."""
    p = float(np.clip(p, 0.0, 1.0))
    r, g = (255, int(80 + 350 * p)) if p < 0.5 else (int(255 - 300 * (p - 0.5)), 255)
    return f"rgb({min(r, 255)},{min(g, 255)},140)"


def coloured_text(prompt: str, text: str, probs: np.ndarray) -> str:
    """HTML: the prompt in grey, then each generated character on a background coloured by
    the probability it was drawn with (newlines kept)."""
    spans = [f'<span style="color:#777">{html.escape(prompt[-200:])}</span>']
    for ch, p in zip(text, probs):
        body = "↵<br>" if ch == "\n" else html.escape(ch)
        spans.append(f'<span title="p = {p:.2f}" style="background:{colour_of(p)};'
                     f'color:#111">{body}</span>')
    return ('<div style="font-family:monospace;font-size:1.05rem;white-space:pre-wrap;'
            'line-height:1.6">' + "".join(spans) + "</div>")


def inside_figure(lens: np.ndarray, lens_labels: tuple[str, ...], attention: np.ndarray,
                  chars: tuple[str, ...]) -> go.Figure:
    """Top: the logit lens, the probability of the output's top characters read at each layer
    (rows: embeddings, block 1..L). Below: each block's attention from the last position over
    the last characters read (rows: heads)."""
    n_layers, heads = attention.shape[0], attention.shape[1]
    gap = 0.05
    lens_h = 0.3
    each = (1 - lens_h - gap * n_layers) / n_layers
    traces, layout = [], dict(height=600, showlegend=False, annotations=[],
                              title=dict(text="logit lens (top) and attention from the last "
                                              "character (below)"))
    names = ["embeddings"] + [f"block {k}" for k in range(1, n_layers + 1)]
    traces.append(dict(type="heatmap", z=f32(lens), x=list(lens_labels), y=names,
                       colorscale=[[0, "#f7fbff"], [1, "#08519c"]], zmin=0, zmax=1,
                       xaxis="x", yaxis="y",
                       colorbar=dict(title=dict(text="p"), len=lens_h, y=1, yanchor="top"),
                       text=[[f"{v:.2f}" for v in row] for row in lens],
                       texttemplate="%{text}", hovertemplate="%{y}, %{x}: %{z:.3f}<extra>"
                                                             "</extra>"))
    layout["xaxis"] = dict(type="category", side="top", tickfont=dict(size=14))
    layout["yaxis"] = dict(domain=[1 - lens_h, 1], autorange="reversed")
    zw = "\u200b"                        # zero-width spaces keep repeated characters apart
    x = [c + zw * (k + 1) for k, c in enumerate(chars)]
    for layer in range(n_layers):
        k = layer + 2
        top = 1 - lens_h - gap - layer * (each + gap)
        traces.append(dict(type="heatmap", z=f32(attention[layer]), x=x,
                           y=[f"h{h + 1}" for h in range(heads)], colorscale="Oranges",
                           zmin=0, zmax=1, showscale=False, xaxis=f"x{k}", yaxis=f"y{k}",
                           hovertemplate="head %{y}, %{x}: %{z:.2f}<extra></extra>"))
        layout[f"xaxis{k}"] = dict(type="category", showticklabels=layer == n_layers - 1,
                                   tickfont=dict(size=13), tickangle=0, anchor=f"y{k}")
        layout[f"yaxis{k}"] = dict(domain=[max(top - each, 0), top], anchor=f"x{k}",
                                   title=dict(text=f"block {layer + 1}"))
    return plain_figure(traces, layout)


RNN = "#2ca02c"
SENTIMENT = {"positive": "#2ca02c", "negative": "#d62728", "neutral": "#7f7f7f"}


def race_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]], bigram: float,
                steps_max: int, now: tuple[float, ...] = ()) -> go.Figure:
    """Both models' held-out cross-entropy (nats per character) against the iteration, with
    the bigram baseline's as a dashed line; `curves` maps a model's name to (steps, values),
    the transformer first. The y range is set to hold the curves, the baseline and `now` (the
    models' current values; the curves are logged every 20 iterations), padded by 8%."""
    traces, values = [], [float(bigram), *map(float, now)]
    for (name, (s, v)), color in zip(curves.items(), (HELD, RNN)):
        if not len(s):
            continue
        values += [float(x) for x in np.asarray(v) if np.isfinite(x)]
        traces.append(dict(type="scatter", x=np.asarray(s).tolist(), y=f32(v),
                           mode="lines", name=name, line=dict(color=color, width=2.5)))
    end = max(int(steps_max), 1)
    traces.append(dict(type="scatter", x=[0, end], y=[bigram, bigram], mode="lines",
                       name=f"bigram baseline {bigram:.2f}",
                       line=dict(color=BIGRAM, dash="dash")))
    values = [v for v in values if np.isfinite(v)]
    lo, hi = min(values), max(values)
    pad = 0.08 * max(hi - lo, 0.5)
    return plain_figure(traces, dict(
        height=330, title=dict(text="held-out cross-entropy (nats per character)"),
        xaxis=dict(title=dict(text="iteration (the same batches for both)"), range=[0, end]),
        yaxis=dict(title=dict(text="nats/char"), range=[lo - pad, hi + pad]),
        legend=LEGEND_BELOW))


def embedding_figure(xy: np.ndarray, labels: tuple[str, ...], texts: tuple[str, ...],
                     typed_xy: np.ndarray | None, typed: str, title: str,
                     axes: tuple[str, str]) -> go.Figure:
    """The phrases as points coloured by sentiment (hover: the phrase), and the typed phrase
    as a black star."""
    traces = []
    for label, color in SENTIMENT.items():
        rows = [i for i, lab in enumerate(labels) if lab == label]
        traces.append(dict(type="scatter", x=f32(xy[rows, 0]), y=f32(xy[rows, 1]),
                           mode="markers", name=label, text=[texts[i] for i in rows],
                           marker=dict(color=color, size=11, line=dict(width=1,
                                                                       color="white")),
                           hovertemplate="%{text}<extra>" + label + "</extra>"))
    if typed_xy is not None:
        traces.append(dict(type="scatter", x=[float(typed_xy[0])], y=[float(typed_xy[1])],
                           mode="markers+text", name="your phrase", text=[typed[:40]],
                           textposition="top center",
                           marker=dict(color="black", symbol="star", size=20)))
    return plain_figure(traces, dict(
        height=480, title=dict(text=title), xaxis=dict(title=dict(text=axes[0])),
        yaxis=dict(title=dict(text=axes[1])), legend=LEGEND_BELOW))
