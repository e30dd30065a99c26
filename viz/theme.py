"""The one Plotly look of the playground, in a light and a classroom variant.

Figure builders in viz/ return plain go.Figure objects without styling; viz.render.show_figure
applies `style_figure(fig, classroom)` right before drawing, so every figure shares one
template and classroom mode scales all of them at once.

Cost (issue 22, cheap frames): the light template is registered as Plotly's default, so a
new go.Figure starts with it (0.13 ms instead of 0.41 ms for Plotly's own template) and
style_figure does not validate and copy a template into it again (~2.4 ms per figure, 7 ms
per GAN frame of three figures, measured on the 2-core machine); only classroom mode, or a
figure built before this module was imported, still pays for the template assignment.
"""
from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

COLORWAY = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
            "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]

FONT_FAMILY = "Inter, 'Source Sans Pro', Arial, sans-serif"

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
            margin=dict(l=60, r=20, t=50, b=50),
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
