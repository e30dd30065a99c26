"""Figure builders of the VAE page: data in, go.Figure out (no Streamlit calls).

Images are digits with ink = 1: drawn dark on white. A decoded grid is one heatmap whose tick
labels are the latent coordinates of the cells, so it reads with the same axes as the scatter.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from engine.vae import LatentGrid, Reconstruction, ToyELBO, tile
from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.theme import COLORWAY
from topics.vae.compute import latent_extent

INK = [[0.0, "white"], [1.0, "black"]]
PAD = 1
GUTTER = -0.1   # value of the gutter pixels between tiled images: drawn light grey
INK_GUTTER = [[0.0, "#d9d9d9"], [-GUTTER / (1 - GUTTER) - 1e-9, "#d9d9d9"],
              [-GUTTER / (1 - GUTTER), "white"], [1.0, "black"]]


LEVELS = 250        # a tiled image goes out as uint8 levels: 1/4 of float32's bytes


def _tiled_heatmap(img: np.ndarray) -> dict:
    """A tiled image whose gutters hold GUTTER (a value, not a gap: plotly draws NaN in
    binary-encoded arrays as a colour and ignores a gap's background in some renderers),
    sent as LEVELS + 1 uint8 levels of [GUTTER, 1] (the colour scale is relative to zmin..zmax,
    so it reads the same; a screen shows 256 greys)."""
    q = np.round((np.clip(img, GUTTER, 1.0) - GUTTER) / (1.0 - GUTTER) * LEVELS)
    return dict(type="heatmap", z=q.astype(np.uint8), colorscale=INK_GUTTER, zmin=0,
                zmax=LEVELS, showscale=False, hoverinfo="skip")


def _image_figure(trace: dict, title: str, height: int | None = None, xaxis: dict | None = None,
                  yaxis: dict | None = None) -> go.Figure:
    """One image (heatmap) with square pixels, row 0 on top, no grid (a plain figure: the
    live frame redraws these)."""
    layout = dict(title=dict(text=title), margin=dict(l=50, r=10, t=50, b=40),
                  xaxis=dict(showgrid=False, constrain="domain", ticks="", **(xaxis or {})),
                  yaxis=dict(showgrid=False, autorange="reversed", scaleanchor="x",
                             scaleratio=1, constrain="domain", ticks="", **(yaxis or {})))
    if height:
        layout["height"] = height
    return plain_figure([trace], layout)


def lattice(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One unbroken polyline drawing the lattice of the lines x = xs[i] and y = ys[j] inside
    [xs[0], xs[-1]] x [ys[0], ys[-1]]: the rows left-right-left (boustrophedon), then the
    columns up-down-up; the connecting moves run along the border, itself a lattice line.
    A line with gaps is one SVG path per piece in Plotly, an unbroken one is a single path."""
    xs, ys = np.asarray(xs, np.float32), np.asarray(ys, np.float32)
    if xs.size == 0 or ys.size == 0:
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    ends = np.array([xs[0], xs[-1]], np.float32)
    row_x = np.stack([ends if j % 2 == 0 else ends[::-1] for j in range(len(ys))]).ravel()
    row_y = np.repeat(ys, 2)
    ends = np.array([ys[0], ys[-1]], np.float32) if len(ys) % 2 == 0 else \
        np.array([ys[-1], ys[0]], np.float32)
    # the rows end at x = xs[-1] (odd count) or xs[0] (even): the columns start from there
    cols = xs[::-1] if len(ys) % 2 == 1 else xs
    col_y = np.stack([ends if i % 2 == 0 else ends[::-1] for i in range(len(cols))]).ravel()
    col_x = np.repeat(cols, 2)
    return np.r_[row_x, col_x], np.r_[row_y, col_y]


def latent_scatter(means2: np.ndarray, labels: np.ndarray, *, grid: LatentGrid | None = None,
                   picked: tuple[float, float] | None = None, dims: tuple[int, int] = (0, 1),
                   title: str = "Latent means of the test digits", extent: float | None = None) -> go.Figure:
    """means2 (n, 2): encoder means on two latent dims, one trace per digit class; the grid as
    a faint lattice whose crossings are its decode positions (one SVG path: 225 cross markers
    were 225 nodes, half the browser's time on this figure); `picked` as a star. A plain figure (live frames and
    the replay redraw it)."""
    traces = []
    if grid is not None and grid.zx.size:
        gx, gy = lattice(grid.zx, grid.zy)
        traces.append(dict(type="scatter", x=gx, y=gy, mode="lines", name="grid",
                           hoverinfo="skip", line=dict(color="#c8c8c8", width=1)))
    if picked is not None:     # an open star under the dots: codes collapsed onto it stay seen
        traces.append(dict(type="scatter", x=[float(picked[0])], y=[float(picked[1])],
                           mode="markers", name="decoded", hoverinfo="skip",
                           marker=dict(symbol="star-open", size=16, color="black",
                                       line=dict(width=1.5))))
    for c in range(10):
        sel = labels == c
        if not sel.any():
            continue
        traces.append(dict(type="scatter", x=f32(means2[sel, 0]), y=f32(means2[sel, 1]),
                           mode="markers", name=str(c),
                           marker=dict(size=6, color=COLORWAY[c % len(COLORWAY)], opacity=0.8),
                           hovertemplate=f"digit {c}<br>z=(%{{x:.2f}}, %{{y:.2f}})<extra></extra>"))
    r = extent if extent is not None else latent_extent(means2, grid)
    # legend under the plot: beside a square plot in a half-width column it took a third of
    # the width
    return plain_figure(traces, dict(
        title=dict(text=title), height=460, clickmode="event+select", dragmode="pan",
        legend=dict(title=dict(text="digit"), itemsizing="constant", **LEGEND_BELOW),
        xaxis=dict(range=[-r, r], title=dict(text=f"z{dims[0] + 1}"), constrain="domain"),
        yaxis=dict(range=[-r, r], title=dict(text=f"z{dims[1] + 1}"), scaleanchor="x",
                   scaleratio=1, constrain="domain")))


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
    every = max(1, n // 5)
    xp, xt = _ticks(grid.zx, h + PAD, False, every)
    yp, yt = _ticks(grid.zy, h + PAD, True, every)
    return _image_figure(
        _tiled_heatmap(img),
        title or f"Decoded grid ({grid.span} of z{grid.dims[0] + 1}, z{grid.dims[1] + 1})",
        460, xaxis=dict(tickvals=xp, ticktext=xt, title=dict(text=f"z{grid.dims[0] + 1}")),
        yaxis=dict(tickvals=yp, ticktext=yt, title=dict(text=f"z{grid.dims[1] + 1}")))


def digit_figure(image: np.ndarray, title: str = "", height: int = 260) -> go.Figure:
    """One 8x8 image, large."""
    return _image_figure(dict(type="heatmap", z=f32(image), colorscale=INK, zmin=0, zmax=1,
                              showscale=False,
                              hovertemplate="pixel (%{x}, %{y}) = %{z:.2f}<extra></extra>"),
                         title, height, xaxis=dict(showticklabels=False),
                         yaxis=dict(showticklabels=False))


def strip_figure(images: np.ndarray, title: str = "", labels: list[str] | None = None) -> go.Figure:
    """A row of (k, 8, 8) images."""
    img = tile(images[None], PAD, flip_rows=False, fill=GUTTER)
    k, h = images.shape[0], images.shape[1]
    pos = [i * (h + PAD) + (h - 1) / 2 for i in range(k)]
    return _image_figure(_tiled_heatmap(img), title, 200,
                         xaxis=dict(tickvals=pos, ticktext=labels or [""] * k),
                         yaxis=dict(showticklabels=False))


# panel title -> [(metric, name, dash)]; each title on two short lines: a panel is under
# half of a laptop's figure column, and one line ran over the next panel's tick labels
CURVES = {
    "Reconstruction<br>−E_q[log p(x|z)]": [("train_recon", "train", "solid"),
                                           ("test_recon", "test", "dot")],
    "KL<br>(q(z|x) ‖ p(z))": [("train_kl", "train", "solid"), ("test_kl", "test", "dot")],
}


def loss_curves(arrays: dict[str, tuple[np.ndarray, np.ndarray]], steps_per_epoch: float) -> go.Figure:
    """Two panels (reconstruction, KL), train and test, against epochs. arrays: metric -> (steps, values).
    Laid out by axis domains in one plain figure (make_subplots alone costs ~20 ms, and a
    live frame redraws this)."""
    traces = []
    for col, (panel, curves) in enumerate(CURVES.items(), start=1):
        axes = {} if col == 1 else dict(xaxis="x2", yaxis="y2")
        for metric, name, dash in curves:
            s, v = arrays.get(metric, (np.zeros(0), np.zeros(0)))
            traces.append(dict(type="scatter", x=f32(np.asarray(s) / steps_per_epoch),
                               y=f32(v), mode="lines", name=name, legendgroup=name,
                               showlegend=col == 1, **axes,
                               line=dict(dash=dash, color=COLORWAY[0 if col == 1 else 1])))
    title = dict(text="nats per digit")
    return plain_figure(traces, dict(
        height=300, margin=dict(t=70),
        xaxis=dict(domain=[0, 0.45], anchor="y", title=dict(text="epoch")),
        yaxis=dict(anchor="x", title=title),
        xaxis2=dict(domain=[0.55, 1.0], anchor="y2", title=dict(text="epoch")),
        yaxis2=dict(anchor="x2"),
        annotations=[dict(text=t, x=x, y=1.0, xref="paper", yref="paper", xanchor="center",
                          yanchor="bottom", showarrow=False, font=dict(size=16))
                     for t, x in zip(CURVES, (0.225, 0.775))]))


def _png(img: np.ndarray, scale: int) -> bytes:
    """A 2-D image with ink in [0, 1] as a PNG, dark on white, each pixel scale x scale."""
    from PIL import Image
    img = np.repeat(np.repeat(img, scale, 0), scale, 1)
    buf = io.BytesIO()
    Image.fromarray(np.uint8(np.round(255 * (1 - np.clip(img, 0, 1))))).save(buf, format="PNG")
    return buf.getvalue()


def grid_png(grid: LatentGrid, scale: int = 4) -> bytes:
    """The decoded grid as a PNG (ink dark on white), each pixel scale x scale."""
    return _png(tile(grid.images, PAD, flip_rows=True, fill=0.15), scale)  # light grey gutters


def digit_png(image: np.ndarray, scale: int = 32) -> bytes:
    """One decoded 8x8 digit as a PNG, each pixel scale x scale (256 px: sharp when the page
    shows it a column wide), framed by a 2 px light-grey border (blank edge pixels are
    white, like the page). An image, not a Plotly chart: the live frame redraws it, and a
    chart costs the browser a plot of its own on every first paint, preset and frame."""
    img = np.asarray(image, dtype=float).reshape(8, 8)
    return _png(np.pad(np.repeat(np.repeat(img, scale, 0), scale, 1), 2, constant_values=0.15), 1)


# ----------------------------------------------------------------------------- ELBO toy

def toy_marginal_figure(toy: ToyELBO) -> go.Figure:
    fig = go.Figure(go.Scatter(x=toy.x_axis, y=toy.px, mode="lines", name="p(x)",
                               line=dict(color=COLORWAY[0])))
    fig.add_vline(x=toy.x, line=dict(color="black", dash="dash"),
                  annotation_text=f"x = {toy.x:.2f}")
    # short titles: the three ELBO charts share one row, each a third of it on the projector
    fig.update_layout(title="Data density p(x)", height=320)
    fig.update_xaxes(title="x")
    fig.update_yaxes(title="density")
    return fig


def toy_posterior_figure(toy: ToyELBO, modes: np.ndarray | None = None) -> go.Figure:
    """The exact posterior, q, and each posterior mode labelled with its z (`modes`)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=toy.z, y=toy.posterior, mode="lines", name="true posterior p(z|x)",
                             fill="tozeroy", line=dict(color=COLORWAY[1])))
    if modes is not None and len(modes):
        fig.add_trace(_mode_labels(toy, np.asarray(modes, dtype=float)))
    fig.add_trace(go.Scatter(x=toy.z, y=toy.q, mode="lines", name=f"q(z) = N({toy.m:.2f}, {toy.s:.2f}²)",
                             line=dict(color=COLORWAY[0], dash="dash")))
    fig.update_layout(title=f"p(z | x = {toy.x:.2f})", height=360,
                      legend=dict(orientation="h", y=-0.25))    # under the plot (theme)
    fig.update_xaxes(title="z")
    fig.update_yaxes(title="density")
    return fig


def _mode_labels(toy: ToyELBO, modes: np.ndarray) -> go.Scatter:
    """A dot on each posterior mode with its z written above it."""
    heights = np.interp(modes, toy.z, toy.posterior)
    return go.Scatter(x=modes, y=heights, mode="markers+text", name="posterior modes",
                      text=[f"{m:.2f}" for m in modes], textposition="top center",
                      marker=dict(size=7, color=COLORWAY[1]), showlegend=False,
                      hoverinfo="skip", cliponaxis=False)


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


# ----------------------------------------------------------------------------- brushing
BRUSH_TILES = 40         # digits shown for a brushed region (the first ones, by test index)
TILE_COLUMNS = 8
TILE_PX = 28


def digit_uri(image: np.ndarray, scale: int = 3) -> str:
    """One 8x8 digit as a PNG data URI (ink dark on white), for a Vega-Lite image mark."""
    import base64
    return "data:image/png;base64," + base64.b64encode(
        _png(np.asarray(image, dtype=float).reshape(8, 8), scale)).decode()


def brush_frame(means2: np.ndarray, labels: np.ndarray, images: np.ndarray,
                decoded: np.ndarray) -> pd.DataFrame:
    """One row per test digit: its two shown latent means, label, test index, and the digit
    and its decoded mean as data URIs."""
    return pd.DataFrame({"z_a": np.asarray(means2[:, 0], float),
                         "z_b": np.asarray(means2[:, 1], float),
                         "digit": np.asarray(labels).astype(int).astype(str),
                         "index": np.arange(len(labels)),
                         "img": [digit_uri(i) for i in images],
                         "dec": [digit_uri(i) for i in decoded]})


def brush_chart(frame, dims: tuple[int, int] = (0, 1), title: str = "",
                size: int = 340):
    """Linked views (Altair): brush a rectangle on the latent scatter; the bar chart counts
    the labels of the brushed digits, and below them the first BRUSH_TILES brushed test
    digits and their decoded means decode(μ(x)) are drawn. The selection is Vega-Lite's,
    evaluated in the browser: nothing is sent to the server while brushing. An empty brush
    selects every digit."""
    import altair as alt
    brush = alt.selection_interval(name="brush", encodings=["x", "y"])
    base = alt.Chart(frame)
    digit_scale = alt.Scale(domain=[str(d) for d in range(10)], range=list(COLORWAY))
    scatter = base.mark_point(filled=True, opacity=0.8).encode(
        x=alt.X("z_a:Q", title=f"μ z{dims[0] + 1}"),
        y=alt.Y("z_b:Q", title=f"μ z{dims[1] + 1}"),
        color=alt.condition(brush, alt.Color("digit:N", scale=digit_scale, title="digit"),
                            alt.value("#d0d0d0")),
        tooltip=["digit:N", "index:Q"],
    ).add_params(brush).properties(width=size, height=size,
                                   title=title or "Brush a region of the latent codes")
    bars = base.transform_filter(brush).mark_bar().encode(
        x=alt.X("count():Q", title="brushed test digits"),
        y=alt.Y("digit:N", scale=alt.Scale(domain=[str(d) for d in range(10)]), title="label"),
        color=alt.Color("digit:N", scale=digit_scale, legend=None),
    ).properties(width=int(size * 0.6), height=size, title="Their labels")
    cols = TILE_COLUMNS
    rows = -(-BRUSH_TILES // cols)

    def tiles(field: str, name: str):
        return base.transform_filter(brush).transform_window(
            rank="row_number()", sort=[alt.SortField("index")]
        ).transform_filter(f"datum.rank <= {BRUSH_TILES}").transform_calculate(
            col=f"(datum.rank - 1) % {cols}", row=f"floor((datum.rank - 1) / {cols})"
        ).mark_image(width=TILE_PX, height=TILE_PX).encode(
            x=alt.X("col:O", scale=alt.Scale(domain=list(range(cols))), axis=None),
            y=alt.Y("row:O", scale=alt.Scale(domain=list(range(rows))), axis=None),
            url=f"{field}:N", tooltip=["digit:N", "index:Q"],
        ).properties(width=cols * (TILE_PX + 4), height=rows * (TILE_PX + 4), title=name)

    return alt.vconcat(
        alt.hconcat(scatter, bars),
        alt.hconcat(tiles("img", f"Brushed test digits (first {BRUSH_TILES})"),
                    tiles("dec", "Their decoded means decode(μ(x))")))
