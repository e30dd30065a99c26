"""What the page kit asks of the live-training runtime above it: ui/ may not import live/
(tests/test_layers.py), so live/controls.py registers its pause here when it is imported.
No live panel imported means no training to pause."""
from __future__ import annotations

from typing import Any, Callable, MutableMapping

PAUSERS: list[Callable[[MutableMapping[str, Any], str], None]] = []


def pause(state: MutableMapping[str, Any], key: str) -> None:
    """Pause the live panel `key` (its flag and whatever process trains it)."""
    for pauser in PAUSERS:
        pauser(state, key)
