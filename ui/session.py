"""What the shared sidebar chose, read by pages: device, seed, classroom mode.

Keys in st.session_state (set by ui/sidebar.py): "device", "seed", "classroom".
Reading functions fall back to safe defaults, so a page also works under AppTest without
the sidebar and when a value is missing or bad.
"""
from __future__ import annotations

import streamlit as st

from engine.device import available_devices, default_device

AUTO = "auto"   # the sidebar's "auto": the default device (CUDA > MPS > CPU, or DLPLAY_DEVICE)
SEED_MAX = 2**31 - 1
DEFAULT_SEED = 0


def device() -> str:
    """The compute device for this page ("cpu" | "cuda" | "mps").

    An explicit sidebar choice wins; on "auto" (or nothing chosen) the default device:
    DLPLAY_DEVICE naming an existing device, else CUDA > MPS > CPU (engine.device)."""
    name = st.session_state.get("device")
    if name in available_devices():
        return name
    return default_device().name


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
