"""Figure builders of the autoregressive page: plain data in, a Plotly figure out (no st.*).
Figures redrawn every live frame are plain dicts (ui/fastfig.py: the canvas paints them);
bars are drawn as thick vertical lines, which the canvas draws too."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.screen import block_means
from ui.theme import COLORWAY

HEIGHT = 440
BARE = dict(showgrid=False, zeroline=False, showticklabels=False, ticks="",
            title=dict(text=""))
TARGET = "#d62728"
BLIND = "#ff7f0e"
ROUTES = [[0.0, "#ffffff"], [0.001, "#d6e4f0"], [1.0, "#1f4e79"]]
INK = [[0.0, "#ffffff"], [1.0, "#111111"]]
MASK = [[0.0, "#ffffff"], [1.0, "#4a6fa5"]]


def _pixel_axes(size: int, domain=(0.0, 1.0), anchor: str = "y") -> tuple[dict, dict]:
    x = dict(BARE, range=[-0.5, size - 0.5], domain=list(domain), anchor=anchor,
             constrain="domain")
    y = dict(BARE, range=[size - 0.5, -0.5], scaleanchor=anchor.replace("y", "x"),
             anchor=anchor.replace("y", "x"))
    return x, y


def field_figure(routes: np.ndarray, blind: np.ndarray, window: np.ndarray, row: int,
                 col: int, title: str) -> go.Figure:
    """The input image: each pixel shaded by its number of routes to output (row, col) (white:
    none), the blind spot (window pixels before the target that no route reaches) marked ×,
    the rest of the dense stack's causal window as faint dots, the target a red square."""
    size = len(routes)
    z = np.log1p(routes)                                                 # (size, size)
    br, bc = np.nonzero(blind)
    wr, wc = np.nonzero(window & ~blind & ~(routes > 0))
    traces: list[dict] = [dict(type="heatmap", z=f32(z), colorscale=ROUTES, showscale=False,
                   zmin=0, zmax=max(float(z.max()), 1e-9), xgap=1, ygap=1,
                   name="routes", text=[[f"{int(v)} routes" for v in r] for r in routes],
                   hovertemplate="row %{y}, col %{x}: %{text}<extra></extra>"),
              dict(type="scatter", x=f32(wc), y=f32(wr), mode="markers", name="window",
                   marker=dict(color="#bbbbbb", size=5), hoverinfo="skip"),
              dict(type="scatter", x=f32(bc), y=f32(br), mode="markers", name="blind spot",
                   marker=dict(color=BLIND, size=16, symbol="x")),
              dict(type="scatter", x=[col], y=[row], mode="markers", name="target",
                   marker=dict(color=TARGET, size=18, symbol="square"))]
    x, y = _pixel_axes(size)
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT,
                                     legend=LEGEND_BELOW, xaxis=x, yaxis=y))


def masks_figure(mask_a: np.ndarray, mask_b: np.ndarray) -> go.Figure:
    """The type-A and type-B k × k masks side by side (dark: a kept weight, 1; white: 0),
    the centre tap outlined in red."""
    k = len(mask_a)
    traces, shapes, annotations, layout = [], [], [], {}
    for i, (mask, name) in enumerate(((mask_a, "type A"), (mask_b, "type B"))):
        sx, sy = ("x", "y") if i == 0 else ("x2", "y2")
        domain = (0.0, 0.45) if i == 0 else (0.55, 1.0)
        traces.append(dict(type="heatmap", z=f32(mask), colorscale=MASK, showscale=False,
                           zmin=0, zmax=1, xgap=2, ygap=2, name=name, xaxis=sx, yaxis=sy,
                           text=[[str(int(v)) for v in r] for r in mask],
                           texttemplate="%{text}"))
        x, y = _pixel_axes(k, domain, anchor=sy)
        layout["xaxis" if i == 0 else "xaxis2"] = x
        layout["yaxis" if i == 0 else "yaxis2"] = y
        c = k // 2
        shapes.append(dict(type="rect", xref=sx, yref=sy, x0=c - 0.5, x1=c + 0.5,
                           y0=c - 0.5, y1=c + 0.5, line=dict(color=TARGET, width=3)))
        annotations.append(dict(text=name, showarrow=False,
                                xref=f"{sx} domain", yref="paper", x=0.5, y=1.0,
                                yanchor="bottom"))
    return plain_figure(traces, dict(title=dict(text=f"{k} × {k} masks"), height=HEIGHT,
                                     showlegend=False, shapes=shapes,
                                     annotations=annotations, **layout))


