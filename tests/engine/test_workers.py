"""live/workers.py: trainers in worker processes behind ProcessTrainerHandle - step and
reply, Pause lands, fair round-robin across trainers, pace, read(fn), a killed worker is
restarted and its trainers say so, freed trainers (finalizer, janitor), fallbacks."""
from __future__ import annotations

import gc
import logging
import os
import signal
import threading
import time

import cloudpickle
import pytest

from engine.training import History
from live.handle import TrainerElsewhere, TrainerHandle, TrainerLost, TrainerView
from live.backends import open_handle
from live.workers import RELEASED, WORKER_STOPPED, ProcessTrainerHandle, WorkerPool


class SleepyTrainer:
    """Protocol trainer whose step sleeps `dt` s per iteration (timing-stable under load)."""

    def __init__(self, dt: float = 0.002, tag: str = ""):
        self.dt, self.tag, self.steps, self.diverged_at = dt, tag, 0, None
        self.history = History()

    def step(self, n: int = 1) -> dict:
        time.sleep(self.dt * n)
        self.steps += n
        metrics = {"loss": 1.0 / (1 + self.steps)}
        self.history.log(self.steps, metrics)
        return metrics

    def snapshot(self):
        return {"steps": self.steps, "tag": self.tag}

    def state_dict(self):
        return {"steps": self.steps}

    def load_state_dict(self, state):
        self.steps = state["steps"]


def _count_sleepy(_trainer) -> int:
    """Run in a worker: how many SleepyTrainer objects it still holds."""
    gc.collect()
    return sum(type(o).__name__ == "SleepyTrainer" for o in gc.get_objects())


def _failing_factory():
    raise ValueError("width must be positive")


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(size=1)
    yield p
    p.shutdown()


def _open(pool: WorkerPool, dt: float = 0.002, tag: str = "", session: str | None = None):
    link = pool.create(cloudpickle.dumps(lambda: SleepyTrainer(dt, tag)), session)
    h = ProcessTrainerHandle(link)
    h.view(timeout=120)                  # the first view: the worker is up
    return h


