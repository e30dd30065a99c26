"""Figures redrawn every live frame, built from plain dicts without Plotly's validation.

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

import functools
from typing import Any, Iterable, Mapping

import numpy as np
import plotly.colors
import plotly.graph_objects as go


@functools.lru_cache(maxsize=32)
def colorscale(name: str) -> tuple[tuple[float, str], ...]:
    """Plotly.py's named colour scale as explicit (position, colour) pairs."""
    return tuple((float(p), c) for p, c in plotly.colors.get_colorscale(name))


def f32(values: Any) -> np.ndarray:
    """A numeric array as float32 (a typed array in the figure's JSON)."""
    return np.asarray(values, dtype=np.float32)


# A horizontal legend under the plot, anchored as viz.theme.style_figure would move it (to the
# bottom of the figure, below the axis title): written so, style_figure has nothing to change.
LEGEND_BELOW = dict(orientation="h", yref="container", y=0.0, yanchor="bottom")


MAX_CURVE_POINTS = 400


def thin(steps: np.ndarray, values: np.ndarray, n: int = MAX_CURVE_POINTS
         ) -> tuple[np.ndarray, np.ndarray]:
    """At most ~n points of a long curve: means over blocks of b = ⌈len/n⌉ consecutive
    values, each at its block's last step (a long live run keeps its figure small)."""
    if len(steps) <= n:
        return steps, values
    b = -(-len(steps) // n)
    starts = np.arange(0, len(steps), b)
    counts = np.diff(np.r_[starts, len(steps)])
    return steps[starts + counts - 1], np.add.reduceat(values, starts) / counts


def plain_figure(data: Iterable[Mapping[str, Any]], layout: Mapping[str, Any],
                 frames: Iterable[Mapping[str, Any]] = ()) -> go.Figure:
    """go.Figure of trace dicts (each with its "type"), a layout dict and animation frames
    ({"data": [...], "name": ...}), not validated. The layout's meta says "not styled for the
    classroom yet" the way viz.theme marks it, so style_figure does not rewrite it on every
    frame (in classroom mode it still scales)."""
    spec = {"data": [dict(t) for t in data],
            "layout": {"meta": {"dlplay_classroom": False}, **layout}}
    if frames:
        spec["frames"] = [dict(f) for f in frames]
    return go.Figure(spec, _validate=False)


def validated(fig: go.Figure) -> go.Figure:
    """The same figure built with Plotly's validation (raises on an invalid property)."""
    return go.Figure(fig.to_dict())
