"""Figures of the flow page: pure builders (arrays in, plain Plotly figures out, no
Streamlit). Plain dicts (ui/fastfig.py): the sliders and the live frames redraw them."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, colorscale, f32, plain_figure
from ui.screen import block_means

ROWS, COLS = "#1f77b4", "#ff7f0e"      # lines of constant x₂ (rows) and of constant x₁ (cols)
DATA, SAMPLE, WARP = "#9e9e9e", "#d62728", "#1f77b4"
LOGDET_SCALE = colorscale("RdBu")
FIT_RATIO = 3.0


def _polylines(lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, P, 2) lines as one x and one y array with a NaN between lines."""
    gap = np.full((lines.shape[0], 1, 2), np.nan, dtype=np.float32)
    flat = np.concatenate([lines.astype(np.float32), gap], 1).reshape(-1, 2)
    return flat[:, 0], flat[:, 1]


def _grid_traces(lines: np.ndarray, xaxis: str, yaxis: str, legend: bool) -> list[dict]:
    half = len(lines) // 2
    out = []
    for part, color, name in ((lines[:half], COLS, "lines of constant x₁"),
                              (lines[half:], ROWS, "lines of constant x₂")):
        x, y = _polylines(part)
        out.append(dict(type="scatter", x=f32(x), y=f32(y), mode="lines", name=name,
                        line=dict(color=color, width=1.5), xaxis=xaxis, yaxis=yaxis,
                        showlegend=legend, legendgroup=name, hoverinfo="skip"))
    return out


def coupling_figure(lines: np.ndarray, image: np.ndarray, back: np.ndarray,
                    nodes: np.ndarray, node_image: np.ndarray, logdet: np.ndarray, keep: int,
                    base: float) -> go.Figure:
    """Left the base space's grid x (equal axes), right its image y = f(x) (equal axes too,
    unless one side of the image is over FIT_RATIO times the other: then each axis is fit to
    the image, which would be a sliver); the grid nodes on both sides coloured
    by log|det df/dx| at x (one colour scale, centred at 0). `back` = f⁻¹(y), dotted over the
    base grid: the inverse lands on it."""
    span = max(float(np.abs(logdet).max()), 0.5)        # all zero (a shear): ticks ±0.5
    kept = f"x{'₁₂'[keep]}"
    bx, by = _polylines(back)
    marker = dict(size=7, color=f32(logdet), colorscale=LOGDET_SCALE, cmin=-span, cmax=span,
                  reversescale=True, line=dict(width=0.5, color="#555"))
    traces = [*_grid_traces(lines, "x", "y", True),
              dict(type="scatter", x=bx, y=by, mode="lines", name="f⁻¹(y)",
                   line=dict(color="#222", width=1.5, dash="dot"), xaxis="x", yaxis="y",
                   hoverinfo="skip"),
              dict(type="scatter", x=f32(nodes[:, 0]), y=f32(nodes[:, 1]), mode="markers",
                   name="log|det J| at x", marker=marker, xaxis="x", yaxis="y",
                   hovertemplate="x = (%{x:.2f}, %{y:.2f})<br>log|det J| = "
                                 "%{marker.color:.3f}<extra></extra>"),
              *_grid_traces(image, "x2", "y2", False),
              dict(type="scatter", x=f32(node_image[:, 0]), y=f32(node_image[:, 1]),
                   mode="markers", showlegend=False, xaxis="x2", yaxis="y2",
                   marker={**marker, "colorbar": dict(title=dict(text="log|det J|", side="right"),
                                                      thickness=14, len=0.8)},
                   hovertemplate="y = (%{x:.2f}, %{y:.2f})<br>log|det J| = "
                                 "%{marker.color:.3f}<extra></extra>")]
    finite = node_image[np.isfinite(node_image).all(1)]
    reach = [max(base, float(np.abs(finite[:, k]).max()) if len(finite) else base) * 1.05
             for k in (0, 1)]
    side = dict(range=[-base * 1.05, base * 1.05])
    equal = max(reach) <= FIT_RATIO * min(reach)    # equal axes show the stretch as it is
    if equal:
        reach = [max(reach)] * 2
    title = "image y = f(x)" if equal else "image y = f(x), axes fit to it"
    return plain_figure(traces, dict(
        height=480, legend=LEGEND_BELOW, margin=dict(b=90),
        xaxis=dict(domain=[0, 0.44], anchor="y", title=dict(text="x₁"), **side),
        yaxis=dict(anchor="x", title=dict(text="x₂"), scaleanchor="x", **side),
        xaxis2=dict(domain=[0.54, 0.98], anchor="y2", title=dict(text="y₁"),
                    range=[-reach[0], reach[0]]),
        yaxis2=dict(anchor="x2", title=dict(text="y₂"), range=[-reach[1], reach[1]],
                    **({"scaleanchor": "x2"} if equal else {})),
        annotations=[dict(text=txt, x=x, y=1.0, xref="paper", yref="paper", xanchor="center",
                          yanchor="bottom", showarrow=False, font=dict(size=15))
                     for txt, x in ((f"base grid x ({kept} kept)", 0.22),
                                    (title, 0.76))]))


