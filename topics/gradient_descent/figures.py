"""Figures of the gradient-descent page: data in, go.Figure out (no Streamlit, no math beyond
arranging what engine/optim/ computed)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.optim import OPTIMIZERS, Grid, RateMap, Trajectory
from ui.fastfig import colorscale, f32, plain_figure
from ui.screen import path_points, screen_series
from ui.theme import COLORWAY

METHOD_COLORS = {name: COLORWAY[i % len(COLORWAY)] for i, name in enumerate(OPTIMIZERS)}
DASHES = {"gd": "dash", "momentum": "dot"}
LOSS_FLOOR = 1e-32    # f - f* below this is drawn at the floor (log axis)
PATH_RES = 0.008      # path vertices closer than this share of the view are merged (~4 px)
MAX_MARKERS = 60      # a path with more vertices than this is drawn as a line only
CLICK_RES = 11        # click_res² invisible click targets on the path figure (see path_figure)
LEVELS = 22           # level lines of the landscape
DOT_RADIUS = 0.004    # step dots on the path figure: ring radius, share of the view


def label(method: str) -> str:
    return OPTIMIZERS[method].label or method


def _run_name(tr: Trajectory) -> str:
    name = label(tr.method)
    if tr.diverged_at is not None:
        name += f" (diverged at step {tr.diverged_at})"
    return name


def start_from_selection(event, bounds: tuple[float, float]) -> tuple[float, float] | None:
    """The start point a plotly selection on the path figure asks for: the first clicked
    point, else the centre of the first box; clipped to bounds. None when nothing usable."""
    selection = (event or {}).get("selection") or {}
    lo, hi = bounds
    try:
        points = selection.get("points") or []
        if points and "x" in points[0] and "y" in points[0]:
            x, y = float(points[0]["x"]), float(points[0]["y"])
        elif selection.get("box"):
            box = selection["box"][0]
            x, y = float(np.mean(box["x"])), float(np.mean(box["y"]))
        else:
            return None
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    if not (np.isfinite(x) and np.isfinite(y)):
        return None
    return round(float(np.clip(x, lo, hi)), 2), round(float(np.clip(y, lo, hi)), 2)


def step_dots(points: np.ndarray, radius: float, sides: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """x, y of ONE gapless polyline that draws a small ring (`sides` corners, radius `radius`
    in data units) around every point: v0 -> its ring -> v0 -> v1 -> its ring -> v1 ... The
    connectors run exactly along the path between consecutive points (drawn under the path's
    own line), and a ring stroked with the path's width reads as a dot. Plotly draws a line
    trace without gaps as one SVG path, so n dots cost one node instead of n marker nodes
    (each rebuilt with ~12 DOM mutations on every redraw; NaN gaps would make one path per
    piece). Round on an equal-aspect plot (the path figure locks x to y)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    t = np.linspace(0.0, 2.0 * np.pi, sides + 1)
    ring = np.c_[np.cos(t), np.sin(t)] * radius                     # closed: last = first
    pieces = np.concatenate([pts[:, None, :], pts[:, None, :] + ring[None], pts[:, None, :]],
                            axis=1)                                    # (n, sides + 3, 2)
    flat = pieces.reshape(-1, 2)
    return flat[:, 0].astype(np.float32), flat[:, 1].astype(np.float32)


