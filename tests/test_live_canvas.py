"""live/canvas.py: which figures a playing live frame paints on the canvas (the whitelist),
what reaches the browser (the figure's own numbers), and show_figure's choice under AppTest:
canvas while playing (a clickable chart too, saying clicks work when paused), the interactive
Plotly chart when paused."""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import live_components, plotly_array
from live import canvas as lc
from ui.fastfig import Fig, plain_figure
from ui.theme import SIZES, style_figure

RDBU = [[0.0, "rgb(5,48,97)"], [0.5, "rgb(247,247,247)"], [1.0, "rgb(103,0,31)"]]


def _spec(fig) -> dict:
    style_figure(fig)
    spec = lc.to_spec(fig)
    assert spec is not None
    json.dumps(spec)                                    # what the component sends: plain JSON
    return spec


def test_scatter_markers_lines_and_gaps_send_the_figures_numbers():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=300).astype(np.float32), rng.normal(size=300).astype(np.float32)
    fig = go.Figure([go.Scatter(x=x, y=y, mode="markers", marker=dict(color="#9467bd", size=4,
                                                                      opacity=0.8)),
                     go.Scatter(x=[0, 1, None, 2, 3], y=[1, 2, None, 0, 1], mode="lines",
                                line=dict(color="black", width=1.2, dash="dot")),
                     go.Scatter(x=np.arange(4.0), y=np.arange(4.0), mode="lines+markers",
                                marker=dict(color=["red", "green", "blue", "black"]))])
    spec = _spec(fig)
    markers, gaps, both = spec["data"]
    np.testing.assert_array_equal(plotly_array(markers["x"]), x)
    np.testing.assert_array_equal(plotly_array(markers["y"]), y)
    assert markers["marker"] == {"color": "#9467bd", "size": 4, "opacity": 0.8}
    assert np.isnan(plotly_array(gaps["x"])).sum() == 1 and gaps["line"]["dash"] == "dot"
    assert both["mode"] == "lines+markers" and both["marker"]["color"][2] == "blue"
    assert spec["style"]["marker"] == SIZES[False]["marker"] and spec["style"]["line"] == 2.0


def test_heatmap_grid_and_colour_scale_are_sent_as_built():
    z = np.arange(12, dtype=np.float32).reshape(3, 4)
    fig = plain_figure([{"type": "heatmap", "z": z, "x": np.linspace(0, 1, 4),
                         "y": np.linspace(0, 2, 3), "colorscale": RDBU, "zmin": 0, "zmax": 11,
                         "opacity": 0.5, "colorbar": {"title": {"text": "D"}}}],
                       {"height": 300, "title": {"text": "heat"}})
    (heat,) = _spec(fig)["data"]
    np.testing.assert_array_equal(plotly_array(heat["z"]).reshape(3, 4), z)
    assert heat["colorscale"] == RDBU and (heat["zmin"], heat["zmax"], heat["opacity"]) == (0, 11, 0.5)


def test_subplots_shapes_and_annotations_are_kept():
    fig = Fig(rows=1, cols=2, subplot_titles=("Losses", "Coverage"))
    fig.add("scatter", row=1, col=1, x=np.arange(5), y=np.arange(5.0), mode="lines")
    fig.add("scatter", row=1, col=2, x=np.arange(5), y=np.ones(5), mode="lines",
            line={"shape": "hv"})
    fig.vline(2.0, row=1, col=2, line={"dash": "dot"}, text="here")
    fig.layout["shapes"].append({"type": "path", "path": "M0,0L1,1L1,0Z", "xref": "x",
                                 "yref": "y", "fillcolor": "#aec7e8", "line": {"width": 0}})
    spec = _spec(fig.figure())
    layout = spec["layout"]
    assert spec["data"][1]["xaxis"] == "x2" and layout["xaxis2"]["domain"][0] > 0.5
    assert [s["type"] for s in layout["shapes"]] == ["line", "path"]
    assert {a["text"] for a in layout["annotations"]} == {"Losses", "Coverage", "here"}
    assert "template" not in layout                  # the resolved style travels instead


