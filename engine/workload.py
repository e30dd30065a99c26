"""Device by workload: "auto" measures which device trains *this* model fastest.

Small 2-D models are launch-bound: on an H200 the 2x128 GAN trained at 275 it/s eager on CUDA
and 342 it/s on one CPU core, while the transformer and the CNN gradients gain 5-18x on CUDA.
So "auto" cannot be one device for every page. `pick_device(key, make_probe)` times a probe of
the workload on every available device and keeps the fastest:

    rate(d) = iters / min over `repeats` of (t_end - t_start)
              (after `warmup` untimed iterations, synchronised; the best repeat, since load
              from other processes only ever slows a run down)
    winner  = argmax_d rate(d)               (a device whose probe raises is skipped)

The winner is cached per process (and in a small JSON file under the temp dir, keyed by the
machine's device fingerprint, so a restarted server does not measure again). With one device
(a CPU-only machine) nothing is measured: the answer is that device.

A workload key is "<topic>:<size>", e.g. "gan:2x128" (depth x width). Keys whose size part is
"<depth>x<width>" get the default probe, `mlp_probe`: one Adam step of a depth x width tanh MLP
on a batch of 2-D points, the shape of every 2-D page's trainer. `register_probe(prefix, fn)`
adds a probe for other workloads; `pick_device(key, make_probe=...)` passes one directly.

Page usage (viz.session):
    dev = session.device(workload="gan:2x128")      # the sidebar's choice, or the measured one
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from engine.device import available_devices

# A probe: make_probe(device) -> step, where step() runs one training iteration on `device`.
Step = Callable[[], object]
MakeProbe = Callable[[str], Step]

WARMUP, ITERS, REPEATS = 3, 20, 3
CACHE_ENV_VAR = "DLPLAY_DEVICE_CACHE"       # path of the JSON cache; "off" disables the file
SIZE = re.compile(r"^(\d{1,2})x(\d{1,5})$")


@dataclass(frozen=True)
class Pick:
    device: str                               # the winner
    rates: dict[str, float]                   # it/s per device that ran its probe
    errors: dict[str, str] = field(default_factory=dict)   # device -> why its probe failed
    source: str = "measured"                  # "measured" | "cache" | "file" | "only device"


def sync(device: str) -> None:
    """Wait for queued kernels, so wall time covers the work (CUDA/MPS run asynchronously)."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def mlp_step(device: str, depth: int = 2, width: int = 128, batch: int = 256, seed: int = 0,
             capturable: bool = False):
    """(model, optimizer, x, y, step) for one full-batch Adam step of a depth x width tanh MLP
    on 2-D points (logistic loss). step() zeroes the gradients, runs forward and backward and
    the optimizer, and returns the loss tensor (no host sync). `capturable=True` gives an Adam
    whose state lives on the device, as a CUDA graph needs (engine.cuda_graph)."""
    g = torch.Generator().manual_seed(int(seed))
    dims = [2] + [int(width)] * int(depth)
    layers: list[nn.Module] = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(dims[-1], 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) / p.shape[-1] ** 0.5)
    model.to(device)
    x = torch.randn(batch, 2, generator=g).to(device)
    y = (x[:, 0] * x[:, 1] > 0).float()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=capturable)

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        loss.backward()
        opt.step()
        return loss.detach()
    return model, opt, x, y, step


def mlp_probe(depth: int, width: int) -> MakeProbe:
    return lambda device: mlp_step(device, depth, width)[-1]


PROBES: dict[str, Callable[[str], MakeProbe]] = {}   # key prefix -> (key -> make_probe)


def register_probe(prefix: str, factory: Callable[[str], MakeProbe]) -> None:
    """Workload keys starting with `prefix` are probed with factory(key)."""
    PROBES[prefix] = factory


def probe_for(key: str) -> MakeProbe | None:
    """The probe of a workload key: a registered prefix (longest first), else the MLP probe
    for a "<topic>:<depth>x<width>" key, else None (no way to measure it)."""
    for prefix in sorted(PROBES, key=len, reverse=True):
        if key.startswith(prefix):
            return PROBES[prefix](key)
    m = SIZE.match(key.rpartition(":")[2].strip())
    if m and 1 <= int(m[1]) <= 16 and 1 <= int(m[2]) <= 4096:
        return mlp_probe(int(m[1]), int(m[2]))
    return None