def path_figure(grid: Grid, f_star: float, runs: Mapping[str, Trajectory], k: int,
                start: Sequence[float], minimizer: Sequence[float], click_res: int = CLICK_RES,
                title: str = "Paths on the contour plot of f", setup: str = "",
                axes: tuple[np.ndarray, np.ndarray] | None = None,
                model: Sequence[np.ndarray] = ()) -> go.Figure:
    """Contours of log10(f - f* + 1e-3) with every run's path up to iteration k, the current
    points as large dots, the start and the minimizer. A faint grid of points makes the plane
    clickable (a click selects a start point): click_res² invisible markers, each an SVG node
    that Plotly rebuilds on every redraw (~12 DOM mutations each: 25² = 625 of them were ~80%
    of the ~20,000 DOM mutations of one slider move, 15² still ~2,700 of ~11,900). 11² leaves
    a click target every ~0.6 units; hoverdistance lets a click anywhere reach the nearest
    one, and a box selection or the number inputs give any start. The landscape stays a
    filled contour: coloured as a heatmap (one image, but Plotly interpolates it per pixel
    in JS) it redrew slower, ~180 vs ~150 ms median per Plotly.react in the same headless
    Chromium page (Plotly.react of this figure alone, variants alternating; 2-core machine
    under load).

    Paths are drawn at screen resolution (ui/screen.py): iterates within PATH_RES of the
    view of the previous drawn vertex are merged (a converged tail collapses); the step
    dots are a separate trace of small rings (step_dots: one SVG path, not one marker node
    per step), drawn while a path has at most MAX_MARKERS vertices. (Measured in Streamlit,
    headless Chromium: the same four paths drawn as "lines+markers" traces made a slider move
    ~2-3x slower than lines plus a markers trace.) Hover on a path shows the step (customdata).
    Built from plain dicts (ui/fastfig.plain_figure, not validated: the page test validates
    it): Plotly's graph-object validation took ~170 ms of server CPU per rerun here.
    `setup` (the landscape and step size raced) is the title's subtitle."""
    z = np.log10(np.maximum(grid.values - f_star, 0) + 1e-3)
    data: list[dict] = [dict(type="contour", x=f32(grid.gx), y=f32(grid.gy), z=f32(z),
                             colorscale=colorscale("Blues"), reversescale=True,
                             ncontours=LEVELS, showscale=False, opacity=0.75, hoverinfo="skip",
                             contours=dict(coloring="fill", showlines=True),
                             line=dict(color="rgba(40,40,40,0.35)", width=0.6),
                             name="log10(f - f* + 1e-3)")]
    gx = np.linspace(grid.gx[0], grid.gx[-1], click_res)
    gy = np.linspace(grid.gy[0], grid.gy[-1], click_res)
    cx, cy = np.meshgrid(gx, gy)
    data.append(dict(type="scatter", x=f32(cx.ravel()), y=f32(cy.ravel()), mode="markers",
                     name="click: start here", showlegend=False,
                     marker=dict(size=14, color="rgba(0,0,0,0.01)"),
                     hovertemplate="click: start at (%{x:.2f}, %{y:.2f})<extra></extra>"))
    span = max(grid.gx[-1] - grid.gx[0], grid.gy[-1] - grid.gy[0])
    for method, tr in runs.items():
        n = min(k, len(tr.points) - 1)
        pts = tr.points[: n + 1]
        keep = path_points(pts, PATH_RES * span)
        color = METHOD_COLORS[method]
        data.append(dict(type="scatter", x=pts[keep, 0], y=pts[keep, 1],
                         customdata=keep.astype(np.int32), mode="lines", name=_run_name(tr),
                         legendgroup=method, line=dict(color=color, width=2),
                         hovertemplate=f"{label(method)}<br>step %{{customdata}}"
                                       "<br>(%{x:.3g}, %{y:.3g})<extra></extra>"))
        if len(keep) <= MAX_MARKERS:         # the steps: small rings, one path per method
            dx, dy = step_dots(pts[keep], DOT_RADIUS * span)
            data.append(dict(type="scatter", x=dx, y=dy, mode="lines", showlegend=False,
                             line=dict(color=color, width=2, simplify=False),
                             legendgroup=method, hoverinfo="skip",
                             name=f"{label(method)} steps"))
        symbol = "x" if tr.diverged_at is not None and n == len(tr.points) - 1 else "circle"
        data.append(dict(type="scatter", x=pts[-1:, 0], y=pts[-1:, 1], mode="markers",
                         showlegend=False, legendgroup=method, hoverinfo="skip",
                         marker=dict(size=13, color=color, symbol=symbol,
                                     line=dict(color="white", width=1.5))))
    if axes is not None:      # the Hessian's eigenvectors through x*: the ellipses' axes
        half = 2 * span
        for i, (lam, vec) in enumerate(zip(axes[0], axes[1].T)):
            data.append(dict(type="scatter", mode="lines", hoverinfo="skip",
                             x=[minimizer[0] - half * vec[0], minimizer[0] + half * vec[0]],
                             y=[minimizer[1] - half * vec[1], minimizer[1] + half * vec[1]],
                             name=f"eigenvector {i + 1} (λ = {lam:.3g})",
                             line=dict(color="#444", width=1.5, dash="dash" if i else "dot")))
    for i, ring in enumerate(model):      # level curves of the local quadratic model
        data.append(dict(type="scatter", mode="lines", hoverinfo="skip", x=ring[:, 0],
                         y=ring[:, 1], name="quadratic model at the start", showlegend=i == 0,
                         legendgroup="model", line=dict(color="#d62728", width=1.5,
                                                        dash="dash")))
    data.append(dict(type="scatter", x=[float(start[0])], y=[float(start[1])], mode="markers",
                     name="start", hoverinfo="skip",
                     marker=dict(size=12, color="black", symbol="square-open",
                                 line=dict(width=2))))
    data.append(dict(type="scatter", x=[float(minimizer[0])], y=[float(minimizer[1])],
                     mode="markers", name="minimum x*", hoverinfo="skip",
                     marker=dict(size=15, color="gold", symbol="star",
                                 line=dict(color="black", width=1))))
    x_range = [float(grid.gx[0]), float(grid.gx[-1])]
    y_range = [float(grid.gy[0]), float(grid.gy[-1])]
    return plain_figure(data, dict(
        title=dict(text=f"{title} (iteration {k})", subtitle=dict(text=setup)), height=520,
        xaxis=dict(range=x_range, title=dict(text="x₁"), constrain="domain"),
        yaxis=dict(range=y_range, title=dict(text="x₂"), scaleanchor="x", scaleratio=1,
                   constrain="domain"),
        legend=dict(orientation="v", x=1.02, y=1),
        # not dragmode="select": Streamlit then sets clickmode="event", and a click selects
        # nothing (box select stays in the toolbar)
        dragmode="pan", clickmode="event+select", hoverdistance=36))


