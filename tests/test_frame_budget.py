"""live/budget.py: the server-wide redraw budget of live fragments."""
from __future__ import annotations

import pytest

from live.budget import FPS, HYSTERESIS, STALE_S, FrameBudget, budget_fps


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _budget(fps: float = 10.0) -> tuple[FrameBudget, Clock]:
    clock = Clock()
    return FrameBudget(fps=fps, clock=clock), clock


def test_interval_is_the_page_interval_until_the_class_outgrows_the_budget():
    b, _ = _budget(fps=10.0)
    assert b.interval(0.3) == 0.3                       # nobody playing
    for i in range(3):
        b.seen(("s", i))
    assert b.playing() == 3 and b.interval(0.3) == 0.3  # 3 / 10 = 0.3 s: still the page's
    for i in range(3, 8):
        b.seen(("s", i))
    assert b.playing() == 8
    assert b.interval(0.3) == pytest.approx(0.8)        # 8 students -> 10 frames/s together
    assert 8 / b.interval(0.3) == pytest.approx(10.0)


def test_one_session_on_two_pages_counts_twice_and_the_same_page_once():
    b, _ = _budget()
    b.seen(("alice", "gan"))
    b.seen(("alice", "gan"))
    b.seen(("alice", "vae"))
    assert b.playing() == 2


def test_paused_and_silent_fragments_stop_counting():
    b, clock = _budget(fps=2.0)
    for i in range(4):
        b.seen(i)
    assert b.interval(0.25) == pytest.approx(2.0)
    b.gone(0)                                           # Pause / Reset
    assert b.playing() == 3
    clock.t += STALE_S / 2
    b.seen(1)                                           # still drawing
    clock.t += STALE_S / 2 + 0.1                        # 2 and 3: tab closed, no frame since
    assert b.playing() == 1
    assert b.interval(0.25) == pytest.approx(0.5)


def test_a_fragment_is_rerun_only_when_its_interval_is_off_by_the_hysteresis():
    b, _ = _budget(fps=10.0)
    for i in range(4):
        b.seen(i)                                       # wanted 0.4 s
    assert not b.off_by(0.4, 0.3)
    assert not b.off_by(0.4 * (HYSTERESIS - 0.05), 0.3)
    assert b.off_by(0.4 * HYSTERESIS, 0.3)              # too slow: the class got smaller
    assert b.off_by(0.4 / HYSTERESIS, 0.3)              # too fast: the class grew
    for i in range(4, 8):
        b.seen(i)                                       # wanted 0.8 s
    assert b.off_by(0.4, 0.3)


def test_no_budget_keeps_every_page_interval():
    b, _ = _budget(fps=0.0)
    for i in range(50):
        b.seen(i)
    assert b.interval(0.25) == 0.25 and not b.off_by(0.25, 0.25)


@pytest.mark.parametrize("raw, fps", [("", FPS), ("4", 4.0), ("0", 0.0), ("-2", 0.0),
                                      ("lots", FPS), ("nan", 0.0), ("inf", 0.0)])
def test_budget_setting_parses_and_bad_values_fall_back(raw, fps):
    assert budget_fps({"DLPLAY_FRAME_BUDGET": raw}) == fps
