"""Trainers in worker processes (DLPLAY_TRAINERS=process): the web process keeps a handle,
a bounded pool of worker processes keeps the trainers and trains them between frames.

    handle = open_handle(make_trainer, config_id)   # live/backends.py, DLPLAY_TRAINERS=process
    handle.play(); handle.set_pace(100.0)           # 100 it/s while playing
    view = handle.view()                            # the latest TrainerView (plain data)
    handle.step(25); handle.read(lambda tr: tr.steps)

The pool (default max(1, usable CPUs - 1) processes (engine.device.usable_cpus: a
container's CPU quota, not the host's cores); each a fresh interpreter, see
live/worker_link.py) puts each new
trainer on the worker with the fewest; each worker trains its playing trainers round-robin
in ~25 ms chunks (live/worker_loop.py) and publishes a pickled TrainerView of each every
~0.15 s and after every command. One receiver thread per worker keeps the latest view bytes
per trainer; a frame unpickles only the one it draws. Commands carry a sequence number and
`view()` waits (briefly) for a view that has seen the handle's last command, so the frame after
Pause or Step shows their result.

The trainer factory crosses to the worker with cloudpickle (pages pass lambdas/closures) and
builds the trainer there; one that cannot be pickled builds it here and the trainer itself
crosses; one whose trainer cannot be pickled either stays inline (logged warnings).
Freeing: a handle that is garbage-collected (its session state dropped) closes its trainer
(weakref.finalize); the janitor thread closes the trainers of sessions that a probe (set by
live/controls.py from Streamlit's session manager; engine/ never imports streamlit) reports gone
for longer than LEASE_S. A worker that dies is restarted and its trainers resume there from
their last checkpoint (every few seconds, kept in this process: live/worker_link.py); their
views carry a notice "resumed from iteration N". One that cannot be resumed says
WORKER_STOPPED and its page offers Reset.
"""
from __future__ import annotations

import atexit
import itertools
import logging
import os
import threading
import time
import weakref
from typing import Any, Callable

import cloudpickle

from live.handle import CHUNK_S, WAIT_S, TrainerElsewhere, TrainerLost, TrainerView
from engine.training import TickResult, Trainer
from live.worker_link import WORKER_STOPPED, Link, WorkerProc
from live.worker_loop import PUBLISH_S
from engine.cpus import usable_cpus

log = logging.getLogger(__name__)

MODE_ENV_VAR = "DLPLAY_TRAINERS"
WORKERS_ENV_VAR = "DLPLAY_WORKERS"
RELEASED = "This session was idle and its trainer was released; press Reset."
ACK_S = 2.0          # longest wait of a frame for the view that has seen its last command
LEASE_S = 40.0       # a session reported gone this long loses its trainers (DLPLAY_LEASE_S)
JANITOR_S = 10.0     # how often the janitor looks (so: freed within LEASE_S + JANITOR_S)


def lease_s() -> float:
    try:
        return max(1.0, float(os.environ.get("DLPLAY_LEASE_S", LEASE_S)))
    except ValueError:
        return LEASE_S


def default_workers() -> int:
    try:
        n = int(os.environ.get(WORKERS_ENV_VAR, "0"))
    except ValueError:
        n = 0
    return n if n > 0 else max(1, usable_cpus() - 1)