def _until(predicate, timeout: float = 20.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_step_replies_with_exactly_n_and_the_next_view_shows_it(pool):
    h = _open(pool, tag="a")
    tick = h.step(25)
    assert tick.steps_done == 25
    view = h.view()
    assert isinstance(view, TrainerView) and view.steps == 25 and view.error is None
    assert view.snapshot() == {"steps": 25, "tag": "a"}
    assert view.history.last("loss") == pytest.approx(1 / 26)
    assert h.read(lambda tr: (tr.steps, tr.tag)) == (25, "a")        # fn runs in the worker
    assert h.read(lambda tr: os.getpid()) != os.getpid()
    t0 = time.monotonic()
    assert h.view().steps == 25 and time.monotonic() - t0 < 1.0   # a read needs no new view
    assert h.read(lambda tr: tr.step(2) and None) is None          # a read that trains...
    assert h.view().steps == 27                                    # ...does publish one
    h.close()


def test_play_trains_between_frames_and_pause_lands(pool):
    h = _open(pool)
    h.set_pace(float("inf"))
    h.play()
    assert _until(lambda: h.view().steps > 50)          # no frame asked: it trains anyway
    h.pause()
    paused_at = h.view().steps                          # the view after Pause has seen it
    time.sleep(0.5)
    assert h.view().steps == paused_at == h.read(lambda tr: tr.steps)
    tick = h.tick(0, 0.0, h.claim())
    assert tick.steps_done == paused_at and tick.seconds > 0
    assert h.tick(0, 0.0, h.claim()).steps_done == 0    # nothing new since that frame
    h.close()


def test_three_playing_trainers_share_one_worker_fairly(pool):
    hs = [_open(pool, tag=str(i)) for i in range(3)]
    for h in hs:
        h.set_pace(float("inf"))
    starts = [h.view().steps for h in hs]
    for h in hs:
        h.play()
    time.sleep(2.0)
    for h in hs:
        h.pause()
    done = [h.view().steps - s for h, s in zip(hs, starts)]
    assert min(done) > 30, done
    assert min(done) >= 0.6 * max(done), done            # round-robin: ~equal shares
    for h in hs:
        h.close()


def test_pace_limits_iterations_per_second(pool):
    h = _open(pool, dt=0.0005)
    h.set_pace(40.0)
    t0 = time.monotonic()
    h.play()
    time.sleep(1.5)
    h.pause()
    elapsed = time.monotonic() - t0
    steps = h.view().steps
    assert 5 <= steps <= 40 * elapsed + 40 + 5, steps   # at most rate * t + one burst
    h.set_pace(40.0, 60)                                # a cap: it stops there by itself
    h.play()
    assert _until(lambda: h.view().steps >= min(60, steps + 1))
    time.sleep(2.0)
    assert h.view().steps == max(60, steps)
    h.close()


def test_read_errors_are_clear(pool):
    h = _open(pool)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        h.read(lambda tr: 1 / 0)
    lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot be sent to the training worker"):
        h.read(lambda tr: lock.locked())
    with pytest.raises(TrainerElsewhere, match="read_trainer"):
        with h.locked():
            pass
    assert h.read(lambda tr: tr.steps) == 0              # still fine afterwards
    h.close()


def test_a_factory_that_raises_gives_an_error_view(pool):
    h = ProcessTrainerHandle(pool.create(cloudpickle.dumps(_failing_factory)))
    view = h.view(timeout=120)
    assert view.error is not None and "width must be positive" in view.error


def test_dropped_and_closed_handles_free_their_trainers(pool):
    probe = _open(pool, tag="probe")
    base = probe.read(_count_sleepy)
    h1, h2 = _open(pool), _open(pool)
    assert probe.read(_count_sleepy) == base + 2
    h1.close()                                           # Reset / new settings
    del h2                                               # the session state dropped it
    gc.collect()
    assert _until(lambda: probe.read(_count_sleepy) == base, 10)
    with pytest.raises(TrainerLost):
        h1.step(1)
    probe.close()


def test_janitor_frees_trainers_of_gone_sessions_after_the_lease(pool):
    alive = {"s1": True, "s2": True}
    pool.session_alive = lambda sid: alive[sid]
    try:
        a, b = _open(pool, session="s1"), _open(pool, session="s2")
        assert pool.sweep(now=0.0, lease=30) == 0
        alive["s2"] = False                               # tab closed
        assert pool.sweep(now=1.0, lease=30) == 0       # within its lease
        assert pool.sweep(now=20.0, lease=30) == 0
        assert pool.sweep(now=31.5, lease=30) == 1      # gone for 30.5 s: released
        assert b.view().error == RELEASED and a.view().error is None
        assert a.step(3).steps_done == 3
        a.close()
    finally:
        pool.session_alive = None


def test_a_killed_worker_is_restarted_and_its_trainers_resume_from_their_checkpoints(
        monkeypatch):
    """SIGKILL the worker while two trainers play: both continue on a new worker from >= 90%
    of their iterations, still playing, the view says so; a paused one resumes exactly where
    it was (Pause and Step checkpoint at once)."""
    monkeypatch.setenv("DLPLAY_CHECKPOINT_S", "0.3")
    pool = WorkerPool(size=1)
    try:
        a, b, c = _open(pool, tag="a"), _open(pool, tag="b"), _open(pool, tag="c")
        c.step(17)                                             # paused at 17
        for h in (a, b):
            h.set_pace(400.0)
            h.play()
        assert _until(lambda: min(a.steps, b.steps) >= 1500, timeout=60)
        pid = a.read(lambda tr: os.getpid())
        before = {h: h.view().steps for h in (a, b)}
        os.kill(pid, signal.SIGKILL)
        assert _until(lambda: a.view().notice is not None and b.view().notice is not None)
        for h in (a, b):
            assert h.error is None and h.playing
            assert _until(lambda h=h: h.view().steps > before[h])   # playing again
            resumed_from = int(h.view().notice.rsplit(" ", 1)[-1].rstrip(".").replace(",", ""))
            assert resumed_from >= 0.9 * before[h], (resumed_from, before[h])
            assert h.view().notice == f"The training worker restarted; resumed from " \
                                      f"iteration {resumed_from:,}."
        assert c.view(timeout=5).steps == 17 and c.step(3).steps_done == 3
        assert c.read(lambda tr: (tr.steps, tr.tag, os.getpid()))[:2] == (20, "c")
        assert a.read(lambda tr: os.getpid()) != pid
        assert a.read(lambda tr: len(tr.history.steps)) > 0    # its history came along
    finally:
        pool.shutdown()


def test_a_trainer_that_keeps_killing_its_worker_is_given_up():
    """A trainer whose worker dies MAX_RESUMES + 1 times in a row (no newer checkpoint between)
    says WORKER_STOPPED, Play is off, and Reset (a new trainer) works."""
    from live.worker_link import MAX_RESUMES
    pool = WorkerPool(size=1)
    try:
        h = _open(pool)
        h.step(5)
        pids = set()
        for _ in range(MAX_RESUMES + 1):
            assert _until(lambda: h.error is not None or h.view().steps == 5)
            if h.error is not None:
                break
            pid = h.read(lambda tr: os.getpid(), timeout=60)
            pids.add(pid)
            os.kill(pid, signal.SIGKILL)
            assert _until(lambda: pool.workers[0] is None or pool.workers[0].pid != pid)
        assert _until(lambda: h.view().error == WORKER_STOPPED)
        assert len(pids) == MAX_RESUMES + 1              # resumed MAX_RESUMES times
        with pytest.raises(TrainerLost):
            h.step(1)
        h.play()
        assert not h.playing                                   # Play is off; Reset is the way
        fresh = _open(pool)
        assert fresh.step(7).steps_done == 7
    finally:
        pool.shutdown()


class LockedTrainer(SleepyTrainer):
    """A trainer that cannot be pickled (it holds a lock)."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()


def test_open_handle_modes_and_the_unpicklable_fallbacks(caplog):
    lock = threading.Lock()
    inline = open_handle(lambda: SleepyTrainer(), "cfg", mode="inline")
    assert isinstance(inline, TrainerHandle) and inline.config_id == "cfg"
    with caplog.at_level(logging.WARNING, logger="live.workers"):
        # the factory cannot cross (it closes over a lock): the trainer built here does
        shipped = open_handle(lambda: SleepyTrainer(tag=str(lock.locked())), mode="process")
        assert isinstance(shipped, ProcessTrainerHandle)
        assert "built here, the trainer" in caplog.text
        assert shipped.view(timeout=120).snapshot() == {"steps": 0, "tag": "False"}
        assert shipped.step(4).steps_done == 4
        shipped.close()
        # neither the factory nor its trainer can cross: it stays inline
        inline2 = open_handle(lambda: LockedTrainer() if lock else None, mode="process")
    assert isinstance(inline2, TrainerHandle) and isinstance(inline2.trainer, LockedTrainer)
    assert "training it in the web process" in caplog.text


def test_workers_run_at_a_lower_cpu_priority_than_the_web_process(pool):
    """Training yields the CPU to slider moves and frames: each worker's nice value is the web
    process's + DLPLAY_WORKER_NICE (default 5), read from the kernel, not from our own code."""
    from live.worker_loop import NICE
    _open(pool, tag="nice")
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    pids = pool.pids()
    assert pids
    for pid in pids:
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, ours + NICE)


