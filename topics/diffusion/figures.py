"""Figures of the diffusion page: pure builders (arrays in, go.Figure out, no Streamlit)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.screen import block_means
from ui.theme import COLORWAY

PARTICLE = "#1f77b4"
DATA = "#9e9e9e"
ARROW = "#ff7f0e"
TRAJ = "#d62728"


def _square_layout(lim: float, height: int = 480, **layout) -> dict:
    """A plain figure's layout: square axes over [−lim, lim]²."""
    return dict(height=height, xaxis=dict(range=[-lim, lim], title=dict(text="x₁")),
                yaxis=dict(range=[-lim, lim], title=dict(text="x₂"), scaleanchor="x",
                           scaleratio=1), **layout)


def _square(fig: go.Figure, lim: float, height: int = 480) -> go.Figure:
    fig.update_xaxes(range=[-lim, lim], title="x₁")
    fig.update_yaxes(range=[-lim, lim], title="x₂", scaleanchor="x", scaleratio=1)
    fig.update_layout(height=height)
    return fig


def forward_scatter(x0: np.ndarray, xt: np.ndarray, t: int, alpha_bar: float,
                    lim: float = 3.5) -> go.Figure:
    """The data x_0 (grey) and its noised version x_t (blue). A plain figure (ui/fastfig:
    the t slider redraws it)."""
    return plain_figure([
        dict(type="scatter", x=f32(x0[:, 0]), y=f32(x0[:, 1]), mode="markers",
             name="x₀ (data)", marker=dict(color=DATA, size=4, opacity=0.5)),
        dict(type="scatter", x=f32(xt[:, 0]), y=f32(xt[:, 1]), mode="markers",
             name=f"x_t, t = {t}", marker=dict(color=PARTICLE, size=5, opacity=0.7))],
        _square_layout(lim, title=dict(text=f"x_t ~ q(x_t | x₀), t = {t}"),
                       legend=LEGEND_BELOW))


CURVE_POINTS = 200      # a schedule curve over t = 1..T: every ⌈T/200⌉-th t (and t = T)


