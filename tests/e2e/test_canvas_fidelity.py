"""The live canvas draws what Plotly draws: the same figure drawn by live/canvas.js and by
plotly.js (the installed package's) in Chromium; per axis the range, the tick label texts and
their positions, the plot area, and the legend entries must agree (within 3-4 px).
Figures like the live views': loss curves (lines: no x padding), log loss axes, sample clouds
(markers: padded by 5% plus the marker radius), legends, big numbers (SI suffixes), heatmaps
with a colour bar, token labels and crowded tick texts (turned 30 or 90 degrees as Plotly
turns them); and points outside a fixed range paint nothing outside the plot area."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.e2e.canvas_fidelity import draw_both, open_harness

pytestmark = pytest.mark.e2e

PX = 3.0           # tick label positions (they follow the plot area)
AREA_PX = 4.0      # the plot area (Plotly's automargin for turned labels is matched to ~3 px)
_rng = np.random.default_rng(0)
_x = np.arange(200.0)
RDBU = [[0.0, "rgb(5,48,97)"], [0.5, "rgb(247,247,247)"], [1.0, "rgb(103,0,31)"]]
FIGURES = {
    "loss curve": lambda: go.Figure(go.Scatter(x=_x, y=np.exp(-_x / 50) + 0.1, mode="lines")),
    "sample cloud": lambda: go.Figure(go.Scatter(x=_rng.normal(size=100), y=_rng.normal(size=100),
                                                 mode="markers")),
    "lines and markers": lambda: go.Figure(go.Scatter(x=_x[:30], y=np.sqrt(_x[:30]),
                                                      mode="lines+markers")),
    "log loss": lambda: go.Figure(go.Scatter(x=_x, y=np.exp(-_x / 30) + 1e-3, mode="lines"),
                                  {"yaxis": {"type": "log"}}),
    "two curves": lambda: go.Figure([go.Scatter(x=_x, y=np.sin(_x / 20), mode="lines", name="train"),
                                     go.Scatter(x=_x, y=np.cos(_x / 20), mode="lines", name="test")]),
    "big numbers": lambda: go.Figure(go.Scatter(x=_x * 1000 + 1e5, y=np.sin(_x / 20), mode="lines")),
    "heatmap": lambda: go.Figure(go.Heatmap(z=_rng.normal(size=(10, 12)), colorscale=RDBU)),
    "tokens": lambda: go.Figure(go.Heatmap(z=_rng.random((24, 24)), colorscale=RDBU,
                                           x=[f"tok{i}" for i in range(24)],
                                           y=[f"tok{i}" for i in range(24)])),
    "labels at 30 degrees": lambda: go.Figure(
        go.Scatter(x=_x[:16], y=_x[:16], mode="lines"),
        {"xaxis": {"tickvals": list(range(16)), "ticktext": [f"epoch {i}" for i in range(16)]}}),
    "labels at 90 degrees": lambda: go.Figure(
        go.Scatter(x=_x[:30], y=_x[:30], mode="lines"),
        {"xaxis": {"tickvals": list(range(30)), "ticktext": [f"epoch {i}" for i in range(30)]}}),
}


def _synced_log(loss, height: int) -> go.Figure:
    """The ReLU training view's histogram: regions on y, the loss on an overlaying log y2
    whose ticks Plotly puts at y's (tickmode "sync") and labels by their own log values."""
    return go.Figure([go.Scatter(x=[1, 2, 3], y=[159, 113, 144], name="regions", mode="lines"),
                      go.Scatter(x=np.linspace(1, 3, len(loss)), y=loss, name="loss",
                                 yaxis="y2", mode="lines")],
                     {"height": height, "yaxis2": {"type": "log", "overlaying": "y",
                                                   "side": "right", "showgrid": False}})


_LOSS = [0.3752758, 0.3752758, 0.16186403, 0.03337482, 0.0317951, 0.01552956]
FIGURES["synced log within a decade"] = lambda: _synced_log(np.linspace(0.81, 0.55, 40), 412)


@pytest.fixture(scope="module")
def harness(browser):
    context, page = open_harness(browser)
    yield page
    context.close()


@pytest.mark.parametrize("name", list(FIGURES))
def test_the_canvas_lays_out_what_plotly_lays_out(harness, name):
    out = draw_both(harness, FIGURES[name]())
    p, c = out["plotly"], out["canvas"]
    assert c["legend"] == p["legend"]
    for aid, pa in p["axes"].items():
        ca = c["axes"][aid]
        span = abs(pa["range"][1] - pa["range"][0])
        np.testing.assert_allclose(ca["range"], pa["range"], atol=1e-6 * span,
                                   err_msg=f"{name}: {aid} range")
        assert abs(ca["start"] - pa["start"]) <= AREA_PX and abs(ca["len"] - pa["len"]) <= AREA_PX, (
            f"{name}: {aid} plot area canvas {ca['start']:.0f}+{ca['len']:.0f} "
            f"Plotly {pa['start']:.0f}+{pa['len']:.0f}")
        assert [t for t, *_ in ca["ticks"]] == [t for t, *_ in pa["ticks"]], f"{name}: {aid} ticks"
        assert ca["angle"] == pa["angle"], f"{name}: {aid} labels turned {ca['angle']}, Plotly {pa['angle']}"
        for (t, q), (_, pq, _) in zip(ca["ticks"], pa["ticks"]):
            assert abs(q - pq) <= PX, f"{name}: {aid} tick {t} at {q:.1f}, Plotly {pq:.1f}"


