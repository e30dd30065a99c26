"""The 8x8 digits for the VAE (seeded 80/20 split, pixels in [0, 1], flattened to 64) and the
image helpers for display (nearest-neighbour upsampling, tiling a grid of images into one).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.datasets import digits_split


DATA_SEED = 0          # the fixed train/test split of the digits (1438 / 359)


@dataclass(frozen=True)
class DigitData:
    x_train: np.ndarray   # (1438, 64) float32 in [0, 1]
    y_train: np.ndarray   # (1438,) int64
    x_test: np.ndarray    # (359, 64)
    y_test: np.ndarray    # (359,)


def load_digit_data(seed: int = DATA_SEED) -> DigitData:
    """scikit-learn's 8x8 digits, scaled to [0, 1], flattened to 64, seeded 80/20 split."""
    tr, te = digits_split(0.2, seed)
    return DigitData(tr.images.reshape(-1, 64), tr.labels, te.images.reshape(-1, 64), te.labels)


def upsample(images: np.ndarray, factor: int = 4) -> np.ndarray:
    """Nearest-neighbour upsampling of (..., h, w) images, for display only."""
    return np.repeat(np.repeat(images, factor, axis=-2), factor, axis=-1)


def tile(images: np.ndarray, pad: int = 1, flip_rows: bool = True, fill: float = np.nan) -> np.ndarray:
    """(rows, cols, h, w) -> one (rows*(h+pad)-pad, cols*(w+pad)-pad) image; the padding
    holds `fill` (NaN: drawn as background). flip_rows puts row 0 at the bottom, so the tile
    matches a y-axis pointing up."""
    rows, cols, h, w = images.shape
    out = np.full((rows * (h + pad) - pad, cols * (w + pad) - pad), fill, dtype=np.float32)
    order = range(rows - 1, -1, -1) if flip_rows else range(rows)
    for r_out, r in enumerate(order):
        for c in range(cols):
            out[r_out * (h + pad): r_out * (h + pad) + h, c * (w + pad): c * (w + pad) + w] = images[r, c]
    return out
