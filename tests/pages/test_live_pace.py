"""live/controls.py frame_interval: hosted trainers (process, ray) redraw more often than the
page's interval, inline keeps it; the training pace stays steps-per-frame / page interval."""
from __future__ import annotations

import pytest

from live import controls as live
from live import trainer_session as sessions


@pytest.mark.parametrize("mode", ["process", "ray"])
def test_hosted_frames_come_at_least_three_times_a_second(mode):
    assert live.frame_interval(0.5, mode) == pytest.approx(0.3)
    assert live.frame_interval(0.25, mode) == pytest.approx(0.25)     # a faster page keeps its own
    assert 1.0 / live.frame_interval(live.DEFAULT_INTERVAL_S, mode) >= 3.0


def test_inline_frames_keep_the_pages_interval():
    assert live.frame_interval(0.5, "inline") == 0.5


def test_pace_is_steps_per_frame_over_the_pages_interval(monkeypatch):
    """In process mode the worker is paced to spf / interval_s (the page's), not to the
    shorter redraw interval: a faster redraw must not train faster. (The handle here is an
    inline one standing in for the worker's, so no worker process starts.)"""
    from streamlit.testing.v1 import AppTest

    from live.handle import TrainerHandle
    from live.backends import open_handle

    calls = []
    from live import frame_plan, frame_steps
    for module in (frame_plan, frame_steps):            # the frame's pace and drawing
        monkeypatch.setattr(module, "trainer_mode", lambda: "process")
    monkeypatch.setattr(sessions, "_open", lambda make, cid: open_handle(make, cid, None, "inline"))
    monkeypatch.setattr(TrainerHandle, "set_pace",
                        lambda self, rate, cap=None: calls.append(rate))

    def page():
        import streamlit as st

        from engine.training import TrainerBase
        from live.controls import live_training

        class Counter(TrainerBase):
            def _iteration(self):
                return {"loss": 1.0}

            def snapshot(self):
                return self.steps

        st.session_state["t__playing"] = True
        live_training("t", Counter, lambda view, tick: None, {"x": 1}, steps_per_frame=40,
                      interval_s=0.5)

    AppTest.from_function(page, default_timeout=60).run()
    assert calls and calls[-1] == pytest.approx(40 / 0.5)      # not 40 / 0.3
