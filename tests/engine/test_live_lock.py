"""live.handle.TrainerHandle: one writer per trainer, Pause within one chunk, busy ticks
skip, and engine.training.run_for's stop flag / time-sized chunks."""
from __future__ import annotations

import threading
import time


from engine.datasets import make_dataset
from live.handle import TrainerBusy, TrainerHandle
from engine.training import MLPClassifierTrainer, run_for


def _mlp(seed: int = 0) -> MLPClassifierTrainer:
    d = make_dataset("circles", 200, seed=0, noise=0.05)
    return MLPClassifierTrainer(d.points, d.labels, hidden=16, lr=0.5, seed=seed)


class SlowTrainer:
    """Protocol trainer whose step takes `dt` seconds each, counting calls (for timing)."""

    def __init__(self, dt: float = 0.002):
        self.dt, self.steps, self.diverged_at, self.calls = dt, 0, None, []

    def step(self, n: int = 1) -> dict:
        self.calls.append(n)
        time.sleep(self.dt * n)
        self.steps += n
        return {"loss": 1.0}

    def snapshot(self):
        return self.steps

    def state_dict(self):
        return {"steps": self.steps}

    def load_state_dict(self, state):
        self.steps = state["steps"]


def test_run_for_stop_flag_is_checked_before_every_chunk():
    t = _mlp()
    calls = []
    tick = run_for(t, 100, budget_s=10.0, chunk=10, stop=lambda: len(calls.append(1) or calls) > 3)
    assert tick.steps_done == 30 and t.steps == 30        # three chunks, then the flag
    assert run_for(t, 100, stop=lambda: True).steps_done == 0


def test_run_for_sizes_chunks_by_time():
    t = SlowTrainer(dt=0.002)
    tick = run_for(t, 200, budget_s=10.0, chunk_s=0.02)
    assert tick.steps_done == 200 and t.calls[0] == 1     # the first chunk probes the speed
    assert max(t.calls) <= 12 and max(t.calls[2:]) >= 6   # then ~0.02 s / 0.002 s = 10 steps
    # without chunk_s the old rule holds: max_steps // 20 per chunk
    t2 = SlowTrainer(dt=0.0)
    run_for(t2, 200, budget_s=10.0)
    assert set(t2.calls) == {10}


def test_pause_lands_within_one_chunk():
    """A tick in another thread stops at most one chunk (~25 ms) after pause()."""
    h = TrainerHandle(SlowTrainer(dt=0.005))
    h.play()
    epoch = h.claim()
    result = {}
    th = threading.Thread(target=lambda: result.update(tick=h.tick(10_000, 60.0, epoch)))
    th.start()
    time.sleep(0.3)
    at_pause = h.trainer.steps
    t0 = time.perf_counter()
    h.pause()
    th.join(5)
    assert time.perf_counter() - t0 < 0.1                 # released within one chunk
    after = h.trainer.steps - at_pause
    assert after <= max(h.trainer.calls)                  # at most the chunk in flight
    assert max(h.trainer.calls) * 0.005 <= 0.06           # and a chunk is <= ~50 ms
    assert result["tick"].steps_done == h.trainer.steps


def test_a_newer_run_stops_an_older_runs_tick_but_not_a_step():
    h = TrainerHandle(SlowTrainer(dt=0.002))
    h.play()
    old = h.claim()
    th = threading.Thread(target=h.tick, args=(10_000, 60.0, old))
    th.start()
    time.sleep(0.1)
    h.claim()                                             # a new script run takes over
    th.join(2)
    assert not th.is_alive()
    h.pause()
    before = h.trainer.steps
    h.claim()
    assert h.step(137).steps_done == 137 and h.trainer.steps == before + 137


def test_busy_tick_skips_without_waiting():
    h = TrainerHandle(SlowTrainer())
    h.play()
    with h.locked() as tr:
        assert h.busy and h.tick(10, 1.0, h.claim()) is None   # skipped, no wait
        assert tr.steps == 0
    assert h.tick(10, 1.0, h.claim()).steps_done == 10


def test_locked_is_reentrant_in_its_thread_only():
    h = TrainerHandle(SlowTrainer())
    outcome = []

    def other_thread():
        try:
            h.read(lambda t: t.snapshot(), timeout=0.05)
            outcome.append("read")
        except TrainerBusy:
            outcome.append("busy")

    with h.locked():
        assert h.read(lambda t: t.snapshot(), timeout=0.05) == 0     # same thread: no wait
        th = threading.Thread(target=other_thread)
        th.start()
        th.join(2)
        assert h.busy
    assert outcome == ["busy"] and not h.busy and h.read(lambda t: t.steps) == 0


def test_cancel_stops_steps_and_play():
    h = TrainerHandle(SlowTrainer(dt=0.002))
    th = threading.Thread(target=h.step, args=(5000,))
    th.start()
    time.sleep(0.1)
    h.cancel()
    th.join(2)
    assert not th.is_alive() and h.trainer.steps < 5000
    h.play()
    assert not h.playing                                   # a cancelled handle stays paused
