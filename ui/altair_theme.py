"""The classroom look for Altair (Vega-Lite) charts: the same fonts, sizes and colours as the
Plotly template of ui/theme.py, in its light and its projector variant.

A view is Altair when its teaching is a selection that other charts follow in the browser
(a brush on one chart filters or highlights the others, docs/ARCHITECTURE.md): Vega-Lite
evaluates the selection client-side, so a brush move costs no Streamlit rerun. Everything
else is Plotly.

    show_altair(chart, key=...)   # themed for session.classroom(), drawn by st.altair_chart
"""
from __future__ import annotations

from typing import Any

from ui.theme import COLORWAY, FONT_FAMILY, SIZES


def theme_config(classroom: bool = False) -> dict[str, Any]:
    """Vega-Lite `config` with ui/theme.py's sizes: font family and sizes, the qualitative
    colorway, point sizes scaled like the Plotly markers (Vega-Lite sizes are areas in
    px²), no frame around a view."""
    s = SIZES[bool(classroom)]
    marker = float(s["marker"]) ** 2                    # Plotly diameter -> Vega-Lite area
    axis = {"labelFontSize": s["tick"], "titleFontSize": s["font"], "labelFont": FONT_FAMILY,
            "titleFont": FONT_FAMILY, "gridColor": "#e6e6e6", "domainColor": "#444",
            "tickColor": "#444", "labelColor": "#222", "titleColor": "#222",
            "titleFontWeight": "normal"}
    return {
        "font": FONT_FAMILY,
        "background": "white",
        "view": {"stroke": None},
        "axis": axis,
        "legend": {"labelFontSize": s["font"], "titleFontSize": s["font"],
                   "labelFont": FONT_FAMILY, "titleFont": FONT_FAMILY,
                   "symbolSize": marker, "titleFontWeight": "normal"},
        "header": {"labelFontSize": s["font"], "titleFontSize": s["font"]},
        "title": {"fontSize": s["title"], "font": FONT_FAMILY, "anchor": "start",
                  "fontWeight": "normal", "color": "#222", "subtitleFontSize": s["font"]},
        "text": {"fontSize": s["font"], "font": FONT_FAMILY},
        "point": {"size": marker, "filled": True},
        "circle": {"size": marker},
        "line": {"strokeWidth": s["line"]},
        "range": {"category": list(COLORWAY)},
    }


def themed(chart, classroom: bool = False):
    """`chart` (an Altair top-level chart) with the theme's config (applied last: a
    configured chart can no longer be concatenated)."""
    return chart.configure(**theme_config(classroom))


def show_altair(chart, *, key: str, classroom: bool | None = None):
    """Draw `chart` themed for the session's mode. Its selections stay in the browser
    (on_select="ignore": Streamlit does not rerun when the user brushes)."""
    import streamlit as st

    from ui import session
    room = session.classroom() if classroom is None else classroom
    return st.altair_chart(themed(chart, room), key=key, theme=None, width="stretch")