class WorkerPool:
    """A bounded set of worker processes, started on first use, restarted when they die."""

    def __init__(self, size: int | None = None, chunk_s: float = CHUNK_S,
                 publish_s: float = PUBLISH_S):
        self.size = max(1, int(size or default_workers()))
        self.chunk_s, self.publish_s = float(chunk_s), float(publish_s)
        self.workers: list[WorkerProc | None] = [None] * self.size
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.closing = False
        self.session_alive: Callable[[str], bool] | None = None
        self._janitor: threading.Thread | None = None

    def create(self, factory_bytes: bytes, session_id: str | None = None) -> Link:
        """Host a new trainer (built by the pickled factory) on the least-loaded worker."""
        with self.lock:
            if self.closing:
                raise TrainerLost("the worker pool is shut down")
            alive = [w for w in self.workers if w is not None and w.alive]
            free = [i for i, w in enumerate(self.workers) if w is None or not w.alive]
            if free and (not alive or min(len(w.links) for w in alive) > 0):
                self.workers[free[0]] = WorkerProc(self, free[0])     # start on demand
                alive.append(self.workers[free[0]])
            if not alive:
                raise TrainerLost(WORKER_STOPPED)
            worker = min(alive, key=lambda w: len(w.links))
            link = Link(next(self.ids), worker, session_id)
            with worker.lock:
                worker.links[link.tid] = link
        link.send("create", factory_bytes)
        self._start_janitor()
        return link

    def replace(self, dead: WorkerProc, links: list[Link] = ()) -> None:
        """Restart a dead worker and resume its trainers there from their checkpoints
        (Link.resume). A worker that died young (< 10 s: e.g. it cannot start) and hosted no
        trainer is restarted only when the next trainer needs it, so it cannot spin; one that
        hosted trainers is restarted at once (each trainer gives up after MAX_RESUMES)."""
        links = [link for link in links if not link.closed]
        with self.lock:
            if self.closing or self.workers[dead.index] is not dead:
                worker = None
            elif links or time.monotonic() - dead.started >= 10.0:
                worker = self.workers[dead.index] = WorkerProc(self, dead.index)
            else:
                worker = self.workers[dead.index] = None
        resumed = [link for link in links if worker is not None and link.resume(worker)]
        for link in links:
            if link not in resumed:
                link.fail(WORKER_STOPPED)
        if links:
            log.warning("resumed %d of %d trainer(s) on worker %s (pid %s): %s", len(resumed),
                        len(links), dead.index, worker.pid if worker else None,
                        ", ".join(f"from iteration {link.checkpoint_steps}" for link in resumed)
                        or "none")

    def links(self) -> list[Link]:
        with self.lock:
            workers = [w for w in self.workers if w is not None]
        out = []
        for w in workers:
            with w.lock:
                out.extend(w.links.values())
        return out

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers if w is not None and w.alive]

    # ---- the janitor ---------------------------------------------------------------------
    def sweep(self, now: float | None = None, lease: float | None = None) -> int:
        """Close the trainers of sessions gone for longer than `lease` seconds (default
        lease_s()); returns how many."""
        probe = self.session_alive
        if probe is None:
            return 0
        lease_s_ = lease_s() if lease is None else lease
        now = time.monotonic() if now is None else now
        closed = 0
        for link in self.links():
            if link.session_id is None:
                continue
            if probe(link.session_id):
                link.gone_since = None
            elif link.gone_since is None:
                link.gone_since = now
            elif now - link.gone_since >= lease_s_:
                link.close(RELEASED)
                closed += 1
        if closed:
            log.warning("released %d trainer(s) of closed sessions", closed)
        return closed

    def _start_janitor(self) -> None:
        if self._janitor is None and self.session_alive is not None:
            def loop() -> None:
                while not self.closing:
                    time.sleep(min(JANITOR_S, lease_s() / 4))
                    try:
                        self.sweep()
                    except Exception:  # noqa: BLE001 - the janitor must outlive one bad probe
                        log.exception("janitor sweep failed")
            self._janitor = threading.Thread(target=loop, name="dlplay-janitor", daemon=True)
            self._janitor.start()

    def shutdown(self) -> None:
        self.closing = True
        for w in self.workers:
            if w is not None and w.alive:
                w.stop()


