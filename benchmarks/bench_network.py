"""Network page: what a live frame and a slider move compute (CPU time on the 2-core
machine). A live frame of 6 hidden layers x 8 neurons: every neuron's map over the plane
(numpy, one batched pass), the figure as a plain dict, and its canvas payload; the trainer's
SGD steps against a plain PyTorch loop on the same model and batches."""
from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from benchmarks import Measurement, sized
from engine.network import NetworkTrainer
from live.parts import Figure

DEEP = dict(dataset="spiral", features=("x1", "x2"), hidden=(8,) * 6, activation="relu",
            lr=0.03)


class _View:
    """What live_parts hands the frame builder: a trainer's snapshot and history."""

    def __init__(self, trainer):
        self.trainer, self.steps = trainer, trainer.steps
        self.diverged_at, self.history = trainer.diverged_at, trainer.history

    def snapshot(self):
        return self.trainer.snapshot()


def _cpu(fn, repeat: int) -> float:
    """Median CPU seconds of fn() over `repeat` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return sorted(times)[len(times) // 2]


def frame_parts(part: str) -> Measurement:
    from topics.network.compute import OUT_RES, frame_maps
    from topics.network.page import network_frame_parts
    trainer = NetworkTrainer(**DEEP, seed=0)
    trainer.step(sized(200, 5))
    view = _View(trainer)
    snap = view.snapshot()
    repeat = sized(9, 1)
    if part == "maps":
        t = _cpu(lambda: (frame_maps(snap.layers, snap.activation, snap.features, set()),
                          frame_maps(snap.layers, snap.activation, snap.features, set(),
                                     OUT_RES)), repeat)
        return Measurement(t * 1e3, "ms", "every neuron's 20x20 map and the 48x48 output, "
                                          "6x8 ReLUs")

    def build():
        return network_frame_parts(view, None, knocked=frozenset(), show_test=True,
                                   discretize=False)
    if part == "parts":
        t = _cpu(build, repeat)
        return Measurement(t * 1e3, "ms", "network_frame_parts: maps + figure dict + "
                                          "caption, 6x8; target <= 30 ms")
    fig = build()["ne_fig_net"]
    assert isinstance(fig, Figure)
    t = _cpu(lambda: fig.payload(False), repeat)
    return Measurement(t * 1e3, "ms", "the figure's canvas payload (JSON), 6x8")


def training_ratio() -> Measurement:
    """The trainer's steps per CPU second over a plain loop's (same model, batches, SGD)."""
    n = sized(2000, 20)
    trainer = NetworkTrainer(**DEEP, seed=0)
    t0 = time.process_time()
    trainer.step(n)
    ours = time.process_time() - t0
    plain = NetworkTrainer(**DEEP, seed=0)
    model, opt, x, y = plain.model, plain.opt, plain.x, plain.y
    batches = [torch.randperm(len(y))[:plain.batch] for _ in range(n)]
    t0 = time.process_time()
    for idx in batches:
        loss = F.binary_cross_entropy_with_logits(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    base = time.process_time() - t0
    return Measurement(base / ours, "x plain loop",
                       "NetworkTrainer.step (train and test loss logged every 5th step) over a "
                       "bare SGD loop; 6x8 ReLUs")


BENCHMARKS = {
    "network: neuron maps of a 6x8 network": lambda: frame_parts("maps"),
    "network: live frame parts, 6x8": lambda: frame_parts("parts"),
    "network: live frame canvas payload, 6x8": lambda: frame_parts("payload"),
    "network: training vs a plain PyTorch loop": training_ratio,
}
