"""live/frame_plan.py + live/budget.py: a playing live fragment's redraw interval follows the
server's frame budget, and a frame asks for a page rerun when the class size moved it."""
from __future__ import annotations

import pytest

import live.frame_plan as live
import live.trainer_session as sessions
from live.budget import FrameBudget


@pytest.fixture
def budget(monkeypatch):
    b = FrameBudget(fps=10.0)
    monkeypatch.setattr(live, "BUDGET", b)
    monkeypatch.setenv("DLPLAY_TRAINERS", "process")
    return b


def test_one_student_redraws_at_the_page_interval(budget):
    every, base = live._redraw_interval("gan", 0.25, playing=True)
    assert (every, base) == (0.25, 0.25)
    assert budget.playing() == 1


def test_a_full_class_stretches_the_interval_and_pause_stops_counting(budget):
    for i in range(7):
        budget.seen((f"other-{i}", "gan"))
    every, base = live._redraw_interval("gan", 0.5, playing=True)
    assert base == live.HOSTED_INTERVAL_S                   # process mode: 0.3 s asked
    assert every == pytest.approx(0.8)                      # 8 playing / 10 frames/s
    assert live._redraw_interval("gan", 0.5, playing=False) == (None, live.HOSTED_INTERVAL_S)
    assert budget.playing() == 7                            # paused: no longer counted


def test_a_frame_asks_for_a_rerun_only_when_the_class_moved_its_interval(budget):
    every, base = live._redraw_interval("vae", 0.5, playing=True)
    assert not live._budget_says_rerun("vae", every, base)
    for i in range(2):
        budget.seen((f"other-{i}", "gan"))
    assert not live._budget_says_rerun("vae", every, base)  # 3 / 10 = 0.3 s: as asked
    budget.seen(("other-2", "gan"))
    assert live._budget_says_rerun("vae", every, base)      # 4 / 10 = 0.4 s: 1.33x off
    every = budget.interval(base)                           # the page reran at 0.4 s
    assert not live._budget_says_rerun("vae", every, base)
    for i in range(3, 9):
        budget.seen((f"other-{i}", "gan"))
    assert live._budget_says_rerun("vae", every, base)      # 10 playing: 1.0 s wanted


def test_live_training_hands_the_budgets_interval_to_its_fragment(budget, monkeypatch):
    """The wiring, not only the helpers: a playing live page's fragment gets run_every =
    playing / fps from the budget (9 other students + this page = 10 -> 1.0 s), and the
    page counts itself; paused, no timer at all and it no longer counts."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest import record_run_every

    from live.handle import TrainerHandle
    from live.backends import open_handle

    asked = record_run_every(monkeypatch)
    monkeypatch.setattr(sessions, "_open", lambda make, cid: open_handle(make, cid, None, "inline"))
    monkeypatch.setattr(TrainerHandle, "set_pace", lambda self, rate, cap=None: None)
    for i in range(9):
        budget.seen((f"other-{i}", "gan"))

    def page(playing: bool):
        import streamlit as st

        from engine.training import TrainerBase
        from live.controls import live_training

        class Counter(TrainerBase):
            def _iteration(self):
                return {"loss": 1.0}

            def snapshot(self):
                return self.steps

        st.session_state["t__playing"] = playing
        live_training("t", Counter, lambda view, tick: None, {"x": 1}, interval_s=0.5)

    at = AppTest.from_function(page, args=(True,), default_timeout=60)
    at.run().run()                          # the first run builds the trainer (paused)
    assert asked[-1] == pytest.approx(1.0) and budget.playing() == 10
    AppTest.from_function(page, args=(False,), default_timeout=60).run()
    assert asked[-1] is None and budget.playing() == 9
