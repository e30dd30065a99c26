"""Figures of the GAN page: pure builders, engine results in -> go.Figure out (no st.*)."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.gan import (DiracTrajectory, DiscriminatorVsCritic, GANSnapshot, GeneratorLossCurves,
                        ParallelLines)
from engine.gan.reads import GANFrame
from engine.training import History
from ui.fastfig import LEGEND_BELOW, colorscale, f32, plain_figure
from ui.screen import block_means
from ui.theme import COLORWAY

REAL_SHOWN = 300     # real points drawn
POINT_HALF = 0.004   # half-length of a sample's stroke, as a share of the box width (~4 px)
SAMPLE_PX = 4        # the stroke's width in px: a ~4 px square per sample
REAL = "#7f7f7f"
FAKE = "#9467bd"
COVERED = "#2ca02c"
MISSED = "#d62728"


def _segments(starts: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y of line segments start -> start + vector, separated by NaN (one trace; Plotly
    breaks a line at a NaN): float32 arrays, sent as typed arrays."""
    s = np.asarray(starts, dtype=np.float32).reshape(-1, 2)
    e = s + np.asarray(vectors, dtype=np.float32).reshape(-1, 2)
    xs = np.full((len(s), 3), np.nan, np.float32)
    ys = np.full((len(s), 3), np.nan, np.float32)
    xs[:, 0], xs[:, 1], ys[:, 0], ys[:, 1] = s[:, 0], e[:, 0], s[:, 1], e[:, 1]
    return xs.ravel(), ys.ravel()


def _rings(centers: np.ndarray, radius: float, n: int = 33) -> tuple[np.ndarray, np.ndarray]:
    """x and y of circles of `radius` around each center, separated by NaN (float32)."""
    t = np.linspace(0, 2 * np.pi, n)
    c = np.asarray(centers, dtype=float).reshape(-1, 2)
    xs = np.full((len(c), n + 1), np.nan, np.float32)
    ys = np.full((len(c), n + 1), np.nan, np.float32)
    xs[:, :n] = c[:, :1] + radius * np.cos(t)
    ys[:, :n] = c[:, 1:] + radius * np.sin(t)
    return xs.ravel(), ys.ravel()


def dash_path(points: np.ndarray, half: float) -> str:
    """A short horizontal stroke x − half → x + half through each of `points`, as ONE SVG
    path string ("M x0,y L x1,y" per point, 4 significant digits). Stroked as wide as it is
    long it draws a small square per sample: one SVG element however many points (a marker
    trace is one element per point; this figure's first paint was ~1,250 elements), and half
    the text of a filled square. Non-finite points are left out."""
    p = np.asarray(points, np.float64).reshape(-1, 2)
    p = p[np.isfinite(p).all(1)]
    if not len(p):
        return ""
    return ("M%.4g,%.4gL%.4g,%.4g" * len(p)) % tuple(
        np.column_stack([p[:, 0] - half, p[:, 1], p[:, 0] + half, p[:, 1]]).ravel().tolist())


def _sample_shapes(real: np.ndarray, fake: np.ndarray, half: float) -> list[dict]:
    """Real (grey) and generated (purple) samples: one stroked path shape per kind (~4 px
    squares), drawn above the heatmap, arrows and rings, reals over fakes and half as
    wide: where the generator covers a mode its purple cloud surrounds the grey data
    instead of hiding it (the page's text names both colours)."""
    return [{"type": "path", "path": path, "xref": "x", "yref": "y", "layer": "above",
             "opacity": opacity, "line": {"color": color, "width": width}}
            for path, color, opacity, width in (
                (dash_path(fake, half), FAKE, 0.8, SAMPLE_PX),
                (dash_path(real, half / 2), REAL, 0.9, SAMPLE_PX / 2)) if path]


