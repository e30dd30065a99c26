"""Generalization page: trainer throughput against a plain PyTorch loop on the same network
and data (target >= 0.9x), and the closed-form double-descent curve (40 widths, n = 100;
target < 0.5 s)."""
from __future__ import annotations

import statistics
import time

import torch
from torch import nn
from torch.nn import functional as F

from benchmarks import Measurement, median_time, sized, torch_threads
from engine.generalization import double_descent as dd
from engine import generalization as G

CONFIG = G.TrainConfig(dataset="two_moons", n_train=100, noise=0.2, label_noise=0.2, width=128,
                       depth=2, lr=0.003, weight_decay=0.1)   # the page's Overfitting defaults + AdamW
STEPS = sized(200, 5)


def _plain_loop(data: G.SplitData):
    """nn.Sequential + torch.optim.AdamW, full batch, no metrics (same sizes and data)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=CONFIG.lr, weight_decay=CONFIG.weight_decay)
    x, y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)

    def loop():
        for _ in range(STEPS):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return loop


_RATES: dict[str, float] = {}


def _rates(rounds: int = 7) -> dict[str, float]:
    """Steps/s of both in alternating rounds (machine-load drift hits both); the trainer
    includes its evaluation every log_every = 10 steps."""
    if not _RATES:
        with torch_threads(1):
            trainer = G.GeneralizationTrainer(CONFIG, seed=0, device="cpu")
            plain = _plain_loop(trainer.data)
            trainer.step(20), plain()
            wall = {"plain": [], "trainer": []}
            cpu = {"plain": [], "trainer": []}
            for _ in range(sized(rounds, 1)):
                for name, fn in (("plain", plain), ("trainer", lambda: trainer.step(STEPS))):
                    t0, c0 = time.perf_counter(), time.process_time()
                    fn()
                    wall[name].append(time.perf_counter() - t0)
                    cpu[name].append(time.process_time() - c0)
        _RATES.update({k: STEPS / statistics.median(v) for k, v in wall.items()})
        _RATES["cpu_ratio"] = statistics.median(cpu["plain"]) / statistics.median(cpu["trainer"])
        _RATES["wall_ratio"] = statistics.median(p / t for p, t in zip(wall["plain"], wall["trainer"]))
    return _RATES


def _curve(trials: int) -> Measurement:
    widths = dd.default_widths(100)
    with torch_threads(1):
        t = median_time(lambda: dd.random_features_curve(100, widths, trials=trials), repeat=5)
    return Measurement(t, "s", f"{len(widths)} widths 1..1000, n = 100, {trials} feature draw(s), "
                               f"1 torch thread; target < 0.5 s")


BENCHMARKS = {
    "generalization: plain PyTorch loop": lambda: Measurement(
        _rates()["plain"], "it/s", "2-128-128-2 MLP, 100 moons, full batch, AdamW"),
    "generalization: engine trainer": lambda: Measurement(
        _rates()["trainer"], "it/s", "GeneralizationTrainer.step, evaluation every 10 steps"),
    "generalization: trainer / plain loop": lambda: Measurement(
        _rates()["wall_ratio"], "x plain loop",
        f"wall-time ratio per round; CPU-time ratio {_rates()['cpu_ratio']:.2f}; target >= 0.9"),
    "generalization: double-descent curve (page, 2 draws)": lambda: _curve(2),
    "generalization: double-descent curve (1 draw)": lambda: _curve(1),
}
