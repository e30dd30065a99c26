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