def _legend_entry(name: str, color: str, opacity: float) -> dict:
    """A trace with no points that only puts a square marker of `color` in the legend (the
    samples themselves are path shapes, which the legend does not list)."""
    return dict(type="scatter", x=[None], y=[None], mode="markers", name=name,
                marker=dict(color=color, size=8, symbol="square", opacity=opacity),
                hoverinfo="skip")


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
                   height: int = 520, setup: str = "") -> go.Figure:
    """Real points (grey) and generated points over the discriminator heatmap, arrows of
    −∇_x L_G on a subset of fakes, and circles of radius n_sigma·std around the mixture's
    modes (green: covered, red dotted: missed). The samples are two path shapes of small
    squares (dash_path: 2 SVG elements instead of ~900 markers; the legend lists them
    through two empty traces). Built in one call from plain dicts (ui/fastfig.py: redrawn
    every live frame; add_trace/add_shape one by one cost ~10x more, validation ~7x more).
    `setup` (the target and the networks) is the title's subtitle; the title counts the
    modes covered at the latest check (what the tour's words point to, on the first screen
    of the projector)."""
    traces: list = []
    cov = snap.coverage
    count = (f" · modes covered now: {cov.modes_covered} of {cov.n_modes}"
            if cov is not None else "")
    c = snap.critic
    if show_heatmap:
        m = 1.0 if c.kind.startswith("D(x)") else (float(np.nanmax(np.abs(c.values))) or 1.0)
        traces.append(dict(
            type="heatmap", x=f32(c.xs), y=f32(c.ys), z=f32(c.values), opacity=0.55,
            name=c.kind, colorscale=colorscale("RdBu"),
            zmin=0.0 if c.kind.startswith("D(x)") else -m, zmax=m,
            colorbar=dict(title=dict(text=c.kind, side="right"), thickness=12, len=0.8),
            hovertemplate="x=%{x:.2f}, y=%{y:.2f}<br>" + c.kind + "=%{z:.3f}<extra></extra>"))
    real = snap.real[:REAL_SHOWN]      # a random subset already: the first ones suffice
    traces.append(_legend_entry("real data", REAL, 0.6))
    traces.append(_legend_entry("generated", FAKE, 0.8))
    if show_arrows and len(snap.arrows_at):
        xs, ys = _segments(snap.arrows_at, _scaled(snap.arrows, 0.08 * (box[1] - box[0])))
        traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", name="−∇ generator loss",
                           line=dict(color="black", width=1.2), hoverinfo="skip"))
    if centers is not None and radius is not None:
        covered = (snap.coverage.covered if snap.coverage is not None
                   else np.zeros(len(centers), bool))
        for ok, name, color, dash in ((True, "covered mode (3σ disc)", COVERED, "solid"),
                                      (False, "missed mode", MISSED, "dot")):
            if (covered == ok).any():
                xs, ys = _rings(np.asarray(centers)[covered == ok], radius)
                traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", name=name,
                                   line=dict(color=color, width=1.5, dash=dash),
                                   hoverinfo="skip"))
    return plain_figure(traces, dict(
        shapes=_sample_shapes(real, snap.fake, POINT_HALF * (box[1] - box[0])),
        height=height, xaxis=dict(range=[box[0], box[1]], title=dict(text="x₁")),
        yaxis=dict(range=[box[2], box[3]], title=dict(text="x₂"), scaleanchor="x",
                   scaleratio=1),
        legend=LEGEND_BELOW, margin=dict(t=30),
        title=dict(text=f"Iteration {snap.step:,}" + count, subtitle=dict(text=setup))))


def _mode_heatmap(steps: np.ndarray, hists: np.ndarray, n_eval: int) -> tuple[dict, float]:
    """Share of generated samples at each mode over training (x: iteration, y: mode), and the
    top of its colour range. A generator hopping between modes draws a bright cell that
    moves. No colour bar: the panel title gives the range (one figure holds three panels)."""
    share = hists / max(n_eval, 1) if len(hists) else np.zeros((0, 0))
    zmax = max(0.25, float(share.max()) if share.size else 1.0)
    return dict(type="heatmap", x=np.asarray(steps),
                y=np.arange(share.shape[1] if share.ndim == 2 else 0),
                z=f32(share.T) if share.size else None, colorscale=colorscale("Viridis"),
                zmin=0, zmax=zmax, showscale=False,
                hovertemplate="iteration %{x}<br>mode %{y}<br>share %{z:.3f}<extra></extra>"
                ), zmax


