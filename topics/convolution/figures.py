"""Figure builders for the convolution page: arrays / engine dataclasses in, go.Figure out.

Large images are sent as PNG (go.Image with a data URI),
which keeps a 512x512 map to a few hundred KB instead of a JSON heatmap of 262k numbers.
Signed maps (edge detectors, differences) use a blue-white-red scale centred at 0.
"""
from __future__ import annotations

import base64
import io

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.conv import (ERF, ConvFrames, Equivariance, FeatureMap, RFInfo, Region,
                         TransposedFrames)

BLUE, RED, BOX = np.array([33, 102, 172]), np.array([178, 24, 43]), "#ff7f0e"
DIVERGING = [[0, "rgb(33,102,172)"], [0.5, "white"], [1, "rgb(178,24,43)"]]


def to_rgb8(arr: np.ndarray, signed: bool | None = None) -> np.ndarray:
    """(H, W) or (H, W, 3) floats -> uint8 RGB. Unsigned: min..max -> black..white (RGB kept);
    signed (default when arr has both signs): -m..0..m -> blue..white..red, m = max |arr|."""
    a = np.nan_to_num(np.asarray(arr, np.float64))
    if signed is None:
        signed = a.ndim == 2 and a.min() < 0 < a.max()
    if signed:
        t = a / (np.abs(a).max() or 1.0)
        t = t[..., None] if t.ndim == 2 else t.mean(-1, keepdims=True)
        white = np.full(3, 255.0)
        rgb = np.where(t >= 0, white + t * (RED - white), white + (-t) * (BLUE - white))
        return rgb.astype(np.uint8)
    lo, hi = a.min(), a.max()
    t = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    rgb = t if t.ndim == 3 else np.repeat(t[..., None], 3, -1)
    return (rgb * 255).round().astype(np.uint8)


def png_bytes(arr: np.ndarray, signed: bool | None = None, compress_level: int = 6) -> bytes:
    """The map as a PNG file (same colouring as on screen), for download."""
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(to_rgb8(arr, signed)).save(buf, format="PNG", compress_level=compress_level)
    return buf.getvalue()


def image_figure(arr: np.ndarray, title: str, signed: bool | None = None,
                 height: int = 340) -> go.Figure:
    """A map drawn as an image with pixel axes (row 0 at the top): one go.Image whose source
    is the PNG (built directly: px.imshow(binary_string=True) made the same trace in ~3x the
    time, and with Plotly's own template that style_figure then had to replace)."""
    h, w = np.asarray(arr).shape[:2]
    uri = "data:image/png;base64," + base64.b64encode(png_bytes(arr, signed, 4)).decode()
    fig = go.Figure(go.Image(source=uri, hovertemplate="row %{y}, col %{x}<extra></extra>"))
    # the size as a subtitle: on the projector a one-line title ran past a narrow column
    fig.update_layout(title=dict(text=title, subtitle=dict(text=f"{h}×{w} pixels")),
                      height=height, margin=dict(l=10, r=10, t=64, b=10))
    return _bare(fig)


def _labels(z: np.ndarray, fmt: str) -> list[list[str]]:
    return [[("" if not np.isfinite(v) else fmt.format(v)) for v in row] for row in z]


def _annotated_heatmap(z: np.ndarray, fmt: str = "{:.2f}", signed: bool = True,
                       font_px: int | None = None, **kw) -> go.Heatmap:
    """A heatmap with its values written in the cells. font_px: None lets Plotly size the
    text; a number fixes it; 0 writes no numbers (hover still shows each value)."""
    z = np.asarray(z, np.float64)
    z = np.where(z == 0, 0.0, z)                  # no "-0.00" labels
    m = np.nanmax(np.abs(z)) if np.isfinite(z).any() else 1.0
    text = {} if font_px == 0 else dict(text=_labels(z, fmt), texttemplate="%{text}")
    if font_px:
        text["textfont"] = dict(size=font_px)
    return go.Heatmap(z=z, **text, colorscale=DIVERGING if signed else "Greys",
                      zmin=-m if signed else None, zmax=m if signed else None, showscale=False,
                      hovertemplate="row %{y}, col %{x}: %{z:.3f}<extra></extra>", **kw)


