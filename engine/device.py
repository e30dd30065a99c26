"""Compute-device choice and seeding.

Order of preference for "auto": CUDA > MPS > CPU. The environment variable DLPLAY_DEVICE
(cpu | cuda | mps) overrides the automatic choice when that device exists; an unknown or
absent device falls back to the automatic choice and `default_device()` reports why.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass

import numpy as np
import torch

ENV_VAR = "DLPLAY_DEVICE"
KNOWN_DEVICES = ("cpu", "cuda", "mps")


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


DEVICE_PROBES = {
    "cuda": torch.cuda.is_available,
    "mps": _mps_available,
    "cpu": lambda: True,
}


def available_devices() -> list[str]:
    """Devices that exist on this machine, best first (cuda, mps, cpu)."""
    return [name for name in KNOWN_DEVICES[1:] + ("cpu",) if DEVICE_PROBES[name]()]


@dataclass(frozen=True)
class DeviceChoice:
    name: str            # "cpu" | "cuda" | "mps"
    reason: str          # why this one ("auto", "DLPLAY_DEVICE=cuda", ...)
    warning: str | None  # set when the requested device could not be used


def default_device(env: dict | None = None) -> DeviceChoice:
    """The device a fresh session starts on: DLPLAY_DEVICE if it names an existing device,
    else the best available one."""
    env = os.environ if env is None else env
    avail = available_devices()
    requested = (env.get(ENV_VAR) or "").strip().lower()
    if not requested or requested == "auto":
        return DeviceChoice(avail[0], "auto", None)
    if requested not in KNOWN_DEVICES:
        return DeviceChoice(avail[0], "auto", f"{ENV_VAR}={requested!r} is not one of "
                            f"{', '.join(KNOWN_DEVICES)}; using {avail[0]}.")
    if requested not in avail:
        return DeviceChoice(avail[0], "auto", f"{ENV_VAR}={requested} but no {requested} "
                            f"device exists here; using {avail[0]}.")
    return DeviceChoice(requested, f"{ENV_VAR}={requested}", None)


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """A torch.device for `device`; None or "auto" -> the default device."""
    if device is None or device == "auto":
        return torch.device(default_device().name)
    dev = torch.device(device)
    if dev.type not in available_devices():
        raise ValueError(f"device {dev.type!r} is not available here "
                         f"(available: {', '.join(available_devices())})")
    return dev


def device_label(device: str | torch.device) -> str:
    """Human-readable name, e.g. 'cuda (NVIDIA H100)' or 'cpu (2 threads)'."""
    dev = torch.device(device)
    if dev.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(dev)})"
    if dev.type == "cpu":
        return f"cpu ({torch.get_num_threads()} threads)"
    return dev.type


THREADS_ENV_VAR = "DLPLAY_TORCH_THREADS"


BLAS_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def configure_threads(env: dict | None = None) -> int:
    """Set every library's thread count from DLPLAY_TORCH_THREADS (default 1) and return it:
    torch's intra-op threads, and through threadpoolctl the BLAS/OpenMP pools already loaded
    (numpy's OpenBLAS starts one thread per core otherwise, which the torch setting does not
    reach); the OMP/OpenBLAS/MKL environment variables, for a library loaded later, are set
    only where they are not set already.

    One thread is the right default for this app: its models are small (a 2-layer MLP,
    a tiny transformer), where a second thread adds synchronisation but no speed, and a
    hosted server runs many sessions at once. Measured on the 2-core machine under load:
    25 Adam steps + exact regions took 0.33 s with 1 thread and 1.3-5.1 s with 2."""
    env = os.environ if env is None else env
    try:
        n = max(1, int(env.get(THREADS_ENV_VAR, "1")))
    except ValueError:
        n = 1
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    for name in BLAS_ENV_VARS:
        os.environ.setdefault(name, str(n))
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=n)          # stays in force (not used as a context manager)
    return n


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators (all devices)."""
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def make_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A torch.Generator on `device` seeded with `seed`: pass it to torch.randn(...,
    generator=g) so results do not depend on global state."""
    g = torch.Generator(device=torch.device(device))
    g.manual_seed(int(seed))
    return g


def numpy_rng(seed: int) -> np.random.Generator:
    """A NumPy Generator (PCG64) seeded with `seed`."""
    return np.random.default_rng(int(seed))


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """Detach, move to CPU, convert: what every result dataclass stores."""
    return x.detach().to("cpu").numpy()
