"""Figures of the initialization page: data in (engine/signal/__init__.py and engine/signal/training.py
results), go.Figure out. No Streamlit, no math beyond arranging what the engine computed."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from engine.signal import BatchNormTrace, Propagation, VarianceMap
from engine.signal.training import CHANCE_LOSS, N_CLASSES, DeepNetsSnapshot, LRSweep
from ui.fastfig import Fig
from ui.theme import COLORWAY

ACT_COLOR, GRAD_COLOR = COLORWAY[0], COLORWAY[1]
NET_COLORS = (COLORWAY[3], COLORWAY[4], COLORWAY[2])
FEATURE_COLORS = (COLORWAY[0], COLORWAY[1], COLORWAY[2])


def positive(values: np.ndarray) -> np.ndarray:
    """Values for a log axis: non-positive or non-finite entries become NaN (a gap)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


def signal_figure(p: Propagation, title: str) -> go.Figure:
    """Left: Var(h_l) and Var(∂loss/∂h_l) against the layer (log y). Right: the histogram of
    h_l per layer as a heat map (layer up, value across)."""
    layers = np.arange(p.depth + 1, dtype=np.int32)
    fig = Fig(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.1,
              subplot_titles=("Variance per layer (log)", "Histogram of h_l"))
    fig.add("scatter", 1, 1, x=layers, y=positive(p.act_var), name="activations Var(h_l)",
            mode="lines+markers", line=dict(color=ACT_COLOR), marker=dict(size=4))
    fig.add("scatter", 1, 1, x=layers, y=positive(p.grad_var), name="gradients Var(∂L/∂h_l)",
            mode="lines+markers", line=dict(color=GRAD_COLOR, dash="dot"), marker=dict(size=4))
    if p.diverged_at is not None:
        fig.vline(p.diverged_at, 1, 1, line=dict(color="#999", dash="dash"))
    centres = 0.5 * (p.hist_edges[1:] + p.hist_edges[:-1])
    hist = p.hist[1:]            # layers 1..L (the input x is not bounded like h_l)
    fig.add("heatmap", 1, 2, x=centres.astype(np.float32), y=layers[1:],
            z=np.sqrt(hist).astype(np.float32), colorscale="Viridis", showscale=False,
            name="share of values", customdata=hist.astype(np.float32),
            hovertemplate="layer %{y}<br>h ≈ %{x:.2f}<br>share %{customdata:.3f}<extra></extra>")
    fig.axes(1, 1, x=dict(title=dict(text="layer l (0 = input)")),
             y=dict(type="log", title=dict(text="variance"), exponentformat="power"))
    fig.axes(1, 2, x=dict(title=dict(text="value of h_l")), y=dict(title=dict(text="layer l")))
    fig.update(title=dict(text=title), height=430, legend=dict(orientation="h", y=-0.22, x=0))
    return fig.figure()


def rank_figure(p: Propagation) -> go.Figure:
    fig = Fig()
    fig.add("scatter", x=np.arange(p.depth + 1, dtype=np.int32), y=p.eff_rank,
            mode="lines+markers", marker=dict(size=4), name="effective rank")
    fig.axes(x=dict(title=dict(text="layer l")),
             y=dict(title=dict(text="effective rank"), rangemode="tozero"))
    fig.update(title=dict(text=f"Effective rank of h_l ({p.rank_samples} inputs; 1 = all on "
                               f"one line)"), height=260)
    return fig.figure()


