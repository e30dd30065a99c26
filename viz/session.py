"""What the shared sidebar chose, read by pages: device, seed, classroom mode.

Keys in st.session_state (set by viz/sidebar.py): "device", "seed", "classroom".
Reading functions fall back to safe defaults, so a page also works under AppTest without
the sidebar and when a value is missing or bad.
"""
from __future__ import annotations

import streamlit as st

from engine.device import available_devices, default_device

SEED_MAX = 2**31 - 1
DEFAULT_SEED = 0


def device() -> str:
    """The compute device chosen in the sidebar ("cpu" | "cuda" | "mps")."""
    name = st.session_state.get("device")
    return name if name in available_devices() else default_device().name


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