def loss_figure(runs: Mapping[str, Trajectory], f_star: float,
                theory: Mapping[str, tuple[float, str]] | None = None, k: int | None = None
                ) -> go.Figure:
    """log(f - f*) vs iteration per run; theory: name -> (rate rho, label) drawn dashed with
    slope rho^(2k) (f - f* is quadratic in the error, so it decays at rho^2 per step), through
    the last point of run `name` above the float floor: the slopes compare on the tail, past
    the transient (the heavy ball's double root at its optimum decays like k rho^k)."""
    data: list[dict] = []
    longest = 1
    gaps = {}
    for method, tr in runs.items():
        gap = np.maximum(tr.losses - f_star, LOSS_FLOOR)
        gaps[method] = gap
        longest = max(longest, tr.steps)
        shown = screen_series(np.log10(gap))            # long runs at screen resolution
        data.append(dict(type="scatter", x=shown, y=gap[shown], mode="lines",
                         name=_run_name(tr), line=dict(color=METHOD_COLORS[method], width=2),
                         hovertemplate=f"{label(method)}<br>step %{{x}}<br>"
                                       "f - f* = %{y:.3g}<extra></extra>"))
    for name, (rate, text) in (theory or {}).items():
        gap = gaps.get(name)
        if gap is None or not np.isfinite(rate) or rate <= 0:
            continue
        above = np.flatnonzero(np.isfinite(gap) & (gap > 1e3 * LOSS_FLOOR))
        if not len(above):
            continue
        k_end = int(above[-1])
        kk = np.arange(longest + 1)
        with np.errstate(all="ignore"):
            y = gap[k_end] * rate ** (2.0 * (kk - k_end))
        keep = (y > LOSS_FLOOR) & (y < 1e3 * float(np.nanmax(gap)))
        data.append(dict(type="scatter", x=kk[keep], y=y[keep], mode="lines", name=text,
                         line=dict(color=METHOD_COLORS.get(name, "#444"), width=1.5,
                                   dash=DASHES.get(name, "dash")), hoverinfo="skip"))
    shapes = [] if k is None else [_vline(k, dict(color="#888", width=1, dash="dot"))]
    return plain_figure(data, dict(
        title=dict(text="Error f(x_k) − f* (log scale)"), height=380, shapes=shapes,
        xaxis=dict(title=dict(text="iteration k")),
        yaxis=dict(type="log", title=dict(text="f − f*"), exponentformat="power"),
        legend=dict(orientation="v", x=1.02, y=1)))