def curves_figure(history: History, n_modes: int | None, steps: np.ndarray | None = None,
                  hists: np.ndarray | None = None, n_eval: int = 1) -> go.Figure:
    """One figure under the samples (one chart, not two in a row of columns: a playing frame
    re-renders every element it emits). For a mixture target three panels: the
    share of samples per mode over time (heatmap, dark 0 → yellow = the title's top share),
    L_D and L_G (mean over each logged chunk), and the modes covered with the share of
    high-quality samples (right axis). Otherwise the losses alone. Laid out by axis domains
    (make_subplots alone costs ~20 ms, and this is redrawn every live frame)."""
    mixture = bool(n_modes) and steps is not None and hists is not None
    x_loss = [0.38, 0.6] if mixture else [0.0, 1.0]
    traces: list = []
    for (name, label), color in zip((("loss_d", "L_D"), ("loss_g", "L_G")), COLORWAY):
        s, v = block_means(*history.as_arrays(name))
        traces.append(dict(type="scatter", x=s, y=f32(v), mode="lines", name=label,
                           xaxis="x2", yaxis="y2", line=dict(color=color)))
    layout = dict(height=320, margin=dict(t=40), legend=LEGEND_BELOW,
                  xaxis2=dict(domain=x_loss, anchor="y2", title=dict(text="iteration"),
                               nticks=4),
                  yaxis2=dict(anchor="x2"))
    titles = [("Losses", sum(x_loss) / 2)]
    if mixture:
        heat, zmax = _mode_heatmap(steps, hists, n_eval)
        traces.insert(0, heat)
        layout["xaxis"] = dict(domain=[0, 0.26], anchor="y", title=dict(text="iteration"),
                              nticks=4)
        layout["yaxis"] = dict(anchor="x", title=dict(text="mode"))
        titles.insert(0, (f"Share per mode (0 → {zmax:.0%})", 0.13))
        s, v = block_means(*history.as_arrays("modes"))
        traces.append(dict(type="scatter", x=s, y=f32(v), mode="lines", name="modes covered",
                           xaxis="x3", yaxis="y3", line=dict(color=COVERED, shape="hv")))
        s, q = block_means(*history.as_arrays("high_quality"))
        traces.append(dict(type="scatter", x=s, y=f32(q), mode="lines",
                           name="high-quality share", xaxis="x3", yaxis="y4",
                           line=dict(color=REAL, dash="dot")))
        layout["xaxis3"] = dict(domain=[0.72, 0.9], anchor="y3", title=dict(text="iteration"),
                               nticks=4)
        layout["yaxis3"] = dict(anchor="x3", range=[0, n_modes + 0.5], title=dict(text="modes"))
        layout["yaxis4"] = dict(anchor="x3", overlaying="y3", side="right", range=[0, 1.05],
                                title=dict(text="share"), showgrid=False, tickmode="array",
                                tickvals=[0, 0.5, 1], tickformat=".0%")
        titles.append(("Mode coverage", 0.81))
    layout["annotations"] = [dict(text=t, x=x, y=1.0, xref="paper", yref="paper",
                                  xanchor="center", yanchor="bottom", showarrow=False,
                                  font=dict(size=16)) for t, x in titles]
    if not len(history.as_arrays("loss_d")[0]):       # a fresh GAN: say why the axes are empty
        # once, in the losses panel, in short lines: on the projector annotations grow to the
        # tick size, and one per panel ran over the narrow coverage panel's tick labels
        layout["annotations"] += [dict(text="Press Play<br>or Step", x=sum(x_loss) / 2,
                                       y=0.5, xref="paper", yref="paper", showarrow=False,
                                       font=dict(size=14, color="#666"))]
    return plain_figure(traces, layout)


