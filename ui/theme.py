"""The one Plotly look of the playground, in a light and a classroom variant.

Figure builders in topics/<slug>/figures.py return plain go.Figure objects without styling; ui.render.show_figure
applies `style_figure(fig, classroom)` right before drawing, so every figure shares one
template and classroom mode scales all of them at once.

Cost (cheap frames): the light template is registered as Plotly's default, so a
new go.Figure starts with it (0.13 ms instead of 0.41 ms for Plotly's own template) and
style_figure does not validate and copy a template into it again (~2.4 ms per figure, 7 ms
per GAN frame of three figures, measured on the 2-core machine); only classroom mode, or a
figure built before this module was imported, still pays for the template assignment.
"""
from __future__ import annotations

import contextlib

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

COLORWAY = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
            "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]

FONT_FAMILY = "Inter, 'Source Sans Pro', Arial, sans-serif"

# titles: where they hang and the room they take (style_figure's title rules)
TEXT_LINE = 1.35      # a text line's height per px of font size
TITLE_TOP = 10        # px from the figure's top edge to its title's top, at least
TEMPLATE_TOP = 50     # the templates' top margin (make_template)
TITLE_PAD = 12        # px between the title's line and the panel titles'
SUBTITLE_SIZE = 0.7   # Plotly: a subtitle's font size per px of the title's
SUBTITLE_LINE = 1.9   # a subtitle's room per px of its size (Plotly pads it 1.6 em)

# classroom variant: font sizes in px, and scale factors for explicit line widths/markers
SIZES = {
    False: {"font": 14, "title": 17, "tick": 12, "line": 2.0, "marker": 7, "scale_line": 1.0,
            "scale_marker": 1.0},
    True: {"font": 22, "title": 26, "tick": 19, "line": 4.0, "marker": 12, "scale_line": 1.9,
           "scale_marker": 1.6},
}


def make_template(classroom: bool = False) -> go.layout.Template:
    s = SIZES[bool(classroom)]
    # automargin: the margins grow to fit tick labels and axis titles, so a larger classroom
    # font never lays an axis title over the tick labels; the title sits in the top margin and
    # legends on the right of the plot area, so legend and title cannot meet.
    axis = dict(showgrid=True, gridcolor="#e6e6e6", zeroline=False, linecolor="#444",
                ticks="outside", tickfont=dict(size=s["tick"]), automargin=True,
                title=dict(font=dict(size=s["font"]), standoff=8))
    return go.layout.Template(
        layout=dict(
            font=dict(family=FONT_FAMILY, size=s["font"],
                      color="#222"),
            title=dict(font=dict(size=s["title"]), x=0.02, xanchor="left", automargin=True,
                       yref="container", y=0.98, yanchor="top"),
            colorway=COLORWAY,
            paper_bgcolor="white", plot_bgcolor="white",
            xaxis=axis, yaxis=axis,
            legend=dict(font=dict(size=s["font"]), bgcolor="rgba(255,255,255,0.7)"),
            hoverlabel=dict(font=dict(size=s["font"])),
            margin=dict(l=60, r=20, t=TEMPLATE_TOP, b=50),
        ),
        data=dict(
            scatter=[go.Scatter(line=dict(width=s["line"]), marker=dict(size=s["marker"]))],
            scattergl=[go.Scattergl(line=dict(width=s["line"]), marker=dict(size=s["marker"]))],
            contour=[go.Contour(line=dict(width=s["line"] / 2))],
        ),
    )


TEMPLATES = {False: make_template(False), True: make_template(True)}
TEMPLATE_NAMES = {False: "dlplay", True: "dlplay_classroom"}
for _classroom, _name in TEMPLATE_NAMES.items():
    pio.templates[_name] = TEMPLATES[_classroom]
# Streamlit makes its own template plotly's default when its chart element is first loaded:
# load it before setting ours, so the default does not depend on the order of imports.
with contextlib.suppress(ImportError):
    import streamlit.elements.plotly_chart  # noqa: F401
pio.templates.default = TEMPLATE_NAMES[False]