def test_points_outside_a_fixed_range_are_clipped_to_the_plot_area(harness):
    """GAN samples wander outside the axis range: Plotly clips them, so does the canvas (no
    red ink outside the plot area, though a third of the points lie outside)."""
    fig = go.Figure(go.Scatter(x=np.linspace(-6, 6, 300), y=np.linspace(-6, 6, 300),
                               mode="markers", marker={"color": "red", "size": 9}),
                    {"xaxis": {"range": [-3, 3]}, "yaxis": {"range": [-3, 3]},
                     "title": {"text": "samples"}})
    out = draw_both(harness, fig)
    plot = out["canvas"]["plot"]
    outside = harness.evaluate("""(plot) => {
      const c = document.querySelector('#canvas canvas'), k = c.width / c.clientWidth;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let red = 0, inside = 0;
      for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
        const i = 4 * (y * c.width + x);
        if (!(d[i] > 200 && d[i + 1] < 80 && d[i + 2] < 80)) continue;
        const X = x / k, Y = y / k;
        if (X >= plot.l - 1 && X <= plot.l + plot.w + 1 && Y >= plot.t - 1 && Y <= plot.t + plot.h + 1) inside++;
        else red++;
      }
      return [red, inside]; }""", plot)
    assert outside[1] > 500 and outside[0] == 0


def _dark_share(png: bytes, box: tuple[float, float, float, float]) -> float:
    """The share of non-white pixels of a screenshot inside box (l, t, w, h) in css px."""
    import io

    from PIL import Image
    img = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)
    l, t, w, h = (int(round(v)) for v in box)
    return float((img[t + 2:t + h - 2, l + 2:l + w - 2] < 235).mean())


def test_heatmap_cell_gaps_show_the_background_as_in_plotly(harness):
    """The attention maps' xgap = ygap = 1: white lines between cells. The share of cell
    (non-white) pixels in the plot area, canvas vs Plotly's own screenshot, within 3 points
    (without the gaps the canvas reads 100% against Plotly's ~92%)."""
    dark = [[0.0, "rgb(20,20,120)"], [1.0, "rgb(120,20,20)"]]
    fig = go.Figure(go.Heatmap(z=_rng.random((16, 16)), colorscale=dark, xgap=1, ygap=1,
                               showscale=False))
    out = draw_both(harness, fig)
    c, p = out["canvas"]["axes"], out["plotly"]["axes"]
    canvas_png = harness.locator("#canvas canvas").screenshot()
    plotly_png = harness.locator("#plotly").screenshot()
    ours = _dark_share(canvas_png, (c["x"]["start"], c["y"]["start"], c["x"]["len"], c["y"]["len"]))
    theirs = _dark_share(plotly_png, (p["x"]["start"], p["y"]["start"], p["x"]["len"], p["y"]["len"]))
    assert theirs < 0.97 and abs(ours - theirs) < 0.03, (ours, theirs)


def _number(label: str) -> float:
    si = {"μ": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6}
    label = label.replace("\u2212", "-")
    return float(label[:-1]) * si[label[-1]] if label[-1] in si else float(label)


@pytest.mark.parametrize("height", [300, 412, 560])
def test_a_synced_log_axis_is_labelled_as_plotly_labels_it(harness, height):
    """An overlaying log axis with Plotly's default tickmode "sync" (ticks at the base axis's):
    a tick within a few hundredths of a decade of a power of ten is labelled by its value
    ("0.1000768"), any other by its leading digit. Plotly maps the ticks through pixels
    rounded to 0.01 px, so a value label's 7th digit follows the plot's height: values are
    compared to 1e-4, digits exactly."""
    out = draw_both(harness, _synced_log(_LOSS, height))
    p, c = out["plotly"]["axes"]["y2"]["ticks"], out["canvas"]["axes"]["y2"]["ticks"]
    assert len(c) == len(p)
    assert any(len(t) > 1 for t, *_ in p), "no tick labelled by its value"
    for (ct, cq), (pt, pq, _) in zip(c, p):
        if len(pt) == 1:
            assert ct == pt, (height, c, p)
        else:
            assert abs(_number(ct) / _number(pt) - 1) < 1e-4, (height, ct, pt)
        assert abs(cq - pq) <= PX
