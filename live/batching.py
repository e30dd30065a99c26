"""Which hosted trainers a worker may step as one batch, and how (live/worker_loop.py).

A trainer class names the engine module that batches it (`TrainerBase.batched`); that
module offers `batch_key(trainer)` (equal keys: same architecture and settings),
`unbatchable_reason(trainer)` (a sentence, or None) and a batch class built from a list of
trainers with `.step(n, active=[...])` and `.unstack(k)` (the member's state written back).
Modules load on first use, so a worker that hosts no GAN never imports the GAN engine.

DLPLAY_BATCH=0 turns batching off (every trainer is stepped alone).
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Hashable


def enabled(env: dict | None = None) -> bool:
    return (os.environ if env is None else env).get("DLPLAY_BATCH", "1").strip() != "0"


def _batcher(trainer: Any):
    name = getattr(type(trainer), "batched", None)
    return importlib.import_module(name) if name else None


def why_not(trainer: Any) -> str | None:
    """Why `trainer` is stepped alone (None: it can join a batch)."""
    batcher = _batcher(trainer)
    if batcher is None:
        return "this page's trainers are stepped one at a time"
    return batcher.unbatchable_reason(trainer)


def key_of(trainer: Any) -> Hashable | None:
    """The batch key of `trainer` (None: it cannot be batched)."""
    batcher = _batcher(trainer)
    if batcher is None or batcher.unbatchable_reason(trainer) is not None:
        return None
    return (type(trainer).__qualname__, batcher.batch_key(trainer))


def batch_of(trainers: list) -> Any:
    """One batch of trainers that share a key_of."""
    return _batcher(trainers[0]).BATCH(trainers)
