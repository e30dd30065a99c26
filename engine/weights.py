"""One file format for the small pretrained weights in assets/weights/.

A weights file is a torch.save of one plain dictionary

    {"format": "dlplay-weights", "version": FORMAT_VERSION,
     "model_config": {...},      # how to build the model (plain str/int/float/bool/list/dict)
     "state": {name: Tensor},    # model.state_dict() (or several, as nested dicts of tensors)
     "meta": {...}}              # how it was made: recipe, seed, measured accuracy, ...

read back with torch.load(weights_only=True), so loading never runs pickled code. Every way
a file can be unusable raises a WeightsError subclass whose message says what to do:

    MissingWeightsError  the file does not exist
    CorruptWeightsError  torch cannot read it (truncated, random bytes) or it is not a dict
    StaleWeightsError    readable, but written in an older format / another version, or its
                         model_config is not the one the caller expects (the architecture
                         changed since the file was made)

scripts/ write through `save`; pages read through viz.weights.cached_weights (the Streamlit
cache around `load`).
"""
from __future__ import annotations

import math
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

FORMAT = "dlplay-weights"
FORMAT_VERSION = 1
REBUILD_HINT = "rebuild it with `python -m scripts.pretrain <topic>`"


class WeightsError(Exception):
    """A weights file that cannot be used (base of the three cases below)."""


class MissingWeightsError(WeightsError, FileNotFoundError):
    pass


class CorruptWeightsError(WeightsError):
    pass


class StaleWeightsError(WeightsError):
    pass


@dataclass(frozen=True)
class Weights:
    path: str
    version: int
    model_config: dict
    state: dict          # name -> Tensor (on the device given to load), or nested dicts of them
    meta: dict


PLAIN_SCALARS = (str, int, float, bool, type(None))


def _check_plain(value: Any, where: str) -> None:
    """model_config and meta must load under weights_only=True: plain scalars, lists, tuples
    and dicts with string keys (no dataclasses, numpy arrays or tensors)."""
    if isinstance(value, PLAIN_SCALARS):
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_plain(v, f"{where}[{i}]")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: key {k!r} is not a string")
            _check_plain(v, f"{where}.{k}")
        return
    raise TypeError(f"{where} is a {type(value).__name__}; weights files hold only plain "
                    "str/int/float/bool/None/list/tuple/dict values in model_config and meta")


def _check_state(state: Any, where: str = "state") -> None:
    if isinstance(state, torch.Tensor):
        return
    if isinstance(state, Mapping) and state:
        for k, v in state.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: key {k!r} is not a string")
            _check_state(v, f"{where}.{k}")
        return
    raise TypeError(f"{where} must be a tensor or a non-empty dict of tensors, "
                    f"not {type(state).__name__}")


def _cpu_clone(state: Any) -> Any:
    if isinstance(state, torch.Tensor):
        return state.detach().to("cpu").clone()
    return {k: _cpu_clone(v) for k, v in state.items()}


def _to_device(state: Any, device: torch.device) -> Any:
    if isinstance(state, torch.Tensor):
        return state.to(device)
    return {k: _to_device(v, device) for k, v in state.items()}


def save(path: str | Path, model_config: Mapping, state: Mapping, meta: Mapping | None = None) -> Path:
    """Write one weights file (tensors moved to the CPU). Raises TypeError for values that
    could not be read back with weights_only=True."""
    meta = dict(meta or {})
    _check_plain(dict(model_config), "model_config")
    _check_plain(meta, "meta")
    _check_state(state)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "version": FORMAT_VERSION, "model_config": dict(model_config),
               "state": _cpu_clone(state), "meta": meta}
    torch.save(payload, path)
    return path


READ_ERRORS = (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile,
               ValueError, KeyError, AttributeError, IndexError, OSError)


def load(path: str | Path, device: str | torch.device = "cpu",
         expect_config: Mapping | None = None) -> Weights:
    """Read a weights file onto `device`. With expect_config, a file whose model_config differs
    (another architecture than the code builds today) is stale."""
    path = Path(path)
    if not path.is_file():
        raise MissingWeightsError(f"weights file {path} is missing: {REBUILD_HINT}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except READ_ERRORS as err:
        raise CorruptWeightsError(f"weights file {path} is corrupt or not a torch file "
                                  f"({type(err).__name__}): {REBUILD_HINT}") from err
    if not isinstance(payload, dict):
        raise CorruptWeightsError(f"weights file {path} holds a {type(payload).__name__}, "
                                  f"not a weights dictionary: {REBUILD_HINT}")
    if payload.get("format") != FORMAT:
        raise StaleWeightsError(f"weights file {path} is in an older format (a bare state "
                                f"dict, no '{FORMAT}' header): {REBUILD_HINT}")
    version = payload.get("version")
    if version != FORMAT_VERSION:
        raise StaleWeightsError(f"weights file {path} has format version {version!r}; this "
                                f"code reads version {FORMAT_VERSION}: {REBUILD_HINT}")
    missing = {"model_config", "state", "meta"} - set(payload)
    if missing:
        raise CorruptWeightsError(f"weights file {path} lacks {sorted(missing)}: {REBUILD_HINT}")
    config = payload["model_config"]
    if expect_config is not None and not configs_equal(config, expect_config):
        raise StaleWeightsError(f"weights file {path} was made for model_config {config}, "
                                f"but the code builds {dict(expect_config)}: {REBUILD_HINT}")
    return Weights(str(path), int(version), config,
                   _to_device(payload["state"], torch.device(device)), payload["meta"])


def configs_equal(a: Any, b: Any) -> bool:
    """Equality that treats tuples and lists alike (a tuple saved comes back as a tuple, but a
    config written by hand may use lists) and floats by value."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(configs_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(configs_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
