"""Figures of the GAN page: pure builders, engine results in -> go.Figure out (no st.*)."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.gan import DiracTrajectory, GANSnapshot, ParallelLines
from engine.training import History

REAL = "#7f7f7f"
FAKE = "#9467bd"
COVERED = "#2ca02c"
MISSED = "#d62728"


def _segments(starts: np.ndarray, vectors: np.ndarray) -> tuple[list, list]:
    """x and y lists of line segments start -> start + vector, separated by None (one trace)."""
    xs, ys = [], []
    for (x, y), (dx, dy) in zip(np.asarray(starts), np.asarray(vectors)):
        xs += [float(x), float(x + dx), None]
        ys += [float(y), float(y + dy), None]
    return xs, ys


def _scaled(vectors: np.ndarray, length: float) -> np.ndarray:
    """Rescale vectors so the longest has `length` (keeps relative sizes)."""
    v = np.asarray(vectors, dtype=float)
    if v.size == 0:
        return v
    norm = np.linalg.norm(v, axis=1).max()
    return v * (length / norm) if norm > 0 and np.isfinite(norm) else np.zeros_like(v)


def samples_figure(snap: GANSnapshot, box: tuple[float, float, float, float],
                   centers: np.ndarray | None = None, radius: float | None = None,
                   show_arrows: bool = True, show_heatmap: bool = True,
                   height: int = 520) -> go.Figure:
    """Real points (grey) and generated points over the discriminator heatmap, arrows of
    −∇_x L_G on a subset of fakes, and circles of radius n_sigma·std around the mixture's
    modes (green: covered, red: missed)."""
    fig = go.Figure()
    c = snap.critic
    if show_heatmap:
        if c.kind.startswith("D(x)"):
            heat = dict(zmin=0.0, zmax=1.0, colorscale="RdBu")
        else:
            m = float(np.nanmax(np.abs(c.values))) or 1.0
            heat = dict(zmin=-m, zmax=m, colorscale="RdBu")
        fig.add_trace(go.Heatmap(x=c.xs, y=c.ys, z=c.values, opacity=0.55, name=c.kind,
                                 colorbar=dict(title=dict(text=c.kind, side="right"),
                                               thickness=12, len=0.8),
                                 hovertemplate="x=%{x:.2f}, y=%{y:.2f}<br>" + c.kind
                                 + "=%{z:.3f}<extra></extra>", **heat))
    fig.add_trace(go.Scatter(x=snap.real[:, 0], y=snap.real[:, 1], mode="markers",
                             name="real data", marker=dict(color=REAL, size=4, opacity=0.6),
                             hoverinfo="skip"))
    fake = snap.fake[np.isfinite(snap.fake).all(1)]
    fig.add_trace(go.Scatter(x=fake[:, 0], y=fake[:, 1], mode="markers", name="generated",
                             marker=dict(color=FAKE, size=4, opacity=0.8), hoverinfo="skip"))
    if show_arrows and len(snap.arrows_at):
        length = 0.08 * (box[1] - box[0])
        xs, ys = _segments(snap.arrows_at, _scaled(snap.arrows, length))
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="−∇ generator loss",
                                 line=dict(color="black", width=1.2), hoverinfo="skip"))
    if centers is not None and radius is not None:
        ok_modes = (snap.coverage.covered if snap.coverage is not None
                    else np.zeros(len(centers), bool))
        for (cx, cy), ok in zip(centers, ok_modes):
            fig.add_shape(type="circle", x0=cx - radius, x1=cx + radius, y0=cy - radius,
                          y1=cy + radius, line=dict(color=COVERED if ok else MISSED, width=1.5,
                                                    dash="solid" if ok else "dot"))
    fig.update_layout(height=height, xaxis=dict(range=[box[0], box[1]], title="x₁"),
                      yaxis=dict(range=[box[2], box[3]], title="x₂", scaleanchor="x",
                                 scaleratio=1),
                      legend=dict(orientation="h", y=-0.12), margin=dict(t=30),
                      title=f"Iteration {snap.step:,}")
    return fig


def mode_history_figure(steps: np.ndarray, hists: np.ndarray, n_eval: int) -> go.Figure:
    """Share of generated samples at each mode over training: a heatmap (x: iteration,
    y: mode). A generator hopping between modes draws a bright cell that moves."""
    share = hists / max(n_eval, 1) if len(hists) else np.zeros((0, 0))
    fig = go.Figure(go.Heatmap(x=steps, y=np.arange(share.shape[1] if share.ndim == 2 else 0),
                               z=share.T if share.size else None, colorscale="Viridis",
                               zmin=0, zmax=max(0.25, float(share.max()) if share.size else 1),
                               colorbar=dict(title=dict(text="share", side="right"),
                                             thickness=12),
                               hovertemplate="iteration %{x}<br>mode %{y}<br>share %{z:.3f}"
                                             "<extra></extra>"))
    fig.update_layout(title="Mode histogram over time", xaxis_title="iteration",
                      yaxis_title="mode", height=300, margin=dict(t=40))
    return fig


def training_curves_figure(history: History, n_modes: int | None) -> go.Figure:
    """Left: L_D and L_G (mean over each logged chunk). Right: modes covered (and the
    share of high-quality samples) when the target is a mixture."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Losses", "Mode coverage"),
                        specs=[[{}, {"secondary_y": True}]])
    for name, label in (("loss_d", "L_D"), ("loss_g", "L_G")):
        s, v = history.as_arrays(name)
        fig.add_trace(go.Scatter(x=s, y=v, mode="lines", name=label), row=1, col=1)
    if n_modes:
        s, v = history.as_arrays("modes")
        fig.add_trace(go.Scatter(x=s, y=v, mode="lines", name="modes covered",
                                 line=dict(color=COVERED, shape="hv")), row=1, col=2)
        s, q = history.as_arrays("high_quality")
        fig.add_trace(go.Scatter(x=s, y=q, mode="lines", name="high-quality share",
                                 line=dict(color=REAL, dash="dot")), row=1, col=2,
                      secondary_y=True)
        fig.update_yaxes(range=[0, n_modes + 0.5], title_text="modes", row=1, col=2)
        fig.update_yaxes(range=[0, 1.05], title_text="share", row=1, col=2, secondary_y=True)
    fig.update_xaxes(title_text="iteration")
    fig.update_layout(height=300, margin=dict(t=40), legend=dict(orientation="h", y=-0.3))
    return fig


