"""A trainer busy past the page's wait (TrainerBusy) is a status line, never a traceback: in
the live-training fragment and in page code that reads a trainer (live/busy.py)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def _page_reading_a_busy_trainer():
    import streamlit as st
    from live.busy import run_page
    from live.handle import TrainerBusy

    def page():
        st.markdown("drawn before the read")
        if st.session_state.get("busy", True):
            raise TrainerBusy("the trainer's worker did not answer within 30 s")
        st.markdown("the export")

    run_page(page)


def _fragment_drawing_a_busy_trainer():
    import streamlit as st
    from live.busy import busy_frame
    from live.handle import TrainerBusy

    @st.fragment
    def frame():
        with busy_frame():
            st.markdown("status")
            raise TrainerBusy("the trainer's worker did not answer within 30 s")

    frame()
    st.markdown("below the fragment")


def test_a_busy_trainer_in_page_code_is_a_status_line_and_the_page_retries():
    from live import busy
    at = AppTest.from_function(_page_reading_a_busy_trainer, default_timeout=30)
    at.run()
    assert not at.exception
    assert [i.value for i in at.info] == [busy.PAGE_BUSY]
    assert [m.value for m in at.markdown] == ["drawn before the read"]
    assert at.session_state[busy._TRIES_KEY] == 1
    for _ in range(busy.RETRIES):                 # still busy: it gives up asking by itself
        at.run()
    assert not at.exception and [w.value for w in at.warning] == [busy.PAGE_GAVE_UP]
    at.session_state["busy"] = False              # the server caught up
    at.run()
    assert not at.exception and not at.info and not at.warning
    assert [m.value for m in at.markdown] == ["drawn before the read", "the export"]
    assert busy._TRIES_KEY not in at.session_state


def test_a_busy_trainer_in_the_live_fragment_is_a_status_line():
    from live import busy
    at = AppTest.from_function(_fragment_drawing_a_busy_trainer, default_timeout=30)
    at.run()
    assert not at.exception
    assert [i.value for i in at.info] == [busy.FRAME_BUSY]
    assert [m.value for m in at.markdown] == ["status", "below the fragment"]


def _view_reading_a_busy_trainer():
    import streamlit as st
    from live.handle import TrainerBusy
    from ui.page import user_errors
    with user_errors("draw the samples view"):
        raise TrainerBusy("the trainer's worker did not answer within 30 s")
    with user_errors("draw the loss view"):
        raise ValueError("a real fault")
    st.markdown("the page goes on")


def test_a_busy_trainer_in_a_topic_view_is_a_status_line_and_a_fault_stays_an_error(caplog):
    from live.handle import TrainerBusy
    at = AppTest.from_function(_view_reading_a_busy_trainer, default_timeout=30)
    with caplog.at_level("WARNING"):
        at.run()
    assert not at.exception
    assert [i.value for i in at.info] == [TrainerBusy.user_status]
    assert [e.value for e in at.error] == ["Could not draw the loss view: a real fault"]
    assert [m.value for m in at.markdown] == ["the page goes on"]


def test_the_app_and_the_live_fragment_use_them():
    assert "run_page(navigation.run)" in (ROOT / "playground.py").read_text()
    assert "with busy_frame():" in (ROOT / "live" / "controls.py").read_text()