def schedule_figure(lrs: np.ndarray, name: str, restarts: Sequence[int] = (),
                    x_title: str = "step t") -> go.Figure:
    """η_t against t, the largest η marked, warm restarts as dotted lines."""
    t = np.arange(len(lrs))
    peak = int(np.argmax(lrs))
    fig = go.Figure([go.Scatter(x=t, y=lrs, mode="lines", name=name,
                                line=dict(color=METHOD_COLORS["gd"], width=2)),
                     go.Scatter(x=[peak], y=[lrs[peak]], mode="markers+text",
                                name=f"largest η = {lrs[peak]:.3g} at t = {peak}",
                                text=[f"t = {peak}"], textposition="top right",
                                marker=dict(size=10, color="black", symbol="diamond"))])
    fig.update_layout(shapes=[_vline(r, dict(color="#888", width=1, dash="dot"))
                              for r in restarts],
                      title=f"Learning rate η_t: {name}", height=380, xaxis_title=x_title,
                      yaxis=dict(title="η_t", rangemode="tozero"),
                      legend=dict(orientation="h", y=-0.25))
    return fig


def _vline(x: float, line: dict) -> dict:
    """What go.Figure.add_vline adds (a line across the plot's height at data x)."""
    return dict(type="line", xref="x", yref="y domain", x0=x, x1=x, y0=0, y1=1, line=line)