@pytest.mark.parametrize("raw, expected", [("", 5), ("0", 0), ("12", 12), ("40", 19), ("-3", 0),
                                           ("fast", 5)])
def test_worker_nice_setting_is_clamped_and_bad_values_fall_back(raw, expected):
    from live.worker_loop import worker_nice
    assert worker_nice({"DLPLAY_WORKER_NICE": raw}) == expected


class SlowSnapshotTrainer(SleepyTrainer):
    """Its snapshot costs 0.1 s (the adversarial page's robustness curve costs ~1 s)."""

    def snapshot(self):
        time.sleep(0.1)
        return {"steps": self.steps, "taken": time.monotonic()}


def test_a_costly_snapshot_does_not_freeze_the_views_steps(pool):
    """While training, views go out every publish_s with the iteration count and history
    moving; the costly snapshot is refreshed only every ~10x its cost (here ~1 s) and
    carried over in between. A command (Pause) publishes a fresh one."""
    link = pool.create(cloudpickle.dumps(lambda: SlowSnapshotTrainer(0.002)))
    h = ProcessTrainerHandle(link)
    h.view(timeout=120)
    h.set_pace(float("inf"))
    h.play()
    seen = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < 3.0:
        v = h.link.latest()
        if v is not None and (not seen or v.steps != seen[-1][0]):
            seen.append((v.steps, v.snapshot()["taken"], len(v.history.values.get("loss", []))))
        time.sleep(0.02)
    h.pause()
    assert len(seen) >= 8, seen                     # views every ~0.15 s, not every ~1 s
    snaps = {taken for _, taken, _ in seen}
    assert 2 <= len(snaps) <= 6, len(snaps)         # fresh snapshots about once a second
    assert seen[-1][2] > seen[0][2]                 # the history grew between snapshots
    final = h.view()
    assert final.snapshot()["steps"] == final.steps  # Pause: a fresh snapshot
    h.close()
