"""live/controls.py is single-writer: two threads (two script runs of one session, as Streamlit's
fastReruns produces them) drive one GAN through the page's own code path (handle_for /
press_* / advance / draw under the lock) 500 times in random order; plus the harness page
under AppTest (Pause stops, Step adds exactly steps-per-frame)."""
from __future__ import annotations

import random
import threading
from collections import defaultdict
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from engine.gan import GANTrainer, make_target
from live import controls as live
from live.handle import TrainerHandle

KEY, SPF, BUDGET_S = "gan", 8, 0.03
HARNESS = str(Path(__file__).with_name("harness_widgets.py"))


class GuardedGAN(GANTrainer):
    """A small GAN that records any overlap of step() / snapshot() calls."""

    overlaps = 0

    def __init__(self, *args, **kwargs):
        self._guard = threading.Lock()      # per trainer: two trainers may train at once
        super().__init__(*args, **kwargs)

    def _enter(self) -> None:
        if not self._guard.acquire(blocking=False):
            type(self).overlaps += 1
            self._guard.acquire()

    def step(self, n=1, part="both"):
        self._enter()
        try:
            return super().step(n, part)
        finally:
            self._guard.release()

    def snapshot(self, res=12, n_arrows=20):
        self._enter()
        try:
            return super().snapshot(res=res, n_arrows=n_arrows)
        finally:
            self._guard.release()


TARGET = make_target("ring of 8", std=0.05, seed=0)


def _make() -> GuardedGAN:
    return GuardedGAN(TARGET, g_hidden=(32, 32), d_hidden=(32, 32), batch_size=64, seed=0,
                      device="cpu", eval_n=200)


class Session:
    """One browser session: a shared session-state dict and the bookkeeping of the test."""

    def __init__(self):
        self.state: dict = {}
        self.done = defaultdict(int)          # id(trainer) -> iterations the page reported
        self.alive: dict[int, object] = {}    # id -> trainer, kept so that no id is reused
        self.book = threading.Lock()
        self.errors: list[str] = []

    def full_run(self, epochs: dict) -> None:
        """What live_training does on a full script run, then its fragment body."""
        handle = live.handle_for(self.state, KEY, _make, {"seed": 0})
        epochs[threading.get_ident()] = (handle, handle.claim())
        playing = bool(self.state.get(f"{KEY}__playing"))
        if playing != handle.playing:
            handle.play() if playing else handle.pause()
        self.fragment(epochs)

    def fragment(self, epochs: dict) -> None:
        """The fragment body: advance, then draw (snapshot) under the lock."""
        handle, epoch = epochs.get(threading.get_ident(), (None, 0))
        if handle is None:
            return
        before = handle.trainer.steps
        pending = bool(self.state.get(f"{KEY}__pending_step"))
        # the other thread may press Play and Pause around this advance: a frame that started
        # playing makes a time-budgeted tick, not the pending Step's exact count
        was_playing = handle.playing
        tick, _ = live.advance(self.state, KEY, handle, epoch, SPF, BUDGET_S)
        if tick is not None:
            with self.book:
                # a trainer dropped by Reset could free its id for the next one: keep it
                self.alive[id(handle.trainer)] = handle.trainer
                self.done[id(handle.trainer)] += tick.steps_done
            if pending and not was_playing and not handle.playing and not handle.cancelled \
                    and tick.steps_done != SPF:
                self.errors.append(f"Step added {tick.steps_done}, not {SPF}")
        with handle.locked() as tr:
            snap = tr.snapshot()
            if snap.step != tr.steps or tr.steps < before:
                self.errors.append(f"snapshot at {snap.step}, trainer at {tr.steps}")


def _drive(session: Session, seed: int, n_ops: int, failures: list) -> None:
    rng = random.Random(seed)
    epochs: dict = {}
    ops = {
        "tick": lambda: session.fragment(epochs),
        "play_pause": lambda: (live.press_play(session.state, KEY), session.full_run(epochs)),
        "step": lambda: (live.press_step(session.state, KEY), session.full_run(epochs)),
        "reset": lambda: (live.press_reset(session.state, KEY), session.full_run(epochs)),
        "rerun": lambda: session.full_run(epochs),
        "snapshot": lambda: live.handle_for(session.state, KEY, _make, {"seed": 0})
        .read(lambda t: t.snapshot()),
    }
    weights = {"tick": 6, "play_pause": 3, "step": 2, "reset": 1, "rerun": 2, "snapshot": 2}
    names = list(weights)
    try:
        session.full_run(epochs)
        for _ in range(n_ops):
            ops[rng.choices(names, [weights[n] for n in names])[0]]()
    except Exception as exc:  # noqa: BLE001 - the test reports any exception
        failures.append(repr(exc))