def has_template(fig: go.Figure, classroom: bool = False) -> bool:
    """True when `fig` already carries the shared template of this variant."""
    font = fig.layout.template.layout.font
    return font.family == FONT_FAMILY and font.size == SIZES[bool(classroom)]["font"]


def style_figure(fig: go.Figure, classroom: bool = False) -> go.Figure:
    """Apply the shared template; in classroom mode also scale explicit line widths and
    marker sizes that a builder set on individual traces. Returns the same figure."""
    s = SIZES[bool(classroom)]
    already = (fig.layout.meta or {}).get("dlplay_classroom") if isinstance(fig.layout.meta, dict) else None
    if not has_template(fig, classroom):
        fig.update_layout(template=TEMPLATES[bool(classroom)])
    if already is not bool(classroom):
        fig.update_layout(meta={"dlplay_classroom": bool(classroom)})
    _legend_below_axis_title(fig)
    _colorbar_titles_aside(fig)
    if classroom:
        _text_at_least(fig, s["tick"])
        _log_axes_by_decade(fig)
    _title_clear_of_the_top(fig, s)
    _title_above_panel_titles(fig, s)          # after the text rules: the panels' final size
    if classroom and not already:
        for trace in fig.data:
            line = getattr(trace, "line", None)
            if line is not None and getattr(line, "width", None):
                line.width = line.width * s["scale_line"]
            marker = getattr(trace, "marker", None)
            size = getattr(marker, "size", None) if marker is not None else None
            if isinstance(size, (int, float)):
                marker.size = size * s["scale_marker"]
    return fig


def _legend_below_axis_title(fig: go.Figure) -> None:
    """A horizontal legend placed under the plot (y < 0, paper coordinates) sits wherever the
    builder guessed, and with classroom fonts it lands on the x-axis title. Anchored to the
    bottom of the figure instead (container coordinates), Plotly grows the bottom margin to
    fit it below the axis title."""
    legend = fig.layout.legend
    if legend.orientation == "h" and legend.y is not None and legend.y < 0 \
            and legend.yref != "container":
        fig.update_layout(legend=dict(yref="container", y=0.0, yanchor="bottom"))


def _title_top(fig: go.Figure) -> float:
    """px between the figure's top edge and its title's top line."""
    height = fig.layout.height or 450
    return max(0.02 * height, TITLE_TOP)


def _title_clear_of_the_top(fig: go.Figure, s: dict) -> None:
    """The template hangs titles from 98% of the figure's height; in a short figure (under
    500 px) that leaves the title's top less than TITLE_TOP px from the edge, where the
    chart cuts it: hang it TITLE_TOP px down instead (unless its builder placed it). And the
    top margin holds the title, its subtitle and half the top tick label under them,

        t >= title top + LINE * title size [+ SUBTITLE_LINE * subtitle size]
             + tick size / 2 + 4."""
    if not fig.layout.title.text:
        return
    if fig.layout.title.y is None and fig.layout.height:
        if 0.02 * fig.layout.height < TITLE_TOP:
            fig.layout.title.y = 1 - TITLE_TOP / fig.layout.height
    need = _title_top(fig) + TEXT_LINE * s["title"] + s["tick"] / 2 + 4
    subtitle = fig.layout.title.subtitle
    if subtitle.text:
        size = subtitle.font.size or round(SUBTITLE_SIZE * s["title"])
        need += (SUBTITLE_LINE + TEXT_LINE * subtitle.text.count("<br>")) * size
    if (fig.layout.margin.t or TEMPLATE_TOP) < need:
        fig.update_layout(margin=dict(t=int(np.ceil(need))))


def _title_above_panel_titles(fig: go.Figure, s: dict) -> None:
    """A figure title over subplot titles: the title hangs from 98% of the figure's height
    (the template) and the top row's panel titles stand on the plot area, so the top margin
    must hold both,

        t >= title top + LINE * (title size + panel title size) + PAD,

    or the two lines meet (with classroom fonts they did on several pages)."""
    if not fig.layout.title.text:
        return
    notes = [a for a in fig.layout.annotations or ()
             if a.yref == "paper" and a.yanchor == "bottom" and (a.y or 0) >= 0.95 and a.text]
    if not notes:
        return
    sizes = [a.font.size or s["font"] for a in notes]
    need = _title_top(fig) + TEXT_LINE * (s["title"] + max(sizes)) + TITLE_PAD
    if (fig.layout.margin.t or 0) < need:
        fig.update_layout(margin=dict(t=int(np.ceil(need))))



