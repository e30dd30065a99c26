"""Every tab that trains live, read from the pages' own declarations (`View(..., live=Live(key,
train_max))`, ui/page.py): what a lesson's `play`/`train = N` starts, and what the live tests
and benchmarks walk. Nothing here is kept by hand: a new live page is found by declaring it.

    live_tabs()[("gan", "train")]  ->  Live(key="gan", train_max=5000)
"""
from __future__ import annotations

import functools
from typing import Any, Mapping

from ui.claims import page_module
from ui.topics import TOPICS


@functools.cache
def live_tabs() -> Mapping[tuple[str, str], Any]:
    """(page slug, tab key) -> the tab's Live declaration, in gallery and tab order."""
    return {(t.slug, v.key): v.live for t in TOPICS
            for v in page_module(t.slug).VIEWS if v.live is not None}


def live_keys() -> dict[tuple[str, str], str]:
    """(page slug, tab key) -> its live_training key."""
    return {where: live.key for where, live in live_tabs().items()}


def train_max() -> dict[str, int]:
    """live_training key -> the most iterations a lesson's `train = N` may ask for."""
    return {live.key: live.train_max for live in live_tabs().values()}
