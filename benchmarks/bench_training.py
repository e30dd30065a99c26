"""The trainer base (engine.training.TrainerBase) against the same loop written bare, on the
reference trainer (2-16-1 tanh MLP, full batch of 256 points, plain gradient descent).

`plain_losses` is that bare loop: the same initialisation and the same updates as
MLPClassifierTrainer, so the two give identical losses (tests/engine/test_training.py checks
it bit for bit) and the timing ratio is the cost of the bookkeeping alone (step counter,
NaN check, history, the `_iteration` call). The two are timed alternately in one run
(benchmarks.alternating_times), so a change of machine load hits both alike; the ratio is the
median of the per-round ratios of CPU time. Target: trainer/plain >= 0.95x."""
from __future__ import annotations

import math
import statistics
import time
from typing import Callable

import torch
from torch import nn

from benchmarks import Measurement, alternating_times, sized
from engine.datasets import ToyData, make_dataset
from engine.device import make_generator
from engine.training import MLPClassifierTrainer, run_for

N_STEPS = sized(1000, 50)  # steps of a whole run (the tick benchmarks)
CHUNK = 100         # steps per turn in trainer_step
ROUNDS = 41
TICK_ROUNDS = 9     # whole runs per tick benchmark
DATA = make_dataset("circles", 256, seed=0)


def make_plain(data: ToyData, hidden: int = 16, lr: float = 0.5,
               seed: int = 0) -> Callable[[int], list[float]]:
    """MLPClassifierTrainer's model and updates as a bare loop: run(n) does n more full-batch
    gradient-descent steps and returns the loss before each update."""
    x = torch.as_tensor(data.points, dtype=torch.float32)
    y = torch.as_tensor(data.labels, dtype=torch.float32)
    g = make_generator(seed, "cpu")
    model = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (1.0 / math.sqrt(p.shape[-1])))

    def run(n: int) -> list[float]:
        losses = []
        for _ in range(n):
            model.zero_grad(set_to_none=True)
            loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
            losses.append(float(loss.detach()))
        return losses
    return run


def plain_losses(data: ToyData, n: int, hidden: int = 16, lr: float = 0.5,
                 seed: int = 0) -> list[float]:
    """The first n losses of the bare loop (make_plain)."""
    return make_plain(data, hidden, lr, seed)(n)


def _trainer() -> MLPClassifierTrainer:
    return MLPClassifierTrainer(DATA.points, DATA.labels, hidden=16, lr=0.5, seed=0,
                                device="cpu")


def _ratio(runs: dict, name: str, steps: int, rounds: int) -> tuple[float, float, float]:
    """(median per-round CPU-time ratio plain/`name`, its wall-time twin, plain it/s); each
    run does `steps` steps."""
    times = alternating_times(runs, rounds=rounds)
    cpu = statistics.median(p[1] / t[1] for p, t in zip(times["plain"], times[name]))
    wall = statistics.median(p[0] / t[0] for p, t in zip(times["plain"], times[name]))
    plain_its = steps / statistics.median(p[0] for p in times["plain"])
    return cpu, wall, plain_its


def trainer_step() -> Measurement:
    """One trainer and one bare loop, each advanced CHUNK steps in turn, ROUNDS times: load
    changes hit both alike within a round (a fraction of a second)."""
    plain_run, trainer = make_plain(DATA), _trainer()
    cpu, wall, its = _ratio({"plain": lambda: plain_run(CHUNK),
                             "trainer": lambda: trainer.step(CHUNK)}, "trainer", CHUNK, ROUNDS)
    return Measurement(cpu, "x plain loop", f"trainer.step({CHUNK}) / the same bare loop, "
                       f"CPU time, median of {ROUNDS} alternating rounds (wall {wall:.2f}x; "
                       f"plain {its:,.0f} it/s); target >= 0.95x")


def _ticks(budget_s: float) -> None:
    t = _trainer()
    while t.steps < N_STEPS:
        run_for(t, N_STEPS - t.steps, budget_s)


def ticks(budget_s: float) -> Measurement:
    """Whole runs of N_STEPS in ticks of budget_s against whole bare runs, alternately."""
    cpu, wall, _ = _ratio({"plain": lambda: plain_losses(DATA, N_STEPS),
                           "ticks": lambda: _ticks(budget_s)}, "ticks", N_STEPS, TICK_ROUNDS)
    return Measurement(cpu, "x plain loop", f"run_for ticks of {budget_s:.1f} s (no redraw), "
                       f"CPU time (wall {wall:.2f}x)")


def bookkeeping() -> Measurement:
    """CPU microseconds the base adds per iteration: step(n) over an _iteration that only
    returns its metrics."""
    from engine.training import TrainerBase

    class Empty(TrainerBase):
        def _iteration(self) -> dict[str, float]:
            return {"loss": 1.0}

    n, t = 100_000, Empty()
    c0 = time.process_time()
    t.step(n)
    us = (time.process_time() - c0) / n * 1e6
    return Measurement(us, "us/it", "TrainerBase.step loop around an empty _iteration "
                       "(the reference iteration costs ~1,000 us)")


def plain() -> Measurement:
    plain_losses(DATA, 50)
    t0 = time.perf_counter()
    plain_losses(DATA, N_STEPS)
    return Measurement(N_STEPS / (time.perf_counter() - t0), "it/s", "bare GD loop, 2-16-1 MLP, 256 points")


BENCHMARKS = {
    "training: plain loop (reference)": plain,
    "training: trainer.step(n) / plain": trainer_step,
    "training: base bookkeeping per iteration": bookkeeping,
    "training: run_for ticks of 0.4 s / plain": lambda: ticks(0.4),
    "training: run_for ticks of 0.1 s / plain": lambda: ticks(0.1),
}