def chaos_figure(m: VarianceMap, point: tuple[float, float], click_res: int = 30) -> go.Figure:
    """log10 χ on the (σ_w, σ_b) plane, the χ = 1 line, the current point; a faint grid of
    markers makes the plane clickable."""
    logchi = np.log10(np.clip(m.chi, 1e-6, None))
    fig = Fig()
    fig.add("heatmap", x=m.sigma_w.astype(np.float32), y=m.sigma_b.astype(np.float32),
            z=logchi.astype(np.float32), colorscale="RdBu_r", zmin=-1.0, zmax=1.0,
            colorbar=dict(title=dict(text="log₁₀ χ"), len=0.8, tickvals=[-1, -0.5, 0, 0.5, 1]),
            hovertemplate="σ_w %{x:.2f}, σ_b %{y:.2f}<br>log₁₀ χ %{z:.2f}<extra></extra>")
    ok = np.isfinite(m.boundary_w)
    fig.add("scatter", x=m.boundary_w[ok], y=m.sigma_b[ok], mode="lines",
            line=dict(color="black", width=3), name="χ = 1 (edge of chaos)")
    gx, gy = np.meshgrid(np.linspace(m.sigma_w[0], m.sigma_w[-1], click_res),
                         np.linspace(m.sigma_b[0], m.sigma_b[-1], click_res))
    fig.add("scatter", x=gx.ravel().astype(np.float32), y=gy.ravel().astype(np.float32),
            mode="markers", marker=dict(size=9, opacity=0.01, color="black"), hoverinfo="skip",
            showlegend=False, name="click")
    fig.add("scatter", x=[point[0]], y=[point[1]], mode="markers", name="current (σ_w, σ_b)",
            marker=dict(size=14, color="gold", symbol="star", line=dict(color="black", width=1)))
    fig.layout.setdefault("annotations", []).extend([
        dict(x=0.35, y=0.92, xref="paper", yref="paper", text="ordered: χ < 1", showarrow=False,
             font=dict(color="#08306b")),
        dict(x=0.95, y=0.08, xref="paper", yref="paper", text="chaotic: χ > 1", showarrow=False,
             font=dict(color="#67000d"), xanchor="right")])
    fig.axes(x=dict(title=dict(text="σ_w")), y=dict(title=dict(text="σ_b")))
    fig.update(title=dict(text=f"tanh mean field after {m.depth} layers: χ = σ_w² E[φ'(z)²]"),
               height=460, legend=dict(orientation="h", y=-0.2, x=0), clickmode="event+select")
    return fig.figure()


def pick_from_selection(event, w_bounds: tuple[float, float],
                        b_bounds: tuple[float, float]) -> tuple[float, float] | None:
    """(σ_w, σ_b) of the first clicked point of a chart selection (rounded to 0.05, clipped);
    None when the event has no usable point."""
    points = ((event or {}).get("selection") or {}).get("points") or []
    try:
        x, y = float(points[0]["x"]), float(points[0]["y"])
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    if not (np.isfinite(x) and np.isfinite(y)):
        return None
    snap = lambda v, lo, hi: round(float(np.clip(round(v / 0.05) * 0.05, lo, hi)), 2)  # noqa: E731
    return snap(x, *w_bounds), snap(y, *b_bounds)


LOSS_CAP = 4 * float(np.log(10))       # a loss axis taller than this only shows a divergence