def _every(n: int, k: int = CURVE_POINTS) -> np.ndarray:
    """Indices 0, b, 2b, ... and n − 1 (b = ⌈n/k⌉): a smooth curve at screen resolution."""
    idx = np.arange(0, n, max(1, -(-n // k)))
    return idx if idx[-1] == n - 1 else np.r_[idx, n - 1]


def schedule_curves(curves: dict[str, dict[str, np.ndarray]], t: int) -> go.Figure:
    """curves: schedule name -> {"alpha_bar", "snr"} arrays over t = 1..T. Left: ᾱ_t, √ᾱ_t,
    √(1−ᾱ_t); right: log10 SNR. A vertical line marks t. Smooth curves, drawn at ~200 points
    each (CURVE_POINTS), in one plain figure laid out by axis domains."""
    dashes = {"alpha_bar": "solid", "signal": "dot", "noise": "dash"}
    labels = {"alpha_bar": "ᾱ_t", "signal": "√ᾱ_t", "noise": "√(1−ᾱ_t)"}
    traces = []
    for i, (name, c) in enumerate(curves.items()):
        idx = _every(len(c["alpha_bar"]))
        ts, ab = (idx + 1).astype(np.int16), np.asarray(c["alpha_bar"])[idx]
        color = COLORWAY[i % len(COLORWAY)]
        series = {"alpha_bar": ab, "signal": np.sqrt(ab), "noise": np.sqrt(1 - ab)}
        for key, y in series.items():
            traces.append(dict(type="scatter", x=ts, y=f32(y), name=f"{name}: {labels[key]}",
                               mode="lines", line=dict(color=color, dash=dashes[key])))
        traces.append(dict(type="scatter", x=ts, y=f32(np.log10(np.asarray(c["snr"])[idx])),
                           name=f"{name}: log SNR", mode="lines", line=dict(color=color),
                           showlegend=False, xaxis="x2", yaxis="y2"))
    axis = dict(title=dict(text="t"), tickvals=[0, 500, 1000])
    vline = dict(type="line", y0=0, y1=1, x0=t, x1=t, line=dict(color="#444", dash="dot",
                                                                 width=1))
    return plain_figure(traces, dict(
        height=480, legend=LEGEND_BELOW,
        xaxis=dict(domain=[0, 0.425], anchor="y", **axis), yaxis=dict(anchor="x"),
        xaxis2=dict(domain=[0.575, 1.0], anchor="y2", **axis), yaxis2=dict(anchor="x2"),
        shapes=[{**vline, "xref": "x", "yref": "y domain"},
                {**vline, "xref": "x2", "yref": "y2 domain"}],
        annotations=[dict(text=txt, x=x, y=1.0, xref="paper", yref="paper", xanchor="center",
                          yanchor="bottom", showarrow=False, font=dict(size=16))
                     for txt, x in (("signal and noise", 0.2125),
                                    ("log₁₀ SNR(t)", 0.7875))]))


def _arrows(grid: np.ndarray, vec: np.ndarray, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Line segments from each grid point along vec, scaled so the longest has `length`."""
    norm = np.linalg.norm(vec, axis=1)
    scale = length / max(float(np.nanmax(norm)) if len(norm) else 1.0, 1e-9)
    end = grid + vec * scale
    xs = np.stack([grid[:, 0], end[:, 0], np.full(len(grid), np.nan)], 1).ravel()
    ys = np.stack([grid[:, 1], end[:, 1], np.full(len(grid), np.nan)], 1).ravel()
    return xs.astype(np.float32), ys.astype(np.float32)


def _reverse_traces(frame: int, frames, highlight, grid, field, arrow_len) -> list[dict]:
    """Plain dict traces (plotly validates go.Scatter objects slowly: ~7x for 30 frames) of
    float32 arrays, sent as typed arrays (NaN separates line pieces): the animation's JSON
    is ~2.5x smaller than with lists of decimals."""
    x = np.asarray(frames[frame], dtype=np.float32)
    traces = [dict(type="scatter", x=x[:, 0], y=x[:, 1], mode="markers",
                   name="particles", marker=dict(color=PARTICLE, size=4, opacity=0.6))]
    ax, ay = (_arrows(grid, field[frame], arrow_len) if field is not None
              else (np.zeros(0, np.float32), np.zeros(0, np.float32)))
    traces.append(dict(type="scatter", x=ax, y=ay, mode="lines", name="drift (−ε or score)",
                       line=dict(color=ARROW, width=1.5), hoverinfo="skip"))
    paths = np.full((len(highlight), frame + 2, 2), np.nan, dtype=np.float32)
    paths[:, :frame + 1] = np.transpose(frames[: frame + 1, highlight], (1, 0, 2))
    traces.append(dict(type="scatter", x=paths[..., 0].ravel(), y=paths[..., 1].ravel(),
                       mode="lines+markers", name="trajectories",
                       line=dict(color=TRAJ, width=2), marker=dict(size=3)))
    return traces


def reverse_animation(frames: np.ndarray, times: np.ndarray, highlight: np.ndarray,
                      grid: np.ndarray | None, field: np.ndarray | None, lim: float = 3.5,
                      time_label: str = "t") -> go.Figure:
    """An animated scrubber over reverse time: particles (frames (F, n, 2)), a few highlighted
    trajectories, and the drift field on `grid` at each frame's time (field (F, G, 2))."""
    arrow_len = 0.8 * (2 * lim) / max(1.0, np.sqrt(len(grid)) if grid is not None else 1.0)
    last = len(frames) - 1
    steps = [dict(method="animate", label=f"{times[i]}",
                  args=[[str(i)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                       transition=dict(duration=0))])
             for i in range(len(frames))]
    layout = _square_layout(lim, 560,
        # the slider's value at its right end: at its left it sat on the x-axis title
        sliders=[dict(active=last, steps=steps,
                      currentvalue=dict(prefix=f"{time_label} = ", xanchor="right"),
                      pad=dict(t=40), x=0.4, len=0.6)],
        # the two buttons stacked left of the slider: side by side they ran over its first
        # ticks when the figure is a laptop column's width
        updatemenus=[dict(type="buttons", showactive=False, x=0, y=-0.1, xanchor="left",
                          yanchor="top", direction="down", pad=dict(t=45),
                          buttons=[dict(label="▶ Play", method="animate",
                                        args=[None, dict(frame=dict(duration=120, redraw=True),
                                                         fromcurrent=False, transition=dict(duration=0))]),
                                   dict(label="❚❚ Pause", method="animate",
                                        args=[[None], dict(mode="immediate",
                                                           frame=dict(duration=0, redraw=False))])])],
        legend=dict(orientation="h", x=0, xanchor="left", y=1.02, yanchor="bottom"),
        margin=dict(t=40))
    return plain_figure(_reverse_traces(last, frames, highlight, grid, field, arrow_len), layout,
                        frames=[dict(data=_reverse_traces(i, frames, highlight, grid, field,
                                                          arrow_len), name=str(i))
                                for i in range(len(frames))])


def samples_over_density(samples: np.ndarray, gx: np.ndarray, gy: np.ndarray,
                         density: np.ndarray | None, lim: float = 3.5,
                         title: str = "Samples over the density") -> go.Figure:
    fig = go.Figure()
    if density is not None:
        fig.add_trace(go.Contour(x=gx, y=gy, z=density, colorscale="Greys", showscale=False,
                                 contours=dict(coloring="heatmap"), opacity=0.6,
                                 name="true density", hoverinfo="skip", line=dict(width=0)))
    fig.add_trace(go.Scatter(x=samples[:, 0], y=samples[:, 1], mode="markers", name="samples",
                             marker=dict(color=PARTICLE, size=4, opacity=0.6)))
    fig.update_layout(title=title)
    return _square(fig, lim)


def weight_bars(groups: dict[str, np.ndarray], labels: list[str] | None = None,
                title: str = "Mode weights") -> go.Figure:
    """Grouped bars: group name (e.g. "samples", "truth") -> weights per mode."""
    fig = go.Figure()
    for i, (name, w) in enumerate(groups.items()):
        x = labels or [f"mode {k}" for k in range(len(w))]
        fig.add_trace(go.Bar(x=x, y=w, name=name, marker_color=COLORWAY[i % len(COLORWAY)],
                             text=[f"{v:.2f}" for v in w], textposition="outside",
                             textfont=dict(size=11)))
    # wide bars: two labels of a group side by side fit over them in a narrow column
    fig.update_layout(barmode="group", title=title, bargap=0.12, yaxis=dict(title="fraction", range=[0, 1.15]),
                      height=340, uniformtext=dict(mode="hide", minsize=9),
                      legend=dict(orientation="h", yanchor="top", y=-0.15))
    return fig


def steps_quality(steps: np.ndarray, etas: np.ndarray, distance: np.ndarray,
                  metric: str) -> go.Figure:
    fig = go.Figure()
    for i, eta in enumerate(etas):
        fig.add_trace(go.Scatter(x=steps, y=distance[i], mode="lines+markers",
                                 name=f"η = {eta:g}" + (" (deterministic)" if eta == 0 else "")))
    fig.update_xaxes(type="log", title="sampling steps S", tickvals=list(steps))
    fig.update_yaxes(title=f"{metric} to the data (lower is better)")
    fig.update_layout(title="DDIM: sample quality vs number of steps", height=400)
    return fig


def loss_curve(steps: np.ndarray, values: np.ndarray) -> go.Figure:
    """The training loss (block means of at most ui.screen.MAX_CURVE_POINTS points: a live frame)."""
    s, v = block_means(np.asarray(steps), np.asarray(values, dtype=float))
    return plain_figure([dict(type="scatter", x=s, y=f32(v), mode="lines", name="loss")],
                        dict(title=dict(text="Training loss ‖ε − ε_θ(x_t, t)‖²"), height=340,
                             xaxis=dict(title=dict(text="iteration")),
                             yaxis=dict(title=dict(text="loss"))))


def samples_vs_data(samples: np.ndarray, data: np.ndarray, lim: float = 3.5,
                    title: str = "Samples (blue) vs data (grey)") -> go.Figure:
    """A live frame's samples over the data (plain figure)."""
    ok = np.isfinite(samples).all(1)
    return plain_figure([
        dict(type="scatter", x=f32(data[:, 0]), y=f32(data[:, 1]), mode="markers",
             name="data", marker=dict(color=DATA, size=4, opacity=0.4)),
        dict(type="scatter", x=f32(samples[ok, 0]), y=f32(samples[ok, 1]), mode="markers",
             name="samples", marker=dict(color=PARTICLE, size=4, opacity=0.7))],
        _square_layout(lim, 440, title=dict(text=title), legend=LEGEND_BELOW))


def langevin_compare(results: dict[str, np.ndarray], gx: np.ndarray, density_x: np.ndarray,
                     lim: float) -> go.Figure:
    """Histograms of x₁ of each sampler's final particles against the true marginal density."""
    fig = go.Figure()
    for i, (name, s) in enumerate(results.items()):
        fig.add_trace(go.Histogram(x=s[:, 0], name=name, histnorm="probability density",
                                   opacity=0.55, marker_color=COLORWAY[i % len(COLORWAY)],
                                   xbins=dict(start=-lim, end=lim, size=2 * lim / 80)))
    fig.add_trace(go.Scatter(x=gx, y=density_x, mode="lines", name="true density p(x₁)",
                             line=dict(color="#222", width=2)))
    fig.update_layout(barmode="overlay", title="Where the particles end up (x₁ marginal)",
                      xaxis=dict(title="x₁", range=[-lim, lim]), yaxis_title="density", height=400,
                      legend=dict(orientation="h", yanchor="top", y=-0.22))
    return fig
