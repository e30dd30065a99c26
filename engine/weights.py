"""One file format for the small pretrained weights in assets/weights/.

A weights file is a torch.save of one plain dictionary

    {"format": "dlplay-weights", "version": FORMAT_VERSION,
     "model_config": {...},      # how to build the model (plain str/int/float/bool/list/dict)
     "state": {name: Tensor},    # model.state_dict(), or a whole trainer's state_dict():
                                 # nested dicts / lists of tensors and plain numbers
     "meta": {...}}              # how it was made: recipe, seed, measured accuracy, ...

read back with torch.load(weights_only=True), so loading never runs pickled code. Every way
a file can be unusable raises a WeightsError subclass whose message says what to do:

    MissingWeightsError  the file does not exist
    CorruptWeightsError  torch cannot read it (truncated, random bytes) or it is not a dict
    StaleWeightsError    readable, but written in an older format / another version, or its
                         model_config is not the one the caller expects (the architecture
                         changed since the file was made)

scripts/ write through `save`; pages read through ui.weights.cached_weights (the Streamlit
cache around `load`). `save` also writes to an open binary buffer and `load` also reads bytes
(a page that caches the file's bytes, a test that round-trips through io.BytesIO).
"""
from __future__ import annotations

import io
import math
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Mapping

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
    state: dict          # name -> Tensor (on the device given to load), or a tensor tree
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
    """state is a tensor tree: tensors, plain scalars, lists, tuples and dicts with str or int
    keys (an optimizer's state_dict() keys its parameters by int), holding at least one tensor."""
    _check_tree(state, where)
    if not _has_tensor(state):
        raise TypeError(f"{where} must be a tensor or a non-empty dict holding tensors, "
                        f"not {type(state).__name__} without any")


def _check_tree(state: Any, where: str) -> None:
    if isinstance(state, (torch.Tensor, *PLAIN_SCALARS)):
        return
    if isinstance(state, (list, tuple)):
        for i, v in enumerate(state):
            _check_tree(v, f"{where}[{i}]")
        return
    if isinstance(state, Mapping):
        for k, v in state.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(f"{where}: key {k!r} is not a string or an int")
            _check_tree(v, f"{where}.{k}")
        return
    raise TypeError(f"{where} is a {type(state).__name__}; a weights state holds only tensors "
                    "and plain str/int/float/bool/None/list/tuple/dict values")


def _has_tensor(state: Any) -> bool:
    if isinstance(state, torch.Tensor):
        return True
    if isinstance(state, Mapping):
        return any(_has_tensor(v) for v in state.values())
    if isinstance(state, (list, tuple)):
        return any(_has_tensor(v) for v in state)
    return False


def _map_tensors(state: Any, fn) -> Any:
    """The same tree with fn applied to every tensor (dicts, lists and tuples rebuilt, so the
    result shares no container, and with fn = clone no tensor, with the input)."""
    if isinstance(state, torch.Tensor):
        return fn(state)
    if isinstance(state, Mapping):
        return {k: _map_tensors(v, fn) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(_map_tensors(v, fn) for v in state)
    return state


def _cpu_clone(state: Any) -> Any:
    return _map_tensors(state, lambda t: t.detach().to("cpu").clone())


def _to_device(state: Any, device: torch.device) -> Any:
    return _map_tensors(state, lambda t: t.to(device))


def save(path: str | Path | BinaryIO, model_config: Mapping, state: Mapping,
         meta: Mapping | None = None) -> Path | BinaryIO:
    """Write one weights file (tensors copied to the CPU) to a path or an open binary buffer.
    Raises TypeError for values that could not be read back with weights_only=True."""
    meta = dict(meta or {})
    _check_plain(dict(model_config), "model_config")
    _check_plain(meta, "meta")
    _check_state(state)
    payload = {"format": FORMAT, "version": FORMAT_VERSION, "model_config": dict(model_config),
               "state": _cpu_clone(state), "meta": meta}
    if hasattr(path, "write"):
        torch.save(payload, path)
        return path
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)
    return path


READ_ERRORS = (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile,
               ValueError, KeyError, AttributeError, IndexError, OSError)


def load(path: str | Path | bytes, device: str | torch.device = "cpu",
         expect_config: Mapping | None = None) -> Weights:
    """Read a weights file (a path, or the file's bytes) onto `device`. With expect_config, a
    file whose model_config differs (another architecture than the code builds today) is
    stale."""
    if isinstance(path, (bytes, bytearray)):
        source, path = io.BytesIO(path), Path("<bytes>")
    else:
        path = source = Path(path)
        if not path.is_file():
            raise MissingWeightsError(f"weights file {path} is missing: {REBUILD_HINT}")
    try:
        payload = torch.load(source, map_location="cpu", weights_only=True)
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