def loss_axis_top(losses: np.ndarray) -> float:
    """Top of the training-loss axis: the highest finite loss, capped at 4·ln 10 (four times
    chance). A net that blows up before it diverges (losses in the millions) would otherwise
    stretch the axis and flatten every other curve onto 0; its legend says it diverged."""
    finite = np.asarray(losses, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    top = float(finite.max()) if finite.size else float(np.log(10))
    return 1.08 * max(min(top, LOSS_CAP), float(np.log(10)))


def training_figure(s: DeepNetsSnapshot, max_points: int = 400,
                    lr: float | None = None) -> go.Figure:
    """Left: mini-batch loss per net (decimated), titled with the SGD learning rate `lr` when
    given. Right: ‖∂loss/∂W_l‖ per layer at the latest record (log y)."""
    loss_title = "Training loss (mini-batch" + (f", SGD lr {lr:g})" if lr else ")")
    fig = Fig(rows=1, cols=2, horizontal_spacing=0.12,
              subplot_titles=(loss_title,
                              f"Gradient norm per layer, step {int(s.grad_steps[-1]) if len(s.grad_steps) else 0}"))
    stride = max(1, len(s.loss_steps) // max_points)
    for i, label in enumerate(s.labels):
        color = NET_COLORS[i % len(NET_COLORS)]
        name = label + (f" (diverged at {s.diverged_at[i]})" if s.diverged_at[i] else "")
        fig.add("scatter", 1, 1, x=np.asarray(s.loss_steps[::stride], dtype=np.int32),
                y=s.losses[i, ::stride].astype(np.float32), mode="lines", name=name,
                line=dict(color=color), legendgroup=label)
        if len(s.grad_steps):
            g = positive(s.grad_norms[-1, i])
            fig.add("scatter", 1, 2, x=np.arange(1, len(g) + 1, dtype=np.int32), y=g,
                    mode="lines+markers", marker=dict(size=5), line=dict(color=color), name=name,
                    legendgroup=label, showlegend=False)
            if np.isfinite(g).any():          # label the curve where it starts
                x2, y2 = fig.refs(1, 2)
                fig.layout.setdefault("annotations", []).append(dict(
                    x=1, y=float(np.log10(g[0])), xref=x2, yref=y2, text=label,
                    showarrow=False, yshift=12, xanchor="left", font=dict(color=color)))
    fig.hline(CHANCE_LOSS, 1, 1, line=dict(color="#999", dash="dot"),
              text=f"chance: ln {N_CLASSES} = {CHANCE_LOSS:.2f}", top=True)
    fig.axes(1, 1, x=dict(title=dict(text="step")),
             y=dict(title=dict(text="cross-entropy"), range=[0, loss_axis_top(s.losses)]))
    fig.axes(1, 2, x=dict(title=dict(text="layer l (1 = input side)")),
             y=dict(type="log", title=dict(text="‖∂loss/∂W_l‖"), exponentformat="power"))
    fig.update(height=420, legend=dict(orientation="h", y=-0.22, x=0))
    return fig.figure()


def bn_step_figure(t: BatchNormTrace) -> go.Figure:
    """The visible mini-batch: x with μ_B ± σ_B per feature, x̂, and the output in train mode
    (batch statistics, dots) against eval mode (running statistics, crosses)."""
    fig = Fig(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.05,
              subplot_titles=("x with μ_B ± σ_B", "x̂ = (x − μ_B)/√(σ²_B + ε)",
                              "y = γx̂ + β: train ● vs eval ×"))
    b, n_feat = t.x.shape
    jitter = np.linspace(-0.2, 0.2, b) if b > 1 else np.zeros(1)
    for f in range(n_feat):
        color, y = FEATURE_COLORS[f % 3], (f + jitter).astype(np.float32)
        name = f"feature {f + 1}"
        fig.add("scatter", 1, 1, x=t.x[:, f], y=y, mode="markers",
                marker=dict(color=color, size=8), name=name, legendgroup=name)
        sd = float(np.sqrt(t.batch_var[f]))
        mu = float(t.batch_mean[f])
        fig.add("scatter", 1, 1, x=[mu - sd, mu, mu + sd], y=[f + 0.32] * 3,
                mode="lines+markers", marker=dict(symbol="line-ns-open", size=14, color=color),
                line=dict(color=color), showlegend=False, legendgroup=name,
                hovertemplate="μ_B ± σ_B<extra></extra>")
        fig.add("scatter", 1, 2, x=t.x_hat[:, f], y=y, mode="markers",
                marker=dict(color=color, size=8), showlegend=False, legendgroup=name)
        fig.add("scatter", 1, 3, x=t.y_train[:, f], y=y, mode="markers",
                marker=dict(color=color, size=9), showlegend=False, legendgroup=name,
                hovertemplate="train %{x:.2f}<extra></extra>")
        fig.add("scatter", 1, 3, x=t.y_eval[:, f], y=y, mode="markers",
                marker=dict(color=color, size=11, symbol="x-thin-open",
                            line=dict(width=2, color=color)),
                showlegend=False, legendgroup=name, hovertemplate="eval %{x:.2f}<extra></extra>")
    fig.axes(1, 1, y=dict(tickvals=list(range(n_feat)),
                          ticktext=[f"feature {f + 1}" for f in range(n_feat)]))
    fig.update(title=dict(text=f"Batch norm on one mini-batch of {b} (after "
                               f"{len(t.running_mean) - 1} batches)"), height=390,
               legend=dict(orientation="h", y=-0.25, x=0),
               margin=dict(t=105))     # the title, then the panel titles under it
    return fig.figure()


def running_stats_figure(t: BatchNormTrace) -> go.Figure:
    k = np.arange(len(t.running_mean), dtype=np.int32)
    fig = Fig(rows=1, cols=2, horizontal_spacing=0.12,
              subplot_titles=("Running mean r_μ", "Running variance r_σ²"))
    for f in range(t.running_mean.shape[1]):
        color, name = FEATURE_COLORS[f % 3], f"feature {f + 1}"
        fig.add("scatter", 1, 1, x=k, y=t.running_mean[:, f], mode="lines", name=name,
                line=dict(color=color), legendgroup=name)
        fig.hline(float(t.data_mean[f]), 1, 1, line=dict(color=color, dash="dot"))
        fig.add("scatter", 1, 2, x=k, y=t.running_var[:, f], mode="lines", name=name,
                line=dict(color=color), legendgroup=name, showlegend=False)
        fig.hline(float(t.data_std[f] ** 2), 1, 2, line=dict(color=color, dash="dot"))
    # the dotted lines' key in the legend (the title has no room for it on the projector)
    fig.add("scatter", 1, 1, x=[None], y=[None], mode="lines", name="dotted: the data's",
            line=dict(color="#666", dash="dot"))
    fig.all_axes("x", dict(title=dict(text="mini-batches seen")))
    fig.update(title=dict(text=f"Running statistics, momentum {t.momentum:g}"), height=300,
               legend=dict(orientation="h", y=-0.3, x=0))
    return fig.figure()


def gap_figure(batch_sizes: Sequence[int], gaps: np.ndarray, current: int) -> go.Figure:
    fig = Fig()
    fig.add("scatter", x=list(batch_sizes), y=gaps, mode="lines+markers",
            name="mean |y_train − y_eval|")
    if current in batch_sizes:
        i = list(batch_sizes).index(current)
        fig.add("scatter", x=[current], y=[float(gaps[i])], mode="markers", name="this batch size",
                marker=dict(size=14, color="gold", symbol="star", line=dict(color="black", width=1)))
    fig.axes(x=dict(type="log", title=dict(text="batch size B"), tickvals=list(batch_sizes)),
             y=dict(title=dict(text="mean |Δy| (output units)"), rangemode="tozero"))
    fig.update(title=dict(text="Train mode vs eval mode on the same batches"), height=300,
               legend=dict(orientation="h", y=-0.3, x=0))
    return fig.figure()


def lr_sweep_figure(r: LRSweep) -> go.Figure:
    fig = Fig()
    top = float(np.log(10)) * 1.15
    for i, label in enumerate(r.labels):
        loss = r.final_loss[i]
        fig.add("scatter", x=r.lrs, y=np.where(np.isfinite(loss), loss, np.nan),
                mode="lines+markers", name=label, line=dict(color=NET_COLORS[(i + 2) % 3]))
        bad = ~np.isfinite(loss)
        if bad.any():
            fig.add("scatter", x=r.lrs[bad], y=[top] * int(bad.sum()), mode="markers",
                    marker=dict(symbol="x", size=12, color=NET_COLORS[(i + 2) % 3]),
                    name=f"{label}: diverged")
    fig.hline(r.train_fraction * float(np.log(10)), line=dict(color="#999", dash="dot"),
              text="trains below this line", left=True)
    fig.axes(x=dict(type="log", title=dict(text="learning rate")),
             y=dict(title=dict(text="mean loss, last 20 steps"), range=[0, top * 1.08]))
    fig.update(title=dict(text=f"Loss after {r.steps} SGD steps against the learning rate"),
               height=320, legend=dict(orientation="h", y=-0.3, x=0))
    return fig.figure()


def spectra_figure(spectra: np.ndarray, title: str) -> go.Figure:
    """The eigenvalues of each layer's covariance, largest first, on a log axis: one line per
    layer, the input h_0 first (flat for whitened inputs)."""
    fig = go.Figure()
    k = np.arange(1, spectra.shape[1] + 1)
    for layer, eig in enumerate(spectra):
        fig.add_trace(go.Scatter(x=k, y=np.maximum(eig, 1e-16), mode="lines+markers",
                                 name="input x" if layer == 0 else f"h_{layer}",
                                 line=dict(color=COLORWAY[layer % len(COLORWAY)], width=2),
                                 marker=dict(size=4)))
    fig.update_layout(title=title, height=420, xaxis_title="eigenvalue number (largest first)",
                      yaxis=dict(type="log", exponentformat="power",
                                 title="eigenvalue of the covariance"),
                      legend=dict(orientation="h", y=-0.2))
    return fig
