"""Shipped weights (assets/weights/attention_<task>.pt, built by scripts/pretrain_attention.py),
written and read through engine/weights.py (model_config = ModelConfig's fields)."""
from __future__ import annotations

from pathlib import Path

import torch

from engine import weights
from engine.device import resolve_device
from engine.attention.model import ModelConfig, TinyTransformer
from engine.attention.trainer import TransformerTrainer


MODEL_CONFIG_KEYS = ("n_layers", "n_heads", "d_model", "vocab", "max_len")


def model_config_of(config: ModelConfig) -> dict:
    """The model_config of a weights file (plain ints: loads with weights_only=True)."""
    return {k: int(getattr(config, k)) for k in MODEL_CONFIG_KEYS}


def weights_payload(trainer: TransformerTrainer) -> dict:
    """(model_config, state, meta) of a trained TransformerTrainer for weights.save; meta
    holds the task and the steps trained (scripts add the measured token accuracy)."""
    return {"model_config": model_config_of(trainer.config),
            "state": trainer.model.state_dict(),
            "meta": {"task": trainer.task.name, "steps": int(trainer.steps)}}


def save_pretrained(path, trainer: TransformerTrainer, **meta) -> Path:
    """Write assets/weights/attention_<task>.pt through engine/weights.py."""
    p = weights_payload(trainer)
    return weights.save(path, p["model_config"], p["state"], {**p["meta"], **meta})


def model_from_weights(w: weights.Weights, device: str | torch.device | None = "cpu"
                       ) -> tuple[TinyTransformer, dict]:
    """(model in eval mode, info) from loaded weights; info = meta plus "config" (the
    model_config), i.e. {"task", "steps", "config", "token_accuracy"} for shipped files."""
    try:
        model = TinyTransformer(ModelConfig(**w.model_config))
        model.load_state_dict(w.state)
    except (TypeError, ValueError, RuntimeError) as err:
        raise weights.StaleWeightsError(
            f"weights file {w.path} does not fit a TinyTransformer ({type(err).__name__}: "
            f"{err}): {weights.REBUILD_HINT}") from err
    model.eval()
    return model.to(resolve_device(device)), {**w.meta, "config": dict(w.model_config)}


def load_pretrained(path, device: str | torch.device | None = "cpu"
                    ) -> tuple[TinyTransformer, dict]:
    """(model, info) from a file written by save_pretrained. Raises weights.WeightsError
    (missing, corrupt or stale file) with a message that says how to rebuild it."""
    return model_from_weights(weights.load(path, "cpu"), device)
