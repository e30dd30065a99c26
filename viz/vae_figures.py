"""Figure builders of the VAE page: data in, go.Figure out (no Streamlit calls).

Images are digits with ink = 1: drawn dark on white. A decoded grid is one heatmap whose tick
labels are the latent coordinates of the cells, so it reads with the same axes as the scatter.
"""
from __future__ import annotations

import io

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.vae import LatentGrid, Reconstruction, ToyELBO, tile
from viz.theme import COLORWAY

INK = [[0.0, "white"], [1.0, "black"]]
PAD = 1
GUTTER = -0.1   # value of the gutter pixels between tiled images: drawn light grey
INK_GUTTER = [[0.0, "#d9d9d9"], [-GUTTER / (1 - GUTTER) - 1e-9, "#d9d9d9"],
              [-GUTTER / (1 - GUTTER), "white"], [1.0, "black"]]


def _tiled_heatmap(img: np.ndarray) -> go.Heatmap:
    """A tiled image whose gutters hold GUTTER (a value, not a gap: plotly draws NaN in
    binary-encoded arrays as a colour and ignores a gap's background in some renderers)."""
    return go.Heatmap(z=img, colorscale=INK_GUTTER, zmin=GUTTER, zmax=1, showscale=False,
                      hoverinfo="skip")


def _image_layout(fig: go.Figure, height: int | None = None) -> go.Figure:
    fig.update_xaxes(showgrid=False, constrain="domain", ticks="")
    fig.update_yaxes(showgrid=False, autorange="reversed", scaleanchor="x", scaleratio=1,
                     constrain="domain", ticks="")
    fig.update_layout(margin=dict(l=50, r=10, t=50, b=40))
    if height:
        fig.update_layout(height=height)
    return fig


def latent_extent(means: np.ndarray, grid: LatentGrid | None = None, floor: float = 3.5) -> float:
    """Half-width of a symmetric square view holding 99 % of the points and the grid."""
    r = float(np.percentile(np.abs(means), 99)) if means.size else floor
    if grid is not None and grid.zx.size:
        r = max(r, float(np.abs(grid.zx).max()), float(np.abs(grid.zy).max()))
    return 1.08 * max(r, floor if np.isfinite(r) else floor)


def replay_extent(frames: list[np.ndarray]) -> float:
    """One half-width for every frame of a replay: the largest latent_extent of the frames
    (each (n, 2)), so the axes do not move while the points do and every frame keeps 99 % of
    its points in view."""
    return max((latent_extent(f) for f in frames), default=latent_extent(np.zeros((0, 2))))


def latent_scatter(means2: np.ndarray, labels: np.ndarray, *, grid: LatentGrid | None = None,
                   picked: tuple[float, float] | None = None, dims: tuple[int, int] = (0, 1),
                   title: str = "Latent means of the test digits", extent: float | None = None) -> go.Figure:
    """means2 (n, 2): encoder means on two latent dims, one trace per digit class; the grid's
    decode positions as faint crosses; `picked` as a star."""
    fig = go.Figure()
    if grid is not None and grid.zx.size:
        gx, gy = np.meshgrid(grid.zx, grid.zy)
        fig.add_trace(go.Scatter(x=gx.ravel(), y=gy.ravel(), mode="markers", name="grid",
                                 marker=dict(symbol="cross-thin", size=6, color="#bbbbbb",
                                             line=dict(width=1, color="#bbbbbb")),
                                 hoverinfo="skip"))
    for c in range(10):
        sel = labels == c
        if not sel.any():
            continue
        fig.add_trace(go.Scatter(x=means2[sel, 0], y=means2[sel, 1], mode="markers", name=str(c),
                                 marker=dict(size=6, color=COLORWAY[c % len(COLORWAY)], opacity=0.8),
                                 hovertemplate=f"digit {c}<br>z=(%{{x:.2f}}, %{{y:.2f}})<extra></extra>"))
    if picked is not None:
        fig.add_trace(go.Scatter(x=[picked[0]], y=[picked[1]], mode="markers", name="decoded",
                                 marker=dict(symbol="star", size=16, color="black"), hoverinfo="skip"))
    r = extent if extent is not None else latent_extent(means2, grid)
    fig.update_xaxes(range=[-r, r], title=f"z{dims[0] + 1}", constrain="domain")
    fig.update_yaxes(range=[-r, r], title=f"z{dims[1] + 1}", scaleanchor="x", scaleratio=1,
                     constrain="domain")
    # legend under the plot (the theme anchors it below the axis title): beside a square
    # plot in a half-width column it took a third of the width
    fig.update_layout(title=title, legend=dict(title="digit", itemsizing="constant",
                                               orientation="h", y=-0.2),
                      clickmode="event+select", dragmode="pan", height=460)
    return fig


