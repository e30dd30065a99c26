"""What the shared sidebar chose, read by pages: device, seed, classroom mode.

Keys in st.session_state (set by viz/sidebar.py): "device", "seed", "classroom".
Reading functions fall back to safe defaults, so a page also works under AppTest without
the sidebar and when a value is missing or bad.
"""
from __future__ import annotations

import streamlit as st

from engine.device import available_devices, default_device
from engine.workload import MakeProbe, pick_device

AUTO = "auto"   # the sidebar's "auto (per page)": each workload runs where it is fastest
SEED_MAX = 2**31 - 1
DEFAULT_SEED = 0


def device(workload: str | None = None, make_probe: MakeProbe | None = None) -> str:
    """The compute device for this page ("cpu" | "cuda" | "mps").

    An explicit sidebar choice wins, then DLPLAY_DEVICE naming an existing device. On "auto"
    (or nothing chosen): with a `workload` key such as "gan:2x128" the device measured
    fastest for it (engine.workload.pick_device, once per process; `make_probe` overrides
    the default probe), without one the default device (CUDA > MPS > CPU), as before.
    With a single device (CPU-only machine) nothing is measured and the answer is "cpu"."""
    name = st.session_state.get("device")
    if name in available_devices():
        return name
    choice = default_device()
    if workload is None or choice.reason != "auto":
        return choice.name
    try:
        return pick_device(workload, make_probe)
    except Exception:     # measuring is an optimisation: never break a page over it
        return choice.name


def seed() -> int:
    """The global seed (sidebar, bound to ?seed=); a bad value falls back to 0."""
    try:
        value = int(st.session_state.get("seed", DEFAULT_SEED))
    except (TypeError, ValueError):
        return DEFAULT_SEED
    return value if 0 <= value <= SEED_MAX else DEFAULT_SEED


def classroom() -> bool:
    """Classroom mode (sidebar toggle, or ?classroom=1 in the URL)."""
    return bool(st.session_state.get("classroom", False))
