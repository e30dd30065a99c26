"""The shipped GPT: assets/weights/language_models_gpt.pt, made by
scripts/pretrain_language_models.py on the standard library's pydoc topics."""
from __future__ import annotations

from pathlib import Path

from engine import weights
from engine.language_models.gpt import GPT, GPTConfig

SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "weights" / "language_models_gpt.pt"


def model_from(w: weights.Weights) -> GPT:
    """A GPT in eval mode built from a loaded weights file (its config checked)."""
    cfg = GPTConfig(**w.model_config)
    if cfg != GPTConfig():
        raise weights.StaleWeightsError(f"{w.path}: its model {cfg} is not the page's "
                                        f"{GPTConfig()}; {weights.REBUILD_HINT}")
    model = GPT(cfg)
    model.load_state_dict(w.state)
    return model.eval()


def load_shipped(path: str | Path = SHIPPED) -> GPT:
    return model_from(weights.load(path))
