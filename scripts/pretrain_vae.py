"""Pretrained defaults of the VAE page (engine/vae/), on the 8x8 digits, 2-D latent:

- assets/weights/vae_d2_bernoulli.pt     the VAE (beta = 1, Bernoulli likelihood)
- assets/weights/vae_ae_d2_bernoulli.pt  the plain autoencoder (deterministic=True), same net

Each is one engine.weights file written by engine.vae.save_trainer: model_config = the VAE's
config, state = VAETrainer.state_dict() (weights + loss history + up to 80 snapshots of the
test digits' latent means, for the page's replay slider); read back with
engine.vae.load_shipped. What is shipped (SHIPPED, shipped_name) lives in engine.vae.
`python -m scripts.pretrain vae` runs this (< 1 min CPU).
"""
from __future__ import annotations

from pathlib import Path

import torch

from engine.vae import (PRETRAIN_EPOCHS, SHIPPED, SHIPPED_HIDDEN, VAETrainer,  # noqa: F401
                        reconstruction_mse, save_trainer, shipped_name)

EPOCHS = PRETRAIN_EPOCHS


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    from engine.device import configure_threads
    configure_threads({})   # one thread for torch and BLAS alike
    paths = []
    for name, kw in SHIPPED.items():
        tr = VAETrainer(seed=seed, device="cpu", hidden=SHIPPED_HIDDEN, **kw)
        tr.step(int(round(EPOCHS * tr.steps_per_epoch)))
        path = Path(out_dir) / name
        save_trainer(tr, path, {"trainer": {**kw, "hidden": list(SHIPPED_HIDDEN)},
                                "epochs": EPOCHS, "seed": seed, "steps": tr.steps})
        print(f"{name}: {tr.steps} steps, test recon {tr.history.last('test_recon'):.2f}, "
              f"kl {tr.history.last('test_kl'):.2f}, "
              f"pixel MSE {reconstruction_mse(tr.model, tr.data.x_test):.4f}", flush=True)
        paths.append(path)
    return paths
