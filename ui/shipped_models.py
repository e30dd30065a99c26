"""The cached loader of the shipped models in assets/weights/ for the LSTM gating and attention
pages: a missing, stale or corrupt file (engine.weights.WeightsError) never reaches the page
as a traceback; it comes back as a message naming the file and what to run to rebuild it.

    model, problem = shipped("attention_copy.pt", A.load_pretrained, device)
    # model: what the loader returned, or None; problem: None, or the WeightsError's message

Cached per (file, device, modification time and size): a rebuilt file is read again. WEIGHTS is
read at call time, so a test can point it at a folder holding a broken copy.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import streamlit as st

from engine.weights import WeightsError
from ui.topics import ROOT

WEIGHTS = ROOT / "assets" / "weights"


def path_of(name: str) -> Path:
    return WEIGHTS / name


@st.cache_resource(show_spinner=False, max_entries=16)
def _load(path: str, _loader: Callable[..., Any], loader_name: str, device: str,
          mtime_ns: int, size: int) -> tuple[Any, str | None]:
    try:
        return _loader(path, device), None
    except WeightsError as e:
        return None, str(e)


def shipped(name: str, loader: Callable[..., Any], device: str = "cpu"
            ) -> tuple[Any, str | None]:
    """(loader(path, device), None), or (None, None) when the file is not there (nothing was
    shipped), or (None, message) when it is there but unusable (stale, corrupt)."""
    p = path_of(name)
    if not p.is_file():
        return None, None
    qual = f"{getattr(loader, '__module__', '')}.{getattr(loader, '__qualname__', loader)}"
    stat = p.stat()
    return _load(str(p), loader, qual, str(device), stat.st_mtime_ns, stat.st_size)


def warn(problem: str, fallback: str) -> None:
    """The page's message for an unusable shipped file: what is wrong, how to rebuild it,
    and what the page shows instead."""
    st.warning(f"Shipped weights not usable: {problem}. {fallback}", icon=":material/warning:")
