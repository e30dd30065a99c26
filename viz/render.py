"""Drawing on the page: every figure goes through show_figure(), long text through explain().

Cheap figures (issue 16). What a slider move costs in the browser is mostly Plotly drawing
SVG: every *marker* is its own SVG node, while a line of any length is one path. Measured in
headless Chromium on the 2-core machine (the gradient-descent contour with four 201-step
paths drawn "lines+markers", then "lines" only): 3.8 s -> 1.1 s per slider move under load,
while the JSON size barely mattered. So:
  - draw long paths as lines, markers only where there are few (viz/screen.py
    `path_points`: the vertices of a 2-D path at screen resolution);
  - send long curves at screen resolution (viz/screen.py `screen_series`: per pixel column
    the min and the max of its points, so spikes and oscillations keep their extent);
  - numpy arrays go to Plotly as typed arrays (base64) by themselves: pass arrays, not lists.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import plotly.graph_objects as go
import streamlit as st

from viz import session
from viz.theme import style_figure

PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}

_frame = threading.local()       # per script thread: is a playing live frame drawing now?


@contextlib.contextmanager
def live_frame(playing: bool) -> Iterator[None]:
    """viz/live.py wraps a frame's `draw` in this: figures drawn while Play is on are
    animation frames (in_playing_frame() is True), the paused picture is the full one."""
    before = getattr(_frame, "playing", False)
    _frame.playing = playing
    try:
        yield
    finally:
        _frame.playing = before


def in_playing_frame() -> bool:
    return getattr(_frame, "playing", False)


def show_figure(fig: go.Figure, *, key: str | None = None, on_select="ignore",
                selection_mode=("points", "box", "lasso"), height: int | None = None):
    """Style `fig` with the shared template (classroom-aware) and draw it.
    Returns what st.plotly_chart returns (the selection state when on_select is set)."""
    style_figure(fig, session.classroom())
    if height is not None:
        fig.update_layout(height=height)
    return st.plotly_chart(fig, key=key, on_select=on_select, selection_mode=selection_mode,
                           theme=None, config=PLOTLY_CONFIG)


def explain(markdown: str, title: str = "Explanation") -> None:
    """A paragraph of explanation: shown in full normally, collapsed in classroom mode
    (the teacher talks; the screen shows the figure)."""
    if session.classroom():
        with st.expander(title, expanded=False):
            st.markdown(markdown)
    else:
        st.markdown(markdown)

