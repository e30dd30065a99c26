"""live/ray_workers.py: the handle interface over a Ray actor per trainer, on a local
`ray.init()` (DLPLAY_TRAINERS=ray). Skipped where Ray is not installed (it is optional:
requirements-hosting.txt)."""
from __future__ import annotations

import os
import time

import pytest

ray = pytest.importorskip("ray", reason="ray is optional (pip install -r requirements-hosting.txt)")

from live.handle import TrainerLost  # noqa: E402
from live.backends import open_handle  # noqa: E402
from live.workers import ProcessTrainerHandle  # noqa: E402
from tests.engine.test_workers import SleepyTrainer, _until  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    os.environ.pop("RAY_ADDRESS", None)
    yield
    ray.shutdown()


def test_a_ray_actor_trains_steps_reads_and_pauses(local_ray):
    h = open_handle(lambda: SleepyTrainer(tag="ray"), "cfg", mode="ray")
    assert isinstance(h, ProcessTrainerHandle) and h.trainer is None
    view = h.view(timeout=120)
    assert view.steps == 0 and view.snapshot() == {"steps": 0, "tag": "ray"}
    assert h.step(25).steps_done == 25 and h.view().steps == 25
    assert h.read(lambda tr: os.getpid()) != os.getpid()          # it lives in the actor
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        h.read(lambda tr: 1 / 0)
    h.set_pace(float("inf"))
    h.play()
    assert _until(lambda: h.view().steps > 100, 30)                # trains between frames
    h.pause()
    paused_at = h.view().steps                                      # commands run in order
    time.sleep(0.4)
    assert h.view().steps == paused_at == h.read(lambda tr: tr.steps)
    h.close()
    assert h.view().error is not None
    with pytest.raises(TrainerLost):
        h.step(1)


def test_a_live_page_runs_on_ray(local_ray, monkeypatch):
    """DLPLAY_TRAINERS=ray through live/controls.py: the harness page steps and plays on an actor."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("DLPLAY_TRAINERS", "ray")
    harness = Path(__file__).resolve().parents[1] / "pages" / "harness_widgets.py"
    at = AppTest.from_file(str(harness), default_timeout=120)
    at.run()
    handle = at.session_state["h__handle"]
    assert isinstance(handle, ProcessTrainerHandle) and not at.exception
    at.button(key="h__step").click().run()
    assert "steps=25" in " ".join(m.value for m in at.markdown)
    at.button(key="h__play").click().run()
    assert _until(lambda: handle.read(lambda tr: tr.steps) > 25, 30)   # trains between runs
    at.button(key="h__play").click().run()
    assert not at.exception and not handle.playing
    handle.close()
