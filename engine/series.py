"""Bounded logs and block means of long series (numpy only; engine and the pages both use them).

    thin_older_half   in place: the older half of parallel lists keeps every second entry, so a
                      log that grows for as long as Play is on stays bounded and its recent
                      half keeps full resolution (engine.training.History, the GAN's checks)
    block_means       at most ~n rows of a long series: the mean of each block of
                      b = ⌈len/n⌉ consecutive rows, at the block's last step
"""
from __future__ import annotations

import numpy as np

MAX_CURVE_POINTS = 400


def thin_older_half(*columns: list) -> None:
    """Parallel lists, in place: entries [0, half) become every second one of them (the
    first kept), half = len // 2; the newer half is untouched."""
    half = len(columns[0]) // 2
    for col in columns:
        col[:half] = col[:half:2]


def block_means(steps: np.ndarray, values: np.ndarray, n: int = MAX_CURVE_POINTS
                ) -> tuple[np.ndarray, np.ndarray]:
    """At most ~n rows of a long series: values (len, ...) averaged over blocks of
    b = ⌈len/n⌉ consecutive rows, each at its block's last step (a long live run keeps its
    figure, and what a frame sends, small). Unchanged when len <= n."""
    if len(steps) <= n:
        return steps, values
    b = -(-len(steps) // n)
    starts = np.arange(0, len(steps), b)
    counts = np.diff(np.r_[starts, len(steps)])
    means = np.add.reduceat(np.asarray(values, dtype=np.float64), starts, axis=0)
    return steps[starts + counts - 1], means / counts.reshape(-1, *[1] * (means.ndim - 1))
