"""Playing live frames drawn on a <canvas> instead of Plotly's SVG (cheap frames).

While Play is on, a live page redraws its figures 2-4 times a second. Plotly makes every
marker an SVG node and lays the whole chart out again on each react: measured in headless
Chromium on the 2-core machine, ~600 ms of browser CPU per GAN frame, so a few students'
browsers on one machine fell below one frame per second. A frame is only looked at, not
hovered or zoomed, so ui.render.show_figure draws it with this component: the same figure
(data and layout, styled by ui.theme) painted on one canvas by live/canvas.js, a few ms per
frame. Pause shows the full interactive Plotly figure again.

Only what the live figures use is drawn (a whitelist; anything else keeps Plotly):
  traces  scatter/scattergl (lines, markers, lines+markers; None/NaN gaps; marker colour,
          symbol circle/square/diamond/x/cross/star,
          size, opacity, per-point colour arrays; line colour, width, dash, shape hv/vh),
          heatmap (z grid, x/y centres, colour scale given as pairs, zmin/zmax, opacity,
          colour bar, cell texts with texttemplate "%{text}");
  category axes (string coordinates) are made numeric here first (categories_as_numbers);
  layout  title, axes (range, autorange, reversed, log, domain, anchor, overlaying, side,
          tick values/text/format, scaleanchor), shapes (line, rect, M/L/Z paths),
          annotations (text), legend, margins, height.

The JSON sent is the figure's own (plotly's to_dict: numpy arrays as base64 typed arrays,
decoded in JS) plus the resolved theme (fonts, colourway, default widths), so Python does
no per-point work: converting costs ~1 ms per figure.
"""
from __future__ import annotations

import base64
import functools
import os
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from live.contour_lines import level_segments
from ui import render
from ui.theme import COLORWAY, FONT_FAMILY, SIZES

_JS = Path(__file__).with_name("canvas.js")

# ---- the whitelist: properties the canvas draws (or may safely ignore) ---------------------
_IGNORED = {"hoverinfo", "hovertemplate", "hovertext", "hoverlabel", "customdata", "uid",
            "meta", "legendgroup", "legendrank", "ids", "selectedpoints", "cliponaxis",
            "hoveron", "zorder"}
_SCATTER = _IGNORED | {"type", "x", "y", "mode", "name", "marker", "line", "opacity",
                       "showlegend", "xaxis", "yaxis", "visible", "connectgaps", "text"}
_HEATMAP = _IGNORED | {"type", "x", "y", "z", "colorscale", "zmin", "zmax", "zmid",
                       "opacity", "showscale", "colorbar", "name", "xaxis", "yaxis",
                       "visible", "showlegend", "zsmooth", "reversescale", "text",
                       "xgap", "ygap", "hoverongaps", "zauto", "texttemplate"}
_MARKER = {"color", "size", "opacity", "symbol", "line", "colorscale", "cmin", "cmax",
           "showscale", "reversescale", "cauto"}
_LINE = {"color", "width", "dash", "shape", "simplify", "smoothing"}
_SYMBOLS = {"circle", "square", "diamond", "x", "cross", "star", "circle-open", "square-open",
            "diamond-open", "star-open", 0, 1, 2, 17}
_MODES = {"lines", "markers", "lines+markers", "markers+lines", "none"}
_DASHES = {"solid", "dot", "dash", "dashdot", "longdash", "longdashdot", None}
_LAYOUT = {"height", "width", "margin", "title", "legend", "showlegend", "annotations",
           "shapes", "meta", "template", "font", "hovermode", "dragmode", "clickmode",
           "uirevision", "paper_bgcolor", "plot_bgcolor", "autosize", "colorway",
           "transition", "datarevision", "editrevision", "selectionrevision", "bargap"}