@pytest.mark.parametrize("trace, layout", [
    (go.Bar(x=[1, 2], y=[3, 4]), {}),                                     # a trace kind
    (go.Contour(z=[[1, 2], [3, 4]]), {}),
    (go.Scatter(x=[1, 2], y=[3, 4], fill="tozeroy"), {}),                 # a scatter property
    (go.Scatter(x=["2024-01-01", "2024-01-02"], y=[3, 4]), {}),           # dates (autotyped)
    (go.Scatter(x=["1", "2"], y=[3, 4]), {}),                             # numbers as strings
    (go.Scatter(x=[1, 2], y=[3, 4], mode="markers+text", text=["a", "b"]), {}),
    (go.Scatter(x=[1, 2], y=[3, 4], marker=dict(symbol="hexagram")), {}),
    (go.Heatmap(z=[[1, 2], [3, 4]], zsmooth="best"), {}),
    (go.Scatter(x=[1, 2], y=[3, 4]), {"xaxis": {"type": "date"}}),       # layout properties
    (go.Scatter(x=[1, 2], y=[3, 4]), {"updatemenus": [{"buttons": []}]}),
    (go.Scatter(x=[1, 2], y=[3, 4]), {"images": [{"source": "x.png"}]}),
    (go.Scatter(x=[1, 2], y=[3, 4]), {"shapes": [{"type": "path", "path": "M0,0 C1,1 2,2 3,3"}]}),
])
def test_anything_outside_the_whitelist_keeps_plotly(trace, layout):
    fig = go.Figure(trace, layout)
    style_figure(fig)
    assert lc.to_spec(fig) is None
    fig.data = ()                                     # the rest of that figure is drawable
    if not layout:
        assert lc.to_spec(fig) is not None


def test_category_axes_are_numbered_as_plotly_lays_them_out():
    """The attention maps: token labels on both axes, queries top-down (autorange reversed),
    cell texts; a second trace on the same axis adds its new labels after the first's."""
    rows = ["0:3", "1:1", "2:4"]
    fig = go.Figure([go.Heatmap(z=np.eye(3), x=rows, y=rows, colorscale=RDBU, zmin=0, zmax=1,
                                text=[["1.00", "0.00", "0.00"]] * 3, texttemplate="%{text}"),
                     go.Scatter(x=["1:1", "3:9"], y=[0.5, 1.5], mode="markers")],
                    dict(yaxis=dict(type="category", autorange="reversed", dtick=1),
                         xaxis=dict(type="category", tickangle=-90)))
    spec = _spec(fig)
    heat, pts = spec["data"]
    assert heat["x"] == heat["y"] == [0, 1, 2] and pts["x"] == [1, 3]
    x, y = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    assert x["ticktext"] == rows + ["3:9"] and x["tickvals"] == [0, 1, 2, 3]
    assert x["range"] == [-0.5, 3.5] and x["type"] == "linear" and x["tickangle"] == -90
    assert y["range"] == [2.5, -0.5] and "autorange" not in y and "dtick" not in y
    other = go.Figure(go.Heatmap(z=np.eye(2), x=["a", "b"], texttemplate="%{z:.2f}"))
    assert lc.to_spec(other) is None                   # a texttemplate other than the text


def test_a_named_colour_scale_left_to_plotly_js_keeps_plotly():
    """plotly.js and plotly.py disagree on some names (ui/fastfig.py); only explicit pairs."""
    fig = plain_figure([{"type": "heatmap", "z": [[1, 2], [3, 4]], "colorscale": "RdBu"}], {})
    assert lc.to_spec(fig) is None


def _app():
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st

    from ui.render import live_frame, show_figure
    playing = st.session_state.get("playing", True)
    fig = go.Figure(go.Scatter(x=np.arange(50.0), y=np.sin(np.arange(50.0)), mode="markers"))
    with live_frame(playing):
        show_figure(fig, key="frame")                                  # canvas while playing
        show_figure(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), key="bars")  # unsupported: Plotly
        show_figure(fig, key="clickable", on_select=lambda: None)       # clickable: canvas too
        show_figure(fig)                                                # no key: a stable one
    show_figure(fig, key="outside")                                     # outside the frame


