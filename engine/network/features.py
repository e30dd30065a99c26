"""The playground's input features: functions of the point (x1, x2), each a column of the
network's input

    x1, x2, x1^2 = x1 * x1, x2^2 = x2 * x2, x1x2 = x1 * x2, sin x1, sin x2

`feature_matrix(x, names)` stacks the chosen ones in the order of FEATURES."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

FEATURES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "x1": lambda a, b: a,
    "x2": lambda a, b: b,
    "x1²": lambda a, b: a * a,
    "x2²": lambda a, b: b * b,
    "x1x2": lambda a, b: a * b,
    "sin x1": lambda a, b: np.sin(a),
    "sin x2": lambda a, b: np.sin(b),
}
FEATURE_NAMES = tuple(FEATURES)


def ordered(names: Sequence[str]) -> tuple[str, ...]:
    """The chosen feature names in the order of FEATURES (duplicates dropped)."""
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"unknown features {unknown}: choose from {', '.join(FEATURE_NAMES)}")
    chosen = set(names)
    return tuple(n for n in FEATURE_NAMES if n in chosen)


def feature_matrix(x: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """(n, k) float32: the k chosen features of the points x (n, 2)."""
    names = ordered(names)
    if not names:
        raise ValueError("no input feature is selected: choose at least one")
    a, b = x[:, 0], x[:, 1]                                                   # (n,), (n,)
    return np.stack([FEATURES[n](a, b) for n in names], 1).astype(np.float32)  # (n, k)