def _ticks(values: np.ndarray, cell: int, reverse: bool, every: int) -> tuple[list, list]:
    n = len(values)
    idx = list(range(0, n, every))
    if (n - 1) not in idx:
        idx.append(n - 1)
    pos = [i * cell + (cell - PAD - 1) / 2 for i in idx]
    vals = [values[n - 1 - i] if reverse else values[i] for i in idx]
    return pos, [f"{v:.2f}" for v in vals]


def grid_figure(grid: LatentGrid, title: str | None = None) -> go.Figure:
    """The n x n decoded digits as one image; ticks give each cell's latent coordinate
    (up = larger z, as in the scatter)."""
    img = tile(grid.images, PAD, flip_rows=True, fill=GUTTER)
    n, h = grid.images.shape[0], grid.images.shape[2]
    fig = go.Figure(_tiled_heatmap(img))
    every = max(1, n // 5)
    xp, xt = _ticks(grid.zx, h + PAD, False, every)
    yp, yt = _ticks(grid.zy, h + PAD, True, every)
    fig.update_layout(title=title or f"Decoded grid ({grid.span} of z{grid.dims[0] + 1}, z{grid.dims[1] + 1})")
    fig.update_xaxes(tickvals=xp, ticktext=xt, title=f"z{grid.dims[0] + 1}")
    fig.update_yaxes(tickvals=yp, ticktext=yt, title=f"z{grid.dims[1] + 1}")
    return _image_layout(fig, 460)


def digit_figure(image: np.ndarray, title: str = "", height: int = 260) -> go.Figure:
    """One 8x8 image, large."""
    fig = go.Figure(go.Heatmap(z=image, colorscale=INK, zmin=0, zmax=1, showscale=False,
                               hovertemplate="pixel (%{x}, %{y}) = %{z:.2f}<extra></extra>"))
    fig.update_layout(title=title)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    return _image_layout(fig, height)


def strip_figure(images: np.ndarray, title: str = "", labels: list[str] | None = None) -> go.Figure:
    """A row of (k, 8, 8) images."""
    img = tile(images[None], PAD, flip_rows=False, fill=GUTTER)
    k, h = images.shape[0], images.shape[1]
    fig = go.Figure(_tiled_heatmap(img))
    fig.update_layout(title=title)
    pos = [i * (h + PAD) + (h - 1) / 2 for i in range(k)]
    fig.update_xaxes(tickvals=pos, ticktext=labels or [""] * k)
    fig.update_yaxes(showticklabels=False)
    return _image_layout(fig, 200)


CURVES = {  # panel -> [(metric, name, dash)]
    "Reconstruction −E_q[log p(x|z)]": [("train_recon", "train", "solid"), ("test_recon", "test", "dot")],
    "KL(q(z|x) ‖ p(z))": [("train_kl", "train", "solid"), ("test_kl", "test", "dot")],
}


def loss_curves(arrays: dict[str, tuple[np.ndarray, np.ndarray]], steps_per_epoch: float) -> go.Figure:
    """Two panels (reconstruction, KL), train and test, against epochs. arrays: metric -> (steps, values)."""
    fig = make_subplots(1, 2, subplot_titles=list(CURVES), horizontal_spacing=0.1)
    for col, (panel, curves) in enumerate(CURVES.items(), start=1):
        for metric, name, dash in curves:
            s, v = arrays.get(metric, (np.zeros(0), np.zeros(0)))
            fig.add_trace(go.Scatter(x=s / steps_per_epoch, y=v, mode="lines", name=name,
                                     line=dict(dash=dash, color=COLORWAY[0 if col == 1 else 1]),
                                     legendgroup=name, showlegend=col == 1), row=1, col=col)
        fig.update_xaxes(title="epoch", row=1, col=col)
    fig.update_yaxes(title="nats per digit", row=1, col=1)
    fig.update_layout(height=300, margin=dict(t=60))
    return fig


def grid_png(grid: LatentGrid, scale: int = 4) -> bytes:
    """The decoded grid as a PNG (ink dark on white), each pixel scale x scale."""
    from PIL import Image
    img = tile(grid.images, PAD, flip_rows=True, fill=0.15)   # light grey gutters
    img = np.repeat(np.repeat(img, scale, 0), scale, 1)
    buf = io.BytesIO()
    Image.fromarray(np.uint8(np.round(255 * (1 - np.clip(img, 0, 1))))).save(buf, format="PNG")
    return buf.getvalue()


# ----------------------------------------------------------------------------- ELBO toy

def toy_marginal_figure(toy: ToyELBO) -> go.Figure:
    fig = go.Figure(go.Scatter(x=toy.x_axis, y=toy.px, mode="lines", name="p(x)",
                               line=dict(color=COLORWAY[0])))
    fig.add_vline(x=toy.x, line=dict(color="black", dash="dash"),
                  annotation_text=f"observed x = {toy.x:.2f}")
    fig.update_layout(title="The data density p(x) = ∫ p(z) p(x|z) dz", height=320)
    fig.update_xaxes(title="x")
    fig.update_yaxes(title="density")
    return fig


def toy_posterior_figure(toy: ToyELBO) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=toy.z, y=toy.posterior, mode="lines", name="true posterior p(z|x)",
                             fill="tozeroy", line=dict(color=COLORWAY[1])))
    fig.add_trace(go.Scatter(x=toy.z, y=toy.q, mode="lines", name=f"q(z) = N({toy.m:.2f}, {toy.s:.2f}²)",
                             line=dict(color=COLORWAY[0], dash="dash")))
    fig.update_layout(title=f"Posterior over z given x = {toy.x:.2f}", height=360,
                      legend=dict(orientation="h", y=-0.25))    # under the plot (theme)
    fig.update_xaxes(title="z")
    fig.update_yaxes(title="density")
    return fig


