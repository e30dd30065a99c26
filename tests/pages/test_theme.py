"""ui.theme: the shared template is Plotly's default, style_figure gives every figure the
variant it asks for (whatever it was built with) and skips the copy when it is already there."""
from __future__ import annotations

from unittest import mock

import plotly.graph_objects as go
import plotly.io as pio

from ui.theme import FONT_FAMILY, SIZES, has_template, style_figure


def test_new_figures_start_with_the_light_template():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 0]))
    assert pio.templates.default == "dlplay" and has_template(fig, False)
    assert fig.layout.template.layout.font.family == FONT_FAMILY


def test_the_default_template_survives_streamlits_chart_module_loading_later():
    """Streamlit sets plotly's default template when its chart element loads; importing the
    theme first and Streamlit's chart module after must leave the playground's default."""
    import subprocess
    import sys
    from ui.topics import ROOT
    code = ("import ui.theme, streamlit.elements.plotly_chart, plotly.io as pio; "
            "print(pio.templates.default)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "dlplay"


def test_style_figure_sets_the_variant_and_copies_only_when_needed():
    light = go.Figure(go.Scatter(x=[0, 1], y=[1, 0], line=dict(width=2)))
    with mock.patch.object(go.Figure, "update_layout", wraps=light.update_layout) as upd:
        style_figure(light, False)
    assert not any("template" in c.kwargs for c in upd.call_args_list)   # no second copy
    assert light.layout.meta == {"dlplay_classroom": False}
    room = style_figure(go.Figure(go.Scatter(x=[0, 1], y=[1, 0], line=dict(width=2))), True)
    assert has_template(room, True) and not has_template(room, False)
    assert room.layout.template.layout.font.size == SIZES[True]["font"]
    assert room.data[0].line.width == 2 * SIZES[True]["scale_line"]
    style_figure(room, True)                                # styling twice does not rescale
    assert room.data[0].line.width == 2 * SIZES[True]["scale_line"]
    foreign = go.Figure(layout=dict(template="plotly_dark"))
    assert has_template(style_figure(foreign, False), False)


def test_a_title_over_panel_titles_gets_a_top_margin_that_holds_both():
    from plotly.subplots import make_subplots
    from ui.theme import TEMPLATE_TOP, TEXT_LINE, TITLE_PAD, TITLE_TOP
    for classroom in (False, True):
        fig = make_subplots(rows=1, cols=2, subplot_titles=("left panel", "right panel"))
        fig.update_layout(title="A figure title", height=400)
        style_figure(fig, classroom)
        s, panel = SIZES[classroom], fig.layout.annotations[0].font.size
        need = 0.02 * 400 + TEXT_LINE * (s["title"] + panel) + TITLE_PAD
        assert fig.layout.margin.t >= need
        lone = go.Figure(go.Scatter(x=[0, 1], y=[1, 0]), layout=dict(title="only a title"))
        style_figure(lone, classroom)                  # room for the title and a tick under it
        room = TITLE_TOP + TEXT_LINE * s["title"] + s["tick"] / 2 + 4
        assert (lone.layout.margin.t or TEMPLATE_TOP) >= room
        assert (lone.layout.margin.t is None) == (room <= TEMPLATE_TOP)
        untitled = make_subplots(rows=1, cols=2, subplot_titles=("a", "b"))
        style_figure(untitled, classroom)
        assert untitled.layout.margin.t is None
        short = go.Figure(layout=dict(title="short figure", height=160))
        style_figure(short, classroom)                 # 2% of 160 px: the title's top cut
        assert short.layout.title.y == 1 - TITLE_TOP / 160
        placed = go.Figure(layout=dict(title=dict(text="placed", y=0.9), height=160))
        style_figure(placed, classroom)
        assert placed.layout.title.y == 0.9            # a builder's choice stands


def test_a_subtitle_gets_its_own_line_in_the_top_margin():
    """A title with a subtitle (ReLU's output heatmap states its colour range there): the top
    margin holds both lines and half the top tick label; before, the tick met the subtitle."""
    from ui.theme import SUBTITLE_LINE, SUBTITLE_SIZE, TEXT_LINE, TITLE_TOP
    for classroom in (False, True):
        s = SIZES[classroom]
        plain = go.Figure(layout=dict(title="a title", height=520, margin=dict(t=72)))
        sub = go.Figure(layout=dict(title=dict(text="a title", subtitle=dict(text="colour: f")),
                                    height=520, margin=dict(t=72)))
        style_figure(plain, classroom)
        style_figure(sub, classroom)
        need = (max(0.02 * 520, TITLE_TOP) + TEXT_LINE * s["title"]
                + SUBTITLE_LINE * round(SUBTITLE_SIZE * s["title"]) + s["tick"] / 2 + 4)
        assert sub.layout.margin.t >= need
        if classroom:                      # 72 px held both lines at laptop sizes
            assert sub.layout.margin.t > plain.layout.margin.t



def _sized_page(classroom: bool) -> None:
    import plotly.graph_objects as go
    import streamlit as st
    from ui.render import live_frame, show_figure
    st.session_state["classroom"] = classroom
    show_figure(go.Figure(layout=dict(height=450)), key="still")
    with live_frame(False):                     # a live view's paused figure
        show_figure(go.Figure(layout=dict(height=450)), key="live")


def test_large_figures_follow_the_window_live_ones_too():
    """ui/render.show_figure: a large figure takes the window's height below the header (no
    browser report here: the 1280x720 default) on a laptop and on the projector, a live
    view's paused figure too (its pushed frames get the same height: live/parts.Payload)."""
    import json
    from streamlit.testing.v1 import AppTest
    from ui import screen
    for classroom in (False, True):
        at = AppTest.from_function(_sized_page, args=(classroom,), default_timeout=60).run()
        assert not at.exception
        heights = {c.proto.id.rsplit("-", 1)[-1]: json.loads(c.proto.spec)["layout"]["height"]
                   for c in at.get("plotly_chart")}
        header = 0 if classroom else screen.LAPTOP_HEADER_PX
        assert heights["still"] == screen.present_height(720, header) != 450
        assert heights["live"] == heights["still"]


def test_the_projector_labels_a_log_axis_by_decade_in_every_tick_mode():
    """Classroom log axes spanning decades label decades only, also an overlaying one set to
    its own ticks (tickmode "auto", the ReLU loss axis): Plotly's "auto" and "sync" modes
    ignore dtick, so the rule sets tickmode "linear"; a laptop keeps the figure's mode."""
    def fig():
        return go.Figure([go.Scatter(x=[0, 1], y=[100, 200]),
                          go.Scatter(x=[0, 1], y=[0.4, 0.003], yaxis="y2")],
                         layout=dict(yaxis2=dict(type="log", overlaying="y", side="right",
                                                 tickmode="auto")))
    projector, laptop = fig(), fig()
    style_figure(projector, True)
    style_figure(laptop, False)
    assert projector.layout.yaxis2.dtick == 1 and projector.layout.yaxis2.tickmode == "linear"
    assert laptop.layout.yaxis2.dtick is None and laptop.layout.yaxis2.tickmode == "auto"
