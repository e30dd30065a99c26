"""How well a partition matches the truth.

    adjusted_rand(y, c): ARI = (sum_ij C(n_ij, 2) - E) / (M - E),
        n_ij = |{points with true class i and cluster j}|, a_i = sum_j n_ij, b_j = sum_i n_ij,
        E = sum_i C(a_i, 2) sum_j C(b_j, 2) / C(n, 2),
        M = (sum_i C(a_i, 2) + sum_j C(b_j, 2)) / 2;
        1 for the same partition, about 0 for a random one (ARI = 1 when both are trivial).
    cluster_accuracy(y, c) = max over one-to-one maps m of clusters to classes of
        (1/n) sum_i [m(c_i) = y_i], the map found by the Hungarian method on the
        contingency table (scipy's linear_sum_assignment)."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def contingency(y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(classes, clusters) int64 counts n_ij, rows in sorted order of y's values, columns of
    c's."""
    _, yi = np.unique(np.asarray(y), return_inverse=True)
    _, ci = np.unique(np.asarray(c), return_inverse=True)
    table = np.zeros((yi.max() + 1, ci.max() + 1), dtype=np.int64)
    np.add.at(table, (yi, ci), 1)
    return table


def _pairs(m: np.ndarray) -> float:
    m = np.asarray(m, dtype=np.float64)
    return float((m * (m - 1) / 2).sum())


def adjusted_rand(y: np.ndarray, c: np.ndarray) -> float:
    """The adjusted Rand index of the module docstring."""
    if len(y) != len(c):
        raise ValueError("y and c must label the same points")
    n = len(y)
    if n < 2:
        return 1.0
    table = contingency(y, c)
    index = _pairs(table)
    rows, cols = _pairs(table.sum(1)), _pairs(table.sum(0))
    expected = rows * cols / (n * (n - 1) / 2)
    top = (rows + cols) / 2
    if top == expected:                              # both partitions trivial
        return 1.0
    return float((index - expected) / (top - expected))


def cluster_accuracy(y: np.ndarray, c: np.ndarray) -> float:
    """The best one-to-one matching accuracy of the module docstring."""
    if len(y) == 0:
        return float("nan")
    table = contingency(y, c)                                  # (classes, clusters)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / len(y))
