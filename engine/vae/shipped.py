"""The VAE page's shipped weights (assets/weights/vae_*.pt, written by scripts/pretrain_vae.py):
which settings have a file (SHIPPED), and their save/load through engine.weights (one file =
the VAETrainer.state_dict(), model_config = VAE.config()).
"""
from __future__ import annotations

from pathlib import Path

import torch

from engine import weights as weights_file
from engine.device import resolve_device
from engine.vae.model import VAE
from engine.vae.trainer import VAETrainer


def load_model(state: dict, device: str | torch.device | None = None) -> VAE:
    """A VAE rebuilt from a state_dict() (config + weights), e.g. load_shipped(name)."""
    cfg = state["config"]
    model = VAE(cfg["input_dim"], cfg["latent_dim"], tuple(cfg["hidden"]), cfg["likelihood"],
                cfg["deterministic"])
    model.load_state_dict(state["model"])
    return model.to(resolve_device(device)).eval()


WEIGHTS_DIR = Path(__file__).resolve().parents[2] / "assets" / "weights"
PRETRAIN_EPOCHS = 120
SHIPPED: dict[str, dict] = {  # file name -> VAETrainer keyword arguments
    "vae_d2_bernoulli.pt": dict(latent_dim=2, beta=1.0, likelihood="bernoulli", deterministic=False),
    "vae_ae_d2_bernoulli.pt": dict(latent_dim=2, beta=1.0, likelihood="bernoulli", deterministic=True),
}
SHIPPED_HIDDEN = (256, 128)   # VAETrainer's default, what every shipped file was trained with


def shipped_name(latent_dim: int, likelihood: str, deterministic: bool) -> str | None:
    """The shipped weight file for these settings, or None."""
    for name, kw in SHIPPED.items():
        if (kw["latent_dim"], kw["likelihood"], kw["deterministic"]) == (latent_dim, likelihood, deterministic):
            return name
    return None


def shipped_config(name: str) -> dict:
    """The VAE.config() a shipped file must hold (what the code builds for it today)."""
    kw = SHIPPED[name]
    return {"input_dim": 64, "latent_dim": kw["latent_dim"], "hidden": list(SHIPPED_HIDDEN),
            "likelihood": kw["likelihood"], "deterministic": kw["deterministic"]}


def save_trainer(trainer: VAETrainer, path, meta: dict | None = None) -> None:
    """trainer.state_dict() as one engine.weights file: model_config = the VAE's config(),
    state = the weights, steps, history and latent snapshots (the page's replay)."""
    state = {k: v for k, v in trainer.state_dict().items() if k != "config"}
    weights_file.save(path, trainer.model.config(), state, meta or {})


def load_shipped(path_or_name, device: str | torch.device = "cpu") -> dict:
    """The VAETrainer.state_dict() stored in a file written by save_trainer (a path, or a
    name in SHIPPED under WEIGHTS_DIR), for VAETrainer.load_state_dict or load_model. A
    missing, corrupt or stale file (a SHIPPED name whose stored config is not what the code
    builds for it) raises an engine.weights.WeightsError."""
    in_dir = isinstance(path_or_name, str) and path_or_name in SHIPPED
    path = WEIGHTS_DIR / path_or_name if in_dir else Path(path_or_name)
    expect = shipped_config(path.name) if path.name in SHIPPED else None
    stored = weights_file.load(path, device, expect_config=expect)
    return {**stored.state, "config": stored.model_config}
