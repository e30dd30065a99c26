"""The shipped models of the autoregressive page (assets/weights/autoregressive_*.pt, written by
scripts/pretrain_autoregressive.py through engine/weights.py):

    PIXELCNN  name -> the PixelCNNTrainer settings trained offline (the whole trainer state is
              stored, so Play continues from it), the page's defaults plain and gated
    WAVENETS  name -> the dilation schedule of a WaveNet on the synthetic vowels

Each file's model_config is what rebuilds the model; loading a file whose config differs from
the one asked for raises weights.StaleWeightsError."""
from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from engine import weights
from engine.autoregressive.trainer import PixelCNNTrainer
from engine.autoregressive.wavenet import SCHEDULES, WaveNet

DEFAULTS = {"levels": 4, "hidden": 32, "layers": 4, "lr": 0.01, "conditional": False,
            "batch": 64, "seed": 0}
PIXELCNN: dict[str, dict] = {"plain": {**DEFAULTS, "gated": False},
                             "gated": {**DEFAULTS, "gated": True}}
PIXELCNN_STEPS = 600         # iterations trained offline (test bits are lowest near here)
WAVENET_STEPS = 600
WAVENET_CHANNELS = 16
WAVENETS = tuple(SCHEDULES)  # "dilated", "undilated"


def pixelcnn_file(root: Path, name: str) -> Path:
    return Path(root) / f"autoregressive_pixelcnn_{name}.pt"


def wavenet_file(root: Path, name: str) -> Path:
    return Path(root) / f"autoregressive_wavenet_{name}.pt"


def save_trainer(path: Path | BinaryIO, trainer: PixelCNNTrainer, meta: dict | None = None
                 ) -> Path | BinaryIO:
    """The trainer's whole state (model, Adam, history, sampling RNG) with its settings."""
    return weights.save(path, dict(trainer.config), trainer.state_dict(), meta or {})


def load_trainer(path_or_bytes, device: str = "cpu", expect: dict | None = None
                 ) -> PixelCNNTrainer:
    """A PixelCNNTrainer rebuilt from its stored settings and state; it continues where the
    file stopped. `expect`: the settings the caller wants (StaleWeightsError otherwise)."""
    w = weights.load(path_or_bytes, "cpu", expect_config=expect)
    trainer = PixelCNNTrainer(**w.model_config, device=device)
    trainer.load_state_dict(w.state)
    trainer.pretrained_steps = int(trainer.steps)
    return trainer


def save_wavenet(path: Path | BinaryIO, model: WaveNet, meta: dict | None = None
                 ) -> Path | BinaryIO:
    config = {"dilations": list(model.dilations), "channels": int(model.inp.out_channels)}
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    return weights.save(path, config, state, meta or {})


def load_wavenet(path_or_bytes, expect: dict | None = None) -> WaveNet:
    w = weights.load(path_or_bytes, "cpu", expect_config=expect)
    model = WaveNet(tuple(w.model_config["dilations"]), int(w.model_config["channels"]))
    model.load_state_dict(w.state)
    return model.eval()


def wavenet_config(name: str) -> dict:
    return {"dilations": list(SCHEDULES[name]), "channels": WAVENET_CHANNELS}