_AXIS = {"range", "title", "domain", "anchor", "overlaying", "side", "showgrid",
         "zeroline", "visible", "showticklabels", "tickformat", "tickvals", "ticktext",
         "tickmode", "type", "scaleanchor", "scaleratio", "constrain", "constraintoward",
         "autorange", "fixedrange", "dtick", "tick0", "nticks", "gridcolor", "showline",
         "linecolor", "ticks", "ticksuffix", "tickprefix", "automargin", "tickfont",
         "mirror", "zerolinecolor", "zerolinewidth", "linewidth", "gridwidth", "ticklen",
         "tickangle", "showspikes", "rangemode", "matches", "layer", "exponentformat",
         "dlplay_categories"}     # set by categories_as_numbers: the axis had n categories
_SHAPE = {"type", "x0", "x1", "y0", "y1", "path", "xref", "yref", "line", "fillcolor",
          "opacity", "layer", "name", "visible", "editable", "showlegend", "legendgroup",
          "legendrank"}
_ANNOTATION = {"text", "x", "y", "xref", "yref", "xanchor", "yanchor", "showarrow", "font",
               "align", "bgcolor", "textangle", "ax", "ay", "arrowhead", "arrowcolor",
               "arrowwidth", "axref", "ayref", "opacity", "visible", "name", "xshift",
               "yshift", "captureevents", "arrowsize"}