def test_show_figure_paints_playing_frames_on_the_canvas_and_pauses_to_plotly():
    at = AppTest.from_function(_app, default_timeout=60).run()
    assert not at.exception
    canvases = live_components(at)
    assert [c.proto.component_name for c in canvases] == ["dlplay_live_canvas"] * 3
    assert canvases[0].proto.id.endswith("live-canvas-frame")
    assert canvases[1].proto.id.endswith("live-canvas-clickable")
    assert [c.value for c in at.caption] == ["Press **Pause** to click on this chart."]
    sent = json.loads(canvases[0].proto.json)["spec"]
    np.testing.assert_allclose(plotly_array(sent["data"][0]["y"]), np.sin(np.arange(50.0)))
    assert sent["layout"]["meta"] == {"dlplay_classroom": False}
    assert len(at.get("plotly_chart")) == 2                 # bars (unsupported), outside
    ids = [c.proto.id for c in canvases]
    at.run()                                                # the next frame: the same elements
    assert [c.proto.id for c in live_components(at)] == ids
    at.session_state["playing"] = False                     # Pause: Plotly everywhere
    at.run()
    assert not live_components(at) and len(at.get("plotly_chart")) == 5
    assert not at.caption                                   # paused: clicks work, no note


def test_the_canvas_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("DLPLAY_LIVE_CANVAS", "0")
    at = AppTest.from_function(_app, default_timeout=60).run()
    assert not live_components(at) and len(at.get("plotly_chart")) == 5


def test_the_js_has_a_drawer_for_every_whitelisted_trace_kind():
    js = lc._JS.read_text()
    for kind in lc.TRACE_CHECKS:
        assert f"TRACES.{kind} =" in js or f"\n  {kind}: {{" in js, kind
    # no network, no CDN: the only requests go to the page's own frame route (its poll and
    # the Pause) and plotly.js to the app's own route (the URL the server sends)
    assert "http" not in js and js.count("fetch(") == 2 and "fetch(p.url," in js
    assert "fetch(url," in js and "pause=1" in js and "s.src = plotlyUrl" in js


def test_what_the_canvas_would_draw_wrong_is_left_to_plotly():
    """Splines, connectgaps, a colour bar on markers, arrowheads and a legend over the plot
    are refused (the canvas would draw a straight line, a gap, no bar, no head, a legend
    beside the plot); the same figures without them are painted."""
    line = dict(x=[0.0, 1.0, None, 3.0], y=[0.0, 2.0, None, 1.0], mode="lines")
    refused = [
        go.Figure(go.Scatter(**line, line=dict(shape="spline"))),
        go.Figure(go.Scatter(**line, connectgaps=True)),
        go.Figure(go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0], mode="markers",
                             marker=dict(color=[0.0, 1.0], colorscale=RDBU, showscale=True))),
        go.Figure(go.Scatter(**line), dict(annotations=[dict(text="a", x=1, y=1)])),
        go.Figure([go.Scatter(**line, name="a"), go.Scatter(**line, name="b")],
                  dict(legend=dict(x=0.02, y=0.98))),
        go.Figure([go.Scatter(**line, name="a"), go.Scatter(**line, name="b")],
                  dict(legend=dict(orientation="h", y=1.02))),
    ]
    for fig in refused:
        style_figure(fig)
        assert lc.to_spec(fig) is None, fig.to_dict()["layout"].get("legend")
    painted = [
        go.Figure(go.Scatter(**line, line=dict(shape="hv"))),
        go.Figure(go.Scatter(**line, connectgaps=False)),
        go.Figure(go.Scatter(**line), dict(annotations=[dict(text="a", x=1, y=1, arrowhead=0),
                                                        dict(text="b", x=0, y=0,
                                                             showarrow=False)])),
        go.Figure([go.Scatter(**line, name="a"), go.Scatter(**line, name="b")],
                  dict(legend=dict(x=1.02, y=1))),
    ]
    for fig in painted:
        _spec(fig)


