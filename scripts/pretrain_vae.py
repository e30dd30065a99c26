"""Pretrained defaults of the VAE page (engine/vae.py), on the 8x8 digits, 2-D latent:

- assets/weights/vae_d2_bernoulli.pt     the VAE (beta = 1, Bernoulli likelihood)
- assets/weights/vae_ae_d2_bernoulli.pt  the plain autoencoder (deterministic=True), same net

Each is VAETrainer.state_dict() (config + weights + loss history + up to 80 snapshots of the
test digits' latent means, for the page's replay slider), loaded with
torch.load(..., weights_only=True). `python -m scripts.pretrain vae` runs this (< 1 min CPU).
"""
from __future__ import annotations

from pathlib import Path

import torch

from engine.vae import VAETrainer, reconstruction_mse

EPOCHS = 120
SHIPPED = {  # file name -> VAETrainer keyword arguments
    "vae_d2_bernoulli.pt": dict(latent_dim=2, beta=1.0, likelihood="bernoulli", deterministic=False),
    "vae_ae_d2_bernoulli.pt": dict(latent_dim=2, beta=1.0, likelihood="bernoulli", deterministic=True),
}


def shipped_name(latent_dim: int, likelihood: str, deterministic: bool) -> str | None:
    """The shipped weight file for these settings, or None."""
    for name, kw in SHIPPED.items():
        if (kw["latent_dim"], kw["likelihood"], kw["deterministic"]) == (latent_dim, likelihood, deterministic):
            return name
    return None


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    torch.set_num_threads(1)   # small matmuls: one thread is faster than two on a busy machine
    paths = []
    for name, kw in SHIPPED.items():
        tr = VAETrainer(seed=seed, device="cpu", **kw)
        tr.step(int(round(EPOCHS * tr.steps_per_epoch)))
        state = tr.state_dict()
        state["model"] = {k: v.to(torch.float32) for k, v in state["model"].items()}
        path = Path(out_dir) / name
        torch.save(state, path)
        print(f"{name}: {tr.steps} steps, test recon {tr.history.last('test_recon'):.2f}, "
              f"kl {tr.history.last('test_kl'):.2f}, "
              f"pixel MSE {reconstruction_mse(tr.model, tr.data.x_test):.4f}", flush=True)
        paths.append(path)
    return paths
