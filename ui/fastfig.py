"""Plotly figures assembled as plain dicts: the same JSON as plotly's graph-object calls
(make_subplots, add_trace(row=, col=), add_vline, update_xaxes), about 10x less CPU.

Measured on the generalization page's boundary figure (2-core box, CPU time): the graph-object
build took 56-87 ms per rerun, almost all of it in plotly's property validation and path
parsing (make_subplots, add_vline, update_layout with magic underscores); the same figure as
a dict wrapped with go.Figure(..., _validate=False) takes ~1.5 ms. That is most of a slider
move's server time on the pages that use it.

    fig = Fig(rows=2, cols=1, shared_xaxes=True, subplot_titles=("a", "b"))
    fig.add("scatter", row=1, x=xs, y=ys, mode="lines", line={"color": "red"})
    fig.vline(3.0, row=2, line={"dash": "dot"}, text="here")
    fig.axes(row=2, x={"type": "log"}, y={"range": [0, 1]})
    fig.layout.update(height=400)
    show_figure(fig.figure())

The subplot grid (axis domains, anchors, title annotations) comes from make_subplots itself,
built once per distinct grid and cached. Values are not validated here: the page tests run
the figures of every live frame through a validating go.Figure
(tests/pages/test_plain_figures.py, `validated`).

Single-panel figures redrawn every live frame use `plain_figure(traces, layout)` below (the
GAN, VAE and diffusion pages):

    Figures redrawn every live frame, built from plain dicts without Plotly's validation.

    go.Figure(traces, layout) validates and copies every property of every trace (go.Scatter,
    go.Heatmap, ...): ~2.4 ms for the GAN's sample figure where the same figure from dicts with
    `_validate=False` takes ~0.3 ms (measured on the 2-core machine). A live frame rebuilds its
    figures a few times a second, so the pages' live figures use `plain_figure`; Streamlit's
    st.plotly_chart turns a go.Figure into a dict without validating it again.

    The price is that a typo in a property name is no longer caught when the figure is built:
    tests/pages/test_plain_figures.py rebuilds every plain figure the pages draw with validation
    (`validated`) and compares. Named colour scales are resolved here (plotly.js and plotly.py
    disagree on some names, e.g. RdBu runs the other way round in plotly.js), and numeric arrays
    go out as float32 typed arrays (half the bytes of float64, more digits than a screen shows).
"""
from __future__ import annotations

import copy
import functools
import json
from typing import Any, Iterable, Mapping

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from plotly.subplots import make_subplots


@functools.lru_cache(maxsize=64)
def _grid(spec: str) -> tuple[dict, dict]:
    """(layout dict, {(row, col): {"xaxis": "x2", "yaxis": "y2"}}) of make_subplots(**spec)."""
    fig = make_subplots(**json.loads(spec))
    refs = {}
    for r, row in enumerate(fig._grid_ref):          # plotly's own (row, col) -> axes table
        for c, cell in enumerate(row):
            if cell:
                refs[(r + 1, c + 1)] = dict(cell[0].trace_kwargs)
    layout = fig.to_dict()["layout"]
    layout.pop("template", None)       # go.Figure applies the default (ui.theme registers it)
    return layout, refs


def _merge(into: dict, new: dict) -> dict:
    """Nested dict update (what update_layout does with dicts)."""
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v
    return into


def _layout_key(ref: str) -> str:
    """"x2" -> "xaxis2", "y" -> "yaxis"."""
    return f"{ref[0]}axis{ref[1:]}"


