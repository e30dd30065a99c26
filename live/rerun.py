"""When a live panel reruns the whole page instead of only its fragment: the one rule.

A live panel's fragment reruns by itself (its timer, its own widgets). The whole page reruns
when what the fragment changed is drawn outside it: the buttons' labels after Play, Pause,
Step or Reset (`whole_page`), widgets above the figure set by a callback inside the frame
(`rerun_page`), and the frame steps that change what the page shows (live/frame_steps.py:
the run ended, Pause reached the frame route, the frame budget moved the redraw interval,
the first picture of a worker-hosted trainer arrived). Each is an st.rerun(scope="app"),
never a second rerun of the fragment."""
from __future__ import annotations

import functools
from typing import Any, Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx


def rerun_page(callback: Callable[..., Any]) -> Callable[..., None]:
    """`callback`, then a rerun of the whole page instead of only the fragment.

    For a widget drawn inside the live-training fragment (e.g. a plotly chart's on_select)
    whose callback writes session state that widgets outside the fragment display. Without it
    Streamlit reruns only the fragment and those widgets keep showing their old values.
    Callbacks run before the script, so st.rerun(scope="app") raised here replaces the
    fragment run by one full run (no run is spent twice)."""
    @functools.wraps(callback)
    def _then_rerun(*args: Any, **kwargs: Any) -> None:
        callback(*args, **kwargs)
        st.rerun(scope="app")
    return _then_rerun


def whole_page(callback: Callable[..., Any]) -> Callable[..., None]:
    """`callback`, then a full rerun if this run is only a fragment's. The browser sends a
    click on Play/Pause/Step/Reset along with a live fragment's timed rerun when both are
    due together (measured in Chromium: 1 click in ~8 during play); the callback then ran in
    the fragment run and the buttons outside it kept their old labels."""
    @functools.wraps(callback)
    def _then_rerun(*args: Any, **kwargs: Any) -> None:
        callback(*args, **kwargs)
        ctx = get_script_run_ctx()
        if ctx is not None and getattr(ctx, "fragment_ids_this_run", None):
            st.rerun(scope="app")
    return _then_rerun
