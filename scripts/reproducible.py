"""What every pretraining script shares: a deterministic CPU set-up and progress lines.

    deterministic()                          # before training: same seed -> same bits
    step_with_progress(trainer, 6000, "vae_d2_bernoulli.pt", per=trainer.steps_per_epoch)

`deterministic()` makes a seeded run repeat bit for bit on the same machine and torch build:
one intra-op thread (a reduction split over threads adds its parts in an order that depends on
the thread count), one inter-op thread, and torch.use_deterministic_algorithms(True) (an op
without a deterministic kernel raises instead of silently varying). Other CPUs or torch builds
may still round differently (other SIMD kernels); tests/test_pretrain.py checks a repeat."""
from __future__ import annotations

import time

import torch

from engine.device import THREADS_ENV_VAR, configure_threads


def deterministic(threads: int = 1) -> None:
    configure_threads({THREADS_ENV_VAR: str(int(threads))})   # torch and numpy's BLAS alike
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(int(threads))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:         # only settable before the first parallel work of a process
        pass


class Progress:
    """Prints `what: <unit> done/total (pct), elapsed, ~remaining` about `lines` times."""

    def __init__(self, what: str, total: int, unit: str = "step", lines: int = 20):
        self.what, self.total, self.unit = what, max(int(total), 1), unit
        self.every = max(1, self.total // max(1, lines))
        self.start = time.perf_counter()

    def __call__(self, done: int, note: str = "", force: bool = False) -> None:
        if not force and done % self.every and done != self.total:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / done * (self.total - done) if done else float("nan")
        print(f"  {self.what}: {self.unit} {done:,}/{self.total:,} ({100 * done / self.total:.0f}%), "
              f"{elapsed:.0f} s, ~{left:.0f} s left" + (f", {note}" if note else ""), flush=True)


def step_with_progress(trainer, total_steps: int, what: str, per: int | None = None,
                       unit: str = "epoch") -> None:
    """trainer.step(total_steps) in chunks, printing progress: chunks of `per` steps counted
    in `unit`s (an epoch), or without `per` about 20 chunks counted in steps."""
    total_steps = int(total_steps)
    if per is None:
        per, scale, unit = max(1, total_steps // 20), 1, "step"
    else:
        per = scale = max(1, int(per))
    bar = Progress(what, -(-total_steps // scale), unit)
    done = 0
    while done < total_steps:
        n = min(per, total_steps - done)
        trainer.step(n)
        done += n
        bar(-(-done // scale))
