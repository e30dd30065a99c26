"""Figure builders of the Training in practice page: plain data in, a Plotly figure out (no
st.*). Figures redrawn every live frame are plain dicts (ui/fastfig.py: the canvas paints
them)."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, Fig, f32, plain_figure
from ui.theme import COLORWAY

ARM_NAMES = {"ticket": "winning ticket (rewound)", "reinit": "same mask, re-initialised",
             "random": "random mask"}
METHOD_COLORS = {"grid": COLORWAY[0], "random": COLORWAY[1], "bayesian": COLORWAY[2]}


def band_figure(xs: np.ndarray, mean: np.ndarray, std: np.ndarray, members: np.ndarray,
                x: np.ndarray, y: np.ndarray, truth: np.ndarray, gap: float,
                title: str) -> go.Figure:
    """Data, the predictive mean, the band mean ± 2σ, a few members' curves; the gap shaded."""
    up, lo = mean + 2 * std, mean - 2 * std
    traces = [dict(type="scatter", x=f32(np.concatenate([xs, xs[::-1]])),
                   y=f32(np.concatenate([up, lo[::-1]])), fill="toself", mode="lines",
                   line=dict(width=0), fillcolor="rgba(99,110,250,0.25)", name="mean ± 2σ")]
    for i, row in enumerate(members[:5]):
        traces.append(dict(type="scatter", x=f32(xs), y=f32(row), mode="lines",
                           line=dict(width=1, color="rgba(120,120,120,0.6)"),
                           name="members / passes", showlegend=i == 0))
    traces += [dict(type="scatter", x=f32(xs), y=f32(truth), mode="lines",
                    line=dict(dash="dot", color="black", width=1), name="sin 2x + 0.3x"),
               dict(type="scatter", x=f32(xs), y=f32(mean), mode="lines",
                    line=dict(color=COLORWAY[0], width=3), name="predictive mean"),
               dict(type="scatter", x=f32(x), y=f32(y), mode="markers", name="data",
                    marker=dict(color=COLORWAY[1], size=6))]
    return plain_figure(traces, dict(
        title=dict(text=title), height=460, legend=LEGEND_BELOW,
        shapes=[dict(type="rect", xref="x", yref="paper", x0=-gap, x1=gap, y0=0, y1=1,
                     fillcolor="rgba(0,0,0,0.06)", line=dict(width=0))],
        xaxis=dict(title=dict(text="x (shaded: the gap without data)")),
        yaxis=dict(title=dict(text="y"), range=[-4, 4])))


def svgd_figure(grid: np.ndarray, density: np.ndarray, estimate: np.ndarray,
                particles: np.ndarray, iteration: int, bandwidth: float) -> go.Figure:
    """The target density, the particles' kernel density estimate, the particles as a rug."""
    traces = [dict(type="scatter", x=f32(grid), y=f32(density), mode="lines", name="target p(x)",
                   line=dict(color="black", width=2, dash="dot")),
              dict(type="scatter", x=f32(grid), y=f32(estimate), mode="lines",
                   name="particles' density estimate", line=dict(color=COLORWAY[0], width=3)),
              dict(type="scatter", x=f32(particles), y=f32(np.full(len(particles), -0.02)),
                   mode="markers", name="particles",
                   marker=dict(color=COLORWAY[1], size=8, symbol="line-ns-open"))]
    return plain_figure(traces, dict(
        title=dict(text=f"SVGD, iteration {iteration}: {len(particles)} particles, "
                        f"bandwidth h = {bandwidth:.3g}"),
        height=460, legend=LEGEND_BELOW, xaxis=dict(title=dict(text="x"), range=[-12, 6]),
        yaxis=dict(title=dict(text="density"), range=[-0.05, 0.6])))