def _numeric_array(value: Any) -> bool:
    """A typed array, or a list of numbers / None (no category strings, no dates); a numeric
    numpy array too (plotly's to_dict keeps an EMPTY array as numpy: a fresh trainer's empty
    history)."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    if isinstance(value, dict):
        return "bdata" in value and "dtype" in value
    if isinstance(value, (list, tuple)):
        return all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   or (isinstance(v, (list, tuple)) and _numeric_array(v)) for v in value)
    return False


def _colorscale(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in value)


def _scatter_ok(t: dict) -> bool:
    marker, line = t.get("marker") or {}, t.get("line") or {}
    mode = t.get("mode", "lines+markers")
    color = marker.get("color")
    return (set(t) <= _SCATTER and set(marker) <= _MARKER and set(line) <= _LINE
            and mode in _MODES and marker.get("symbol", "circle") in _SYMBOLS
            and line.get("dash") in _DASHES and line.get("shape", "linear") in
            {"linear", "hv", "vh"} and all(_numeric_array(t.get(a, [])) for a in "xy")
            and not t.get("connectgaps") and not marker.get("showscale")
            and (not isinstance(marker.get("size"), (list, dict)) or _numeric_array(marker["size"]))
            and (not isinstance(color, (list, tuple, dict)) or _numeric_array(color)
                 and _colorscale(marker.get("colorscale"))
                 or isinstance(color, (list, tuple)) and all(isinstance(c, str) for c in color)))


def _heatmap_ok(t: dict) -> bool:
    return (set(t) <= _HEATMAP and _numeric_array(t.get("z")) and _colorscale(t.get("colorscale"))
            and t.get("texttemplate") in (None, "%{text}")       # cell texts: the text as given
            and all(_numeric_array(t.get(a, [])) for a in "xy")
            and t.get("zsmooth", False) in (False, None))


# a registry: trace type -> can the canvas draw it?  (live/canvas.js has the drawers)
TRACE_CHECKS: dict[str, Callable[[dict], bool]] = {
    "scatter": _scatter_ok, "scattergl": _scatter_ok, "heatmap": _heatmap_ok}


def _axis_ok(name: str, axis: Any) -> bool:
    return isinstance(axis, dict) and set(axis) <= _AXIS and axis.get("type", "-") in (
        "-", "linear", "log") and not isinstance(axis.get("tickvals"), dict)


def _path_ok(shape: dict) -> bool:
    path = shape.get("path", "")
    return shape.get("type") != "path" or (isinstance(path, str)
                                            and set(path.upper()) <= set("MLZ0123456789.,-+E "))


def _layout_ok(layout: dict) -> bool:
    return (all(k in _LAYOUT or (k[:5] in ("xaxis", "yaxis") and _axis_ok(k, v))
                for k, v in layout.items())
            and all(isinstance(s, dict) and set(s) <= _SHAPE and s.get("type", "rect") in
                    ("line", "rect", "path", "circle") and _path_ok(s)
                    for s in layout.get("shapes", ()))
            and all(isinstance(a, dict) and set(a) <= _ANNOTATION and _arrow_ok(a)
                    for a in layout.get("annotations", ()))
            and _legend_ok(layout.get("legend")))


# What the canvas draws wrong is refused (Plotly draws the figure instead): splines (drawn
# straight), connectgaps (gaps kept), a colour bar on markers, arrowheads (an arrow is a plain
# line), and a legend placed over the plot (the canvas puts a vertical legend right of the
# plot and a horizontal one below it).
def _arrow_ok(annotation: dict) -> bool:
    return annotation.get("showarrow") is False or annotation.get("arrowhead") == 0


def _legend_ok(legend: Any) -> bool:
    if not isinstance(legend, dict):
        return legend is None
    if legend.get("orientation", "v") == "h":
        y = legend.get("y")
        return y is None or not isinstance(y, (int, float)) or y <= 0.5
    x = legend.get("x")
    return x is None or not isinstance(x, (int, float)) or x >= 1


def figure_dict(fig: go.Figure | dict) -> dict:
    """The figure as plain JSON-able dicts (plotly's to_dict: numpy arrays become
    {"dtype", "bdata"[, "shape"]} typed arrays); a dict figure is taken as it is."""
    if isinstance(fig, dict):
        return fig
    return fig.to_dict()


def supported(spec: dict) -> bool:
    """Whether every trace and layout property of `spec` is one the canvas draws."""
    data, layout = spec.get("data", []), spec.get("layout", {})
    return (all(isinstance(t, dict) and t.get("visible", True) is not False
                and TRACE_CHECKS.get(t.get("type", "scatter"), lambda _: False)(t)
                for t in data)
            and isinstance(layout, dict) and _layout_ok(layout))


def _style(layout: dict) -> dict:
    """What the shared template (ui.theme) resolves to: fonts, colours, default widths."""
    meta = layout.get("meta")
    classroom = bool(meta.get("dlplay_classroom")) if isinstance(meta, dict) else False
    s = SIZES[classroom]
    return {"family": FONT_FAMILY, "font": s["font"], "title": s["title"], "tick": s["tick"],
            "color": "#222", "colorway": layout.get("colorway") or COLORWAY,
            "line": s["line"], "marker": s["marker"], "grid": "#e6e6e6", "axis": "#444",
            "margin": {"l": 60, "r": 20, "t": 50, "b": 50, "pad": 0},
            "plotbg": layout.get("plot_bgcolor") or "white"}


# strings Plotly's autotype reads as numbers or dates, not categories
_NOT_CATEGORY = re.compile(r"^\s*([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|\d{4}-\d{1,2}(-\d{1,2})?.*)\s*$")


def _labels(value: Any) -> list[str] | None:
    """Category coordinates (token labels): a non-empty list / array of strings, else None."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "UO":
        value = value.tolist()
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def categories_as_numbers(spec: dict) -> dict:
    """Category axes (string coordinates, as the attention maps' token labels) made numeric
    the way Plotly lays them out: the n categories of an axis, in order of appearance over its
    traces, at 0..n-1; the axis linear with those tick values and the labels as tick texts,
    range [-0.5, n-0.5] (reversed when autorange says so). The canvas then draws them with
    nothing new. An axis Plotly would not treat as categories is left as it is (so Plotly
    keeps the figure)."""
    data, layout = spec.get("data", []), spec.get("layout", {})
    order: dict[str, dict[str, int]] = {}
    out = []
    for t in data:
        if not isinstance(t, dict):
            return spec
        for letter in "xy":
            labels = _labels(t.get(letter))
            if labels is None:
                continue
            cats = order.setdefault(t.get(f"{letter}axis", letter), {})
            t = {**t, letter: [cats.setdefault(s, len(cats)) for s in labels]}
        out.append(t)
    if not order:
        return spec
    layout = dict(layout)
    for ax, cats in order.items():
        name = f"{ax[0]}axis{ax[1:]}"
        a = dict(layout.get(name) or {})
        kind = a.get("type", "-")
        if (kind not in ("-", "category") or "range" in a or "tickvals" in a
                or kind == "-" and any(_NOT_CATEGORY.match(s) for s in cats)):
            return spec
        n = len(cats)
        # a whole dtick k > 1 labels every k-th category, as Plotly does; else the canvas
        # thins a crowded y axis itself (dlplay_categories)
        dtick = a.pop("dtick", None)
        step = int(dtick) if isinstance(dtick, (int, float)) and dtick >= 1 \
            and float(dtick).is_integer() else 1
        a.update(type="linear", tickvals=list(range(0, n, step)), ticktext=list(cats)[::step],
                 range=[n - 0.5, -0.5] if a.pop("autorange", None) == "reversed" else [-0.5, n - 0.5])
        if step == 1:
            a["dlplay_categories"] = n
        layout[name] = a
    return {**spec, "data": out, "layout": layout}


