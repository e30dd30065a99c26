"""The web side of one worker process (live/workers.py's pool): `spawn_worker` starts a
fresh interpreter running live.worker_loop on a socket pair, `WorkerProc` owns its pipe (one
writer at a time) and a receiver thread, and a `Link` per hosted trainer keeps that trainer's
latest pickled view, its pending replies and its error.

Why not multiprocessing's spawn: it re-imports the parent's __main__ (Streamlit's CLI, pytest,
a benchmark script). A worker that dies (EOF on the pipe) hands its Links to its pool, which
starts a new worker and resumes each trainer there from its last checkpoint (the trainer as it
was at most live.worker_loop.CHECKPOINT_S earlier, playing again if it was); the view then
carries a notice saying so. A trainer whose worker died MAX_RESUMES times in a row without
a newer checkpoint fails with WORKER_STOPPED (a trainer that kills its worker cannot loop).
"""
from __future__ import annotations

import logging
import os
import pickle
import socket
import subprocess
import sys
import dataclasses
import functools
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

import cloudpickle

from live.handle import TrainerBusy, TrainerLost, TrainerView
from live.parent_watch import PARENT_ENV

ROOT = str(Path(__file__).resolve().parent.parent)
log = logging.getLogger("live.workers")
WORKER_STOPPED = "The training worker stopped; press Reset."
RESUMED = "The training worker restarted; resumed from iteration {steps:,}."
MAX_RESUMES = 3      # deaths in a row without a newer checkpoint before the trainer is given up
NOTICE_S = 60.0      # how long the view carries the notice


class Link:
    """The web side of one hosted trainer: latest view bytes, pending replies, its error."""

    def __init__(self, tid: int, worker: "WorkerProc", session_id: str | None):
        self.tid, self.worker, self.session_id = tid, worker, session_id
        self.cond = threading.Condition()
        self.seq_sent = 0
        self.seq_seen = -1
        self.view_bytes: bytes | None = None
        self._view: TrainerView | None = None     # unpickled view_bytes (cached)
        self.replies: dict[int, tuple[bool, Any]] = {}
        self.error: str | None = None
        self.closed = False
        self.gone_since: float | None = None      # janitor: first seen without a session
        self.factory: bytes | None = None         # what built it (resume before a checkpoint)
        self.checkpoint: bytes | None = None      # the trainer pickled at checkpoint_steps
        self.checkpoint_steps = 0
        self.playing = False                      # the last play/pause/pace sent (to resume)
        self.pace: Any = None
        self.resumes = 0                          # deaths since the last newer checkpoint
        self.notice: str | None = None
        self.notice_until = 0.0
        # told each checkpoint (steps, bytes, playing) as it arrives: live/resume.py stores
        # it where another replica finds it; called on the receiver thread, so it must not block
        self.on_saved: Callable[[int, bytes, bool], None] | None = None

    # ---- from the receiver thread --------------------------------------------------------
    def on_view(self, seq: int, data: bytes) -> None:
        with self.cond:
            self.seq_seen, self.view_bytes, self._view = max(self.seq_seen, seq), data, None
            self.cond.notify_all()

    def on_checkpoint(self, steps: int, data: bytes) -> None:
        with self.cond:
            if self.checkpoint is None or steps != self.checkpoint_steps:
                self.resumes = 0
            self.checkpoint, self.checkpoint_steps = data, int(steps)
            saved, playing = (None if self.closed else self.on_saved), self.playing
        if saved is not None:
            try:
                saved(int(steps), data, playing)
            except Exception:  # noqa: BLE001 - this thread is the worker's lifeline
                log.exception("storing a checkpoint failed")

    def on_seen(self, seq: int) -> None:
        with self.cond:
            self.seq_seen = max(self.seq_seen, seq)
            self.cond.notify_all()

    def on_reply(self, seq: int, ok: bool, payload: Any) -> None:
        with self.cond:
            self.replies[seq] = (ok, payload)
            self.cond.notify_all()

    def fail(self, message: str) -> None:
        with self.cond:
            if self.error is None:
                self.error = message
            self.cond.notify_all()

    # ---- from the page's threads ---------------------------------------------------------
    def send(self, kind: str, *args: Any) -> int:
        with self.cond:
            if self.error is not None:
                raise TrainerLost(self.error)
            self.seq_sent += 1
            seq = self.seq_sent
            if kind == "create":
                self.factory = self.factory or args[0]
            elif kind == "cmd" and args[0] in ("play", "pause"):
                self.playing = args[0] == "play"
            elif kind == "cmd" and args[0] == "pace":
                self.pace = args[1]
        if not self.worker.send((kind, self.tid, seq, *args)):
            self.fail(WORKER_STOPPED)
            raise TrainerLost(WORKER_STOPPED)
        return seq

    def request(self, kind: str, arg: Any, timeout: float) -> Any:
        seq = self.send(kind, arg)
        with self.cond:
            if not self.cond.wait_for(lambda: seq in self.replies or self.error is not None,
                                      timeout):
                raise TrainerBusy(f"the trainer's worker did not answer within {timeout:g} s")
            if seq not in self.replies:
                raise TrainerLost(self.error)
            ok, payload = self.replies.pop(seq)
        if not ok:
            raise RuntimeError(f"in the training worker: {payload}")
        return pickle.loads(payload)

    def view(self, timeout: float, first_timeout: float | None = None) -> TrainerView:
        """The latest view, after waiting up to `timeout` s for one that has seen the last
        command (up to `first_timeout` s for the first view: a worker may still be starting)."""
        with self.cond:
            if self.view_bytes is None and first_timeout:
                self.cond.wait_for(lambda: self.view_bytes is not None or self.error is not None,
                                   first_timeout)
            self.cond.wait_for(lambda: self.seq_seen >= self.seq_sent or self.error is not None,
                               timeout)
            if self._view is None and self.view_bytes is not None:
                self._view = pickle.loads(self.view_bytes)
            if self.error is not None:
                steps = self._view.steps if self._view is not None else 0
                return TrainerView.failed(self.error, steps)
            if self._view is None:
                raise TrainerBusy("the trainer's worker has not sent a picture yet")
            if self.notice is not None and time.monotonic() < self.notice_until:
                return dataclasses.replace(self._view, notice=self.notice)
            return self._view

    def resume(self, worker: "WorkerProc") -> bool:
        """Host this trainer again on `worker`, from its last checkpoint (else from its
        factory), playing if it was; False (and WORKER_STOPPED) when it cannot be."""
        with self.cond:
            state = self.checkpoint if self.checkpoint is not None else self.factory
            if self.closed or self.error is not None:
                return False
            self.resumes += 1
            if state is None or self.resumes > MAX_RESUMES:
                self.error = WORKER_STOPPED
                self.cond.notify_all()
                return False
            steps = self.checkpoint_steps if self.checkpoint is not None else 0
            self.worker = worker
            self.replies.clear()
            self.notice = RESUMED.format(steps=steps)
            self.notice_until = time.monotonic() + NOTICE_S
            playing, pace = self.playing, self.pace
        with worker.lock:
            worker.links[self.tid] = self
        try:
            self.send("create", _rebuild(state) if self.checkpoint is not None else state)
            if pace is not None:
                self.send("cmd", "pace", pace)
            if playing:
                self.send("cmd", "play", None)
        except TrainerLost:
            return False
        return True

    def announce(self, notice: str, seconds: float = NOTICE_S) -> None:
        """Carry `notice` on this trainer's views for `seconds` (the status line says it)."""
        with self.cond:
            self.notice, self.notice_until = notice, time.monotonic() + seconds

    def latest(self) -> TrainerView | None:
        try:
            return self.view(0.0)
        except TrainerBusy:
            return None

    def close(self, message: str = "This trainer was released; press Reset.") -> None:
        """Free the trainer in its worker (idempotent; safe from a finalizer)."""
        if self.closed:
            return
        self.closed = True
        if self.error is None:
            try:
                self.send("cmd", "close", None)
            except TrainerLost:
                pass
        self.fail(message)
        self.worker.forget(self.tid)


