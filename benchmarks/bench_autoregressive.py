"""Autoregressive page: what a slider move computes (targets on one CPU core): the receptive
field of one output pixel through 8 masked layers by autograd (< 100 ms per click), the
causal 1-D field (< 50 ms), sampling one 8 × 8 digit pixel by pixel (64 forward passes,
< 0.5 s), and the live PixelCNN trainer's speed against a plain PyTorch loop on the same
minibatches (>= 0.95x); reading a shipped PixelCNN once per process, one gated training
iteration against a plain one, and a WaveNet generating 208 samples one by one."""
from __future__ import annotations

import time

import torch

from benchmarks import Measurement, median_time
from engine.autoregressive import (PixelCNNTrainer, bits_per_pixel, causal_field,
                                   field_by_gradient, sample)


def field(stack: str = "pixelcnn") -> Measurement:
    t = median_time(lambda: field_by_gradient(stack, 20, 3, 8, 12, 9), repeat=7)
    return Measurement(t * 1e3, "ms", f"{stack}, 20 × 20 image, 8 layers of 3 × 3; "
                                      "target < 100 ms")


def causal() -> Measurement:
    t = median_time(lambda: causal_field(128, 2, (1, 2, 4, 8, 16, 32), 127), repeat=7)
    return Measurement(t * 1e3, "ms", "T = 128, dilations 1..32; target < 50 ms")


def one_digit() -> Measurement:
    trainer = PixelCNNTrainer(levels=4, seed=0)
    t = median_time(lambda: sample(trainer.model, 1, 1.0, seed=0), repeat=3)
    return Measurement(t, "s", "one 8 × 8 digit, 64 forward passes; target < 0.5 s")


def training_ratio(steps: int = 100) -> Measurement:
    trainer = PixelCNNTrainer(levels=4, seed=0)
    trainer.step(5)
    t0 = time.perf_counter()
    trainer.step(steps)
    live = time.perf_counter() - t0
    plain = PixelCNNTrainer(levels=4, seed=0)
    model, opt, x = plain.model, plain.opt, plain.x
    gen = torch.Generator().manual_seed(0)

    def plain_step() -> None:
        idx = torch.randint(0, len(x), (64,), generator=gen)
        loss = bits_per_pixel(model, x[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(5):
        plain_step()
    t0 = time.perf_counter()
    for _ in range(steps):
        plain_step()
    bare = time.perf_counter() - t0
    return Measurement(bare / live, "x", f"PixelCNNTrainer.step vs a plain loop, {steps} "
                                         "iterations of 64 digits; target >= 0.95")


def shipped_read() -> Measurement:
    from engine.autoregressive.pretrained import load_trainer, pixelcnn_file
    from ui.topics import ROOT
    path = pixelcnn_file(ROOT / "assets" / "weights", "plain")
    t = median_time(lambda: load_trainer(path), repeat=3)
    return Measurement(t * 1e3, "ms", "the shipped PixelCNN trainer read and rebuilt (once per "
                                      "process)")


def gated_cost(steps: int = 30) -> Measurement:
    times = {}
    for gated in (False, True):
        trainer = PixelCNNTrainer(levels=4, seed=0, gated=gated)
        trainer.step(3)
        times[gated] = median_time(lambda t=trainer: t.step(steps), repeat=3)
    return Measurement(times[True] / times[False], "x", f"gated / plain PixelCNN, {steps} "
                                                        "iterations of 64 digits")


def wavenet_generation() -> Measurement:
    from engine.autoregressive.wavenet import WaveNet, generate, vowels
    model = WaveNet()
    prompt = vowels(1, seed=0)[0, :48]
    t = median_time(lambda: generate(model, prompt, 256), repeat=3)
    return Measurement(t, "s", "208 samples, one forward pass each (the WaveNet tab's "
                                "continuation, cached per vowel and prompt)")


BENCHMARKS = {
    "autoregressive: masked field, 8 layers": field,
    "autoregressive: two-stack field, 8 layers": lambda: field("two-stack"),
    "autoregressive: causal 1-D field": causal,
    "autoregressive: sample one digit": one_digit,
    "autoregressive: live training vs plain loop": training_ratio,
    "autoregressive: read the shipped PixelCNN": shipped_read,
    "autoregressive: gated vs plain iteration": gated_cost,
    "autoregressive: WaveNet generation": wavenet_generation,
}