def _array(value: Any) -> np.ndarray | None:
    """A figure's array (numpy, a list, or plotly's {"dtype", "bdata", "shape"}) as numpy."""
    if isinstance(value, dict) and "bdata" in value:
        a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
    try:
        return np.asarray(value, dtype=np.float64) if value is not None else None
    except (TypeError, ValueError):
        return None


def _typed(a: np.ndarray) -> dict:
    a = np.ascontiguousarray(a, dtype=np.float32)
    return {"dtype": "f4", "bdata": base64.b64encode(a.tobytes()).decode()}


def contours_as_lines(spec: dict) -> dict:
    """A contour trace drawn as one black line (a single level, coloring "none": the
    generalization page's 0.5 decision boundary) becomes a scatter line through that level's
    marching-squares segments (live/contour_lines.py); other contours are left (Plotly)."""
    data = spec.get("data", [])
    if not any(isinstance(t, dict) and t.get("type") == "contour" for t in data):
        return spec
    out = []
    for t in data:
        c = (t.get("contours") or {}) if isinstance(t, dict) else {}
        if not (isinstance(t, dict) and t.get("type") == "contour"):
            out.append(t)
            continue
        x, y, z = (_array(t.get(k)) for k in "xyz")
        if (c.get("coloring") != "none" or c.get("start") is None or c.get("start") != c.get("end")
                or x is None or y is None or z is None or z.ndim != 2):
            out.append(t)
            continue
        xs, ys = level_segments(x, y, z, float(c["start"]))
        line = {k: v for k, v in (t.get("line") or {}).items() if k in ("color", "width", "dash")}
        out.append({"type": "scatter", "mode": "lines", "x": _typed(xs), "y": _typed(ys),
                    "line": line, "showlegend": False, "name": t.get("name", ""),
                    **{k: t[k] for k in ("xaxis", "yaxis", "opacity", "visible") if k in t}})
    return {**spec, "data": out}


def to_spec(fig: go.Figure | dict) -> dict | None:
    """The payload the canvas draws: {"data", "layout", "style"}; None when the figure uses
    something the canvas does not draw (the caller then draws it with Plotly)."""
    spec = contours_as_lines(categories_as_numbers(figure_dict(fig)))
    if not supported(spec):
        return None
    layout = {k: v for k, v in spec.get("layout", {}).items() if k != "template"}
    data = [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in t.items()
             if k not in _IGNORED} for t in spec.get("data", [])]
    return {"data": data, "layout": layout, "style": _style(spec.get("layout", {}))}


@functools.lru_cache(maxsize=1)
def _component():
    """Registered once per process (a second registration with the same name warns)."""
    return st.components.v2.component("dlplay_live_canvas", js=_JS.read_text(),
                                      isolate_styles=False)


def enabled() -> bool:
    """DLPLAY_LIVE_CANVAS=0 draws playing frames with Plotly as before (a comparison, or a
    way out should a browser lack canvas support)."""
    return os.environ.get("DLPLAY_LIVE_CANVAS", "1") != "0"