class ProcessTrainerHandle:
    """TrainerHandle's interface (what live/controls.py uses) for a trainer in a worker process."""

    trainer = None          # never here: draw from view(), ask with read(fn)
    busy = False

    def __init__(self, link: Link, config_id: str = ""):
        self.link, self.config_id = link, config_id
        self._playing = False
        self._cancelled = False
        self._epoch = 0
        self._pace: tuple | None = None
        self._tick_steps, self._tick_at = 0, time.time()
        weakref.finalize(self, link.close)

    # ---- flags ---------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def steps(self) -> int:
        view = self.link.latest()
        return view.steps if view is not None else 0

    @property
    def diverged_at(self) -> int | None:
        view = self.link.latest()
        return view.diverged_at if view is not None else None

    @property
    def error(self) -> str | None:
        return self.link.error

    @property
    def notice(self) -> str | None:
        """"The training worker restarted; resumed from iteration N." for a while after."""
        view = self.link.latest()
        return getattr(view, "notice", None)

    def _cmd(self, name: str, arg: Any = None) -> None:
        try:
            self.link.send("cmd", name, arg)
        except TrainerLost:
            pass                    # the view says so (error); the page offers Reset

    def play(self) -> None:
        if not self._cancelled and self.link.error is None:
            self._playing = True
            self._cmd("play")

    def pause(self) -> None:
        if self._playing:
            self._playing = False
            self._cmd("pause")

    def set_pace(self, steps_per_s: float, max_total_steps: int | None = None) -> None:
        pace = (float(steps_per_s), max_total_steps)
        if pace != self._pace:
            self._pace = pace
            self._cmd("pace", pace)

    def claim(self) -> int:
        self._epoch += 1
        return self._epoch

    def cancel(self) -> None:
        self._cancelled = True
        self._playing = False
        self.link.close()

    close = cancel

    # ---- work ----------------------------------------------------------------------------
    def tick(self, max_steps: int, budget_s: float, epoch: int) -> TickResult | None:
        """The steps the worker did since the last frame (it trains between frames)."""
        view = self.link.latest()
        if view is None:
            return None
        if view.steps < self._tick_steps:     # resumed from an earlier checkpoint
            self._tick_steps = view.steps
        done = max(0, view.steps - self._tick_steps)
        seconds = max(view.at - self._tick_at, 1e-9) if done else 0.0
        self._tick_steps, self._tick_at = view.steps, view.at
        metrics = {name: vals[-1] for name, vals in view.history.values.items() if vals}
        return TickResult(done, seconds, metrics, view.diverged_at)

    def step(self, n: int, timeout: float = WAIT_S) -> TickResult:
        tick = self.link.request("step", int(n), timeout)
        view = self.link.latest()
        if view is not None:
            self._tick_steps, self._tick_at = view.steps, view.at
        return tick

    def read(self, fn: Callable[[Trainer], Any], timeout: float = WAIT_S) -> Any:
        """fn(trainer), run in the worker; fn and its result must pickle (cloudpickle)."""
        try:
            data = cloudpickle.dumps(fn)
        except Exception as exc:  # noqa: BLE001 - say what to change
            raise TypeError(f"read_trainer's function cannot be sent to the training worker "
                            f"({exc}); use a module-level function or a lambda over plain "
                            f"values") from exc
        return self.link.request("read", data, timeout)

    def locked(self, timeout: float = WAIT_S):
        raise TrainerElsewhere("this trainer runs in a worker process (DLPLAY_TRAINERS="
                               "process): use read_trainer(key, fn) with fn(trainer) -> plain "
                               "data instead of holding it with locked_trainer")

    def view(self, timeout: float = WAIT_S) -> TrainerView:
        return self.link.view(min(timeout, ACK_S), timeout)


# ---- choosing the mode -----------------------------------------------------------------

_POOL: WorkerPool | None = None
_POOL_LOCK = threading.Lock()


def get_pool() -> WorkerPool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.closing:
            _POOL = WorkerPool()
            atexit.register(_POOL.shutdown)
        return _POOL


__all__ = ["ProcessTrainerHandle", "WorkerPool", "get_pool", "WORKER_STOPPED", "RELEASED",
           "LEASE_S"]