def search_figure(surface: np.ndarray, axis: np.ndarray, runs: Mapping[str, object],
                  u_star: float) -> go.Figure:
    """Left: the score over (u, v) with each method's trials; right: best score so far."""
    fig = Fig(1, 2, column_widths=[0.55, 0.45], horizontal_spacing=0.1,
              subplot_titles=("Trials on the score surface", "Best score so far"))
    fig.add("heatmap", 1, 1, x=f32(axis), y=f32(axis), z=f32(surface.T), colorscale="Viridis",
            showscale=False, name="score", hoverinfo="skip")
    symbols = {"grid": "square", "random": "circle", "bayesian": "diamond"}
    for m, run in runs.items():
        pts = run.points                                   # type: ignore[attr-defined]
        fig.add("scatter", 1, 1, x=f32(pts[:, 0]), y=f32(pts[:, 1]), mode="markers", name=m,
                legendgroup=m, marker=dict(color=METHOD_COLORS[m], size=9,
                                           symbol=symbols[m], line=dict(color="white",
                                                                        width=1)))
        best = run.best_so_far                             # type: ignore[attr-defined]
        fig.add("scatter", 1, 2, x=np.arange(1, len(best) + 1), y=f32(best),
                mode="lines+markers", name=m, legendgroup=m, showlegend=False,
                line=dict(color=METHOD_COLORS[m], shape="hv"))
    fig.vline(u_star, 1, 1, line=dict(color="white", dash="dot"))
    fig.axes(1, 1, x=dict(title=dict(text="u (important)"), range=[0, 1]),
             y=dict(title=dict(text="v (unimportant)"), range=[0, 1]))
    fig.axes(1, 2, x=dict(title=dict(text="trial")), y=dict(title=dict(text="best score")))
    fig.update(height=460, legend=LEGEND_BELOW)
    return fig.figure()


def lottery_figure(weights: np.ndarray, curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
                   dense: float | None, kept: float, rate: float) -> go.Figure:
    """Left: the ticket's first-layer weights (pruned = 0, blank); right: test accuracy at
    the end of each round against the fraction of weights kept (log axis)."""
    fig = Fig(1, 2, column_widths=[0.42, 0.58], horizontal_spacing=0.12,
              subplot_titles=(f"Ticket's layer 1: {kept:.1%} kept, {rate:.0%} cut a round",
                              "Test accuracy vs fraction kept"))
    z = np.where(weights == 0, np.nan, weights)
    lim = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
    fig.add("heatmap", 1, 1, z=f32(z), colorscale="RdBu", zmin=-lim, zmax=lim,
            showscale=False, hoverinfo="skip", name="weights")
    for i, (arm, (x, y)) in enumerate(curves.items()):
        fig.add("scatter", 1, 2, x=f32(100 * x), y=f32(100 * y), mode="lines+markers",
                name=ARM_NAMES[arm], line=dict(color=COLORWAY[i], width=3))
    if dense is not None:
        fig.hline(100 * dense, 1, 2, line=dict(color="gray", dash="dot"), text="dense")
    fig.axes(1, 1, x=dict(title=dict(text="input pixel"), showgrid=False,
                          showticklabels=False),
             y=dict(title=dict(text="hidden unit"), showgrid=False, showticklabels=False))
    fig.axes(1, 2, x=dict(title=dict(text="% of weights kept"), type="log",
                          autorange="reversed"),
             y=dict(title=dict(text="test accuracy (%)"), range=[0, 100]))
    fig.update(height=460, legend=LEGEND_BELOW)
    return fig.figure()


def distill_figure(steps: np.ndarray, hard: np.ndarray, soft: np.ndarray, teacher: float,
                   targets: np.ndarray, temperatures: tuple[float, ...], label: int,
                   T: float) -> go.Figure:
    """Left: test accuracy vs iteration of both students; right: the teacher's soft targets
    of one digit at several temperatures."""
    fig = Fig(1, 2, column_widths=[0.55, 0.45], horizontal_spacing=0.1,
              subplot_titles=("Students' test accuracy",
                              f"Teacher's soft targets for a {label}"))
    fig.add("scatter", 1, 1, x=f32(steps), y=f32(100 * hard), mode="lines",
            name="student on hard labels", line=dict(color=COLORWAY[0], width=3))
    fig.add("scatter", 1, 1, x=f32(steps), y=f32(100 * soft), mode="lines",
            name=f"student on soft targets, T = {T:g}", line=dict(color=COLORWAY[1], width=3))
    fig.hline(100 * teacher, 1, 1, line=dict(color="gray", dash="dot"), text="teacher")
    for i, (row, t) in enumerate(zip(targets, temperatures)):
        fig.add("bar", 1, 2, x=list(range(10)), y=f32(row), name=f"T = {t:g}",
                marker=dict(color=COLORWAY[(i + 2) % len(COLORWAY)]))
    fig.axes(1, 1, x=dict(title=dict(text="iteration")),
             y=dict(title=dict(text="test accuracy (%)")))
    fig.axes(1, 2, x=dict(title=dict(text="class"), dtick=1),
             y=dict(title=dict(text="probability"), range=[0, 1]))
    fig.update(height=460, legend=LEGEND_BELOW, barmode="group")
    return fig.figure()