def step_factor_figure(lr: float, eigenvalues: Sequence[float], beta: float | None = None,
                       heavy_ball_curve: tuple[np.ndarray, np.ndarray] | None = None,
                       title_note: str = "") -> go.Figure:
    """|1 - lr l| against l: GD multiplies the error along an eigenvector with eigenvalue l by
    this factor each step; > 1 (above the red line) means that direction blows up."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    hi = max(1.25 * lam.max(), 2.4 / lr if lr > 0 else 1.0)
    lo = min(0.0, 1.25 * lam.min())
    grid = np.linspace(lo, hi, 400)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=grid, y=np.abs(1 - lr * grid), mode="lines", name="GD: |1 − ηλ|",
                             line=dict(color=METHOD_COLORS["gd"], width=2)))
    if heavy_ball_curve is not None:
        fig.add_trace(go.Scatter(x=heavy_ball_curve[0], y=heavy_ball_curve[1], mode="lines",
                                 name=f"heavy ball (β = {beta:.3g}): largest |root|",
                                 line=dict(color=METHOD_COLORS["momentum"], width=2)))
    # the label at the middle, over the V's bottom: the eigenvalues' markers sit near
    # factor 1 at the ends (a small λ and a λ near 2/η), where their own labels are
    fig.add_hline(y=1.0, line=dict(color="#d62728", width=1.5, dash="dash"),
                  annotation_text="factor 1: diverges above", annotation_position="top")
    for i, l in enumerate(lam):
        factor = abs(1 - lr * l)
        fig.add_trace(go.Scatter(x=[l], y=[factor], mode="markers+text",
                                 name=f"λ{i + 1} = {l:.3g}: factor {factor:.3f}",
                                 text=[f"λ{i + 1}"], textposition="top center",
                                 marker=dict(size=12, color="black", symbol="diamond")))
    fig.add_vline(x=2 / lr if lr > 0 else 0, line=dict(color="#d62728", width=1, dash="dot"),
                  annotation_text="λ = 2/η", annotation_position="bottom right")
    fig.update_layout(title="Why the largest eigenvalue limits η" + title_note, height=380,
                      xaxis_title="eigenvalue λ", yaxis=dict(title="factor per step",
                                                             rangemode="tozero"),
                      legend=dict(orientation="v", x=1.02, y=1))
    return fig


def eigen_error_figure(errors: Mapping[str, np.ndarray], eigenvalues: Sequence[float],
                       diverged: Mapping[str, int | None] | None = None) -> go.Figure:
    """|z_i(k)|: the error along each eigenvector (smallest eigenvalue left), one line per
    method: the fast direction is done in a few steps, the slow one sets the pace."""
    lam = list(eigenvalues)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[f"along eigenvector 1 (λ = {lam[0]:.3g})",
                                        f"along eigenvector 2 (λ = {lam[1]:.3g})"])
    for method, z in errors.items():
        for col in (0, 1):
            fig.add_trace(go.Scatter(x=np.arange(len(z)), y=np.maximum(np.abs(z[:, col]), 1e-16),
                                     mode="lines", name=label(method), legendgroup=method,
                                     showlegend=col == 0,
                                     line=dict(color=METHOD_COLORS[method], width=2)),
                          row=1, col=col + 1)
    fig.update_yaxes(type="log", exponentformat="power")
    fig.update_yaxes(title_text="|error component|", row=1, col=1)
    fig.update_xaxes(title_text="iteration k")
    fig.update_layout(title="Error along each eigenvector (the “milestones” view)", height=360,
                      legend=dict(orientation="h", y=-0.3))
    return fig


def rate_map_figure(rm: RateMap, lr: float | None = None, beta: float | None = None,
                    optimum: tuple[float, float] | None = None) -> go.Figure:
    """Heatmap of the measured heavy-ball rate over (lr, beta); values >= 1 (diverging) are
    shown at the top of the colour scale. The current choice and the optimum are marked."""
    measured = np.asarray(rm.measured, dtype=np.float64)
    rates = np.where(measured < 1.0, measured, np.nan)      # diverging cells: grey background
    finite = rates[np.isfinite(rates)]
    zmin = float(np.floor(finite.min() * 20) / 20) if finite.size else 0.0
    text = np.where(measured < 1.0, np.char.mod("%.4f", np.nan_to_num(measured)), "diverges")
    fig = go.Figure(go.Heatmap(
        x=rm.lrs, y=rm.betas, z=rates, text=text, colorscale="Viridis", reversescale=True,
        zmin=zmin, zmax=1.0, colorbar=dict(title=dict(text="rate", side="right")),
        hovertemplate="η = %{x:.3g}<br>β = %{y:.3f}<br>rate %{text}<extra></extra>"))
    if rm.theory is not None:
        fig.add_trace(go.Contour(x=rm.lrs, y=rm.betas, z=rm.theory, showscale=False,
                                 contours=dict(start=1.0, end=1.0, coloring="none",
                                               showlabels=True),
                                 line=dict(color="black", width=2, dash="dash"),
                                 name="theory: rate = 1", hoverinfo="skip"))
    if optimum is not None:
        fig.add_trace(go.Scatter(x=[optimum[0]], y=[optimum[1]], mode="markers",
                                 name="optimal (η, β)",
                                 marker=dict(size=15, symbol="star", color="gold",
                                             line=dict(color="black", width=1))))
    if lr is not None and beta is not None:
        fig.add_trace(go.Scatter(x=[lr], y=[beta], mode="markers", name="your (η, β)",
                                 marker=dict(size=14, symbol="circle-open", color="red",
                                             line=dict(width=3))))
    fig.update_layout(title=f"Heavy-ball rate per step, measured over {rm.steps} steps "
                            "(grey: diverges)", plot_bgcolor="#d0d0d0",
                      height=420, xaxis=dict(type="log", title="learning rate η"),
                      yaxis=dict(title="momentum β"),
                      legend=dict(x=0.99, xanchor="right", y=0.99, yanchor="top",
                                  bgcolor="rgba(255,255,255,0.85)"))
    return fig


RULER_W = 240                 # the ruler's SVG user units (~the column's width in px)


def lr_ruler_svg(lr: float, lo: float, hi: float, edge: float | None = None,
                 optimal: float | None = None, classroom: bool = False) -> str:
    """A thin log axis under the learning-rate slider, as one inline SVG (st.markdown;
    st.html strips SVG): the current η (black dot), 2/λ_max with the diverging side shaded
    red, and the optimal η* (green). A picture, not a tool: as a Plotly chart it was one of
    the page's three charts, each a Plotly newPlot in the first paint; this is ~20
    SVG elements and no JS.
    x = l + (log10 v − log10 lo) / (log10 hi − log10 lo) · (r − l)."""
    k = 1.1 if classroom else 1.0         # classroom: larger marks (its column is wider)
    tick, label = 12 * k, 13 * k
    top, base = 6 + label * 1.3, 6 + label * 1.3 + 38 * k         # the lines' y extent
    axis = base + 8 * k + label                                     # the axis line
    height = axis + 6 + tick * 1.4
    left, right = 10.0, RULER_W - 10.0
    l0, l1 = np.log10(lo), np.log10(hi)

    def x(v: float) -> float:
        return left + (float(np.clip(np.log10(v), l0, l1)) - l0) / (l1 - l0) * (right - left)

    def anchor(px: float) -> str:
        """Labels near an end grow inwards (not clipped by the column)."""
        return "start" if px < left + 18 * k else "end" if px > right - 18 * k else "middle"

    font = 'font-family="Source Sans Pro, sans-serif"'
    parts = [f'<line x1="{left}" y1="{axis:.1f}" x2="{right}" y2="{axis:.1f}" '
             'stroke="#444" stroke-width="1"/>']
    for e in range(int(np.ceil(l0)), int(np.floor(l1)) + 1):
        px = x(10.0 ** e)
        parts.append(f'<line x1="{px:.1f}" y1="{axis:.1f}" x2="{px:.1f}" '
                     f'y2="{axis + 4 * k:.1f}" stroke="#444"/>'
                     + ("" if px < left + 18 * k else      # no room left of 0.001's label
                        f'<text x="{px:.1f}" y="{axis + 5 + tick:.1f}" font-size="{tick:.0f}" '
                        f'text-anchor="{anchor(px)}" fill="#444" {font}>{10.0 ** e:g}</text>'))
    if edge is not None and edge < hi:
        px = x(edge)
        parts.append(f'<rect x="{px:.1f}" y="{top:.1f}" width="{right - px:.1f}" '
                     f'height="{base - top:.1f}" fill="#d62728" fill-opacity="0.12"/>'
                     f'<line x1="{px:.1f}" y1="{top:.1f}" x2="{px:.1f}" y2="{base:.1f}" '
                     f'stroke="#d62728" stroke-width="{2 * k:.1f}"/>'
                     f'<text x="{px:.1f}" y="{top - 4:.1f}" font-size="{label:.0f}" '
                     f'text-anchor="{anchor(px)}" fill="#222" {font}>2/λmax</text>')
    if optimal is not None:
        px = x(optimal)
        parts.append(f'<line x1="{px:.1f}" y1="{top:.1f}" x2="{px:.1f}" y2="{base:.1f}" '
                     f'stroke="#2ca02c" stroke-width="{2 * k:.1f}"/>'
                     f'<text x="{px:.1f}" y="{base + 2 + label:.1f}" font-size="{label:.0f}" '
                     f'text-anchor="{anchor(px)}" fill="#222" {font}>η*</text>')
    parts.append(f'<circle cx="{x(lr):.1f}" cy="{(top + base) / 2:.1f}" r="{7 * k:.1f}" '
                 'fill="black"/>')
    what = f"η = {lr:.4g}" + (f", 2/λmax = {edge:.4g}" if edge is not None else "") + (
        f", optimal η* = {optimal:.4g}" if optimal is not None else "")
    return (f'<svg class="gd-ruler" role="img" aria-label="learning-rate ruler: {what}" '
            f'viewBox="0 0 {RULER_W} {height:.0f}" width="100%" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')
