"""ui/altair_theme.py: Altair charts take the Plotly template's fonts, sizes and colours, in
the light and the projector variant."""
from __future__ import annotations

import altair as alt
import pandas as pd

from ui.altair_theme import theme_config, themed
from ui.theme import COLORWAY, FONT_FAMILY, SIZES


def test_the_config_follows_the_plotly_sizes_in_both_modes():
    for classroom in (False, True):
        c, s = theme_config(classroom), SIZES[classroom]
        assert c["font"] == FONT_FAMILY and c["range"]["category"] == COLORWAY
        assert c["axis"]["labelFontSize"] == s["tick"]
        assert c["axis"]["titleFontSize"] == c["legend"]["labelFontSize"] == s["font"]
        assert c["title"]["fontSize"] == s["title"]
        assert c["point"]["size"] == s["marker"] ** 2       # an area in px²
    assert theme_config(True)["axis"]["labelFontSize"] > theme_config(False)["axis"][
        "labelFontSize"]


def test_a_themed_chart_carries_the_config_in_its_spec():
    chart = alt.Chart(pd.DataFrame({"a": [1, 2], "b": [3, 4]})).mark_point().encode(
        x="a:Q", y="b:Q")
    spec = themed(chart, classroom=True).to_dict()
    assert spec["config"]["axis"]["labelFontSize"] == SIZES[True]["tick"]
    assert spec["config"]["title"]["fontSize"] == SIZES[True]["title"]
