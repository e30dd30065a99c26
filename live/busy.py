"""A trainer that stays busy longer than a page waits for it (TrainerBusy: its worker is
loaded with a class's training) is a status line in the page, never a traceback.

Three places catch it: the live-training fragment (live/controls.py), whose next update asks
again; a topic page's view (ui/page.py's user_errors shows TrainerBusy.user_status in place
of the view's error); and the page as a whole (playground.py), for other page code that
reads a trainer (read_trainer for an export or a figure): the page shows what it drew so far
and the status line, and runs again by itself after RETRY_S, at most RETRIES times in a row.
The server log gets one warning line, no traceback.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Callable, Iterator

import streamlit as st

from live.handle import TrainerBusy

FRAME_BUSY = "The class server is busy; the figure is drawn again on its next update."
PAGE_BUSY = "The class server is busy; this page tries again in a few seconds."
PAGE_GAVE_UP = ("The class server is still busy; reload the page or change a control to try "
                "again.")
RETRY_S = 5.0
RETRIES = 6
_TRIES_KEY = "_dlplay_busy_tries"
ICON = ":material/hourglass:"
log = logging.getLogger(__name__)


@contextlib.contextmanager
def busy_frame() -> Iterator[None]:
    """The fragment's body: TrainerBusy becomes FRAME_BUSY."""
    try:
        yield
    except TrainerBusy as exc:
        log.warning("a live frame waited for its trainer in vain: %s", exc)
        st.info(FRAME_BUSY, icon=ICON)


def run_page(run: Callable[[], None]) -> None:
    """run() (the page); TrainerBusy becomes PAGE_BUSY and a rerun of the page after RETRY_S
    (PAGE_GAVE_UP after RETRIES tries in a row). A page that completes resets the count."""
    state = st.session_state
    try:
        run()
    except TrainerBusy as exc:
        log.warning("a page waited for its trainer in vain: %s", exc)
        tries = state.get(_TRIES_KEY, 0) + 1
        state[_TRIES_KEY] = tries
        if tries > RETRIES:
            st.warning(PAGE_GAVE_UP, icon=ICON)
            return
        st.info(PAGE_BUSY, icon=ICON)
        _rerun_after(RETRY_S)
        return
    state.pop(_TRIES_KEY, None)


def _rerun_after(seconds: float) -> None:
    """A rerun of the whole page in `seconds`: a fragment's timer, whose first timed run
    asks for it (its run inside this page run does nothing)."""
    first = [True]

    @st.fragment(run_every=seconds)
    def retry() -> None:
        if first[0]:
            first[0] = False
            return
        st.rerun(scope="app")

    retry()
