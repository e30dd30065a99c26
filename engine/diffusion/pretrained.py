"""The diffusion page's shipped eps-networks (assets/weights/diffusion_<dataset>.pt, written by
scripts/pretrain_diffusion.py), saved and loaded through engine.weights.
"""
from __future__ import annotations

from engine import weights as weights_file
from engine.device import resolve_device
from engine.diffusion.network import EpsMLP
from engine.diffusion.schedule import SCHEDULES, Schedule


PRETRAINED = ("mixture", "two_moons", "swiss_roll", "spiral")


def save_model(model: EpsMLP, schedule: Schedule, path, meta: dict | None = None) -> None:
    """One engine.weights file: model_config {"net": EpsMLP config, "schedule": name, "T"},
    state = the network's state_dict(), meta = how it was trained."""
    config = {"net": model.config(), "schedule": schedule.name, "T": schedule.T}
    weights_file.save(path, config, model.state_dict(), meta or {})


def load_model(path_or_bytes, device=None) -> tuple[EpsMLP, Schedule, dict]:
    """(model, schedule, meta) from a file written by save_model (a path or its bytes; a
    missing, stale or corrupt file raises an engine.weights.WeightsError)."""
    stored = weights_file.load(path_or_bytes, "cpu")
    cfg = stored.model_config
    model = EpsMLP(**cfg["net"])
    model.load_state_dict(stored.state)
    model.eval()
    return (model.to(resolve_device(device)), SCHEDULES[cfg["schedule"]](int(cfg["T"])),
            dict(stored.meta))
