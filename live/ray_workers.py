"""Trainers as Ray actors (DLPLAY_TRAINERS=ray): the handle interface of live/workers.py
(ProcessTrainerHandle) over one Ray actor per trainer, so the trainers of many web replicas
can run on a Ray cluster (RAY_ADDRESS, e.g. ray://head:10001 or "auto"), GPU actors with a
fractional GPU (DLPLAY_RAY_GPUS, default 0.1 per trainer where the cluster has GPUs).

The actor runs the same scheduler as a worker process (live.worker_loop.Worker, with one
trainer): a training thread trains it in ~25 ms chunks at its pace while playing, and the
actor's methods (max_concurrency=1, so commands run in the order they were sent) hand a
command to the scheduler between chunks and return the reply or the latest view. Without
RAY_ADDRESS a local Ray is started (ray.init) on first use. Ray is optional:
requirements-hosting.txt.
"""
from __future__ import annotations

import os
import pickle
import threading
import time
from pathlib import Path
from typing import Any, Callable

import cloudpickle
import ray

from live.handle import CHUNK_S, TrainerBusy, TrainerHandle, TrainerLost, TrainerView
from live.worker_loop import PUBLISH_S, Worker
from live.workers import ProcessTrainerHandle

ROOT = str(Path(__file__).resolve().parent.parent)
GPUS_ENV_VAR = "DLPLAY_RAY_GPUS"
STOPPED = "The training actor stopped; press Reset."
LATEST_S = 0.05          # a frame's several reads of steps/diverged share one fetch


class _Inbox:
    """The scheduler's pipe, inside the actor: keeps the latest view and the replies."""

    def __init__(self):
        self.view: tuple[int, bytes] | None = None
        self.replies: dict[int, tuple[bool, Any]] = {}

    def send_bytes(self, data: bytes) -> None:
        msg = pickle.loads(data)
        if msg[0] == "view":
            self.view = (msg[2], msg[3])
        elif msg[0] == "reply":
            self.replies[msg[2]] = (msg[3], msg[4])

    def poll(self, timeout: float = 0.0) -> bool:
        return False


@ray.remote(max_concurrency=1)
class TrainerActor:
    """One trainer, its scheduler and a training thread (see the module docstring)."""

    def __init__(self, factory: bytes, chunk_s: float = CHUNK_S, publish_s: float = PUBLISH_S):
        from engine.device import configure_threads
        configure_threads()
        self.inbox = _Inbox()
        self.worker = Worker(self.inbox, chunk_s, publish_s)
        self.lock = threading.Lock()
        self.worker.handle(("create", 0, 0, factory))
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while self.worker.running:
            with self.lock:
                trained = self.worker.one_turn()
                slot = self.worker.slots.get(0)
                if slot is not None and slot.dirty and time.perf_counter() - slot.published \
                        >= self.worker.publish_s:
                    self.worker.publish(0, slot, fresh=False)
                wait = 0.0 if trained else self.worker.wait_s()
            time.sleep(wait)

    def handle(self, msg: tuple) -> tuple[bool, Any] | None:
        with self.lock:
            self.worker.handle(msg)
            return self.inbox.replies.pop(msg[2], None)

    def view(self) -> tuple[int, bytes] | None:
        return self.inbox.view

    def stop(self) -> None:
        with self.lock:
            self.worker.handle(("stop",))
            self.worker.slots.clear()


class RayLink:
    """live.workers.Link's interface (what ProcessTrainerHandle uses) over a TrainerActor."""

    def __init__(self, actor):
        self.actor = actor
        self.seq_sent = 0
        self.error: str | None = None
        self.closed = False
        self._view: TrainerView | None = None
        self._fetched = 0.0
        self._lock = threading.Lock()

    def _get(self, ref, timeout: float):
        try:
            return ray.get(ref, timeout=timeout)
        except ray.exceptions.GetTimeoutError as exc:
            raise TrainerBusy(f"the trainer's actor did not answer within {timeout:g} s") from exc
        except ray.exceptions.RayActorError as exc:
            self.error = self.error or STOPPED
            raise TrainerLost(self.error) from exc

    def send(self, kind: str, *args: Any) -> int:
        if self.error is not None:
            raise TrainerLost(self.error)
        with self._lock:
            self.seq_sent += 1
            seq = self.seq_sent
        self._last_ref = self.actor.handle.remote((kind, 0, seq, *args))
        return seq

    def request(self, kind: str, arg: Any, timeout: float) -> Any:
        self.send(kind, arg)
        ok, payload = self._get(self._last_ref, timeout)
        if not ok:
            raise RuntimeError(f"in the training actor: {payload}")
        return pickle.loads(payload)

    def view(self, timeout: float, first_timeout: float | None = None) -> TrainerView:
        if self.error is None:
            try:
                got = self._get(self.actor.view.remote(), max(timeout, first_timeout or 0))
            except TrainerLost:
                got = None
            if got is not None:
                self._view, self._fetched = pickle.loads(got[1]), time.monotonic()
        if self.error is not None:
            return TrainerView.failed(self.error, self._view.steps if self._view else 0)
        if self._view is None:
            raise TrainerBusy("the trainer's actor has not sent a picture yet")
        return self._view

    def latest(self) -> TrainerView | None:
        if self._view is not None and time.monotonic() - self._fetched < LATEST_S:
            return self._view
        try:
            return self.view(1.0)
        except TrainerBusy:
            return self._view

    def close(self, message: str = "This trainer was released; press Reset.") -> None:
        if self.closed:
            return
        self.closed = True
        self.error = self.error or message
        try:
            ray.kill(self.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone (cluster down, interpreter exit)
            pass


_INIT_LOCK = threading.Lock()


def ensure_ray() -> None:
    """Connect to RAY_ADDRESS, or start a local Ray, once per process."""
    with _INIT_LOCK:
        if ray.is_initialized():
            return
        env = {"PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
               "DLPLAY_TORCH_THREADS": os.environ.get("DLPLAY_TORCH_THREADS", "1")}
        ray.init(address=os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                 log_to_driver=False, ignore_reinit_error=True,
                 runtime_env={"env_vars": env})


def gpus_per_trainer() -> float:
    """DLPLAY_RAY_GPUS (a fraction) where the cluster has GPUs, else 0."""
    if not ray.cluster_resources().get("GPU", 0):
        return 0.0
    try:
        return max(0.0, float(os.environ.get(GPUS_ENV_VAR, "0.1")))
    except ValueError:
        return 0.1


def open_ray_handle(make_trainer: Callable[[], Any], config_id: str = ""):
    """A ProcessTrainerHandle whose trainer is a TrainerActor (falls back to inline when the
    factory cannot be pickled, like the process mode)."""
    try:
        data = cloudpickle.dumps(make_trainer)
    except Exception:  # noqa: BLE001
        return TrainerHandle(make_trainer(), config_id)
    ensure_ray()
    actor = TrainerActor.options(num_gpus=gpus_per_trainer(), num_cpus=0).remote(data)
    return ProcessTrainerHandle(RayLink(actor), config_id)
