"""The browser window's size, for figures that follow the screen (classroom mode).

A tiny component (ui/viewport.js) reports window.innerWidth/innerHeight and the document y
where the page's first large figure starts (whatever lies above it: the header, tabs, a Play
row, a page's own controls), on load and whenever they change; `size()` returns the last
report, or DEFAULT (the projector, 1280x720) until one arrived or when it is implausible,
`figure_top()` the figure's top or None. Heights derived from them live in ui/screen.py.
The top does not depend on the figure's own height, so sizing the figure from it settles
after one rerun."""
from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

DEFAULT = (1280, 720)
KEY = "dlplay_viewport"
_STATE = "_dlplay_viewport_size"
_JS = Path(__file__).with_name("viewport.js")
MIN_HEIGHT = 280        # px: a chart at least this tall counts as a figure (not a strip)


def size() -> tuple[int, int]:
    """(width, height) of the browser window in CSS px; DEFAULT when unknown or absurd."""
    value = st.session_state.get(_STATE)
    try:
        w, h = int(value[0]), int(value[1])
    except (TypeError, ValueError, IndexError):
        return DEFAULT
    return (w, h) if 320 <= w <= 10_000 and 240 <= h <= 10_000 else DEFAULT


def height() -> int:
    return size()[1]


def figure_top() -> int | None:
    """Document y (CSS px) of the open tab's first large figure, None when not reported."""
    value = st.session_state.get(_STATE)
    try:
        top = int(value[2])
    except (TypeError, ValueError, IndexError):
        return None
    return top if 0 < top < size()[1] else None


@functools.lru_cache(maxsize=1)
def _component():
    return st.components.v2.component("dlplay_viewport", js=_JS.read_text(),
                                      isolate_styles=False)


def _reported() -> None:
    """A new size arrived: keep it (the rerun that follows redraws the figures)."""
    reported = getattr(st.session_state.get(KEY), "size", None)
    if reported is not None:
        st.session_state[_STATE] = reported


def watch() -> None:
    """Mount the reporter (hidden by CSS: .st-key-dlplay_viewport)."""
    try:
        known = [*size(), figure_top() or -1]
        result = _component()(key=KEY, data={"known": known, "min_height": MIN_HEIGHT},
                              height="content", on_size_change=_reported)
    except Exception:      # noqa: BLE001 - e.g. a test runner without components: keep DEFAULT
        return
    reported = getattr(result, "size", None)
    if reported is not None and st.session_state.get(_STATE) != reported:
        st.session_state[_STATE] = reported