def dirac_figure(field: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                 runs: Mapping[str, DiracTrajectory], box: float) -> go.Figure:
    """Left: the vector field (θ, ψ) -> (−∂L_G/∂θ, −∂L_D/∂ψ) and trajectories from (θ₀, ψ₀).
    Right: distance to the equilibrium (0, 0) per iteration."""
    th, ps, vt, vp = field
    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45],
                        subplot_titles=("Vector field and trajectories",
                                        "Distance to the equilibrium (0, 0)"))
    starts = np.stack([th.ravel(), ps.ravel()], 1)
    vec = np.stack([vt.ravel(), vp.ravel()], 1)
    norm = np.linalg.norm(vec, axis=1, keepdims=True)
    unit = np.divide(vec, norm, out=np.zeros_like(vec), where=norm > 0)
    xs, ys = _segments(starts, unit * (box / len(th)) * 1.6)
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#bbbbbb", width=1),
                             name="field", hoverinfo="skip"), row=1, col=1)
    fig.add_trace(go.Scatter(x=starts[:, 0], y=starts[:, 1], mode="markers",
                             marker=dict(color="#bbbbbb", size=3), showlegend=False,
                             hoverinfo="skip"), row=1, col=1)
    for i, (name, tr) in enumerate(runs.items()):
        color = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"][i % 4]
        fig.add_trace(go.Scatter(x=tr.theta, y=tr.psi, mode="lines", name=name,
                                 line=dict(color=color, width=2)), row=1, col=1)
        fig.add_trace(go.Scatter(x=np.arange(len(tr.distance)), y=tr.distance, mode="lines",
                                 name=name, line=dict(color=color, width=2), showlegend=False),
                      row=1, col=2)
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers", name="equilibrium",
                             marker=dict(symbol="star", size=12, color="black")), row=1, col=1)
    fig.update_xaxes(title_text="θ (generator)", range=[-box, box], row=1, col=1)
    fig.update_yaxes(title_text="ψ (discriminator)", range=[-box, box], row=1, col=1,
                     scaleanchor="x", scaleratio=1)
    fig.update_xaxes(title_text="iteration", row=1, col=2)
    fig.update_yaxes(title_text="√(θ² + ψ²)", rangemode="tozero", row=1, col=2)
    fig.update_layout(height=430, margin=dict(t=40), legend=dict(orientation="h", y=-0.2))
    return fig


def wasserstein_figure(lines: ParallelLines, theta_now: float, n_points: int = 40) -> go.Figure:
    """Left: the two distributions, x₁ = 0 and x₁ = θ, x₂ ~ U[−1, 1]. Right: JSD (log 2 for
    every θ ≠ 0) and W₁ = |θ| as θ varies."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65],
                        subplot_titles=("P₀ (real) and P_θ (generated)", "Distance vs θ"))
    y = np.linspace(-1, 1, n_points)
    fig.add_trace(go.Scatter(x=np.zeros_like(y), y=y, mode="markers", name="P₀: x₁ = 0",
                             marker=dict(color=REAL, size=5)), row=1, col=1)
    fig.add_trace(go.Scatter(x=np.full_like(y, theta_now), y=y, mode="markers",
                             name="P_θ: x₁ = θ", marker=dict(color=FAKE, size=5)), row=1, col=1)
    nz = lines.theta != 0
    fig.add_trace(go.Scatter(x=lines.theta[nz], y=lines.jsd[nz], mode="markers",
                             name="JSD(P₀‖P_θ)", marker=dict(color="#d62728", size=4)),
                  row=1, col=2)
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers", showlegend=False,
                             marker=dict(color="#d62728", size=8)), row=1, col=2)
    fig.add_trace(go.Scatter(x=lines.theta, y=lines.w1, mode="lines", name="W₁(P₀, P_θ) = |θ|",
                             line=dict(color="#1f77b4")), row=1, col=2)
    fig.add_vline(x=theta_now, line=dict(color=FAKE, dash="dot"), row=1, col=2)
    lim = float(np.abs(lines.theta).max()) if len(lines.theta) else 1.0
    fig.update_xaxes(title_text="x₁", range=[-lim - 0.2, lim + 0.2], row=1, col=1)
    fig.update_yaxes(title_text="x₂", range=[-1.2, 1.2], row=1, col=1)
    fig.update_xaxes(title_text="θ", row=1, col=2)
    fig.update_yaxes(title_text="distance", row=1, col=2)
    fig.update_layout(height=360, margin=dict(t=40), legend=dict(orientation="h", y=-0.25))
    return fig