def test_the_js_draws_every_supported_kind_without_an_error(tmp_path):
    """live/canvas.js run in Node (when installed) with a recording 2-D context on figures
    covering each drawer: markers, lines, heatmap + colour bar, shapes, annotations, log and
    overlaying axes, scaleanchor, a vertical and a horizontal legend."""
    sub = Fig(rows=1, cols=2, subplot_titles=("a", "b"))
    sub.add("scatter", row=1, col=1, x=np.arange(5), y=np.arange(5.0), mode="lines", name="l")
    sub.add("scatter", row=1, col=2, x=np.arange(5), y=np.ones(5), mode="lines+markers",
            line={"shape": "hv", "dash": "dot"}, name="m")
    sub.vline(2.0, row=1, col=2, text="here")
    sub.update(legend=dict(orientation="h", yref="container", y=0.0, yanchor="bottom"),
               yaxis3={"overlaying": "y2", "side": "right", "type": "log", "anchor": "x2"})
    sub.add("scatter", row=1, col=2, x=np.arange(5), y=10.0 ** np.arange(5), mode="lines")
    sub.data[-1]["yaxis"] = "y3"
    figs = [
        go.Figure([go.Heatmap(z=np.arange(12.0).reshape(3, 4), colorscale=RDBU),
                   go.Scatter(x=[0, 1, None, 2], y=[0, 1, None, 2], mode="markers",
                              marker=dict(color=[0.1, 0.5, 0.2, 0.9], colorscale=RDBU),
                              name="pts"),
                   go.Scatter(x=[0, 3], y=[0, 2], mode="markers", name="sq",
                              marker=dict(symbol="square", color=["red", "blue"]))],
                  dict(title=dict(text="t", subtitle=dict(text="colour: f from 0 to 11")),
                       yaxis=dict(scaleanchor="x", constrain="domain"),
                       shapes=[dict(type="path", path="M0,0L1,1L1,0Z", fillcolor="#abc"),
                               dict(type="rect", x0=0, x1=1, y0=0, y1=1, xref="paper",
                                    yref="paper", line=dict(dash="dash"))],
                       annotations=[dict(text="<b>a</b><br>b", x=1, y=1, arrowhead=0),
                                    dict(text="p", x=0.5, y=1, xref="paper", yref="paper",
                                         showarrow=False)])),
        sub.figure(),
    ]
    figs.append(go.Figure(                    # the VAE's "decoded" star, a titled legend
        [go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0], mode="markers", name="a"),
         go.Scatter(x=[0.5], y=[0.5], mode="markers", name="decoded",
                    marker=dict(symbol="star", size=16, color="black"))],
        dict(legend=dict(title=dict(text="digit"), orientation="h"))))
    figs.append(go.Figure(go.Scatter(x=[0, 1, 2], y=[7e-4, 5e-3, 5e-2], mode="lines"),
                          dict(yaxis=dict(type="log"))))     # ReLU's loss: decades below 1
    figs.append(go.Figure(go.Heatmap(                  # an attention map: tokens, cell texts
        z=[[1.0, 0.0], [0.4, 0.6]], x=["0:3", "1:1"], y=["0:3", "1:1"], colorscale=RDBU,
        zmin=0, zmax=1, text=[["1.00", "0.00"], ["0.40", "0.60"]], texttemplate="%{text}"),
        dict(yaxis=dict(type="category", autorange="reversed"),
             xaxis=dict(type="category", tickangle=-90, tickfont=dict(size=9)))))
    figs.append(_curves_like())
    figs.append(_init_training_like())
    figs.append(go.Figure(go.Scatter(x=np.arange(50.0), y=np.linspace(4, 75, 50), mode="lines"),
                          dict(height=200, yaxis=dict(type="log"))))   # weight norm: 1 decade+
    specs = [_spec(f) for f in figs]
    data = tmp_path / "specs.json"
    data.write_text(json.dumps(specs))
    heat, grid, star, small, tokens, curves, power, norm = _node("run_live_canvas.mjs", data)
    assert heat["drawImage"] == 2 and heat["arc"] >= 2 * 3 and heat["rect"] >= 2 * 2
    assert heat["fillText"] > 10 and grid["lineTo"] > 20 and grid["fillText"] > 10
    assert "colour: f from 0 to 11" in heat["texts"]         # the subtitle (ReLU's colour range)
    # the star: a closed 10-point path in the plot and in its legend entry, on both frames
    assert star.get("closePath") == 4 and "digit" in star["texts"] and "decoded" in star["texts"]
    assert {"0.001", "0.01"} <= set(small["texts"])          # log ticks below 1 (were "0")
    # the attention map: token tick labels, query "0:3" on top, the cell texts in the cells
    placed = {}
    for t, x, y in tokens["placed"]:
        placed.setdefault(t, []).append((x, y))
    assert {"1.00", "0.00", "0.40", "0.60"} <= set(tokens["texts"])
    assert placed["1.00"][0][1] < placed["0.40"][0][1]                # row 0 above row 1
    assert len(set(placed["0:3"])) == 2 and len(set(placed["1:1"])) == 2   # on both axes
    left = {t: min(placed[t])[1] for t in ("0:3", "1:1")}             # the y axis' labels
    assert left["0:3"] < left["1:1"]                                   # queries top-down
    # the attention curves: the secondary y axis' ticks sit at the log axis' ticks (Plotly's
    # tickmode "sync"), and its title stays on the figure (its margin grows)
    at = {t: (x, y) for t, x, y in curves["placed"]}
    left = [t for t in ("0.001", "0.01", "0.1", "1") if t in at]
    right = sorted((y, t) for t, x, y in curves["placed"] if x > 400 and t[0] in "0\u2212")
    assert len(left) >= 3 and len(right) == 2 * len(left)              # two frames drawn
    assert sorted({round(y) for y, _ in right}) == sorted(round(at[t][1]) for t in left)
    assert at["token accuracy"][0] < 640 - 5
    # Initialization's gradient norms: exponentformat "power" ticks every 2 decades as Plotly
    # (were 0.0000000001 ... and "0"); the curve label at log10 coordinates lands on the chart
    assert {"1", "10\u207b\u00b2", "10\u207b\u2076", "10\u207b\u00b9\u2070"} <= set(power["texts"])
    assert not any(t.startswith("0.0") for t in power["texts"]) and "10\u207b\u00b9" not in power["texts"]
    placed = {t: (x, y) for t, x, y in power["placed"]}
    assert 0.5 * 640 < placed["normal"][0] < 640 and 300 < placed["normal"][1] < 420
    assert 30 < placed["kaiming"][1] < 120
    # the right subplot's y title sits between the subplots, right of the left one's ticks
    assert placed["grad norm"][0] > placed["400"][0]
    # the weight norm (4 to 75): Plotly's "D1" digits between the decades (was "50" alone)
    assert {"10", "2", "5"} <= set(norm["texts"])


