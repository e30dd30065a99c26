"""ui/fastfig.py builds figures as dicts: the result must be the figure plotly's own
graph-object calls build (same axes per subplot, same line shapes), and valid plotly."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.fastfig import Fig

GRID = dict(rows=2, cols=2, specs=[[{"rowspan": 2}, {}], [None, {}]], shared_xaxes=True,
            subplot_titles=("left", "top right", "bottom right"))


def test_traces_land_on_the_axes_make_subplots_gives_them():
    ref = make_subplots(**GRID)
    fast = Fig(**GRID)
    for row, col in ((1, 1), (1, 2), (2, 2)):
        ref.add_trace(go.Scatter(x=[0, 1], y=[row, col]), row=row, col=col)
        fast.add("scatter", row, col, x=[0, 1], y=[row, col])
    got = go.Figure(fast.figure().to_dict())          # validates every property
    axes = lambda f: [(t.xaxis or "x", t.yaxis or "y") for t in f.data]   # noqa: E731
    assert axes(got) == axes(ref) == [("x", "y"), ("x2", "y2"), ("x3", "y3")]
    assert [a.text for a in got.layout.annotations] == ["left", "top right", "bottom right"]
    assert got.layout.xaxis2.domain == ref.layout.xaxis2.domain


def test_vline_and_axes_match_plotlys_calls():
    ref = make_subplots(**GRID)
    ref.add_trace(go.Scatter(x=[0, 1], y=[1, 2]), row=2, col=2)   # add_vline skips empty subplots
    ref.add_vline(x=3, row=2, col=2, line=dict(dash="dot"))
    ref.update_yaxes(type="log", row=2, col=2)
    fast = Fig(**GRID)
    fast.vline(3, 2, 2, line=dict(dash="dot"), text="here")
    fast.axes(2, 2, y=dict(type="log"))
    got = go.Figure(fast.figure().to_dict())
    line = got.layout.shapes[0]
    want = ref.layout.shapes[0]
    assert (line.x0, line.x1, line.xref, line.yref, line.line.dash) == \
        (want.x0, want.x1, want.xref, want.yref, want.line.dash)
    assert got.layout.yaxis3.type == "log" and got.layout.annotations[-1].text == "here"


def test_the_cached_grid_is_not_shared_between_figures():
    a, b = Fig(**GRID), Fig(**GRID)
    a.update(height=100)
    a.axes(1, 1, x=dict(range=[0, 1]))
    assert "height" not in b.layout and "range" not in b.layout.get("xaxis", {})


def test_a_named_colour_scale_goes_out_as_pairs():
    """plotly.js does not know "RdBu_r" (it fell back to its default scale) and the live
    canvas draws only pairs: Fig.add resolves names, for traces and markers."""
    from ui.fastfig import Fig
    f = Fig()
    heat = f.add("heatmap", z=[[0.0, 1.0]], colorscale="RdBu_r")
    dots = f.add("scatter", x=[0], y=[0], marker=dict(color=[0.5], colorscale="Viridis"))
    assert heat["colorscale"][0] == [0.0, "rgb(5,48,97)"]          # 0: blue ...
    assert heat["colorscale"][-1] == [1.0, "rgb(103,0,31)"]        # ... 1: red
    assert dots["marker"]["colorscale"][0][0] == 0.0 and dots["marker"]["color"] == [0.5]