def height_of(spec: dict) -> int:
    h = spec["layout"].get("height")
    return int(h) if isinstance(h, (int, float)) and h > 0 else 450


PLOTLY_ENV = "DLPLAY_LIVE_PLOTLY"


def plotly_payload(fig: go.Figure) -> dict | None:
    """A figure the canvas does not draw, for the live component's plotly.js: {"plotly": the
    figure's JSON as text (plotly.io: numpy arrays as typed arrays; JSON.parse in the
    browser), "height"}. DLPLAY_LIVE_PLOTLY=0: None (the page reruns per frame instead)."""
    if os.environ.get(PLOTLY_ENV, "1") == "0":
        return None
    import plotly.io as pio
    h = fig.layout.height
    return {"plotly": pio.to_json(fig, validate=False),
            "height": int(h) if isinstance(h, (int, float)) and h > 0 else 450}


@functools.lru_cache(maxsize=1)
def plotly_js() -> Path:
    """plotly.js as the installed plotly package ships it (no CDN: served by app.py's route)."""
    import plotly
    return Path(plotly.__file__).with_name("package_data") / "plotly.min.js"


def show(spec: dict, key: str) -> None:
    """Mount (or update in place: same key, same DOM element) the canvas chart."""
    mount(key, {"spec": spec})


def _rerun_asked() -> None:
    """The component asked for a rerun (live/push.py: the run ended, or a part is no
    longer drawable): Streamlit reruns the fragment it sits in; nothing else to do here."""


def mount(key: str, payload: dict, poll: dict | None = None) -> None:
    """The live component: payload {"spec": canvas spec} or {"html": markup}; with `poll`
    ({url, slot, next_ms}) it then fetches its slot's frames from the frame route
    (live/push.py) until it is unmounted."""
    height = (height_of(payload["spec"]) if "spec" in payload
              else payload["height"] if "plotly" in payload else "content")
    _component()(data={**payload, "poll": poll}, key=key, height=height, width="stretch",
                 on_rerun_change=_rerun_asked)


def _canvas_key(key: str | None) -> str:
    """A key that stays the same from frame to frame (the browser keeps the same element and
    only repaints its canvas): the figure's own key, else its place in this live frame."""
    if key is not None:                     # (a component's key must not contain "__")
        return "live-canvas-" + key.replace("__", "-")
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState
        fragment = ThreadState.get().fragment_id or ""
    except Exception:                                   # noqa: BLE001 - an internal API
        fragment = ""
    return f"live-canvas-{fragment.replace('__', '-')}-{render.next_in_frame()}"


def subtitle(spec: dict, note: str) -> bool:
    """Put `note` under the title of a canvas spec (drawn in the canvas: no extra element
    per frame, and Play/Pause does not move the page by a caption's height). False when the
    figure has no title text or already a subtitle."""
    title = spec["layout"].get("title")
    if not isinstance(title, dict) or not title.get("text") or \
            (title.get("subtitle") or {}).get("text"):
        return False
    # a note, not a subtitle of the figure's: drawn where a subtitle goes but it takes no
    # room (the canvas would otherwise move the plot area down, as Plotly does for a real
    # subtitle, and the paused chart, which has no note, would jump back up)
    spec["layout"]["title"] = {**title, "subtitle": {"text": note, "dlplay_note": True}}
    return True


def paint_playing(fig: go.Figure, key: str | None, clickable: bool) -> bool:
    """Paint a playing frame's figure on the canvas (ui.render.show_figure asks): False when
    the canvas is off or cannot draw this figure (Plotly draws it then). A clickable chart
    says, under its title, that clicks work when paused."""
    if not enabled():
        return False
    spec = to_spec(fig)
    if spec is None:
        return False
    if clickable and not subtitle(spec, "Press Pause to click on this chart"):
        st.caption("Press **Pause** to click on this chart.")
    show(spec, _canvas_key(key))
    return True


render.paint_playing_frames_with(paint_playing)