# Cell text of the sliding-window figure. Plotly's automatic size fits the text to the gaps
# between the labelled cells, but falls back to the page font (14 px, 22 in classroom mode)
# when they all lie in one row, as while the window fills the first output row: labels then
# overlapped from 8 cells on. So the figure fixes the size from the cell's width on screen.
NOMINAL_WIDTH = 940      # px: the chart's width in the wide layout at a 1400 px window (Chromium)
CHAR_EM = 0.65           # width of a label character in em (Plotly's own estimate: LINE_SPACING/2)
MIN_TEXT_PX, MAX_TEXT_PX = 8, 14


def label_chars(values: np.ndarray, fmt: str) -> int:
    """Characters in the longest label fmt.format(v) over the finite values (-0 as 0)."""
    v = np.ravel(np.asarray(values, np.float64))
    v = v[np.isfinite(v)]
    return max((len(fmt.format(x)) for x in np.where(v == 0, 0.0, v)), default=1)


def cell_text_px(cell_px: float, chars: int) -> int:
    """Font size (px) at which a label of `chars` characters fits a cell_px-wide square cell:
    floor(min(cell_px / (CHAR_EM * chars), cell_px / 1.5, MAX_TEXT_PX)); 0 (no numbers)
    below MIN_TEXT_PX."""
    size = int(min(cell_px / (CHAR_EM * max(chars, 1)), cell_px / 1.5, MAX_TEXT_PX))
    return size if size >= MIN_TEXT_PX else 0


def _cell_px(fig: go.Figure, col: int, shape: tuple[int, int]) -> float:
    """Side (px) of one square cell of an (h, w) grid in subplot column `col`, the figure
    being NOMINAL_WIDTH wide: the smaller of panel width / w and panel height / h."""
    lay = fig.layout
    x0, x1 = lay[f"xaxis{'' if col == 1 else col}"].domain
    w = (NOMINAL_WIDTH - lay.margin.l - lay.margin.r) * (x1 - x0)
    h = lay.height - lay.margin.t - lay.margin.b
    return min(w / shape[1], h / shape[0])


def _bare(fig: go.Figure) -> go.Figure:
    """No tick marks or labels on any axis (grids of pixels need none)."""
    fig.update_xaxes(showticklabels=False, ticks="", showgrid=False)
    fig.update_yaxes(showticklabels=False, ticks="", showgrid=False)
    return fig


def kernel_figure(kernel: np.ndarray, name: str = "") -> go.Figure:
    """The kernel's weights; its name and sum on the line under the title (the kernel's
    column is narrow: "Kernel: gaussian blur" in one title was cut on the projector)."""
    fig = go.Figure(_annotated_heatmap(kernel))
    fig.update_yaxes(autorange="reversed", showgrid=False, showticklabels=False, scaleanchor="x")
    fig.update_xaxes(showgrid=False, showticklabels=False)
    note = f"{name}, sum {float(np.sum(kernel)):.3g}" if name else f"sum {float(np.sum(kernel)):.3g}"
    fig.update_layout(title=dict(text="Kernel", subtitle=dict(text=note)),
                      height=340, margin=dict(l=10, r=10, t=64, b=10))
    return _bare(fig)


def _window_panels(panels, titles, widths) -> tuple[go.Figure, list[float], list[int]]:
    """The three-panel figure of a window animation, the side of a cell of each panel's grid
    (px) and the cell text size that fits every value the panel shows at any position (0: no
    numbers, and the panel's title says to hover). panels: (grid, format, all values);
    titles: (with numbers, without)."""
    fig = make_subplots(1, 3, column_widths=widths, horizontal_spacing=0.06,
                        subplot_titles=[t for t, _ in titles])
    fig.update_layout(showlegend=False, height=420, margin=dict(l=10, r=10, t=40, b=10))
    cells = [_cell_px(fig, c, grid.shape) for c, (grid, _, _) in enumerate(panels, 1)]
    sizes = [cell_text_px(cell, label_chars(v, f)) for cell, (_, f, v) in zip(cells, panels)]
    for title, (_, hover), size in zip(fig.layout.annotations, titles, sizes):
        if not size:
            title.text = hover
    return fig, cells, sizes