def live_figures(frame: GANFrame, snap: GANSnapshot, history: History,
                 show_arrows: bool = True, setup: str = "") -> dict[str, go.Figure]:
    """What one live frame of the page draws, by figure key: the samples over D and, in one
    figure, the mode histogram over time (mixture targets only) with the loss / coverage
    curves. Plain data in: the trainer's snapshot, its GANFrame (engine/gan/reads.py) and
    a copy of its history."""
    n_modes = snap.coverage.n_modes if snap.coverage is not None else None
    return {"gan_fig_samples": samples_figure(snap, frame.box, frame.centers, frame.radius,
                                              show_arrows=show_arrows, setup=setup),
            "gan_fig_curves": curves_figure(history, n_modes, frame.mode_steps,
                                            frame.mode_hists, frame.n_eval)}


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
    fig.update_layout(height=380, margin=dict(t=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.3))
    return fig


G_LOSS_NAMES = {"minimax": "minimax: log(1 − D)", "nonsaturating": "non-saturating: −log D"}


def g_losses_figure(curves: GeneratorLossCurves, at: float) -> go.Figure:
    """Left: each generator loss against D(G(z)). Right: |∂L_G/∂f| (f: D's logit), the size
    of the signal that reaches G, on a log axis; the marked verdict dotted."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "Generator loss L_G vs D(G(z))", "Signal to G: |∂L_G/∂(D's logit)|"))
    for i, (name, label) in enumerate(G_LOSS_NAMES.items()):
        color = COLORWAY[i]
        fig.add_trace(go.Scatter(x=curves.d, y=curves.loss[name], mode="lines", name=label,
                                 line=dict(color=color, width=2.5)), row=1, col=1)
        fig.add_trace(go.Scatter(x=curves.d, y=np.abs(curves.slope[name]), mode="lines",
                                 showlegend=False, line=dict(color=color, width=2.5)),
                      row=1, col=2)
    for col in (1, 2):
        fig.add_vline(x=at, line=dict(color="#555", dash="dot"), row=1, col=col)
        fig.update_xaxes(title_text="D(G(z)): D's verdict on a fake", range=[0, 1], row=1,
                         col=col)
    fig.update_yaxes(title_text="L_G", row=1, col=1)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=2)
    fig.update_layout(height=380, margin=dict(t=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.3))
    return fig


def critic_figure(c: DiscriminatorVsCritic) -> go.Figure:
    """Top: the real and fake densities, the optimal discriminator D* and the optimal critic
    (scaled to ±1). Bottom: the slopes that reach the generator, |dD*/dx| and |f′|, on a log
    axis."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.6, 0.4],
                        vertical_spacing=0.08, subplot_titles=(
                            "Optimal discriminator D* and critic f", "Slope: the signal to G"))
    peak = max(c.p_real.max(), c.p_fake.max())
    fig.add_trace(go.Scatter(x=c.x, y=c.p_real / peak, mode="lines", name="real density",
                             line=dict(color=REAL, width=1), fill="tozeroy"), row=1, col=1)
    fig.add_trace(go.Scatter(x=c.x, y=c.p_fake / peak, mode="lines", name="fake density",
                             line=dict(color=FAKE, width=1), fill="tozeroy"), row=1, col=1)
    fig.add_trace(go.Scatter(x=c.x, y=c.d_star, mode="lines", name="D* = p_r/(p_r + p_f)",
                             line=dict(color="#d62728", width=2.5)), row=1, col=1)
    scale = np.abs(c.critic).max() or 1.0
    fig.add_trace(go.Scatter(x=c.x, y=c.critic / scale, mode="lines",
                             name="critic f (scaled to ±1)",
                             line=dict(color="#1f77b4", width=2.5)), row=1, col=1)
    floor = 1e-16
    fig.add_trace(go.Scatter(x=c.x, y=np.maximum(np.abs(c.d_slope), floor), mode="lines",
                             name="|dD*/dx|", line=dict(color="#d62728", dash="dot")),
                  row=2, col=1)
    fig.add_trace(go.Scatter(x=c.x, y=np.maximum(np.abs(c.critic_slope), floor), mode="lines",
                             name="|f′|", line=dict(color="#1f77b4", dash="dot")), row=2, col=1)
    fig.update_yaxes(range=[-1.1, 1.1], row=1, col=1)
    # every 4th decade: the slope panel is short, and labels every 3rd (the theme's choice
    # for 16 decades) stood on one another on the projector
    fig.update_yaxes(type="log", exponentformat="power", range=[-16, 0.5], dtick=4,
                     row=2, col=1)
    fig.update_xaxes(title_text="x", row=2, col=1)
    fig.update_layout(height=480, margin=dict(t=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.15))
    return fig