class WorkerProc:
    """One worker process: its pipe, a send lock, a receiver thread, its trainers' links."""

    def __init__(self, pool: Any, index: int):       # pool: live.workers.WorkerPool
        self.pool, self.index = pool, index
        self.conn, self.proc = spawn_worker(pool.chunk_s, pool.publish_s)
        self.started = time.monotonic()
        self.links: dict[int, Link] = {}
        self.lock = threading.RLock()             # one writer on the pipe (RLock: a finalizer
        #                                           may close a link from a thread holding it)
        self.alive = True
        self.ready = threading.Event()
        self.pid = self.proc.pid
        threading.Thread(target=self._receive, name=f"dlplay-recv-{index}", daemon=True).start()

    def send(self, msg: tuple) -> bool:
        data = cloudpickle.dumps(msg)
        with self.lock:
            if not self.alive:
                return False
            try:
                self.conn.send_bytes(data)
                return True
            except (OSError, ValueError):
                return False

    def forget(self, tid: int) -> None:
        with self.lock:
            self.links.pop(tid, None)

    def _receive(self) -> None:
        try:
            while True:
                msg = pickle.loads(self.conn.recv_bytes())
                if msg[0] == "ready":
                    self.ready.set()
                    continue
                link = self.links.get(msg[1])
                if link is None:
                    continue
                if msg[0] == "view":
                    link.on_view(msg[2], msg[3])
                elif msg[0] == "reply":
                    link.on_reply(msg[2], msg[3], msg[4])
                elif msg[0] == "seen":
                    link.on_seen(msg[2])
                elif msg[0] == "checkpoint":
                    link.on_checkpoint(msg[2], msg[3])
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        self._died()

    def _died(self) -> None:
        with self.lock:
            self.alive = False
            links, self.links = list(self.links.values()), {}
        try:
            self.conn.close()
            self.proc.wait(5.0)          # reap it
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.pool.closing:
            for link in links:
                link.fail(WORKER_STOPPED)
            return
        log.warning("training worker %s (pid %s) stopped (exit code %s); resuming its %d "
                    "trainer(s) on a new worker", self.index, self.pid, self.proc.returncode,
                    len(links))
        self.pool.replace(self, links)

    def stop(self, timeout: float = 5.0) -> None:
        self.send(("stop",))
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout)


def _rebuild(checkpoint: bytes) -> bytes:
    """A factory (pickled) that rebuilds a trainer from its checkpoint bytes."""
    return cloudpickle.dumps(functools.partial(pickle.loads, checkpoint))


def spawn_worker(chunk_s: float, publish_s: float) -> tuple[Connection, subprocess.Popen]:
    """A fresh interpreter running live.worker_loop on one end of a socket pair. (Not
    multiprocessing's spawn: that re-imports the parent's __main__, which is Streamlit's CLI,
    pytest or a benchmark script.)"""
    ours, theirs = socket.socketpair()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in sys.path if p and p != ROOT])
    env[PARENT_ENV] = str(os.getpid())       # the worker exits when this process does
    proc = subprocess.Popen(
        [sys.executable, "-m", "live.worker_loop", str(theirs.fileno()), repr(chunk_s),
         repr(publish_s)], pass_fds=(theirs.fileno(),), cwd=ROOT, env=env,
        stdin=subprocess.DEVNULL)
    theirs.close()
    return Connection(ours.detach()), proc