def _curves_like() -> go.Figure:
    """topics/attention/figures.training_curves' shape: loss on a log axis, accuracy on a
    secondary y axis (x domain [0, 0.94])."""
    from plotly.subplots import make_subplots
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=np.arange(100.0), y=np.geomspace(2.0, 5e-4, 100), mode="lines",
                             name="loss"), secondary_y=False)
    fig.add_trace(go.Scatter(x=np.arange(100.0), y=np.linspace(0, 1, 100), mode="lines",
                             name="accuracy"), secondary_y=True)
    fig.update_layout(title="Training", height=280, legend=dict(orientation="h", y=-0.3))
    fig.update_yaxes(title="cross-entropy", type="log", secondary_y=False)
    fig.update_yaxes(title="token accuracy", range=[0, 1.02], secondary_y=True)
    return fig


def _init_training_like() -> go.Figure:
    """topics/initialization/figures.training_figure's shape: loss on the left, gradient norms
    from 1e-12 to 1 on a log axis (exponentformat "power") on the right, curve labels placed
    at log10 coordinates."""
    fig = Fig(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=("loss", "grad"))
    fig.add("scatter", 1, 1, x=np.arange(480), y=np.linspace(2.3, 0.1, 480), mode="lines")
    for label, g in (("normal", np.geomspace(1e-11, 1e-3, 21)), ("kaiming", np.ones(21))):
        fig.add("scatter", 1, 2, x=np.arange(1, 22), y=g, mode="lines+markers")
        x2, y2 = fig.refs(1, 2)
        fig.layout.setdefault("annotations", []).append(dict(
            x=1, y=float(np.log10(g[0])), xref=x2, yref=y2, text=label, showarrow=False,
            yshift=12, xanchor="left"))
    fig.axes(1, 2, y=dict(type="log", title=dict(text="grad norm"), exponentformat="power"))
    fig.update(height=420, showlegend=False)
    return fig.figure()