def measure(make_probe: MakeProbe, device: str, warmup: int = WARMUP, iters: int = ITERS,
            timer: Callable[[], float] = time.perf_counter,
            synchronize: Callable[[str], None] = sync, repeats: int = REPEATS) -> float:
    """Iterations per second of the probe on `device`: warm-up excluded, synchronised, the
    fastest of `repeats` timed runs of `iters` iterations."""
    step = make_probe(device)
    for _ in range(warmup):
        step()
    best = float("inf")
    for _ in range(max(1, repeats)):
        synchronize(device)
        t0 = timer()
        for _ in range(iters):
            step()
        synchronize(device)
        best = min(best, timer() - t0)
    return iters / max(best, 1e-9)


def fingerprint(devices: list[str]) -> str:
    """What the cached winners depend on: torch version and the devices (GPU name)."""
    parts = [torch.__version__, f"threads={torch.get_num_threads()}"] + list(devices)
    if "cuda" in devices and torch.cuda.is_available():
        parts.append(torch.cuda.get_device_name(0))
    return "|".join(parts)


def cache_path(env: dict | None = None) -> Path | None:
    env = os.environ if env is None else env
    value = env.get(CACHE_ENV_VAR, "")
    if value.strip().lower() == "off":
        return None
    return Path(value) if value else Path(tempfile.gettempdir()) / "dlplay_device_cache.json"


def _read_file(path: Path | None) -> dict:
    try:
        data = json.loads(path.read_text()) if path and path.exists() else {}
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}        # a corrupt or unreadable cache is no cache


def _write_file(path: Path | None, data: dict) -> None:
    if path is None:
        return
    try:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass             # the file cache is an optimisation only


class DevicePicker:
    """Measures and caches the fastest device per workload key (thread-safe: two sessions
    asking for the same workload at once measure it once)."""

    def __init__(self, devices: Callable[[], list[str]] = available_devices,
                 measure_fn: Callable[[MakeProbe, str], float] = measure,
                 path: Path | None | str = "env"):
        self._devices, self._measure = devices, measure_fn
        self._path = cache_path() if path == "env" else path
        self._cache: dict[str, Pick] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def pick(self, key: str, make_probe: MakeProbe | None = None) -> Pick:
        devices = self._devices()
        if len(devices) == 1:
            return Pick(devices[0], {}, {}, "only device")
        with self._lock:
            if key in self._cache:
                return Pick(**{**asdict(self._cache[key]), "source": "cache"})
            fp = fingerprint(devices)
            stored = _read_file(self._path).get(fp, {}).get(key)
            if isinstance(stored, dict) and stored.get("device") in devices:
                pick = Pick(stored["device"], dict(stored.get("rates", {})),
                            dict(stored.get("errors", {})), "file")
                self._cache[key] = pick
                return pick
            make_probe = make_probe or probe_for(key)
            if make_probe is None:
                return Pick(devices[0], {}, {"*": f"no probe for workload {key!r}"}, "default")
            rates, errors = {}, {}
            for dev in devices:
                try:
                    rates[dev] = float(self._measure(make_probe, dev))
                except Exception as exc:   # a device that cannot run the probe loses, no crash
                    errors[dev] = f"{type(exc).__name__}: {exc}"[:200]
            winner = max(rates, key=rates.get) if rates else "cpu"
            pick = Pick(winner, rates, errors, "measured")
            self._cache[key] = pick
            data = _read_file(self._path)
            data.setdefault(fp, {})[key] = {"device": winner, "rates": rates, "errors": errors}
            _write_file(self._path, data)
            return pick


_PICKER: DevicePicker | None = None


def picker() -> DevicePicker:
    """The process-wide picker (created on first use, so DLPLAY_DEVICE_CACHE is read then)."""
    global _PICKER
    if _PICKER is None:
        _PICKER = DevicePicker()
    return _PICKER


def pick_device(workload_key: str, make_probe: MakeProbe | None = None) -> str:
    """The fastest device for this workload on this machine (measured once per process)."""
    return picker().pick(workload_key, make_probe).device
