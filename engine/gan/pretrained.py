"""Defaults of the GAN trainer and page, and the pretrained snapshots: what
scripts/pretrain_gan.py trains, and their save/load through engine.weights (one file holds the
trainer's whole state, so Play continues from it).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from engine import weights as weights_file
from engine.gan.targets import make_target
from engine.gan.trainer import GANTrainer


# --------------------------------------------------------------------------------------
# Defaults of the trainer and of the page (the page's presets and their measured claims live in
# topics/gan/page.py, next to the text that states them)
# --------------------------------------------------------------------------------------

TRAINER_DEFAULTS: dict = dict(loss="nonsaturating", g_hidden=(128, 128), d_hidden=(128, 128),
                              latent_dim=2, lr_g=1e-3, lr_d=1e-3, optimizer="adam",
                              d_steps=1, unrolled_steps=0, r1_gamma=0.0, spectral_norm=False,
                              minibatch_std=False, pack=1, gp_lambda=10.0)

# What the page trains when no preset is chosen: the ring with 2×32 networks, so that 50
# iterations and one redraw fit in ~0.25 s on one CPU thread (benchmarks/bench_gan.py).
# Measured every 100 iterations up to 3,000: seed 0 covers >= 7 modes from 1,100 on and 8
# from 1,600 on; seeds 1-3 >= 7 from 1,800 on.
LIVE_TARGET: tuple[str, float] = ("ring of 8", 0.05)
LIVE_DEFAULTS: dict = {**TRAINER_DEFAULTS, "g_hidden": (32, 32), "d_hidden": (32, 32)}


# --------------------------------------------------------------------------------------
# Pretrained snapshots (assets/weights/gan_<name>.pt, written by scripts/pretrain_gan.py)
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PretrainSpec:
    target: str
    std: float
    kwargs: dict     # GANTrainer keyword arguments
    steps: int       # iterations trained offline
    seed: int = 0


# name -> what scripts/pretrain_gan.py trains; the page shows "default" at first paint
PRETRAINED: dict[str, PretrainSpec] = {
    "default": PretrainSpec(*LIVE_TARGET, LIVE_DEFAULTS, 3000),
}


def _plain(value):
    """Tuples as lists, recursively (the stored config compares equal to a page's)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def trainer_config(target: str, std: float, seed: int, kwargs: dict) -> dict:
    """The config a snapshot is stored with: enough to rebuild the trainer exactly."""
    return _plain({"target": target, "std": float(std), "seed": int(seed), "kwargs": kwargs})


def save_trainer(trainer: GANTrainer, path, config: dict, meta: dict | None = None) -> None:
    """The trainer's full state (G, D, both optimizers, history, mode history, RNG) as one
    engine.weights file (a path or an open binary buffer), with the config that built it (see
    trainer_config) as its model_config."""
    weights_file.save(path, _plain(config), trainer.state_dict(), meta or {})


def load_trainer(path_or_bytes, device: str | torch.device | None = None
                 ) -> tuple[GANTrainer, dict]:
    """(trainer, config) from a file written by save_trainer (a path, its bytes or the
    engine.weights.Weights read from it: only read, so one read can build many; read by
    engine.weights.load, so a missing, stale or corrupt file raises a WeightsError): the
    trainer is rebuilt from the stored config and continues exactly where the snapshot stopped
    (on another device than the CPU it keeps its own sampling RNG). trainer.pretrained holds
    the stored meta."""
    stored = path_or_bytes if isinstance(path_or_bytes, weights_file.Weights) else \
        weights_file.load(path_or_bytes, "cpu")
    cfg = stored.model_config
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in cfg["kwargs"].items()}
    trainer = GANTrainer(make_target(cfg["target"], cfg["std"], cfg["seed"]), seed=cfg["seed"],
                         device=device, **kwargs)
    state = dict(stored.state)
    if trainer.device.type != "cpu":
        state.pop("gen", None)      # a CPU generator's state does not fit a CUDA/MPS one
    trainer.load_state_dict(state)
    trainer.pretrained = dict(stored.meta)
    return trainer, cfg