def _clickable_app():
    import plotly.graph_objects as go
    import streamlit as st

    from ui.render import live_frame, show_figure
    fig = go.Figure(go.Scatter(x=[0.0, 1.0], y=[1.0, 0.0], mode="markers"),
                    dict(title=dict(text="Pick a point")))
    with live_frame(st.session_state.get("playing", True)):
        show_figure(fig, key="pick", on_select=lambda: None, selection_mode="points")


def test_a_titled_clickable_chart_says_pause_to_click_inside_the_canvas():
    """No caption element (one element less per frame, no jump of the page on Play/Pause):
    the note is the canvas title's subtitle; paused, the chart is Plotly and clickable."""
    at = AppTest.from_function(_clickable_app, default_timeout=60).run()
    (canvas,) = live_components(at)
    title = json.loads(canvas.proto.json)["spec"]["layout"]["title"]
    assert title["text"] == "Pick a point"
    assert title["subtitle"]["text"] == "Press Pause to click on this chart"
    assert not at.caption
    at.session_state["playing"] = False
    at.run()
    (chart,) = at.get("plotly_chart")
    assert not live_components(at) and len(chart.proto.selection_mode) == 1   # points


def _metrics_app():
    import streamlit as st

    from ui.render import live_frame, metrics
    with live_frame(st.session_state.get("playing", True)):
        metrics([("Loss", "0.25", "mean squared error"), ("Step", "12"), ("A<b", "x&y")])


def test_a_metric_row_is_one_element_while_playing_and_metrics_when_paused():
    at = AppTest.from_function(_metrics_app, default_timeout=60).run()
    assert not at.metric
    (row,) = at.get("html")
    body = row.proto.body
    assert [body.index(s) < body.index(t) for s, t in (("Loss", "0.25"), ("0.25", "Step"),
                                                        ("Step", "12"))] == [True] * 3
    assert "A&lt;b" in body and "x&amp;y" in body             # labels and values escaped
    at.session_state["playing"] = False
    at.run()
    assert not at.get("html")
    assert [(m.label, m.value) for m in at.metric] == [("Loss", "0.25"), ("Step", "12"),
                                                       ("A<b", "x&y")]
    assert at.metric[0].proto.help == "mean squared error"


def test_the_poller_paints_fetched_frames_asks_for_one_rerun_and_stops_on_410(tmp_path):
    """live/canvas.js's frame poller (live/push.py) in Node with a stand-in fetch:
    two slots of one page share ONE poller (one request at a time); a frame paints the html
    slot and the canvas slot; `rerun` asks Streamlit once (not again on the next frame);
    410 stops the polling."""
    spec = _spec(go.Figure(go.Scatter(x=[0.0, 1.0], y=[1.0, 0.0], mode="lines")))
    data = tmp_path / "spec.json"
    data.write_text(json.dumps(spec))
    out = _node("run_live_poll.mjs", data)
    assert out["fetched"] == 4 and out["url"] == "/_dlplay/frame/T" and out["maxInflight"] == 1
    assert out["triggers"] == [["rerun", True]]
    assert out["html"] == "<b>2</b>"                         # the latest frame's html
    assert out["canvasFrames"] == "2"                        # the first paint + one frame
    assert out["pageFrames"] == "2" and out["polls"] == 0     # stopped and forgotten
    assert out["kinds"] == [1, 1]                            # one element per slot


