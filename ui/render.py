"""Drawing on the page: every figure goes through show_figure(), long text through explain().

Cheap figures. What a slider move costs in the browser is mostly Plotly drawing
SVG: every *marker* is its own SVG node, while a line of any length is one path. Measured in
headless Chromium on the 2-core machine (the gradient-descent contour with four 201-step
paths drawn "lines+markers", then "lines" only): 3.8 s -> 1.1 s per slider move under load,
while the JSON size barely mattered. So:
  - draw long paths as lines, markers only where there are few (ui/screen.py
    `path_points`: the vertices of a 2-D path at screen resolution);
  - send long curves at screen resolution (ui/screen.py `screen_series`: per pixel column
    the min and the max of its points, so spikes and oscillations keep their extent);
  - numpy arrays go to Plotly as typed arrays (base64) by themselves: pass arrays, not lists.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator, Sequence

import plotly.graph_objects as go
import streamlit as st

from ui import screen
from ui import session
from ui import viewport
from ui.theme import style_figure
from ui.markup import Metric, metrics_html

# No drag handles at the axis ends (zoom there by box-dragging in the plot or the modebar):
# ~8 SVG nodes per subplot that every redraw rebuilt, ~865 of the LSTM page's ~11,000 DOM
# mutations per slider move.
PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2},
                 "showAxisDragHandles": False}

# The projector shows no modebar: it covered chart titles, and a class does not zoom.
PRESENT_CONFIG = {**PLOTLY_CONFIG, "displayModeBar": False}

_frame = threading.local()       # per script thread: is a playing live frame drawing now?


@contextlib.contextmanager
def live_frame(playing: bool) -> Iterator[None]:
    """live/controls.py wraps a frame's `draw` in this: figures drawn while Play is on are
    animation frames (in_playing_frame() is True), the paused picture is the full one."""
    before = getattr(_frame, "playing", False), getattr(_frame, "count", 0)
    _frame.playing, _frame.count = playing, 0
    try:
        yield
    finally:
        _frame.playing, _frame.count = before


@contextlib.contextmanager
def rows_above(px: int) -> Iterator[None]:
    """Figures drawn inside have `px` of controls above them in their column (a live view's
    Play row and status line): classroom mode takes that from their height."""
    before = getattr(_frame, "above", 0)
    _frame.above = before + px
    try:
        yield
    finally:
        _frame.above = before


def present_height(below: int = 0) -> int:
    """Height of a large figure, on the projector and on a laptop alike: from the window's
    height and where the page's first figure starts (ui/viewport.py) when the browser
    reported it, else from the layout's usual header height and the rows_above of this
    frame. `below`: px of what must stay on the first screen under the figure (a metrics
    row: screen.METRIC_ROW_PX)."""
    top = viewport.figure_top()
    if top is not None:
        return screen.present_height(viewport.height(), top - screen.FIGURE_TOP_PX + below)
    header = 0 if session.classroom() else screen.LAPTOP_HEADER_PX
    return screen.present_height(viewport.height(),
                                 header + getattr(_frame, "above", 0) + below)


def in_playing_frame() -> bool:
    return getattr(_frame, "playing", False)


def next_in_frame() -> int:
    """1, 2, 3... for the figures of this live frame, in drawing order (a stable key)."""
    _frame.count = getattr(_frame, "count", 0) + 1
    return _frame.count


# How a playing live frame paints a figure more cheaply than Plotly's SVG: the live runtime
# installs its canvas painter here (live/canvas.py), so this kit never imports the runtime.
# painter(fig, key, clickable) -> True when it drew the figure.
FramePainter = Callable[[go.Figure, "str | None", bool], bool]
_painter: list[FramePainter] = []


def paint_playing_frames_with(painter: FramePainter) -> None:
    _painter[:] = [painter]


def show_figure(fig: go.Figure, *, key: str | None = None, on_select="ignore",
                selection_mode=("points", "box", "lasso"), height: int | None = None):
    """Style `fig` with the shared template (classroom-aware) and draw it.
    Returns what st.plotly_chart returns (the selection state when on_select is set).

    A figure of a playing live frame (in_playing_frame()) is painted on a canvas by
    live/canvas.py when it only uses what the canvas draws: ~4x less browser CPU per frame
    than Plotly's SVG (GAN: 835 -> 185 ms). Pause shows the interactive Plotly figure again;
    a clickable chart (on_select set, e.g. the VAE's latent scatter) says that clicks work
    when paused (under its title, drawn in the canvas; a caption when it has no title) - a
    click on a picture that changes four times a second would pick a point that has moved
    anyway."""
    classroom = session.classroom()
    if height is not None:
        fig.update_layout(height=height)
    elif screen.is_large(fig.layout.height):
        # (a live view's pushed frames get the same height: live/parts.Payload.of)
        fig.update_layout(height=present_height())
    style_figure(fig, classroom)          # after sizing: the title's room follows the height
    if in_playing_frame() and _painter and _painter[0](fig, key, on_select != "ignore"):
        return None
    return st.plotly_chart(fig, key=key, on_select=on_select, selection_mode=selection_mode,
                           theme=None, config=PRESENT_CONFIG if classroom else PLOTLY_CONFIG)




def metrics(items: Sequence[Metric]) -> None:
    """A row of metrics. Paused (or outside a live frame): st.metric in columns, with their
    help tooltips. In a playing frame: the same labels and values as ONE html element.

    Why: a live frame's browser cost grows with the number of Streamlit elements it re-emits
    (each is a React re-render of emotion-styled components), not with pixels. Measured on the
    2-core box (a fragment redrawn every 0.3 s): a row of 5 st.metric cost ~10 ms of Chromium
    CPU per frame, the same row as one st.html ~0 ms above the fragment's ~28 ms base."""
    if not in_playing_frame():
        cols = st.columns(len(items))
        for col, (label, value, *tip) in zip(cols, items):
            col.metric(label, value, help=tip[0] if tip else None)
        return
    st.html(metrics_html(items, session.classroom()))


def explain(markdown: str, title: str = "Explanation") -> None:
    """A paragraph of explanation: shown in full normally, collapsed in classroom mode
    (the teacher talks; the screen shows the figure)."""
    if session.classroom():
        with st.expander(title, expanded=False):
            st.markdown(markdown)
    else:
        st.markdown(markdown)

