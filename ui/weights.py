"""The one cached loader pages use for shipped weights (engine/weights.py's format).

    w = cached_weights(path, session.device())      # engine.weights.Weights, shared read-only

st.cache_resource keeps one copy per (path, device, file modification time) for the whole
server: a rebuilt file is read again, and errors (missing, stale, corrupt) are not cached, so
the page can show them with st.error and recover once the file is fixed. Treat the returned
state as read-only (build a model from it; do not modify its tensors in place).
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from engine import weights


@st.cache_resource(show_spinner=False, max_entries=32)
def _load(path: str, device: str, mtime_ns: int) -> weights.Weights:
    return weights.load(path, device)


def cached_weights(path: str | Path, device: str = "cpu") -> weights.Weights:
    """engine.weights.load(path, device), cached per file version and device."""
    p = Path(path)
    mtime = p.stat().st_mtime_ns if p.is_file() else -1
    return _load(str(p), str(device), mtime)
