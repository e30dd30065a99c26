"""Where a page's trainer runs, chosen by DLPLAY_TRAINERS: `inline` (a TrainerHandle in the
web process), `process` (a worker process of live/workers.py's pool) or `ray` (a Ray actor,
live/ray_workers.py). `open_handle` is the one entry point; every backend returns an object
with TrainerHandle's interface.

    handle = open_handle(make_trainer, config_id, session_id)
"""
from __future__ import annotations

import functools
import logging
import os
from typing import Any, Callable

import cloudpickle

from engine.training import Trainer
from live.handle import TrainerHandle
from live.workers import MODE_ENV_VAR, ProcessTrainerHandle, get_pool

log = logging.getLogger(__name__)


def trainer_mode(env: dict | None = None) -> str:
    mode = (os.environ if env is None else env).get(MODE_ENV_VAR, "inline").strip().lower()
    if mode not in BACKENDS:
        log.warning("%s=%r is not one of %s: using inline", MODE_ENV_VAR, mode,
                    ", ".join(BACKENDS))
        return "inline"
    return mode


def inline(make_trainer: Callable[[], Trainer], config_id: str, session_id: str | None):
    return TrainerHandle(make_trainer(), config_id)


def _given(trainer: Trainer) -> Trainer:
    return trainer


def in_worker_process(make_trainer: Callable[[], Trainer], config_id: str, session_id: str | None):
    """The factory goes to a worker and builds the trainer there. A factory that cannot be
    pickled (e.g. it closes over session state) builds the trainer here and the trainer itself
    goes (torch modules pickle); a trainer that cannot be pickled either stays inline."""
    try:
        data = cloudpickle.dumps(make_trainer)
    except Exception as exc:  # noqa: BLE001 - e.g. a closure over a lock or an open file
        trainer = make_trainer()
        try:
            data = cloudpickle.dumps(functools.partial(_given, trainer))
        except Exception as exc2:  # noqa: BLE001
            log.warning("neither the trainer factory %r (%s) nor its trainer (%s) can be "
                        "pickled: training it in the web process", make_trainer, exc, exc2)
            return TrainerHandle(trainer, config_id)
        log.warning("trainer factory %r cannot be pickled (%s): built here, the trainer "
                    "(%d kB) sent to a worker", make_trainer, exc, len(data) // 1024)
    return ProcessTrainerHandle(get_pool().create(data, session_id), config_id)


def in_ray(make_trainer: Callable[[], Trainer], config_id: str, session_id: str | None):
    from live.ray_workers import open_ray_handle     # ray is optional: imported when asked for
    return open_ray_handle(make_trainer, config_id)


BACKENDS: dict[str, Callable[..., Any]] = {"inline": inline, "process": in_worker_process,
                                          "ray": in_ray}


def open_handle(make_trainer: Callable[[], Trainer], config_id: str = "",
                session_id: str | None = None, mode: str | None = None):
    """A handle on a new trainer built by make_trainer, where DLPLAY_TRAINERS says."""
    return BACKENDS[mode or trainer_mode()](make_trainer, config_id, session_id)
