"""Every trainer and the heavy engine ops on every device this machine has (CPU always;
CUDA / MPS when present), at the sizes the pages use. On a CPU-only machine this prints the
CPU column only; on a GPU machine it gives the speed-up the sidebar's device choice buys.

Rates are iterations per second of `trainer.step(n)` (each step returns Python floats, so the
device is synchronised once per call); op times are the median of a few runs with an explicit
synchronisation after each."""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from benchmarks import Measurement, median_time, sized
from benchmarks.cuda_graph import GraphedStep, classifier_step_fn, mlp_step, sync
from engine import attention, conv, diffusion, gan, optim, recurrent, regions, vae
from engine.datasets import DATASETS
from engine.device import available_devices
from engine.training import MLPClassifierTrainer
from ui.topics import ROOT

TRAIN_STEPS = sized(60, 3)
WEIGHTS = ROOT / "assets" / "weights"


_sync = sync


def _toy(name: str):
    return DATASETS[name](n=512, seed=0)


# name -> (factory(device) -> trainer, what one step is)
TRAINERS: dict[str, tuple[Callable[[str], object], str]] = {
    "MLP classifier (foundation)": (
        lambda d: MLPClassifierTrainer(_toy("two_moons").points, _toy("two_moons").labels,
                                       device=d), "full batch of 512"),
    "ReLU regions": (lambda d: regions.RegionTrainer((16, 16, 16), seed=0, device=d),
                     "full batch, 3x16"),
    "LSTM delayed recall": (lambda d: recurrent.SequenceTrainer("lstm", seed=0, device=d),
                            "batch 64, length 10, hidden 16"),
    "Transformer (reverse)": (lambda d: attention.TransformerTrainer("reverse", seed=0, device=d),
                              "batch 128"),
    "GAN (ring of 8)": (lambda d: gan.GANTrainer(gan.make_target("ring of 8", 0.05, 0), seed=0,
                                                 device=d),
                        "1 D + 1 G update, G/D 2x128 (engine defaults), batch 256"),
    "VAE (digits)": (lambda d: vae.VAETrainer(seed=0, device=d), "minibatch of 128 digits"),
    "Diffusion EpsMLP": (lambda d: diffusion.DiffusionTrainer(diffusion.weighted_mixture().points,
                                                              seed=0, device=d), "batch 256"),
}


def _trainer_rate(factory: Callable[[str], object], device: str) -> float:
    tr = factory(device)
    tr.step(5)                                   # warm-up: lazy init, kernels, caches
    _sync(device)
    t0 = time.perf_counter()
    tr.step(TRAIN_STEPS)
    _sync(device)
    return TRAIN_STEPS / (time.perf_counter() - t0)


def _ddpm(device: str) -> None:
    model, sched, _ = diffusion.load_model(WEIGHTS / "diffusion_mixture.pt", device)
    diffusion.ddpm_sample(diffusion.network_eps(model), 2000, sched, seed=0, device=device)


def _erf(device: str) -> None:
    model = conv.build_cnn([{"kernel": 3}] * 6)
    conv.effective_receptive_field(model, (1, 64, 64), n_samples=32, device=device)


def _rate_map(device: str) -> None:
    optim.rate_map(optim.Quadratic.from_spectrum((0.05, 1.0), angle_deg=30.0),
                   np.geomspace(0.01, 4.2, 60), np.linspace(0.0, 0.99, 60), 300, device=device)


OPS: dict[str, tuple[Callable[[str], None], str]] = {
    "DDPM sampling": (_ddpm, "T = 1000 steps x 2000 particles, shipped EpsMLP"),
    "effective receptive field": (_erf, "6 conv layers 3x3, 64x64 input, 32 samples"),
    "heavy-ball rate map": (_rate_map, "60 x 60 (lr, beta) runs x 300 steps"),
}


def _op_seconds(fn: Callable[[str], None], device: str) -> float:
    def run() -> None:
        fn(device)
        _sync(device)
    return median_time(run, repeat=3, warmup=1)


STEP_ITERS = sized(300, 10)


def _mlp_step_rate(device: str, graph: bool, depth: int = 2, width: int = 128) -> float:
    """it/s of one full-batch Adam step (batch 256) of a depth x width MLP: eager, or replayed
    from a CUDA graph (benchmarks.cuda_graph.GraphedStep; no host sync inside the loop)."""
    model, opt, x, y, eager = mlp_step(device, depth, width, capturable=graph)
    if graph:
        graphed = GraphedStep(classifier_step_fn(model, opt), {"x": x, "y": y}, warmup=3)
        step = lambda: graphed()            # full batch: the static inputs never change
    else:
        step = eager
    for _ in range(10):                     # warm-up (and capture, for the graph)
        step()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(STEP_ITERS):
        step()
    _sync(device)
    return STEP_ITERS / (time.perf_counter() - t0)


def _entries() -> dict[str, Callable[[], Measurement]]:
    entries: dict[str, Callable[[], Measurement]] = {}
    step_note = "2x128 tanh MLP, Adam, full batch 256 (the 2x128 GAN nets' size)"
    for device in available_devices()[::-1]:
        entries[f"devices: 2x128 MLP step eager on {device}"] = (
            lambda d=device: Measurement(_mlp_step_rate(d, False), "it/s", step_note))
        if device == "cuda":
            entries["devices: 2x128 MLP step CUDA graph on cuda"] = (
                lambda: Measurement(_mlp_step_rate("cuda", True), "it/s",
                                    step_note + ", captured once, replayed"))
    for device in available_devices()[::-1]:      # cpu first
        for name, (factory, what) in TRAINERS.items():
            entries[f"devices: {name} on {device}"] = (
                lambda f=factory, d=device, w=what: Measurement(_trainer_rate(f, d), "it/s", w))
        for name, (fn, what) in OPS.items():
            entries[f"devices: {name} on {device}"] = (
                lambda f=fn, d=device, w=what: Measurement(_op_seconds(f, d), "s", w))
    return entries


BENCHMARKS = _entries()