def sliding_window_figure(frames: ConvFrames, u: int, kernel: np.ndarray) -> go.Figure:
    """CNN Explainer's view: the padded input with the window of output u (its taps marked),
    the products window * kernel, and the output filled in up to u. The numbers in each panel
    have one size for every u (cell_text_px of the panel's longest label); a panel whose
    cells are too small for them shows none and says to hover."""
    kh, kw = kernel.shape
    r0, c0 = frames.corners[u]
    d = frames.dilation
    out = np.full(frames.out_shape, np.nan)
    out.ravel()[:u + 1] = frames.sums[:u + 1]
    panels = [  # (grid, format, every value it shows at some u: they fix the text size)
        (frames.padded, "{:.1f}", frames.padded),
        (frames.products[u], "{:.2f}", frames.products),
        (out, "{:.2f}", frames.sums),
    ]
    middle, result = {"max": ("window: keep the largest", "max"),
                      "avg": ("window / k²", "mean")}.get(frames.op, ("products  x · k", "sum"))
    titles = [  # (with numbers, without: hover for them)
        ("padded input, window of this output", "padded input (hover for values)"),
        (middle, f"{middle.split(':')[0]} (hover for values)"),
        (f"output: {result} = {frames.sums[u]:.3f}",
         f"output (hover): {result} = {frames.sums[u]:.3f}")]
    fig, cells, sizes = _window_panels(panels, titles, [0.45, 0.25, 0.3])
    fig.add_trace(_annotated_heatmap(frames.padded, "{:.1f}", signed=False, opacity=0.85,
                                     font_px=sizes[0]), 1, 1)
    p, (h, w) = frames.padding, frames.padded.shape
    if p:
        fig.add_shape(type="rect", x0=p - 0.5, x1=w - p - 0.5, y0=p - 0.5, y1=h - p - 0.5,
                      line=dict(color="#555", dash="dot"), row=1, col=1)
    ti, tj = np.meshgrid(r0 + d * np.arange(kh), c0 + d * np.arange(kw), indexing="ij")
    fig.add_trace(go.Scatter(x=tj.ravel(), y=ti.ravel(), mode="markers", hoverinfo="skip",
                             marker=dict(symbol="square-open", size=min(22, 0.8 * cells[0]),
                                         color=BOX, line=dict(width=3 if cells[0] > 16 else 2))),
                  1, 1)
    fig.add_trace(_annotated_heatmap(frames.products[u], font_px=sizes[1]), 1, 2)
    fig.add_trace(_annotated_heatmap(out, font_px=sizes[2]), 1, 3)
    oi, oj = divmod(u, frames.out_shape[1])
    fig.add_shape(type="rect", x0=oj - 0.5, x1=oj + 0.5, y0=oi - 0.5, y1=oi + 0.5,
                  line=dict(color=BOX, width=3), row=1, col=3)
    return _grid_panels(fig, (frames.padded.shape, kernel.shape, frames.out_shape))


def _grid_panels(fig: go.Figure, shapes) -> go.Figure:
    """The three panels of a window figure as pixel grids (square cells, row 0 on top), the
    second and third on a light grey card."""
    for c, (gh, gw) in zip((1, 2, 3), shapes):
        fig.update_yaxes(range=[gh - 0.5, -0.5], showgrid=False, showticklabels=False,
                         scaleanchor=f"x{'' if c == 1 else c}", row=1, col=c)
        fig.update_xaxes(range=[-0.5, gw - 0.5], showgrid=False, showticklabels=False, row=1, col=c)
    for c, (gh, gw) in zip((2, 3), shapes[1:]):
        fig.add_shape(type="rect", x0=-0.5, x1=gw - 0.5, y0=-0.5, y1=gh - 0.5, layer="below",
                      fillcolor="#f2f2f2", line=dict(color="#bbb", width=1), row=1, col=c)
    return _bare(fig)


