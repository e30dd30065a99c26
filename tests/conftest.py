"""Shared fixtures. `device` runs a test on every compute device this machine has
("cpu" always; "cuda"/"mps" when present), so engine tests run unchanged on a GPU machine."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.device import available_devices, configure_threads  # noqa: E402

configure_threads()  # as the app does: one torch thread unless DLPLAY_TORCH_THREADS says more
if os.environ.get("DLPLAY_TEST_DETERMINISTIC") == "1":   # scripts/machine_dependence.py
    import torch
    torch.use_deterministic_algorithms(True)


@pytest.fixture(params=available_devices()[::-1], ids=lambda d: d)
def device(request) -> str:
    """'cpu', then 'cuda' / 'mps' where they exist."""
    return request.param