def causal_figure(routes: np.ndarray, k: int, dilations: tuple[int, ...],
                  title: str) -> go.Figure:
    """A causal 1-D stack drawn as layers of samples (bottom: the input, top: the output):
    every sample a grey dot; those on a route to the last output coloured, sized by their
    route count, joined to the k samples (d apart) each of them reads."""
    n_layers, length = routes.shape
    tt = np.arange(length)
    xs: list = []
    ys: list = []
    for level in range(1, n_layers):
        d = dilations[level - 1]
        for t in np.flatnonzero(routes[level] > 0):
            for j in range(k):
                src = t - j * d
                if src >= 0:
                    xs += [float(t), float(src), None]
                    ys += [float(level), float(level - 1), None]
    on_t, on_l = np.nonzero(routes.T > 0)
    counts = routes.T[on_t, on_l]
    size = 7 + 9 * np.log1p(counts) / max(float(np.log1p(counts).max()), 1e-9)
    traces = [dict(type="scatter", x=f32(np.tile(tt, n_layers)),
                   y=f32(np.repeat(np.arange(n_layers), length)), mode="markers",
                   name="samples", marker=dict(color="#cccccc", size=6), hoverinfo="skip"),
              dict(type="scatter", x=xs, y=ys, mode="lines", name="routes",
                   line=dict(color="#9ab3d5", width=1.5), hoverinfo="skip"),
              dict(type="scatter", x=f32(on_t), y=f32(on_l), mode="markers",
                   name="on a route", marker=dict(color=COLORWAY[0], size=f32(size)),
                   text=[f"{int(c)} routes" for c in counts])]
    labels = ["input"] + [f"d = {d}" for d in dilations]
    return plain_figure(traces, dict(
        title=dict(text=title), height=HEIGHT, showlegend=False,
        xaxis=dict(title=dict(text="time step t"), range=[-1, length]),
        yaxis=dict(tickvals=list(range(n_layers)), ticktext=labels, range=[-0.5,
                                                                           n_layers - 0.5])))


def _mosaic(images: np.ndarray, cols: int = 5) -> np.ndarray:
    """(n, 8, 8) -> one image of rows of `cols` digits, a column/row of NaN between."""
    n, h, w = images.shape
    rows = -(-n // cols)
    out = np.full((rows * (h + 1) - 1, cols * (w + 1) - 1), np.nan)
    for i, img in enumerate(images):
        r, c = divmod(i, cols)
        out[r * (h + 1):r * (h + 1) + h, c * (w + 1):c * (w + 1) + w] = img
    return out


def samples_figure(images: np.ndarray, given_rows: int, labels: np.ndarray, levels: int,
                   title: str) -> go.Figure:
    """Ten 8 × 8 samples in two rows (white: level 0, black: the top level); in a completion
    a red line under the rows copied from the test digit; the class each was drawn for."""
    z = _mosaic(images.astype(float))
    shapes, annotations = [], []
    for i in range(len(images)):
        r, c = divmod(i, 5)
        x0, y0 = c * 9 - 0.5, r * 9 - 0.5
        if given_rows:
            shapes.append(dict(type="line", x0=x0, x1=x0 + 8, y0=y0 + given_rows,
                               y1=y0 + given_rows, line=dict(color=TARGET, width=2)))
        if labels[i] >= 0:
            annotations.append(dict(text=f"{int(labels[i])}", showarrow=False, x=x0 + 0.3,
                                    y=y0 + 0.6, font=dict(color=COLORWAY[0])))
    x, y = _pixel_axes(z.shape[1])
    y["range"] = [z.shape[0] - 0.5, -0.5]
    return plain_figure([dict(type="heatmap", z=f32(z), colorscale=INK, showscale=False,
                              zmin=0, zmax=levels - 1, name="samples")],
                        dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                             xaxis=x, yaxis=y,
                             # an empty list is no valid Plotly value: left out instead
                             **({"shapes": shapes} if shapes else {}),
                             **({"annotations": annotations} if annotations else {})))


