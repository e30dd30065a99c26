"""Figures of the LSTM gating page: pure builders (result dataclasses in, go.Figure out)."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.recurrent import GradientFlow, LSTMTrace
from ui.fastfig import colorscale, f32, plain_figure

KIND_COLORS = {"rnn": "#d62728", "gru": "#ff7f0e", "lstm": "#1f77b4", "linear": "#7f7f7f"}
KIND_NAMES = {"rnn": "RNN (tanh)", "gru": "GRU", "lstm": "LSTM", "linear": "linear RNN"}
PANELS = {  # name -> (title, colorscale, fixed range or None for symmetric auto)
    "i": ("input gate i (write)", "Blues", (0.0, 1.0)),
    "f": ("forget gate f (keep)", "Greens", (0.0, 1.0)),
    "o": ("output gate o (reveal)", "Purples", (0.0, 1.0)),
    "g": ("candidate g (what to write)", "RdBu", (-1.0, 1.0)),
    "c": ("cell state c", "RdBu", None),
    "h": ("hidden state h", "RdBu", (-1.0, 1.0)),
}
LINE_COLORS = {"i": "#1f77b4", "f": "#2ca02c", "o": "#9467bd", "g": "#ff7f0e", "c": "#d62728",
               "h": "#222222"}


def _range(values: np.ndarray, fixed) -> tuple[float, float]:
    if fixed is not None:
        return fixed
    m = float(np.nanmax(np.abs(values))) if values.size else 1.0
    return (-max(m, 1e-6), max(m, 1e-6))


def _scale_text(values: np.ndarray, name: str) -> str:
    """The colour range of a panel in words (the panels carry no colour bars: six bars
    cost about a third of the figure's redraw in the browser)."""
    lo, hi = _range(values, PANELS[name][2])
    light, dark = ("white", "dark") if PANELS[name][1] != "RdBu" else ("red", "blue")
    return f"{light} {lo:.3g} → {dark} {hi:.3g}"


def _stacked_axes(n: int, gap: float = 0.04) -> list[tuple[float, float]]:
    """Vertical domains of n stacked panels, top first."""
    h = (1 - gap * (n - 1)) / n
    return [(max(0.0, 1 - (r + 1) * h - r * gap), min(1.0, 1 - r * h - r * gap))
            for r in range(n)]


def time_ticks(labels: Sequence[str], most: int = 16) -> tuple[list[int], list[str]]:
    """Tick positions and texts "t<br>input" for a time axis: every k-th step, always the
    first step (the symbol) and every '?' (the query), dropping a regular tick that would
    crowd one of those."""
    T = len(labels)
    step = max(1, math.ceil(T / most))
    keep = {0, T - 1} | {t for t, lab in enumerate(labels) if lab == "?"}
    ticks = sorted(keep | {t for t in range(0, T, step)
                           if all(abs(t - k) >= max(2, step // 2) for k in keep)})
    return ticks, [f"{t}<br>{labels[t]}" for t in ticks]


def gate_heatmaps(trace: LSTMTrace, labels: Sequence[str],
                  panels: Sequence[str] = ("i", "f", "o", "g", "c", "h")) -> go.Figure:
    """One heatmap per gate/state: unit (rows) × time step (columns); hover shows the value.
    (Axes are laid out by hand: make_subplots costs ~0.3 s for six rows. The six y axes have
    a fixed left margin instead of automargin, and the input of each step is on the time
    axis, not repeated in every cell's hover data: a lighter redraw per slider move. No grid
    lines or tick marks: the heatmaps cover the grid, and the shared time axis would draw its
    grid in all six panels, ~150 hidden SVG elements. Built as plain dicts, fastfig.)"""
    T, H = trace.h.shape
    x = np.arange(T)
    domains = _stacked_axes(len(panels))
    data, layout = [], {}
    for r, name in enumerate(panels):
        z = getattr(trace, name).T            # (H, T)
        lo, hi = _range(z, PANELS[name][2])
        ax = "" if r == 0 else str(r + 1)
        d0, d1 = domains[r]
        data.append({"type": "heatmap", "z": f32(z), "x": x, "y": np.arange(H), "zmin": lo,
                     "zmax": hi, "colorscale": colorscale(PANELS[name][1]), "xaxis": "x",
                     "yaxis": f"y{ax}", "showscale": False,
                     "hovertemplate": f"{name}: %{{z:.3f}}<br>unit %{{y}}, t=%{{x}}"
                                      "<extra></extra>"})
        layout[f"yaxis{ax}"] = {"domain": [d0, d1], "title": {"text": "unit"},
                                "showgrid": False, "ticks": "", "anchor": "x",
                                "tickmode": "array", "tickvals": [0, H // 2, H - 1],
                                "range": [-0.5, H - 0.5], "automargin": False}
    annotations = [{"text": f"{PANELS[name][0]} · {_scale_text(getattr(trace, name), name)}",
                    "x": 0, "xref": "paper", "xanchor": "left", "y": domains[r][1],
                    "yref": "paper", "yanchor": "bottom", "showarrow": False}
                   for r, name in enumerate(panels)]
    tickvals, ticktext = time_ticks(labels)
    layout["xaxis"] = {"anchor": f"y{len(panels)}", "tickmode": "array", "tickvals": tickvals,
                       "ticktext": ticktext, "tickangle": 0, "showgrid": False,
                       "range": [-0.5, T - 0.5], "automargin": False,
                       "title": {"text": f"time step t / input · rows: the {H} units"}}
    return plain_figure(data, {"height": 150 * len(panels) + 80,
                               "margin": {"t": 40, "l": 64, "b": 80},
                               "annotations": annotations, **layout})


def unit_lines(trace: LSTMTrace, unit: int, labels: Sequence[str],
               reference: LSTMTrace | None = None) -> go.Figure:
    """One unit over time: gates i, f, o, g (top panel, fixed range) and the states c, h
    (bottom panel, own scale); `reference` (the unclamped run) dotted. The input of each
    step rides on the first line's hover only (the unified hover lists all lines at once)."""
    t = np.arange(trace.h.shape[0])
    data = []
    for name in ("i", "f", "o", "g", "c", "h"):
        line = {"type": "scatter", "x": t, "y": f32(getattr(trace, name)[:, unit]),
                "name": name, "mode": "lines", "yaxis": "y" if name in "ifog" else "y2",
                "line": {"color": LINE_COLORS[name], "width": 3 if name in "ch" else 1.5},
                "hovertemplate": f"{name} = %{{y:.3f}}<extra></extra>"}
        if name == "i":
            line["customdata"] = list(labels)
            line["hovertemplate"] = "input %{customdata}<br>i = %{y:.3f}<extra></extra>"
        data.append(line)
    if reference is not None:
        for name in ("c", "h"):
            data.append({"type": "scatter", "x": t, "y": f32(getattr(reference, name)[:, unit]),
                         "yaxis": "y2", "name": f"{name} without clamps", "mode": "lines",
                         "line": {"color": LINE_COLORS[name], "dash": "dot", "width": 2}})
    tickvals, ticktext = time_ticks(labels)
    return plain_figure(data, dict(
        title={"text": f"Unit {unit} over time", "automargin": False}, height=460,
        hovermode="x unified", margin={"l": 80, "t": 50, "b": 80},
        xaxis={"title": {"text": "time step t / input"}, "anchor": "y2", "tickmode": "array",
               "tickvals": tickvals, "ticktext": ticktext, "tickangle": 0, "showgrid": False,
               "range": [0, max(len(t) - 1, 1)], "automargin": False},
        yaxis={"domain": [0.55, 1.0], "range": [-1.05, 1.05], "title": {"text": "gates"},
               "automargin": False},
        yaxis2={"domain": [0.0, 0.45], "title": {"text": "c and h"}, "automargin": False}))


def _num(v: float) -> str:
    return f"{v:.2f}"


def lstm_equations(trace: LSTMTrace, t: int, unit: int) -> str:
    """The cell update of one unit at step t with the traced numbers (LaTeX)."""
    cp = trace.c_prev()[t, unit]
    i, f, g, o = (float(getattr(trace, k)[t, unit]) for k in "ifgo")
    c, h = float(trace.c[t, unit]), float(trace.h[t, unit])
    return (rf"\begin{{aligned}} c_{{{t}}} &= f \odot c_{{{t - 1}}} + i \odot g "
            rf"= {_num(f)}\cdot({_num(cp)}) + {_num(i)}\cdot({_num(g)}) = {_num(c)}\\ "
            rf"h_{{{t}}} &= o \odot \tanh(c_{{{t}}}) = {_num(o)}\cdot\tanh({_num(c)}) "
            rf"= {_num(h)} \end{{aligned}}")


def trace_frame(trace: LSTMTrace, labels: Sequence[str]) -> pd.DataFrame:
    """Long table: one row per (t, unit) with input label and i, f, g, o, c, h."""
    T, H = trace.h.shape
    tt, uu = np.meshgrid(np.arange(T), np.arange(H), indexing="ij")
    data = {"t": tt.ravel(), "input": np.repeat(np.asarray(labels, dtype=object), H),
            "unit": uu.ravel()}
    for name in ("i", "f", "g", "o", "c", "h"):
        data[name] = getattr(trace, name).ravel()
    return pd.DataFrame(data)


def gradient_flow_figure(flows: Mapping[str, GradientFlow], rho: float | None) -> go.Figure:
    """log ‖∂h_T/∂h_{T-k}‖ vs lag k per kind, with the linear-RNN reference ρᵏ."""
    fig = go.Figure()
    for kind, fl in flows.items():
        y = np.where(fl.norms > 0, fl.norms, np.nan)
        fig.add_trace(go.Scatter(x=fl.lags, y=y, name=KIND_NAMES[kind], mode="lines",
                                 line=dict(color=KIND_COLORS[kind], width=2.5),
                                 hovertemplate="lag %{x}: %{y:.3g}<extra>" + KIND_NAMES[kind]
                                               + "</extra>"))
    if rho is not None and flows:
        lags = next(iter(flows.values())).lags
        with np.errstate(over="ignore", under="ignore"):
            ref = np.power(float(rho), lags.astype(float))
        ref = np.where((ref > 1e-300) & np.isfinite(ref), ref, np.nan)
        fig.add_trace(go.Scatter(x=lags, y=ref, name=f"ρᵏ (linear RNN, ρ={rho:g})",
                                 mode="lines", line=dict(color="#7f7f7f", dash="dash", width=2)))
    fig.update_layout(title="How much of the gradient survives k steps back",
                      xaxis_title="time lag k = T − t",
                      yaxis=dict(type="log", title="‖∂h_T / ∂h_t‖", exponentformat="power"),
                      height=430)
    return fig


def flows_frame(flows: Mapping[str, GradientFlow]) -> pd.DataFrame:
    if not flows:
        return pd.DataFrame(columns=["lag"])
    lags = next(iter(flows.values())).lags
    return pd.DataFrame({"lag": lags, **{k: f.norms for k, f in flows.items()}})


def accuracy_vs_delay(delays: np.ndarray, acc: Mapping[str, np.ndarray],
                      levels: Mapping[str, int], chance: float) -> go.Figure:
    """Held-out accuracy at each delay per model; the delay each model trains at (dotted)."""
    fig = go.Figure()
    for kind, a in acc.items():
        fig.add_trace(go.Scatter(x=delays, y=a, name=KIND_NAMES[kind], mode="lines+markers",
                                 line=dict(color=KIND_COLORS[kind], width=2.5),
                                 hovertemplate="delay %{x}: accuracy %{y:.2f}<extra>"
                                               + KIND_NAMES[kind] + "</extra>"))
        if kind in levels:
            fig.add_vline(x=levels[kind], line=dict(color=KIND_COLORS[kind], dash="dot"))
    fig.add_hline(y=chance, line=dict(color="#7f7f7f", dash="dash"),
                  annotation_text=f"chance {chance:.0%}", annotation_position="right")
    # the note as a subtitle: one long title line was cut off in a half-width column
    fig.update_layout(title=dict(text="Accuracy vs delay",
                                 subtitle=dict(text="dotted: the delay trained at")),
                      xaxis_title="delay D", yaxis=dict(range=[0, 1.05], title="accuracy"),
                      height=380)
    return fig


def race_history(histories: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    fig = go.Figure()
    for kind, (steps, values) in histories.items():
        fig.add_trace(go.Scatter(x=steps, y=values, name=KIND_NAMES[kind], mode="lines",
                                 line=dict(color=KIND_COLORS[kind])))
    fig.update_layout(title="Training accuracy (batch)", xaxis_title="iteration",
                      yaxis=dict(range=[0, 1.05], title="accuracy"), height=300)
    return fig


def scalar_cell_figure(x: np.ndarray, trace: LSTMTrace, half_life: float) -> go.Figure:
    """Input pulse, gates and states of a hidden-size-1 LSTM cell."""
    t = np.arange(len(x))
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=["input x_t", "gates", "cell state c and output h"])
    fig.add_trace(go.Bar(x=t, y=x, name="x", marker_color="#7f7f7f"), row=1, col=1)
    for name in ("i", "f", "o"):
        fig.add_trace(go.Scatter(x=t, y=getattr(trace, name)[:, 0], name=name,
                                 line=dict(color=LINE_COLORS[name])), row=2, col=1)
    for name in ("c", "h"):
        fig.add_trace(go.Scatter(x=t, y=getattr(trace, name)[:, 0], name=name,
                                 line=dict(color=LINE_COLORS[name], width=3)), row=3, col=1)
    fig.update_yaxes(range=[-0.05, 1.05], row=2, col=1)
    title = ("memory half-life: ∞ (f = 1)" if math.isinf(half_life)
             else f"memory half-life ≈ {half_life:.1f} steps")
    fig.update_layout(title=title, height=520, hovermode="x unified")
    fig.update_xaxes(title_text="time step t", row=3, col=1)
    return fig