def toy_bars_figure(toy: ToyELBO) -> go.Figure:
    names = ["log p(x)", "ELBO(q)", "gap = KL(q ‖ p(z|x))"]
    vals = [toy.log_px, toy.elbo, toy.gap]
    fig = go.Figure(go.Bar(x=names, y=vals, marker_color=[COLORWAY[0], COLORWAY[2], COLORWAY[1]],
                           text=[f"{v:.3f}" for v in vals], textposition="outside"))
    lo, hi = min(0.0, *vals), max(0.0, *vals)
    pad = 0.15 * (hi - lo + 1e-9)
    fig.update_yaxes(range=[lo - pad, hi + pad], title="nats")
    fig.update_layout(title="log p(x) = ELBO + gap", height=320)
    return fig


# ----------------------------------------------------------------------------- AE vs PCA

def manifold_figure(points: np.ndarray, recons: dict[str, Reconstruction]) -> go.Figure:
    """The data, and for each method its learned 1-D manifold (curve) and reconstructions."""
    fig = go.Figure(go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers", name="data",
                               marker=dict(size=5, color="#999999")))
    for i, (name, rec) in enumerate(recons.items()):
        color = COLORWAY[(i + 1) % len(COLORWAY)]
        fig.add_trace(go.Scatter(x=rec.curve[:, 0], y=rec.curve[:, 1], mode="lines",
                                 name=f"{name}: MSE {rec.mse:.4f}", line=dict(color=color, width=3)))
        fig.add_trace(go.Scatter(x=rec.recon[:, 0], y=rec.recon[:, 1], mode="markers",
                                 name=f"{name} reconstructions", marker=dict(size=4, color=color),
                                 showlegend=False))
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    fig.update_layout(title="A 1-D bottleneck on a curved 2-D manifold", height=420)
    return fig
