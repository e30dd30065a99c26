"""engine/ray_workers.py: the handle interface over a Ray actor per trainer, on a local
`ray.init()` (DLPLAY_TRAINERS=ray). Skipped where Ray is not installed (it is optional:
requirements-hosting.txt)."""
from __future__ import annotations

import os
import time

import pytest

ray = pytest.importorskip("ray", reason="ray is optional (pip install -r requirements-hosting.txt)")

from engine.handle import TrainerLost  # noqa: E402
from engine.workers import ProcessTrainerHandle, open_handle  # noqa: E402
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
