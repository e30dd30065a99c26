"""Pretrain the GAN page's first-paint snapshot(s), engine.gan.PRETRAINED: the page's default
GAN (ring of 8, σ = 0.05, 2×64 networks, seed 0) trained for spec.steps iterations, in chunks
of 50 as the live page does. Writes assets/weights/gan_<name>.pt (~0.2 MB) with the full
trainer state, so Play continues from it; the page's Reset trains from scratch.

    python -m scripts.pretrain gan
"""
from __future__ import annotations

import time
from pathlib import Path

import torch

from engine.gan import (PRETRAINED, GANTrainer, make_target, save_trainer,
                        trainer_config)

CHUNK = 50


def weights_path(out_dir: Path, name: str) -> Path:
    return Path(out_dir) / f"gan_{name}.pt"


def pretrain(out_dir: Path) -> list[Path]:
    from engine.device import configure_threads
    configure_threads({})   # one thread for torch and BLAS alike
    paths = []
    for name, spec in PRETRAINED.items():
        t0 = time.perf_counter()
        trainer = GANTrainer(make_target(spec.target, spec.std, spec.seed), seed=spec.seed,
                             device="cpu", **spec.kwargs)
        while trainer.steps < spec.steps:
            trainer.step(min(CHUNK, spec.steps - trainer.steps))
        cov = trainer.coverage()
        path = weights_path(out_dir, name)
        save_trainer(trainer, path, trainer_config(spec.target, spec.std, spec.seed,
                                                   spec.kwargs),
                     {"name": name, "steps": trainer.steps,
                      "modes_covered": cov.modes_covered, "torch": str(torch.__version__)})
        print(f"  {name}: {trainer.steps} iterations, {cov.modes_covered}/{cov.n_modes} modes, "
              f"{time.perf_counter() - t0:.1f} s")
        paths.append(path)
    return paths
