"""One writer per trainer: a TrainerHandle owns a trainer, a lock and a pause flag.

A browser session may run its page script in two threads at once: a full rerun (Pause,
Step, Reset, any widget outside the live fragment) starts a new script thread at once while
the old one is still inside torch (Streamlit's fastReruns; the old thread only stops at its
next Streamlit call). Everything that touches the trainer therefore goes through its handle:

    tick(n, budget_s, epoch)   playing: train under the lock if it is free, else skip (None)
    step(n)                    one frame of exactly n iterations (waits for the lock)
    read(fn) / locked()        snapshot, draw, export under the lock (waits for it)
    view()                     a TrainerView: what a frame draws, taken under the lock
    pause() / play()           the pause flag; the training loop checks it between chunks
    claim()                    a new script run takes over: ticks of older runs stop
    cancel()                   the trainer is being replaced (Reset, new settings): all stop

The loop (engine.training.run_for) checks its stop condition before every chunk and sizes
chunks to ~CHUNK_S seconds, so at most one chunk (<= ~50 ms) runs after Pause/claim/cancel.
Pure Python + torch-free: the same interface can front a trainer in a worker process.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from engine.training import History, Trainer, TickResult, run_for, tell_playing

CHUNK_S = 0.025          # target seconds per chunk; the stop flag is checked between chunks
WAIT_S = 30.0            # longest wait for the lock by a Step / a draw before giving up
VIEW_POINTS = 500        # a view's history keeps at most this many points per metric


def decimate_history(history: History, max_points: int = VIEW_POINTS) -> History:
    """A copy of `history` with at most `max_points` points per metric: every k-th point,
    k = ceil(n / max_points), counted back from the last one so the newest point is always
    kept (a loss curve of 20,000 iterations draws as 500 points and still ends at "now")."""
    steps, values = {}, {}
    for name, s in history.steps.items():
        v = history.values.get(name, [])
        k = max(1, math.ceil(len(s) / max(1, max_points)))
        start = (len(s) - 1) % k
        steps[name], values[name] = s[start::k], v[start::k]
    return History(steps, values)


@dataclass(frozen=True)
class TrainerView:
    """What one live frame may draw: plain data taken from a trainer under its lock.

    It answers the read side of the trainer protocol (`steps`, `diverged_at`, `history`,
    `snapshot()`) and nothing else, so a page's `draw(view, tick)` works the same whether the
    trainer lives in this process or in a worker process (live/workers.py): the snapshot
    is whatever the trainer's own `snapshot()` returned (numbers and numpy arrays). Anything
    else a figure needs goes into the trainer's snapshot, or is asked for with
    `read_trainer(key, fn)` (fn runs next to the trainer and returns plain data)."""
    steps: int
    diverged_at: int | None
    history: History = field(repr=False)
    data: Any = field(repr=False)
    error: str | None = None          # the worker lost this trainer (crash): say so, offer Reset
    at: float = 0.0                   # time.time() when it was taken (ticks measure it/s)
    notice: str | None = None         # its worker died and it resumed from a checkpoint: say so
    batched_with: int = 0             # a worker stepped it in one batch with this many others
    alone_because: str | None = None  # ... or alone beside classmates' models: why

    def snapshot(self) -> Any:
        return self.data

    _FRESH = object()

    @classmethod
    def of(cls, trainer: Trainer, snapshot: Any = _FRESH) -> "TrainerView":
        """The trainer's view now; `snapshot`: one taken earlier, to reuse (a worker does for
        a costly one, live/worker_loop.py), else trainer.snapshot() now."""
        history = getattr(trainer, "history", None) or History()
        data = trainer.snapshot() if snapshot is cls._FRESH else snapshot
        return cls(int(trainer.steps), trainer.diverged_at,
                   decimate_history(history), data, at=time.time())

    @classmethod
    def failed(cls, message: str, steps: int = 0) -> "TrainerView":
        """The view of a trainer that is gone (its worker stopped): only the message."""
        return cls(int(steps), None, History(), None, error=message, at=time.time())


class TrainerBusy(RuntimeError):
    """The trainer stayed locked longer than the caller was willing to wait. A passing
    condition, not a fault: pages show `user_status` as a status line (live/busy.py)."""
    user_status = ("The class server is busy; this view is drawn again when you change a "
                   "control or reload the page.")


class TrainerLost(RuntimeError):
    """The trainer is gone: its worker process stopped, or it was released (session closed)."""


class TrainerElsewhere(RuntimeError):
    """The trainer lives in another process: it can be asked (`read(fn)`), not held."""


class TrainerHandle:
    """A trainer plus the lock that makes its users take turns (see the module docstring).

    `epoch` numbers the script runs that drove this handle: claim() starts a new one and
    every tick started under an older epoch stops before its next chunk. `generation`
    changes only on cancel(): then steps stop too."""

    def __init__(self, trainer: Trainer, config_id: str = "", chunk_s: float = CHUNK_S):
        self.trainer = trainer
        self.config_id = config_id
        self.chunk_s = float(chunk_s)
        self._lock = threading.Lock()
        self._owner: int | None = None       # thread id holding the lock through locked()
        self._paused = threading.Event()
        self._paused.set()                    # a new trainer waits for Play
        self._counter = itertools.count(1)    # next() is atomic under the GIL
        self._epoch = 0
        self._cancelled = False
        self._sec_per_step = math.nan         # measured, sizes the first chunk of a tick

    # ---- flags (cheap, never wait) -------------------------------------------------------
    @property
    def playing(self) -> bool:
        return not self._paused.is_set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    @property
    def steps(self) -> int:
        return int(self.trainer.steps)

    @property
    def diverged_at(self) -> int | None:
        return self.trainer.diverged_at

    def set_pace(self, steps_per_s: float, max_total_steps: int | None = None) -> None:
        """Only a worker-hosted trainer trains between frames and needs a pace; here the
        frame's tick itself is the pace (steps per frame, budget)."""

    def close(self) -> None:
        """Release the trainer (a worker-hosted handle frees it in its worker)."""
        self.cancel()

    def play(self) -> None:
        if not self._cancelled:
            self._paused.clear()
            tell_playing(self.trainer, True)

    def pause(self) -> None:
        self._paused.set()
        tell_playing(self.trainer, False)

    def claim(self) -> int:
        """A new script run takes over; returns its epoch (ticks of older epochs stop)."""
        self._epoch = next(self._counter)
        return self._epoch

    def cancel(self) -> None:
        """The trainer is being replaced: pause, and stop every loop before its next chunk."""
        self._cancelled = True
        self._paused.set()
        self.claim()

    # ---- work under the lock -------------------------------------------------------------
    def tick(self, max_steps: int, budget_s: float, epoch: int) -> TickResult | None:
        """One frame while playing: at most max_steps iterations and budget_s seconds,
        stopping before the next chunk once paused, claimed by a newer run or cancelled.
        Returns None without waiting when the trainer is busy (the tick is skipped)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self._run(max_steps, budget_s,
                             lambda: self._paused.is_set() or self._epoch != epoch
                             or self._cancelled)
        finally:
            self._lock.release()

    def step(self, n: int, timeout: float = WAIT_S) -> TickResult:
        """Exactly n iterations (fewer only on divergence or cancel()); waits its turn."""
        with self.locked(timeout):
            return self._run(n, math.inf, lambda: self._cancelled)

    @contextlib.contextmanager
    def locked(self, timeout: float = WAIT_S) -> Iterator[Trainer]:
        """The trainer, held for the duration of the block (snapshot, draw, export).
        Re-entrant in the holding thread (e.g. read_trainer called from inside `draw`)."""
        me = threading.get_ident()
        if self._owner == me:
            yield self.trainer
            return
        if not self._lock.acquire(timeout=timeout):
            raise TrainerBusy(f"the trainer stayed busy for {timeout:g} s")
        self._owner = me
        try:
            yield self.trainer
        finally:
            self._owner = None
            self._lock.release()

    def read(self, fn: Callable[[Trainer], Any], timeout: float = WAIT_S) -> Any:
        """fn(trainer) under the lock, e.g. handle.read(lambda t: t.snapshot())."""
        with self.locked(timeout) as trainer:
            return fn(trainer)

    def view(self, timeout: float = WAIT_S) -> TrainerView:
        """The trainer's TrainerView (snapshot, steps, history copy), under the lock."""
        return self.read(TrainerView.of, timeout)

    def _run(self, max_steps: int, budget_s: float, stop: Callable[[], bool]) -> TickResult:
        first = 1 if math.isnan(self._sec_per_step) else \
            max(1, int(self.chunk_s / max(self._sec_per_step, 1e-6)))
        tick = run_for(self.trainer, max_steps, budget_s, chunk=first, stop=stop,
                       chunk_s=self.chunk_s)
        if tick.steps_done:
            self._sec_per_step = tick.seconds / tick.steps_done
        return tick
