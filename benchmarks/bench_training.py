"""The live-training machinery against a plain PyTorch loop, on the reference trainer
(2-16-1 tanh MLP, full batch of 256 points): how much do the protocol and time-budgeted
ticks (engine.training.run_for) cost?"""
from __future__ import annotations

import time

import torch
from torch import nn

from benchmarks import Measurement
from engine.datasets import make_dataset
from engine.training import MLPClassifierTrainer, run_for

N_STEPS = 2000
DATA = make_dataset("circles", 256, seed=0)


def _plain_loop_its() -> float:
    torch.manual_seed(0)
    x = torch.as_tensor(DATA.points)
    y = torch.as_tensor(DATA.labels, dtype=torch.float32)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    t0 = time.perf_counter()
    for _ in range(N_STEPS):
        opt.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        loss.backward()
        opt.step()
        float(loss.detach())  # the trainer reads the loss every step too
    return N_STEPS / (time.perf_counter() - t0)


_PLAIN: list[float] = []


def plain() -> float:
    if not _PLAIN:
        _plain_loop_its()            # warm-up
        _PLAIN.append(_plain_loop_its())
    return _PLAIN[0]


def _trainer():
    return MLPClassifierTrainer(DATA.points, DATA.labels, hidden=16, lr=0.5, seed=0,
                                device="cpu")


def trainer_step() -> Measurement:
    t = _trainer()
    t0 = time.perf_counter()
    t.step(N_STEPS)
    its = N_STEPS / (time.perf_counter() - t0)
    return Measurement(its, "it/s", f"{its / plain():.2f}x the plain loop ({plain():,.0f} it/s)")


def ticks(budget_s: float) -> Measurement:
    t = _trainer()
    t0 = time.perf_counter()
    while t.steps < N_STEPS:
        run_for(t, N_STEPS - t.steps, budget_s)
    its = N_STEPS / (time.perf_counter() - t0)
    return Measurement(its, "it/s", f"{its / plain():.2f}x the plain loop; ticks of "
                                    f"{budget_s:.1f} s (no redraw)")


BENCHMARKS = {
    "training: plain PyTorch loop (reference)": lambda: Measurement(plain(), "it/s", "SGD, 2-16-1 MLP, 256 points"),
    "training: trainer.step(n)": trainer_step,
    "training: run_for ticks of 0.4 s": lambda: ticks(0.4),
    "training: run_for ticks of 0.1 s": lambda: ticks(0.1),
}