class Fig:
    """A figure under construction: `data` (trace dicts) and `layout` (a dict)."""

    def __init__(self, rows: int = 1, cols: int = 1, **subplots: Any):
        layout, self._refs = _grid(json.dumps({"rows": rows, "cols": cols, **subplots},
                                              sort_keys=True, default=list))
        self.layout: dict = copy.deepcopy(layout)
        self.data: list[dict] = []

    def refs(self, row: int = 1, col: int = 1) -> tuple[str, str]:
        """The (x, y) axis references of a subplot: ("x2", "y2")."""
        r = self._refs[(row, col)]
        return r["xaxis"], r["yaxis"]

    def add(self, kind: str, row: int = 1, col: int = 1, **trace: Any) -> dict:
        """Append a trace to the subplot. A colour scale given by name ("RdBu_r") becomes
        explicit pairs here: unvalidated figures reach plotly.js as they are, and plotly.js
        knows neither the "_r" names nor some of plotly.py's (it fell back to its default
        scale: the generalization boundary and the initialization χ map were drawn in the
        wrong colours), nor does the live canvas draw names."""
        x, y = self.refs(row, col)
        t = {"type": kind, **_named_scales_as_pairs(trace)}
        if (x, y) != ("x", "y"):
            t.update(xaxis=x, yaxis=y)
        self.data.append(t)
        return t

    def axes(self, row: int = 1, col: int = 1, x: dict | None = None,
             y: dict | None = None) -> None:
        """Merge properties into the subplot's x and/or y axis."""
        xr, yr = self.refs(row, col)
        for ref, props in ((xr, x), (yr, y)):
            if props:
                _merge(self.layout.setdefault(_layout_key(ref), {}), props)

    def all_axes(self, axis: str, props: dict) -> None:
        """Merge `props` into every x (axis="x") or y axis of the grid."""
        for (r, c) in self._refs:
            self.axes(r, c, **{axis: props})

    def update(self, **layout: Any) -> None:
        _merge(self.layout, layout)

    def vline(self, x: float, row: int = 1, col: int = 1, line: dict | None = None,
              text: str | None = None, top: bool = True, left: bool = False,
              size: int | None = None, log_x: bool = False) -> None:
        """A vertical line over the subplot's height (add_vline), with an optional label at
        its top (or bottom) right (or left). x is a data value; log_x: the x axis is
        logarithmic, where plotly.js places shapes at data values but annotations at log10
        of them (the label then goes to log10(x))."""
        xr, yr = self.refs(row, col)
        self.layout.setdefault("shapes", []).append(
            {"type": "line", "x0": x, "x1": x, "xref": xr, "y0": 0, "y1": 1,
             "yref": f"{yr} domain", "line": line or {}})
        if text:
            self._label(text, float(np.log10(x)) if log_x else x, xr, 1 if top else 0,
                        f"{yr} domain", "right" if left else "left", "top" if top else "bottom",
                        size)

    def hline(self, y: float, row: int = 1, col: int = 1, line: dict | None = None,
              text: str | None = None, top: bool = False, left: bool = False) -> None:
        """A horizontal line over the subplot's width (add_hline), optionally labelled at
        its right (or left) end, above or below it."""
        xr, yr = self.refs(row, col)
        self.layout.setdefault("shapes", []).append(
            {"type": "line", "y0": y, "y1": y, "yref": yr, "x0": 0, "x1": 1,
             "xref": f"{xr} domain", "line": line or {}})
        if text:
            self._label(text, 0 if left else 1, f"{xr} domain", y, yr,
                        "left" if left else "right", "bottom" if top else "top", None)

    def _label(self, text, x, xref, y, yref, xanchor, yanchor, size) -> None:
        note = {"text": text, "x": x, "xref": xref, "y": y, "yref": yref, "showarrow": False,
                "xanchor": xanchor, "yanchor": yanchor}
        if size:
            note["font"] = {"size": size}
        self.layout.setdefault("annotations", []).append(note)

    def figure(self) -> go.Figure:
        return go.Figure({"data": self.data, "layout": self.layout}, _validate=False)


def _named_scales_as_pairs(trace: dict) -> dict:
    out = dict(trace)
    if isinstance(out.get("colorscale"), str):
        out["colorscale"] = [list(p) for p in colorscale(out["colorscale"])]
    marker = out.get("marker")
    if isinstance(marker, dict) and isinstance(marker.get("colorscale"), str):
        out["marker"] = {**marker, "colorscale": [list(p) for p in colorscale(marker["colorscale"])]}
    return out


# ---- single-panel figures from trace dicts (live frames) ------------------------------

@functools.lru_cache(maxsize=32)
def colorscale(name: str) -> tuple[tuple[float, str], ...]:
    """Plotly.py's named colour scale as explicit (position, colour) pairs."""
    return tuple((float(p), c) for p, c in plotly.colors.get_colorscale(name))


def f32(values: Any) -> np.ndarray:
    """A numeric array as float32 (a typed array in the figure's JSON)."""
    return np.asarray(values, dtype=np.float32)


# A horizontal legend under the plot, anchored as ui.theme.style_figure would move it (to the
# bottom of the figure, below the axis title): written so, style_figure has nothing to change.
LEGEND_BELOW = dict(orientation="h", yref="container", y=0.0, yanchor="bottom")


def plain_figure(data: Iterable[Mapping[str, Any]], layout: Mapping[str, Any],
                 frames: Iterable[Mapping[str, Any]] = ()) -> go.Figure:
    """go.Figure of trace dicts (each with its "type"), a layout dict and animation frames
    ({"data": [...], "name": ...}), not validated. The layout's meta says "not styled for the
    classroom yet" the way ui.theme marks it, so style_figure does not rewrite it on every
    frame (in classroom mode it still scales)."""
    spec = {"data": [dict(t) for t in data],
            "layout": {"meta": {"dlplay_classroom": False}, **layout}}
    if frames:
        spec["frames"] = [dict(f) for f in frames]
    return go.Figure(spec, _validate=False)


def validated(fig: go.Figure) -> go.Figure:
    """The same figure built with Plotly's validation (raises on an invalid property)."""
    return go.Figure(fig.to_dict())