def bits_pixel_figure(steps: np.ndarray, bits: np.ndarray, test_step: int, test_bits: float,
                      baseline: float, digit: np.ndarray, row: int, col: int,
                      probs: np.ndarray, truth: int) -> go.Figure:
    """Top: the training minibatch's bits per pixel against the iteration, the test digits'
    at the last one, and the independent-pixel baseline. Bottom left: the test digit up to
    pixel (row, col) (later pixels hidden: what the model sees), the pixel ringed. Bottom
    right: p(x_rc = q | the pixels before) over the levels q, the true level in red."""
    s, v = block_means(np.asarray(steps), np.asarray(bits, dtype=float))
    levels = len(probs)
    seen = digit.astype(float)
    order = np.arange(digit.size).reshape(digit.shape)
    seen[order >= row * digit.shape[1] + col] = np.nan
    top = max(float(np.nanmax(v)) if len(v) else 0.0, baseline,
              float(test_bits) if np.isfinite(test_bits) else 0.0) * 1.1 or 1.0
    last = float(max(int(test_step), float(np.max(s)) if len(s) else 0.0, 1))
    bars_x: list = []
    bars_y: list = []
    for q, p in enumerate(probs):
        bars_x += [float(q), float(q), None]
        bars_y += [0.0, float(p), None]
    traces: list[dict] = [dict(type="scatter", x=s, y=f32(v), mode="lines", name="train minibatch",
                   line=dict(color=COLORWAY[0])),
              dict(type="scatter", x=[0, max(int(test_step), 1)], y=[baseline, baseline],
                   mode="lines", name="independent pixels", line=dict(color="#888888",
                                                                      dash="dash")),
              dict(type="scatter", x=[int(test_step)], y=[float(test_bits)], mode="markers",
                   name="test digits", marker=dict(color=TARGET, size=12)),
              dict(type="heatmap", z=f32(seen), colorscale=INK, showscale=False, zmin=0,
                   zmax=levels - 1, name="context", xaxis="x2", yaxis="y2"),
              dict(type="scatter", x=[col], y=[row], mode="markers", name="pixel",
                   marker=dict(color="rgba(0,0,0,0)", size=14, symbol="square-open",
                               line=dict(color=TARGET, width=3)), xaxis="x2", yaxis="y2"),
              dict(type="scatter", x=bars_x, y=bars_y, mode="lines", name="p(level)",
                   line=dict(color=COLORWAY[0], width=max(4, 60 // levels)),
                   xaxis="x3", yaxis="y3"),
              dict(type="scatter", x=[float(truth), float(truth), None],
                   y=[0.0, float(probs[truth]), None], mode="lines", name="true level",
                   line=dict(color=TARGET, width=max(4, 60 // levels)),
                   xaxis="x3", yaxis="y3")]
    x2, y2 = _pixel_axes(8, (0.0, 0.32), anchor="y2")
    y2["domain"] = [0, 0.38]
    frame = dict(type="rect", xref="x2", yref="y2", x0=-0.5, x1=7.5, y0=-0.5, y1=7.5,
                 line=dict(color="#999999", width=1))
    return plain_figure(traces, dict(
        title=dict(text="Bits/pixel by iteration; one pixel"), height=HEIGHT,
        showlegend=False, shapes=[frame],
        # an explicit range: the live canvas and Plotly then draw the same axis
        xaxis=dict(anchor="y", domain=[0, 1], range=[0, last * 1.04]),
        yaxis=dict(anchor="x", domain=[0.62, 1], title=dict(text="bits/pixel"),
                   range=[0, top]),
        xaxis2=x2, yaxis2=y2,
        xaxis3=dict(anchor="y3", domain=[0.4, 1], range=[-0.7, levels - 0.3],
                    title=dict(text=f"level of pixel ({row}, {col})")),
        yaxis3=dict(anchor="x3", domain=[0, 0.38], range=[0, 1.05],
                    title=dict(text="p"))))


def usage_figure(usage: np.ndarray, title: str) -> go.Figure:
    """How many code positions of the test digits use each codebook entry, as bars (thick
    vertical lines); the dead entries (never used) as red marks on the axis."""
    k = len(usage)
    xs: list = []
    ys: list = []
    for i, n in enumerate(usage):
        xs += [float(i), float(i), None]
        ys += [0.0, float(n), None]
    dead = np.flatnonzero(usage == 0)
    return plain_figure([dict(type="scatter", x=xs, y=ys, mode="lines", name="uses",
                              line=dict(color=COLORWAY[0], width=max(3, 240 // k))),
                         dict(type="scatter", x=f32(dead), y=f32(np.zeros(len(dead))),
                              mode="markers", name="dead codes",
                              marker=dict(color=TARGET, size=10, symbol="x"))],
                        dict(title=dict(text=title), height=HEIGHT, showlegend=False,
                             xaxis=dict(title=dict(text="code k"), range=[-1, k]),
                             yaxis=dict(title=dict(text="uses on the test digits"),
                                        rangemode="tozero")))


# ----------------------------------------------------------------------------- sampling
def _bars(probs: np.ndarray, mark: int) -> tuple[dict, dict]:
    """p over the levels as bars, and the bar of level `mark` again in red."""
    q = np.arange(len(probs))
    return (dict(type="bar", x=f32(q), y=f32(probs), name="p(level)",
                 marker=dict(color=COLORWAY[0]), xaxis="x2", yaxis="y2"),
            dict(type="bar", x=[int(mark)], y=[float(probs[mark])], name="chosen level",
                 marker=dict(color=TARGET), xaxis="x2", yaxis="y2"))


def _two_panels(levels: int, bar_title: str) -> dict:
    x, y = _pixel_axes(8, (0.0, 0.42))
    return dict(xaxis=x, yaxis=y, barmode="overlay", showlegend=False,
                xaxis2=dict(anchor="y2", domain=[0.52, 1], range=[-0.6, levels - 0.4],
                            dtick=1, title=dict(text=bar_title)),
                yaxis2=dict(anchor="x2", domain=[0.1, 0.9], range=[0, 1.05],
                            title=dict(text="p")))


def sampling_figure(image: np.ndarray, probs: np.ndarray, levels: int, title: str
                    ) -> go.Figure:
    """One digit drawn pixel by pixel, as an animation with a Play button and a slider over
    the 64 steps: left, the pixels drawn so far (grey: not drawn yet), the pixel being drawn
    ringed; right, the distribution that pixel is drawn from, the level drawn in red (notes
    004, Fig. 10.9). It opens on the last step: the finished digit."""
    n = image.size
    side = image.shape[1]
    order = np.arange(n).reshape(image.shape)

    def traces(i: int) -> list:
        r, c = divmod(i, side)
        shown = np.where(order <= i, image.astype(float), np.nan)
        return [go.Heatmap(z=f32(shown), colorscale=INK, showscale=False, zmin=0,
                           zmax=levels - 1, xgap=1, ygap=1, name="drawn",
                           hovertemplate="row %{y}, col %{x}: level %{z}<extra></extra>"),
                go.Scatter(x=[c], y=[r], mode="markers", name="this pixel",
                           marker=dict(color="rgba(0,0,0,0)", size=22, symbol="square-open",
                                       line=dict(color=TARGET, width=3))),
                *(go.Bar(**{k: v for k, v in b.items() if k != "type"})
                  for b in _bars(probs[r, c], int(image[r, c])))]

    last = n - 1
    frames = [go.Frame(data=traces(i), name=str(i)) for i in range(n)]
    steps = [dict(method="animate", label=str(i),
                  args=[[str(i)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                       transition=dict(duration=0))]) for i in range(n)]
    fig = go.Figure(data=traces(last), frames=frames)
    fig.update_layout(
        title=dict(text=title), height=HEIGHT, **_two_panels(levels, "level"),
        plot_bgcolor="#e6e6e6",
        updatemenus=[dict(type="buttons", direction="left", x=0.0, y=-0.02, xanchor="left",
                          yanchor="top", showactive=False, buttons=[
                              dict(label="▶ Play", method="animate",
                                   args=[None, dict(frame=dict(duration=180, redraw=True),
                                                    transition=dict(duration=0),
                                                    fromcurrent=False)]),
                              dict(label="❚❚ Pause", method="animate",
                                   args=[[None], dict(mode="immediate",
                                                      frame=dict(duration=0, redraw=False))])])],
        sliders=[dict(active=last, steps=steps, x=0.22, y=-0.02, len=0.78, yanchor="top",
                      currentvalue=dict(prefix="pixel ", visible=True))])
    return fig


def pixel_figure(digit: np.ndarray, row: int, col: int, probs: np.ndarray, truth: int,
                 title: str) -> go.Figure:
    """Left: a test digit up to pixel (row, col) (later pixels grey: the model does not see
    them), the pixel ringed; every pixel clickable. Right: the model's distribution over the
    pixel's levels given the pixels before it, the true level in red."""
    levels = len(probs)
    side = digit.shape[1]
    order = np.arange(digit.size).reshape(digit.shape)
    seen = np.where(order < row * side + col, digit.astype(float), np.nan)
    rr, cc = np.mgrid[:digit.shape[0], :side]
    traces: list[dict] = [dict(type="heatmap", z=f32(seen), colorscale=INK, showscale=False, zmin=0,
                   zmax=levels - 1, xgap=1, ygap=1, name="context", hoverinfo="skip"),
              dict(type="scatter", x=f32(cc.ravel()), y=f32(rr.ravel()), mode="markers",
                   name="pixels", marker=dict(color="rgba(0,0,0,0)", size=26,
                                              symbol="square"),
                   hovertemplate="row %{y}, col %{x}: click<extra></extra>"),
              dict(type="scatter", x=[col], y=[row], mode="markers", name="this pixel",
                   marker=dict(color="rgba(0,0,0,0)", size=22, symbol="square-open",
                               line=dict(color=TARGET, width=3)), hoverinfo="skip"),
              *_bars(probs, truth)]
    return plain_figure(traces, dict(title=dict(text=title), height=HEIGHT,
                                     plot_bgcolor="#e6e6e6", clickmode="event+select",
                                     **_two_panels(levels, f"level of pixel ({row}, {col})")))


# ----------------------------------------------------------------------------- WaveNet
def wave_figure(real: np.ndarray, made: np.ndarray, prompt: int, rate_khz: float,
                title: str) -> go.Figure:
    """The held-out vowel (grey) and the WaveNet's waveform (blue): identical over the prompt
    (shaded), generated one sample at a time after it; time in ms."""
    t = np.arange(len(real)) / float(rate_khz)                           # ms
    top = float(max(np.abs(real).max(), np.abs(made).max(), 1e-6)) * 1.1
    return plain_figure(
        [dict(type="scatter", x=f32(t), y=f32(real), mode="lines", name="real vowel",
              line=dict(color="#999999", width=3)),
         dict(type="scatter", x=f32(t[prompt - 1:]), y=f32(made[prompt - 1:]), mode="lines",
              name="generated", line=dict(color=COLORWAY[0], width=1.5))],
        dict(title=dict(text=title), height=HEIGHT, legend=LEGEND_BELOW,
             shapes=[dict(type="rect", xref="x", yref="paper", x0=0,
                          x1=float(t[prompt - 1]), y0=0, y1=1, fillcolor="#f2e6c9",
                          opacity=0.5, line=dict(width=0), layer="below")],
             xaxis=dict(title=dict(text="time (ms)"), range=[0, float(t[-1])]),
             yaxis=dict(title=dict(text="amplitude"), range=[-top, top])))