def transposed_window_figure(frames: TransposedFrames, u: int) -> go.Figure:
    """A transposed convolution at input position u: the input with that cell boxed, the block
    input[u] · kernel it spreads, and the full output summed over positions 0 … u with the
    block's taps boxed (dotted: the output left after cropping the padding). Cell numbers have
    one size for every u, as in sliding_window_figure."""
    kh, kw = frames.blocks.shape[1:]
    h, w = frames.input.shape
    r0, c0 = frames.corners[u]
    d = frames.dilation
    panels = [(frames.input, "{:.1f}", frames.input), (frames.blocks[u], "{:.2f}", frames.blocks),
              (frames.partial[u], "{:.2f}", frames.partial)]
    titles = [("input: this value spreads", "input (hover for values)"),
              ("its block  x · k", "block (hover for values)"),
              ("output: sum of the blocks so far", "output so far (hover for values)")]
    fig, cells, sizes = _window_panels(panels, titles, [0.25, 0.25, 0.5])
    for c, ((grid, fmt, _), size) in enumerate(zip(panels, sizes), 1):
        fig.add_trace(_annotated_heatmap(grid, fmt, font_px=size), 1, c)
    i, j = divmod(u, w)
    fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                  line=dict(color=BOX, width=3), row=1, col=1)
    ti, tj = np.meshgrid(r0 + d * np.arange(kh), c0 + d * np.arange(kw), indexing="ij")
    fig.add_trace(go.Scatter(x=tj.ravel(), y=ti.ravel(), mode="markers", hoverinfo="skip",
                             marker=dict(symbol="square-open", size=min(22, 0.8 * cells[2]),
                                         color=BOX, line=dict(width=3 if cells[2] > 16 else 2))),
                  1, 3)
    p, (fh, fw) = frames.padding, frames.full_shape
    if p:
        fig.add_shape(type="rect", x0=p - 0.5, x1=fw - p - 0.5, y0=p - 0.5, y1=fh - p - 0.5,
                      line=dict(color="#555", dash="dot"), row=1, col=3)
    return _grid_panels(fig, (frames.input.shape, (kh, kw), frames.full_shape))


def rf_growth_figure(infos: list[RFInfo]) -> go.Figure:
    """r and j after every layer (log2 axis: dilation doubling gives a straight line)."""
    names = [i.name for i in infos]
    fig = go.Figure([go.Scatter(x=names, y=[i.size for i in infos], name="receptive field r",
                                mode="lines+markers+text", text=[i.size for i in infos],
                                textposition="top center"),
                     go.Scatter(x=names, y=[i.jump for i in infos], name="jump j",
                                mode="lines+markers", line=dict(dash="dash"))])
    # layer names upright when many: side by side they ran into one another on the projector
    fig.update_layout(title="Receptive field r and jump j per layer", height=340,
                      xaxis=dict(tickangle=-90 if len(names) > 4 else None),
                      yaxis=dict(type="log", dtick=np.log10(2), title="pixels (log scale)"),
                      legend=dict(orientation="h", y=-0.25))
    return fig


def image_trace(arr: np.ndarray, signed: bool | None = False,
                name: str = "input image") -> go.Image:
    """The map as one go.Image trace (PNG data URI, colours of to_rgb8); pixel (i, j) is centred
    at x = j, y = i, as in a go.Heatmap of the same array."""
    uri = "data:image/png;base64," + base64.b64encode(png_bytes(arr, signed)).decode("ascii")
    return go.Image(source=uri, name=name, x0=0, dx=1, y0=0, dy=1,
                    hovertemplate="input row %{y}, col %{x}<extra></extra>")


def _input_panel(fig: go.Figure, region: Region, n: int, image: np.ndarray | None,
                 pad: int, row: int, col: int) -> None:
    """The input panel of rf_layers_figure: the zero padding (grey frame, `pad` pixels wide),
    the image (or a blank grid), the pixels that really reach the output (blue, translucent,
    rows/cols clip_lo..clip_hi) and the theoretical box lo..hi (dashed, may leave the image)."""
    if pad:
        fig.add_shape(type="rect", x0=-0.5 - pad, x1=n - 0.5 + pad, y0=-0.5 - pad, y1=n - 0.5 + pad,
                      fillcolor="#d9d9d9", line=dict(width=0), layer="below", name="padding",
                      row=row, col=col)
    if image is not None:
        fig.add_trace(image_trace(image), row, col)
    else:
        fig.add_trace(go.Heatmap(z=np.zeros((n, n)), colorscale=[[0, "#f4f4f4"], [1, "#f4f4f4"]],
                                 showscale=False, hoverinfo="skip"), row, col)
    (rlo, clo), (rhi, chi) = region.clip_lo, region.clip_hi
    fig.add_shape(type="rect", x0=clo - 0.5, x1=chi + 0.5, y0=rlo - 0.5, y1=rhi + 0.5,
                  fillcolor="rgba(31,119,180,0.3)", line=dict(color="#1f77b4", width=2),
                  name="pixels seen", row=row, col=col)
    fig.add_shape(type="rect", x0=region.lo[1] - 0.5, x1=region.hi[1] + 0.5,
                  y0=region.lo[0] - 0.5, y1=region.hi[0] + 0.5,
                  line=dict(color=BOX, dash="dash", width=2), name="receptive field box",
                  row=row, col=col)


