"""Pretrain the diffusion page's eps-networks (EpsMLP, linear schedule, T = 1000), one per
default dataset of engine.diffusion.PRETRAINED, class-conditional with label dropout so
classifier-free guidance works. Writes assets/weights/diffusion_<dataset>.pt (~20 KB each).

    python -m scripts.pretrain diffusion
"""
from __future__ import annotations

import time
from pathlib import Path

import torch

from engine.diffusion import (DIFFUSION_DATA, PRETRAINED, DiffusionTrainer, Schedule,
                              save_model)

N_POINTS = 4000
STEPS = 3000
FINE_TUNE = 1000      # last steps at lr / 4
LR = 2e-3


def weights_path(out_dir: Path, name: str) -> Path:
    return Path(out_dir) / f"diffusion_{name}.pt"


def train_one(name: str, seed: int = 0, steps: int = STEPS) -> DiffusionTrainer:
    data = DIFFUSION_DATA[name](n=N_POINTS, seed=seed)
    trainer = DiffusionTrainer(data.points, data.labels, Schedule.linear(), lr=LR, seed=seed,
                               device="cpu")
    trainer.step(steps - FINE_TUNE)
    for group in trainer.opt.param_groups:
        group["lr"] = LR / 4
    trainer.step(FINE_TUNE)
    return trainer


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    torch.set_num_threads(1)
    paths = []
    for name in PRETRAINED:
        t0 = time.perf_counter()
        trainer = train_one(name, seed)
        path = weights_path(out_dir, name)
        save_model(trainer.model, trainer.schedule, path,
                   {"dataset": name, "steps": trainer.steps, "seed": seed,
                    "final_loss": trainer.history.last("loss")})
        print(f"  {name}: {trainer.steps} steps, loss {trainer.history.last('loss'):.3f}, "
              f"{time.perf_counter() - t0:.1f} s")
        paths.append(path)
    return paths