def _node(script: str, data) -> object:
    """tests/js/<script> run in Node on the JSON file `data` and live/canvas.js: its output."""
    import shutil
    import subprocess
    from pathlib import Path
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([node, str(root / "tests" / "js" / script), str(data), str(lc._JS)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_an_empty_history_is_drawable():
    """plotly's to_dict keeps an EMPTY numpy array as numpy (a fresh trainer's history): the
    canvas takes it as an empty numeric array (else the first frame of Play is rerun, not
    fetched), and sends it as a plain list."""
    fig = go.Figure(go.Scatter(x=np.array([], dtype=np.int64), y=np.array([]), mode="lines"))
    assert isinstance(fig.to_dict()["data"][0]["x"], np.ndarray)
    spec = _spec(fig)
    assert spec["data"][0]["x"] == [] and spec["data"][0]["y"] == []
    labels = go.Figure(go.Scatter(x=np.array(["a", "b"]), y=np.array([1.0, 2.0])))
    spec = lc.to_spec(labels)                                # category strings: numbered
    assert spec["data"][0]["x"] == [0, 1] and spec["layout"]["xaxis"]["ticktext"] == ["a", "b"]


_NEW_SLOT_JS = r"""
import {pathToFileURL} from 'node:url';
const noop = () => undefined;
const ctx = new Proxy({}, {get: (t, n) => (n === 'measureText' ? (s) => ({width: 7 * String(s).length}) : n in t ? t[n] : noop),
                           set: (t, n, v) => { t[n] = v; return true; }});
globalThis.document = {createElement: () => ({getContext: () => ctx, style: {}, dataset: {},
  setAttribute() {}, clientWidth: 640, width: 0, height: 0, innerHTML: ''}), body: {dataset: {}}};
globalThis.window = {devicePixelRatio: 1};
globalThis.ResizeObserver = class { observe() {} disconnect() {} };
const answers = [{note: {html: '1'}, curves: {html: 'c'}}, {note: {html: '2'}, curves: {html: 'c'}},
                 'remount', {note: {html: '3'}, curves: {html: 'c'}}, null];
let k = 0, remount = null;
const triggers = [];
globalThis.fetch = async () => {
  let a = answers[Math.min(k++, answers.length - 1)];
  if (a === 'remount') { remount(); a = answers[k++]; }
  return a ? {ok: true, status: 200, json: async () => ({slots: a, next_ms: 5, rerun: false})}
           : {ok: false, status: 410, json: async () => ({})};
};
const {default: mount} = await import(pathToFileURL(process.argv[2]).href);
const parent = {querySelector: () => null, appendChild() {}};
const go = () => mount({data: {html: '0', poll: {url: '/_dlplay/frame/T', slot: 'note', next_ms: 5}},
                        parentElement: parent, setTriggerValue: (n, v) => triggers.push([n, v])});
go();
remount = go;                  // the rerun that (here) still does not place "curves"
await new Promise((r) => setTimeout(r, 200));
console.log(JSON.stringify({triggers, fetched: k}));
"""


def test_a_slot_no_component_shows_asks_for_one_rerun(tmp_path):
    """The attention page places its training curves once the run has steps: a frame with a
    slot no component shows asks Streamlit for one rerun (which places it); a page that
    still does not place it after that rerun is not asked again (no rerun loop)."""
    import shutil
    import subprocess
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "new_slot.mjs"
    script.write_text(_NEW_SLOT_JS)
    run = subprocess.run([node, str(script), str(lc._JS)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["triggers"] == [["rerun", True]] and out["fetched"] >= 5


def test_a_single_level_contour_is_drawn_as_its_line():
    """The generalization boundary (one level, coloring "none") becomes a scatter line through
    the marching-squares segments of that level: on a circle z = x² + y², level 0.25, every
    point lies at radius 0.5 (within the linear interpolation), and the line keeps its
    colour, width and axes. A filled contour stays Plotly."""
    x, y = np.linspace(-1, 1, 41), np.linspace(-1, 1, 31)
    X, Y = np.meshgrid(x, y)
    line = go.Contour(x=x, y=y, z=X ** 2 + Y ** 2, showscale=False, line=dict(color="black", width=2),
                      contours=dict(start=0.25, end=0.25, size=1, coloring="none"), xaxis="x2")
    spec = _spec(go.Figure([line], dict(xaxis2=dict(anchor="y"))))
    trace = spec["data"][0]
    assert trace["type"] == "scatter" and trace["mode"] == "lines" and trace["xaxis"] == "x2"
    assert trace["line"] == {"color": "black", "width": 2}
    xs, ys = plotly_array(trace["x"]), plotly_array(trace["y"])
    r = np.hypot(xs, ys)[~np.isnan(xs)]
    assert len(r) > 100 and np.all(np.abs(r - 0.5) < 0.01)
    assert np.isnan(xs[2::3]).all()                          # segment, segment, gap
    filled = go.Figure(go.Contour(x=x, y=y, z=X ** 2 + Y ** 2))
    style_figure(filled)
    assert lc.to_spec(filled) is None


_MOVED_JS = r"""
import {pathToFileURL} from 'node:url';
const noop = () => undefined;
const ctx = new Proxy({}, {get: (t, n) => (n === 'measureText' ? (s) => ({width: 7 * String(s).length}) : n in t ? t[n] : noop),
                           set: (t, n, v) => { t[n] = v; return true; }});
globalThis.document = {createElement: () => ({getContext: () => ctx, style: {}, dataset: {},
  setAttribute() {}, clientWidth: 640, width: 0, height: 0, innerHTML: ''}), body: {dataset: {}}};
let reloads = 0;
const stored = new Map();
globalThis.window = {devicePixelRatio: 1, location: {reload: () => { reloads += 1; }},
                     sessionStorage: {getItem: (k) => stored.get(k) ?? null,
                                      setItem: (k, v) => stored.set(k, v)}};
globalThis.ResizeObserver = class { observe() {} disconnect() {} };
// [status, the server that answers] per request; argv[3]: the scenario
const scenarios = {moved: [[200, 'A'], [200, 'A'], [404, 'B'], [200, 'A'], [404, 'B']],
                   first: [[404, 'B'], [404, 'B']],
                   same: [[200, 'A'], [200, 'A'], [404, 'A']],
                   unnamed: [[200, 'A'], [404, 'B']]};
const answers = scenarios[process.argv[3]];
const server = process.argv[3] === 'unnamed' ? undefined : 'A';   // where the page's script ran
let k = 0;
globalThis.fetch = async () => {
  const [status, by] = answers[Math.min(k++, answers.length - 1)];
  return {ok: status === 200, status, headers: {get: (h) => (h === 'X-Dlplay-Server' ? by : null)},
          json: async () => ({slots: {note: {html: String(k)}}, next_ms: 5, rerun: false})};
};
const {default: mount} = await import(pathToFileURL(process.argv[2]).href);
const parent = {querySelector: () => null, appendChild() {}};
const go = () => mount({data: {html: '0', poll: {url: '/_dlplay/frame/M' + process.argv[3], slot: 'note', next_ms: 5, server}},
                        parentElement: parent, setTriggerValue: () => undefined});
go();
await new Promise((r) => setTimeout(r, 200));
// a reload does not end a script here: the same page polling again, moved again at once,
// gets no second reload while one is pending
go();
await new Promise((r) => setTimeout(r, 200));
const first = reloads;
window.__dlplayReloading = false;       // (a reloaded page starts afresh)
stored.set('dlplayMovedAt', String(Date.now() - 9950));
go();                                   // moved again 9.95 s after the last reload: it waits
await new Promise((r) => setTimeout(r, 20));
const early = reloads;
await new Promise((r) => setTimeout(r, 200));
console.log(JSON.stringify({reloads: first, early, late: reloads, fetched: k}));
"""


@pytest.mark.parametrize("scenario, reloads",
                         [("moved", 1), ("first", 1), ("same", 0), ("unnamed", 0)])
def test_a_frame_request_answered_by_another_server_reloads_the_page_once(tmp_path, scenario,
                                                                          reloads):
    """The page's script ran on server A (the component is told so); "unknown page" (404)
    from server B means the proxy now sends this browser's requests to another replica while
    its websocket stayed: the page reloads, once (not again at once), whether or not frames
    came before. A 404 from A itself (the page paused, reset) or a page not told its server
    stops the poller as before."""
    import shutil
    import subprocess
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "moved.mjs"
    script.write_text(_MOVED_JS)
    run = subprocess.run([node, str(script), str(lc._JS), scenario], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["reloads"] == reloads, out
    if reloads:                       # the next move, under 10 s after a reload, waits its turn
        assert out["early"] == reloads and out["late"] == reloads + 1, out