def density_figure(xs: np.ndarray, density: np.ndarray, points: np.ndarray, lim: float,
                   integral: float) -> go.Figure:
    """The learned density p(x) as a heatmap over the plot, the training points on top
    (`integral`: its sum over the plot, in the hover text)."""
    return plain_figure([
        dict(type="heatmap", x=f32(xs), y=f32(xs), z=f32(density), colorscale=colorscale(
            "Viridis"), showscale=False,
             hovertemplate=f"p = %{{z:.3f}} (∫p on the plot = {integral:.4f})<extra></extra>"),
        dict(type="scatter", x=f32(points[:, 0]), y=f32(points[:, 1]), mode="markers",
             name="training data", marker=dict(color="white", size=2, opacity=0.3),
             hoverinfo="skip")],
        _square(lim, "learned density p(x)"))


def samples_figure(samples: np.ndarray, warped: np.ndarray, points: np.ndarray,
                   lim: float) -> go.Figure:
    """Samples x = f⁻¹(z) over the data, and the base grid's lines z = const pulled back
    through f⁻¹ (the grid warped into the data)."""
    ok = np.isfinite(samples).all(1)
    wx, wy = _polylines(np.clip(warped, -10 * lim, 10 * lim))
    return plain_figure([
        dict(type="scatter", x=wx, y=wy, mode="lines", name="base grid through f⁻¹",
             line=dict(color=WARP, width=1), opacity=0.5, hoverinfo="skip"),
        dict(type="scatter", x=f32(points[:, 0]), y=f32(points[:, 1]), mode="markers",
             name="data", marker=dict(color=DATA, size=3, opacity=0.5)),
        dict(type="scatter", x=f32(samples[ok, 0]), y=f32(samples[ok, 1]), mode="markers",
             name="samples", marker=dict(color=SAMPLE, size=3, opacity=0.7))],
        {**_square(lim, "samples x = f⁻¹(z), z ~ N(0, I)"), "legend": LEGEND_BELOW})


def _square(lim: float, title: str) -> dict:
    return dict(height=440, title=dict(text=title),
                xaxis=dict(range=[-lim, lim], title=dict(text="x₁"), constrain="domain"),
                yaxis=dict(range=[-lim, lim], title=dict(text="x₂"), scaleanchor="x",
                           scaleratio=1, constrain="domain"))


def nll_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """Train and held-out NLL (nats per point) against the iteration."""
    traces = []
    for name, (steps, values) in curves.items():
        s, v = block_means(np.asarray(steps), np.asarray(values, dtype=float))
        traces.append(dict(type="scatter", x=s, y=f32(v), mode="lines", name=name))
    return plain_figure(traces, dict(
        height=300, title=dict(text="negative log-likelihood (nats per point)"),
        xaxis=dict(title=dict(text="iteration")), yaxis=dict(title=dict(text="NLL")),
        legend=LEGEND_BELOW))