# ----------------------------------------------------------------------------- manifold
GRID_LINE_EVERY = 4      # draw every 4th latent grid line (11 of the 41 per axis)
OFF_MODE = "#e6e6e6"     # latent nodes of a target without modes


def mode_colors(k: int) -> list[str]:
    """One colour per mode (the qualitative colorway, repeated past its 10 colours)."""
    return [COLORWAY[j % len(COLORWAY)] for j in range(k)]


def _grid_lines(grid: np.ndarray, every: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y of every `every`-th row and column of a (rows, cols, 2) grid of points as one
    polyline trace (NaN between lines): the latent plane's grid lines, wherever they lie."""
    g = np.asarray(grid, np.float32)
    lines = [g[i] for i in range(0, g.shape[0], every)]
    if g.shape[0] > 1:
        lines += [g[:, j] for j in range(0, g.shape[1], every)]
    gap = np.full((1, 2), np.nan, np.float32)
    pts = np.concatenate([np.concatenate([line, gap]) for line in lines])
    return pts[:, 0], pts[:, 1]


def _mode_scale(k: int) -> list[list]:
    """A stepped colorscale for z in {−1 (no mode), 0, …, k−1} over [zmin, zmax] = [−1, k−1]."""
    colors = [OFF_MODE, *mode_colors(k)]
    n = len(colors)
    scale: list[list] = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


def manifold_figure(m, setup: str = "", show_arrows: bool = True,
                    height: int = 520) -> go.Figure:
    """Left: the latent plane (z₁, z₂), each node coloured by the mode whose cell G sends it
    to, pale where G(z) lands more than 3σ from that mode, with the grid lines that the
    right panel carries. Right: those grid
    lines mapped through G, over D's output (heat map), the real points (grey) and each
    mode's 3σ circle in its colour; black strokes: −∇ₓ L_G at the grid's nodes, the pull
    D exerts on a fake sample there. `m`: an engine.gan.manifold.Manifold."""
    box, k = m.box, 0 if m.centers is None else len(m.centers)
    c = m.critic
    zm = 1.0 if c.kind.startswith("D(x)") else (float(np.nanmax(np.abs(c.values))) or 1.0)
    traces: list = [dict(
        type="heatmap", x=f32(c.xs), y=f32(c.ys), z=f32(c.values), opacity=0.5,
        xaxis="x2", yaxis="y2", colorscale=colorscale("RdBu"), showscale=False,
        zmin=0.0 if c.kind.startswith("D(x)") else -zm, zmax=zm, name=c.kind,
        hovertemplate="x=%{x:.2f}, y=%{y:.2f}<br>" + c.kind + "=%{z:.3f}<extra></extra>")]
    rows = m.assign.shape[0]
    if rows > 1:
        traces.append(dict(
            type="heatmap", x=f32(m.u), y=f32(m.u), z=f32(m.assign), zmin=-1,
            zmax=max(k - 1, 0), colorscale=_mode_scale(max(k, 1)), showscale=False,
            name="mode of G(z)", hovertemplate="z₁=%{x:.2f}, z₂=%{y:.2f}<br>mode %{z}"
                                                "<extra></extra>"))
        latent = np.stack(np.meshgrid(m.u, m.u), -1)                     # (res, res, 2)
        y_pale = m.u
    else:               # a 1-D latent: its line, coloured by mode, at z₂ = 0
        traces.append(dict(
            type="heatmap", x=f32(m.u), y=f32([-0.1, 0.1]), z=f32(np.repeat(m.assign, 2, 0)),
            zmin=-1, zmax=max(k - 1, 0), colorscale=_mode_scale(max(k, 1)), showscale=False,
            name="mode of G(z)", hovertemplate="z=%{x:.2f}<br>mode %{z}<extra></extra>"))
        latent = np.stack([m.u, np.zeros_like(m.u)], -1)[None]
        y_pale = np.array([-0.1, 0.1])
    pale = np.where(m.near, np.nan, 1.0)                       # off-mode nodes: a white veil
    traces.append(dict(type="heatmap", x=f32(m.u), y=f32(y_pale),
                       z=f32(pale if rows > 1 else np.repeat(pale, 2, 0)), zmin=0, zmax=1,
                       colorscale=[[0, "white"], [1, "white"]], opacity=0.6, showscale=False,
                       hoverinfo="skip"))
    xs, ys = _grid_lines(latent, GRID_LINE_EVERY)
    traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", showlegend=False,
                       line=dict(color="white", width=1), hoverinfo="skip"))
    real = np.asarray(m.real[:REAL_SHOWN], np.float32)
    traces.append(dict(type="scatter", x=real[:, 0], y=real[:, 1], mode="markers",
                       xaxis="x2", yaxis="y2", name="real data",
                       marker=dict(color=REAL, size=3, opacity=0.6), hoverinfo="skip"))
    if m.centers is not None and m.radius is not None:
        for j, color in enumerate(mode_colors(k)):
            cx, cy = _rings(m.centers[j:j + 1], m.radius)
            traces.append(dict(type="scatter", x=cx, y=cy, mode="lines", xaxis="x2",
                               yaxis="y2", showlegend=False, line=dict(color=color, width=2.5),
                               hovertemplate=f"mode {j}<extra></extra>"))
    xs, ys = _grid_lines(m.mapped, GRID_LINE_EVERY)
    traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", xaxis="x2", yaxis="y2",
                       name="latent grid through G", line=dict(color=FAKE, width=1.2),
                       hoverinfo="skip"))
    if show_arrows and len(m.arrows_at):
        xs, ys = _segments(m.arrows_at, _scaled(m.arrows, 0.08 * (box[1] - box[0])))
        traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", xaxis="x2", yaxis="y2",
                           name="−∇ generator loss", line=dict(color="black", width=1.2),
                           hoverinfo="skip"))
    ext = float(np.abs(m.u).max())
    latent_title = "z₁ (the other latents 0)" if m.latent_dim > 2 else "z₁"
    layout = dict(
        height=height, legend=LEGEND_BELOW, margin=dict(t=60),
        title=dict(text=f"Iteration {m.step:,}: the latent grid through G",
                   subtitle=dict(text=setup)),
        xaxis=dict(domain=[0, 0.3], range=[-ext, ext], title=dict(text=latent_title),
                   anchor="y", tickmode="array", tickvals=[-2, 0, 2]),
        # no scaleanchor: the domains make the latent panel about square (a constrained
        # pair of axes in a second panel is ranged differently by the live canvas)
        yaxis=dict(domain=[0.25, 0.9], range=[-ext, ext], anchor="x", tickmode="array",
                   tickvals=[-2, 0, 2], title=dict(text="z₂" if rows > 1 else "")),
        xaxis2=dict(domain=[0.4, 1.0], range=[box[0], box[1]], title=dict(text="x₁"),
                    anchor="y2"),
        yaxis2=dict(domain=[0.0, 0.9], range=[box[2], box[3]], anchor="x2",
                    scaleanchor="x2", title=dict(text="x₂")),
        annotations=[dict(text="Latent plane: colour = mode of G(z)", x=0.15, y=0.91,
                          xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                          showarrow=False, font=dict(size=14)),
                     dict(text="Data space: the grid through G over D", x=0.7, y=0.91,
                          xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                          showarrow=False, font=dict(size=14))])
    return plain_figure(traces, layout)