def rf_layers_figure(infos: list[RFInfo], region: Region, input_image: np.ndarray | None = None,
                     max_cols: int = 4) -> go.Figure:
    """Every layer's grid (input first) with the units feeding the chosen output highlighted.
    The input panel shows `input_image` (n x n, n = infos[0].out_size) under the pixels that
    reach the output (solid, clip_lo..clip_hi) and the theoretical box (dashed, lo..hi: it may
    reach into the grey zero padding). The last panel has a clickable marker per output unit
    (plotly on_select)."""
    n = len(infos)
    cols = min(max_cols, n)
    rows = -(-n // cols)
    fig = make_subplots(rows, cols, subplot_titles=[f"{i.name}: {i.out_size}², r={i.size}, j={i.jump}"
                                                    for i in infos],
                        horizontal_spacing=0.04, vertical_spacing=0.12)
    if input_image is not None and np.asarray(input_image).shape[:2] != (infos[0].out_size,) * 2:
        raise ValueError(f"the input image is {np.asarray(input_image).shape[:2]}, the layers "
                         f"expect {infos[0].out_size}x{infos[0].out_size}")
    for li, info in enumerate(infos):
        r, c = divmod(li, cols)
        r, c = r + 1, c + 1
        size = info.out_size
        pad = max(region.pad_before + region.pad_after) if li == 0 else 0
        if li == 0:
            _input_panel(fig, region, size, input_image, pad, r, c)
        else:
            (rlo, clo), (rhi, chi) = region.per_layer[li]
            mask = np.zeros((size, size))
            mask[rlo:rhi + 1, clo:chi + 1] = 1
            fig.add_trace(go.Heatmap(z=mask, colorscale=[[0, "#f4f4f4"], [1, "#1f77b4"]], zmin=0,
                                     zmax=1, showscale=False,
                                     hovertemplate="row %{y}, col %{x}<extra></extra>"), r, c)
        if li == n - 1:
            ii, jj = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
            fig.add_trace(go.Scatter(x=jj.ravel(), y=ii.ravel(), mode="markers",
                                     marker=dict(size=max(3, min(12, 160 // max(size, 1))),
                                                 color="rgba(214,39,40,0.12)"),
                                     hovertemplate="output (%{y}, %{x}): click<extra></extra>",
                                     name="outputs"), r, c)
        axis = dict(showgrid=False, showticklabels=False)
        fig.update_xaxes(range=[-0.5 - pad, size - 0.5 + pad], row=r, col=c, **axis)
        fig.update_yaxes(range=[size - 0.5 + pad, -0.5 - pad], row=r, col=c, **axis)
    fig.update_layout(showlegend=False, height=260 * rows + 40, margin=dict(l=10, r=10, t=50, b=10),
                      clickmode="event+select")
    return _bare(fig)


def erf_figure(erf: ERF, title: str, note: str = "") -> go.Figure:
    """The ERF heatmap with the theoretical box (dashed) and its 2σ circle; `note` (the
    measured numbers) under the title."""
    fig = go.Figure(go.Heatmap(z=erf.heatmap, colorscale="Viridis", zmin=0, zmax=1,
                               colorbar=dict(title="|∂y/∂x|"),
                               hovertemplate="row %{y}, col %{x}: %{z:.3f}<extra></extra>"))
    reg = erf.region
    fig.add_shape(type="rect", x0=reg.lo[1] - 0.5, x1=reg.hi[1] + 0.5, y0=reg.lo[0] - 0.5,
                  y1=reg.hi[0] + 0.5, line=dict(color=BOX, dash="dash", width=2))
    cy, cx = (reg.lo[0] + reg.hi[0]) / 2, (reg.lo[1] + reg.hi[1]) / 2
    rad = erf.radius_2sigma
    fig.add_shape(type="circle", x0=cx - rad, x1=cx + rad, y0=cy - rad, y1=cy + rad,
                  line=dict(color="white", dash="dot", width=2))
    h, w = erf.heatmap.shape
    # zoom to the box with a margin of half its size (the rest of a large input is ~0)
    m = reg.size / 2
    x0, x1 = max(-0.5, reg.lo[1] - 0.5 - m), min(w - 0.5, reg.hi[1] + 0.5 + m)
    y0, y1 = max(-0.5, reg.lo[0] - 0.5 - m), min(h - 0.5, reg.hi[0] + 0.5 + m)
    fig.update_xaxes(range=[x0, x1], showgrid=False)
    fig.update_yaxes(range=[y1, y0], showgrid=False, scaleanchor="x")
    fig.update_layout(title=dict(text=title, subtitle=dict(text=note)), height=380,
                      margin=dict(l=10, r=10, t=40, b=10))
    return _bare(fig)


def _tiled(maps: np.ndarray, per_row: int) -> tuple[np.ndarray, np.ndarray]:
    """(C, H, W) channels tiled per_row to a row with one NaN pixel between tiles: the
    values and, per pixel, its channel (-1 in the gaps)."""
    c, h, w = maps.shape
    rows = -(-c // per_row)
    z = np.full((rows * (h + 1) - 1, per_row * (w + 1) - 1), np.nan)
    ch = np.full(z.shape, -1)
    for i in range(c):
        r, k = divmod(i, per_row)
        z[r * (h + 1):r * (h + 1) + h, k * (w + 1):k * (w + 1) + w] = maps[i]
        ch[r * (h + 1):r * (h + 1) + h, k * (w + 1):k * (w + 1) + w] = i
    return z, ch


def _scale_words(maps: np.ndarray) -> str:
    """The colour range of one layer's panel in words: dark 0 → yellow max (ReLU and pool
    outputs are >= 0), or blue -m → red +m for signed maps."""
    m = float(np.abs(maps).max()) or 1.0
    return f"−{m:.2g} → +{m:.2g}" if maps.min() < 0 else f"0 → {m:.2g}"


def feature_maps_figure(layers: list[FeatureMap], per_row: int = 8) -> go.Figure:
    """Every layer's channels in ONE figure, a panel per layer (its channels tiled into one
    heatmap with NaN gaps, one colour scale per layer, hover names the channel), panel
    heights in proportion to their tile rows: the whole stack is the tab's figure, so the
    projector shows all of it on its first screen."""
    tiles = [_tiled(fm.maps, per_row) for fm in layers]
    weights = [z.shape[0] for z, _ in tiles]
    fig = make_subplots(
        rows=len(layers), cols=1, vertical_spacing=0.09,
        row_heights=[w / sum(weights) for w in weights],
        subplot_titles=[f"{fm.name}: {fm.maps.shape[0]} × {fm.maps.shape[1]}×"
                        f"{fm.maps.shape[2]}, sees {fm.rf.size}×{fm.rf.size} px, "
                        f"colour {_scale_words(fm.maps)}" for fm in layers])
    for i, (fm, (z, ch)) in enumerate(zip(layers, tiles)):
        zmax = float(np.abs(fm.maps).max()) or 1.0
        signed = bool(fm.maps.min() < 0)
        # no colour bars: a bar as short as a row of 2×2 tiles printed its ticks over one
        # another; the title states the range instead
        fig.add_trace(go.Heatmap(
            z=z, customdata=ch, zmin=-zmax if signed else 0, zmax=zmax, name=fm.name,
            colorscale=DIVERGING if signed else "Viridis", hoverongaps=False, showscale=False,
            hovertemplate=f"{fm.name}<br>channel %{{customdata}}: %{{z:.3f}}<extra></extra>"),
            i + 1, 1)
        fig.update_yaxes(autorange="reversed", scaleanchor=f"x{i + 1 if i else ''}",
                         row=i + 1, col=1)
    rows = sum(weights) / 9
    fig.update_layout(height=int(90 * len(layers) + 110 * rows),
                      margin=dict(l=10, r=10, t=40, b=10))
    return _bare(fig)


def probabilities_figure(probs: np.ndarray, label: int | None = None) -> go.Figure:
    colors = ["#2ca02c" if i == label else "#1f77b4" for i in range(len(probs))]
    fig = go.Figure(go.Bar(x=list(range(len(probs))), y=probs, marker_color=colors))
    fig.update_layout(title="Predicted class probabilities", height=300, yaxis=dict(range=[0, 1]),
                      xaxis=dict(dtick=1, title="digit"))
    return fig


def equivariance_figure(eq: Equivariance, pool: int) -> go.Figure:
    """Top: f(Tx), T f(x) and their difference (zero: equivariance). Bottom: P f(x), P f(Tx)
    and their difference (small: approximate invariance)."""
    fig = make_subplots(2, 3, horizontal_spacing=0.03, vertical_spacing=0.1, subplot_titles=(
        "conv(shifted image)", "shifted conv(image)", f"difference (max {eq.equivariance_error:.1e})",
        f"maxpool{pool}(conv(image))", f"maxpool{pool}(conv(shifted))",
        f"difference (relative {eq.change_pooled:.2f})"))
    m1 = float(np.abs(eq.shifted_conv).max()) or 1.0
    m2 = float(np.abs(eq.pooled).max()) or 1.0
    panels = [(eq.conv_of_shifted, m1), (eq.shifted_conv, m1), (eq.conv_of_shifted - eq.shifted_conv, m1),
              (eq.pooled, m2), (eq.pooled_of_shifted, m2), (eq.pooled_difference, m2)]
    for k, (z, m) in enumerate(panels):
        fig.add_trace(go.Heatmap(z=z, zmin=-m, zmax=m, colorscale=DIVERGING, showscale=False,
                                 hovertemplate="row %{y}, col %{x}: %{z:.3f}<extra></extra>"),
                      k // 3 + 1, k % 3 + 1)
    fig.update_xaxes(showticklabels=False, showgrid=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, autorange="reversed")
    fig.update_layout(height=620, margin=dict(l=10, r=10, t=40, b=10))
    return _bare(fig)


def tile_maps(maps: np.ndarray, per_row: int = 8, gap: int = 1) -> np.ndarray:
    """(C, H, W) -> one (rows*(H+gap), per_row*(W+gap)) image of all channels, NaN gaps,
    each channel min-max scaled to [0, 1] (for a PNG download)."""
    c, h, w = maps.shape
    rows = -(-c // per_row)
    out = np.full((rows * (h + gap) - gap, per_row * (w + gap) - gap), 0.0)
    for i in range(c):
        m = maps[i]
        m = (m - m.min()) / (np.ptp(m) or 1.0)
        r, k = divmod(i, per_row)
        out[r * (h + gap):r * (h + gap) + h, k * (w + gap):k * (w + gap) + w] = m
    return out


def unit_figure(window: np.ndarray, kernel: np.ndarray | None, title: str,
                per_row: int = 4) -> go.Figure:
    """What one unit computes: the input window it sees (its input channels tiled), and for a
    convolution the kernel of its channel and the products window ⊙ kernel that sum to it
    (each tile one input channel, same layout in the three panels)."""
    panels = [("Input window", window)]
    if kernel is not None:
        panels += [("Kernel W[c]", kernel), ("Window ⊙ kernel", window * kernel)]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[0] for p in panels],
                        horizontal_spacing=0.06)
    for i, (name, arr) in enumerate(panels):
        z, ch = _tiled(np.asarray(arr, float), min(per_row, len(arr)))
        m = float(np.nanmax(np.abs(z))) or 1.0
        fig.add_trace(go.Heatmap(
            z=z, customdata=ch, zmin=-m, zmax=m, colorscale=DIVERGING, showscale=False,
            hoverongaps=False, name=name,
            hovertemplate=name + "<br>input channel %{customdata}: %{z:.3f}<extra></extra>"),
            1, i + 1)
        fig.update_yaxes(autorange="reversed", scaleanchor=f"x{i + 1 if i else ''}",
                         row=1, col=i + 1)
    fig.update_layout(height=300, title=dict(text=title), margin=dict(l=10, r=10, t=70, b=10))
    return _bare(fig)