def stages_figure(points: np.ndarray, keeps: tuple[int, ...], lim: float) -> go.Figure:
    """Small multiples: the points h_k after each layer k = 0..K (h_0 = x, h_K = z), coloured
    by their x₁ at the start so one point can be followed; each title names what layer k kept."""
    k = len(points)
    cols = min(k, 5)
    rows = -(-k // cols)
    color = f32(points[0, :, 0])
    traces, layout = [], dict(height=230 * rows, showlegend=False, annotations=[])
    gap = 0.04
    for i, h in enumerate(points):
        r, c = divmod(i, cols)
        ax = "" if i == 0 else str(i + 1)
        x0 = c / cols + gap / 2
        y1 = 1 - r / rows - gap
        traces.append(dict(type="scatter", x=f32(h[:, 0]), y=f32(h[:, 1]), mode="markers",
                           marker=dict(size=3, color=color, colorscale=colorscale("Viridis")),
                           xaxis=f"x{ax}", yaxis=f"y{ax}", hoverinfo="skip"))
        layout[f"xaxis{ax}"] = dict(domain=[x0, (c + 1) / cols - gap / 2], anchor=f"y{ax}",
                                    range=[-lim, lim], showticklabels=False)
        layout[f"yaxis{ax}"] = dict(domain=[1 - (r + 1) / rows + gap, y1], anchor=f"x{ax}",
                                    range=[-lim, lim], showticklabels=False)
        name = "x (data)" if i == 0 else (f"after layer {i} (kept x{'₁₂'[keeps[i - 1]]})"
                                          + (" = z" if i == k - 1 else ""))
        layout["annotations"].append(dict(text=name, x=(x0 + (c + 1) / cols - gap / 2) / 2,
                                          y=y1, xref="paper", yref="paper", xanchor="center",
                                          yanchor="bottom", showarrow=False,
                                          font=dict(size=12)))
    return plain_figure(traces, layout)


def families_figure(panels: list[tuple[str, np.ndarray, np.ndarray]], points: np.ndarray,
                    lim: float) -> go.Figure:
    """One learned density per flow family side by side (title, xs (res,), density (res, res)),
    each on its own colour scale, the data's points faint on top."""
    k = len(panels)
    gap = 0.03
    traces, layout = [], dict(height=330, showlegend=False, annotations=[],
                              margin=dict(t=40, b=30, l=20, r=20))
    for i, (title, xs, dens) in enumerate(panels):
        ax = "" if i == 0 else str(i + 1)
        x0, x1 = i / k + gap / 2, (i + 1) / k - gap / 2
        traces.append(dict(type="heatmap", x=f32(xs), y=f32(xs), z=f32(dens), showscale=False,
                           colorscale=colorscale("Viridis"), xaxis=f"x{ax}", yaxis=f"y{ax}",
                           hovertemplate="p = %{z:.3f}<extra></extra>"))
        traces.append(dict(type="scatter", x=f32(points[:, 0]), y=f32(points[:, 1]),
                           mode="markers", marker=dict(color="white", size=2, opacity=0.25),
                           xaxis=f"x{ax}", yaxis=f"y{ax}", hoverinfo="skip"))
        layout[f"xaxis{ax}"] = dict(domain=[x0, x1], anchor=f"y{ax}", range=[-lim, lim],
                                    showticklabels=False)
        layout[f"yaxis{ax}"] = dict(anchor=f"x{ax}", range=[-lim, lim], showticklabels=False,
                                    scaleanchor=f"x{ax}")
        layout["annotations"].append(dict(text=title, x=(x0 + x1) / 2, y=1.0, xref="paper",
                                          yref="paper", xanchor="center", yanchor="bottom",
                                          showarrow=False, font=dict(size=13)))
    return plain_figure(traces, layout)


def digits_figure(images: np.ndarray, cols: int, title: str) -> go.Figure:
    """Images (n, 8, 8) in grey levels 0..16 tiled `cols` to a row, row 0 at the top."""
    n = len(images)
    rows = -(-n // cols)
    full = np.full((rows * cols, 8, 8), np.nan, dtype=np.float32)
    full[:n] = images
    pad = 1
    out = np.full((rows * 9 - pad, cols * 9 - pad), np.nan, dtype=np.float32)
    for i, img in enumerate(full):
        r, c = divmod(i, cols)
        out[r * 9: r * 9 + 8, c * 9: c * 9 + 8] = img
    return plain_figure([dict(type="heatmap", z=f32(out[::-1]), zmin=0, zmax=16,
                              colorscale=colorscale("Greys"), showscale=False,
                              hovertemplate="grey %{z:.1f}<extra></extra>")],
                        dict(height=60 + 34 * rows * 9 // 8, title=dict(text=title),
                             xaxis=dict(visible=False, constrain="domain"),
                             yaxis=dict(visible=False, scaleanchor="x"),
                             margin=dict(t=40, b=10, l=10, r=10)))


def bits_figure(bits: dict[str, float]) -> go.Figure:
    """Test bits per pixel of each model on the 17-level digits, one bar each."""
    names = list(bits)
    return plain_figure([dict(type="bar", x=[float(bits[n]) for n in names], y=names,
                              orientation="h", text=[f"{bits[n]:.3f}" for n in names],
                              textposition="auto", marker=dict(color=COLS),
                              hovertemplate="%{y}: %{x:.3f} bits per pixel<extra></extra>")],
                        dict(height=90 + 40 * len(names),
                             xaxis=dict(title=dict(text="test bits per pixel (lower is better)"),
                                        rangemode="tozero"),
                             yaxis=dict(autorange="reversed"),
                             margin=dict(l=10, r=10, t=20, b=40)))