def _colorbar_titles_aside(fig: go.Figure) -> None:
    """A colour bar's title sits on top of the bar by default, where classroom-size fonts lay
    it over the top tick label: put titles that did not choose a side along the bar."""
    for trace in fig.data:
        bar = getattr(trace, "colorbar", None)
        if bar is not None and bar.title.text and bar.title.side is None:
            bar.title.side = "right"
    for name in fig.layout:
        if name.startswith("coloraxis"):
            bar = fig.layout[name].colorbar
            if bar.title.text and bar.title.side is None:
                bar.title.side = "right"


# ---- classroom text rules: nothing smaller than a tick label, log axes read in decades ----
_TEXT_TRACES = {"heatmap", "bar", "scatter", "scattergl", "histogram", "contour"}


def _text_at_least(fig: go.Figure, size: int) -> None:
    """Annotations (subplot titles are annotations), text printed on traces (heatmap cells,
    bar labels) and table cells at least `size` px, the tick label size: a builder's small
    font is readable on a laptop, not from the back of a lecture hall."""
    for note in fig.layout.annotations or ():
        if note.font.size is not None and note.font.size < size:
            note.font.size = size
    for trace in fig.data:
        kind = trace.type
        if kind == "table":
            for part in (trace.header, trace.cells):
                if isinstance(part.font.size, (int, float)) and part.font.size < size:
                    part.font.size = size
        elif kind in _TEXT_TRACES:
            font = getattr(trace, "textfont", None)
            if font is not None and isinstance(font.size, (int, float)) and font.size < size:
                font.size = size
    uniform = fig.layout.uniformtext
    if uniform.minsize is not None and uniform.minsize < size:
        uniform.minsize = size


def _axis_names(fig: go.Figure) -> list[str]:
    return [name for name in fig.layout if name.startswith(("xaxis", "yaxis"))]


def _log_span(fig: go.Figure, name: str) -> float | None:
    """Decades a log axis spans: from its range when set, else from the positive data of the
    traces drawn on it; None when unknown."""
    axis = fig.layout[name]
    if axis.range is not None and None not in axis.range:
        return abs(float(axis.range[1]) - float(axis.range[0]))
    letter, ref = name[0], name[0] + name[5:]        # "yaxis2" -> "y", "y2"
    lo, hi = np.inf, -np.inf
    for trace in fig.data:
        if (getattr(trace, f"{letter}axis", None) or letter) != ref:
            continue
        try:
            v = np.asarray(getattr(trace, letter), dtype=np.float64).ravel()
        except (TypeError, ValueError):
            continue
        v = v[np.isfinite(v) & (v > 0)]
        if v.size:
            lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    return float(np.log10(hi / lo)) if hi > 0 and np.isfinite(lo) else None


MAX_DECADES = 8      # decade labels on one log axis (classroom tick labels are 19 px)


def _log_axes_by_decade(fig: go.Figure) -> None:
    """A log axis spanning a decade or more labels decades only (10⁰, 10¹, ...; every k-th
    when it spans more than MAX_DECADES): Plotly's default labels minor ticks with bare
    digits (5 4 3 2 10 9 ... 5), so 50 and 5 read alike."""
    for name in _axis_names(fig):
        axis = fig.layout[name]
        if axis.type != "log" or axis.tickvals is not None or axis.dtick is not None:
            continue
        span = _log_span(fig, name)
        if span is not None and span >= 1:       # every k-th decade: at most MAX_DECADES labels
            # (tickmode "linear": Plotly's "auto" and "sync" modes ignore dtick)
            axis.update(dtick=max(1, int(np.ceil(span / MAX_DECADES))), exponentformat="power",
                        tickmode="linear")