def test_two_threads_500_random_commands_never_overlap_and_counts_add_up():
    GuardedGAN.overlaps = 0
    session = Session()
    failures: list[str] = []
    threads = [threading.Thread(target=_drive, args=(session, s, 250, failures)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not any(t.is_alive() for t in threads), "a thread hung (deadlock?)"
    assert failures == [] and session.errors == []
    assert GuardedGAN.overlaps == 0
    assert sum(session.done.values()) > 20 * SPF               # it did train, a lot
    trainer = session.state[f"{KEY}__trainer"]
    # the iterations each frame reported add up to the trainer's count, and the history is
    # one increasing sequence of iterations ending there
    assert session.done[id(trainer)] == trainer.steps
    steps, values = trainer.history.as_arrays("loss_d")
    if trainer.steps:
        assert steps[-1] == trainer.steps and (np.diff(steps) > 0).all()
        assert np.isfinite(values).all()


def test_without_the_lock_the_same_drive_overlaps(monkeypatch):
    """The stress test can fail: with the lock replaced by a no-op the threads overlap."""
    import contextlib

    @contextlib.contextmanager
    def no_lock(self, timeout=0):
        yield self.trainer

    monkeypatch.setattr(TrainerHandle, "locked", no_lock)
    monkeypatch.setattr(TrainerHandle, "tick",
                        lambda self, n, b, e: self._run(n, b, lambda: False))
    GuardedGAN.overlaps = 0
    session, failures = Session(), []
    threads = [threading.Thread(target=_drive, args=(session, s, 120, failures)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert GuardedGAN.overlaps > 0 or failures or session.errors


# ---- the harness page under AppTest --------------------------------------------------------

def _harness() -> AppTest:
    at = AppTest.from_file(HARNESS, default_timeout=60)
    at.run()
    return at


def _steps(at: AppTest) -> int:
    text = next(m.value for m in at.markdown if m.value.startswith("loss="))
    return int(text.split("steps=")[1])


def test_pause_stops_and_step_adds_exactly_steps_per_frame():
    at = _harness()
    assert "h__handle" in at.session_state and _steps(at) == 0
    at.button(key="h__step").click().run()
    assert _steps(at) == 25 and not at.exception
    at.button(key="h__play").click().run()                 # Play: this full run is a tick
    playing_at = _steps(at)
    assert playing_at > 25 and at.session_state["h__handle"].playing
    at.button(key="h__play").click().run()                 # Pause
    handle = at.session_state["h__handle"]
    assert not handle.playing and _steps(at) == playing_at
    at.run()
    assert _steps(at) == playing_at                        # nothing moves while paused
    at.button(key="h__step").click().run()
    assert _steps(at) == playing_at + 25                   # Step: exactly one frame


def test_reset_and_new_settings_cancel_the_old_handle():
    at = _harness()
    old = at.session_state["h__handle"]
    at.button(key="h__step").click().run()
    at.button(key="h__reset").click().run()
    new = at.session_state["h__handle"]
    assert old.cancelled and new is not old and new.trainer.steps == 0
    at.slider(key="h_lr").set_value(0.5).run()
    assert new.cancelled and at.session_state["h__handle"].config_id != new.config_id
    assert at.session_state["h__trainer"] is at.session_state["h__handle"].trainer


def test_process_mode_trains_between_frames_and_a_killed_worker_resumes(monkeypatch):
    """DLPLAY_TRAINERS=process: the harness page's trainer lives in a worker process; it
    trains between script runs, Pause and Step act, and killing the worker resumes the
    trainer on a new worker where it was (the page says so; never an exception, never a
    frozen page); Reset still builds a new trainer."""
    import os
    import signal
    import time

    from live.workers import ProcessTrainerHandle
    monkeypatch.setenv("DLPLAY_TRAINERS", "process")
    at = _harness()
    handle = at.session_state["h__handle"]
    assert isinstance(handle, ProcessTrainerHandle) and at.session_state["h__trainer"] is None
    assert _steps(at) == 0
    at.button(key="h__step").click().run()
    assert _steps(at) == 25 and not at.exception
    at.button(key="h__play").click().run()
    started = handle.read(lambda tr: tr.steps)
    time.sleep(1.5)                                        # no script run in between
    assert handle.read(lambda tr: tr.steps) > started      # the worker kept training
    at.button(key="h__play").click().run()                 # Pause
    paused_at = _steps(at)
    time.sleep(0.5)
    at.run()
    assert _steps(at) == paused_at == handle.read(lambda tr: tr.steps)
    at.button(key="h__step").click().run()
    assert _steps(at) == paused_at + 25

    pid = handle.read(lambda tr: os.getpid())
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    while handle.notice is None and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    at.run()
    assert not at.exception and not at.error
    assert _steps(at) == paused_at + 25                    # where it was (Step checkpoints)
    notice = f"The training worker restarted; resumed from iteration {paused_at + 25:,}."
    assert any(notice in c.value for c in at.caption), [c.value for c in at.caption]
    assert not at.button(key="h__play").disabled and at.button(key="h__play").label == "Play"
    assert handle.read(lambda tr: os.getpid()) != pid
    at.button(key="h__step").click().run()                 # it trains on its new worker
    assert _steps(at) == paused_at + 50 and at.session_state["h__handle"] is handle
    at.button(key="h__reset").click().run()                # Reset: a new trainer
    assert not at.exception and not at.error and _steps(at) == 0
    assert at.session_state["h__handle"] is not handle


def test_the_janitors_session_probe_asks_streamlits_runtime(monkeypatch):
    """live.push.session_connected: no server (AppTest) -> active; with a server, what its
    session manager says (Runtime.is_active_session: connected, not merely resumable)."""
    from streamlit.runtime import Runtime
    from live import push
    assert push.session_connected("any")

    class FakeRuntime:
        def is_active_session(self, session_id):
            return session_id == "connected"

    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: FakeRuntime()))
    assert push.session_connected("connected") and not push.session_connected("closed tab")


def test_a_trainer_whose_worker_is_still_starting_gets_its_picture_without_a_click(
        monkeypatch):
    """Many sessions opening at once share one worker's start-up: a page whose trainer has
    no picture yet says so and looks again on a timer (it used to wait for a click while
    paused: no figure until the user did something)."""
    import time

    from tests.apptest import record_run_every
    from live import controls as live
    monkeypatch.setenv("DLPLAY_TRAINERS", "process")
    from live import frame_steps
    monkeypatch.setattr(frame_steps, "FIRST_VIEW_WAIT_S", 0.0)
    from live.handle import TrainerBusy
    from live.worker_link import Link
    from live.workers import ProcessTrainerHandle
    started = threading.Event()        # closed: the worker is still importing, however fast
    real_latest, real_view = Link.latest, ProcessTrainerHandle.view

    def latest(link):
        return real_latest(link) if started.is_set() else None

    def view(handle, timeout=None):
        if not started.is_set():
            raise TrainerBusy("still starting")
        return real_view(handle) if timeout is None else real_view(handle, timeout)

    monkeypatch.setattr(Link, "latest", latest)
    monkeypatch.setattr(ProcessTrainerHandle, "view", view)
    asked = record_run_every(monkeypatch)
    at = _harness()
    handle = at.session_state["h__handle"]
    assert not at.exception and not at.error
    assert asked and asked[-1] == live.FIRST_VIEW_POLL_S    # the fragment polls, paused
    assert any("picture updates on the next frame" in i.value for i in at.info)
    started.set()
    t0 = time.monotonic()
    while handle.link.latest() is None and time.monotonic() - t0 < 60:
        time.sleep(0.1)
    asked.clear()
    at.run()                                                # (the timer's run, here by hand)
    assert not at.exception and _steps(at) == 0             # the picture is there
    assert asked[-1] is None                                # and the timer is gone
