"""scikit-learn's 8 x 8 digits (1,797 images, grey levels 0..16) quantised to Q levels, a
seeded train/test split, and the independent-pixel baseline a PixelCNN must beat.

    level = floor(v Q / 17),  v in 0..16          (Q = 17 keeps every grey level)

Independent pixels: p_j(q) = (n_jq + 1) / (n + Q), n_jq the training images whose pixel j is
at level q (add-one smoothing: no test level gets probability 0); its NLL in bits per pixel is
-(1 / 64 N) sum_i sum_j log2 p_j(x_ij) over the N test images."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.datasets import load_digits

SIDE = 8
GREYS = 17               # the grey levels of the raw digits
TEST_SHARE = 0.2


@dataclass(frozen=True)
class Digits:
    train: np.ndarray        # (N, 8, 8) int64 levels 0..Q-1
    train_labels: np.ndarray  # (N,) int64 0..9
    test: np.ndarray         # (M, 8, 8)
    test_labels: np.ndarray  # (M,)
    levels: int


def check_levels(levels: int) -> None:
    if not 2 <= int(levels) <= GREYS:
        raise ValueError(f"the digits have between 2 and {GREYS} grey levels, not {levels}")


@lru_cache(maxsize=8)
def quantised_digits(levels: int, seed: int = 0) -> Digits:
    """The digits at `levels` grey levels, split 80/20 by a seeded permutation."""
    check_levels(levels)
    data = load_digits()
    images = data.images.astype(np.int64)                                # (1797, 8, 8)
    q = np.minimum(images * int(levels) // GREYS, int(levels) - 1)
    order = np.random.default_rng(seed).permutation(len(q))
    n_test = int(round(TEST_SHARE * len(q)))
    test, train = order[:n_test], order[n_test:]
    y = data.target.astype(np.int64)
    return Digits(q[train], y[train], q[test], y[test], int(levels))


def independent_probs(train: np.ndarray, levels: int) -> np.ndarray:
    """(8, 8, Q) p_j(q) of the independent-pixel model, add-one smoothed."""
    onehot = np.eye(levels)[train]                                       # (N, 8, 8, Q)
    return (onehot.sum(0) + 1) / (len(train) + levels)


def independent_bits(train: np.ndarray, test: np.ndarray, levels: int) -> float:
    """Bits per pixel of the test images under the independent-pixel model."""
    p = independent_probs(train, levels)                                 # (8, 8, Q)
    rows, cols = np.mgrid[:SIDE, :SIDE]
    picked = p[rows[None], cols[None], test]                             # (M, 8, 8)
    return float(-np.log2(picked).mean())
