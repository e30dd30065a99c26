"""Measurements the attention page states as facts (its claims) and shows: how much weight
a trained model's heads put where the task needs it, and what a mask costs and reaches.
Pure numpy on engine.attention results (a Prediction, a boolean mask).

    copy layer 1     = min over layer-1 heads of the mean weight of answer row j on input j
    lookup, layer 1  = max over heads of mean_p w[value row 2p+1 -> key 2p]   (previous token)
    lookup, layer 2  = max over heads of w[echoed key's row -> value after the matching key]
    density          = allowed pairs / (n √n)
    two-hop coverage = |{(q, k) causal : (A + A²)[q, k] > 0}| / |causal pairs|
"""
from __future__ import annotations

import math

import numpy as np

from engine import attention


def copy_layer1_mass(pred: attention.Prediction) -> float:
    """Weaker layer-1 head's weight of answer row j on input position j (copy task)."""
    return float(attention.expected_source_mass(pred.attention, pred.inputs, attention.TASKS["copy"])[0].min())


def lookup_heads(pred: attention.Prediction) -> tuple[float, float]:
    """(layer 1: best head's mean weight of each value row on the key just before it,
    layer 2: best head's weight of the echoed key's row on the value after the matching
    key) of a lookup prediction."""
    maps, x = pred.attention, pred.inputs[None]
    pairs = np.arange(attention.N_PAIRS)
    prev = maps[0][:, 2 * pairs + 1, 2 * pairs].mean(-1).max()
    match = int(attention._lookup_match(x)[0])
    value_row = attention.answer_rows(attention.TASKS["lookup"])[1]
    return float(prev), float(maps[1][:, value_row, 2 * match + 1].max())


def entries_per_n_sqrt_n(allowed: np.ndarray) -> float:
    """Allowed (query, key) pairs of an n × n mask divided by n√n."""
    n = allowed.shape[0]
    return float(allowed.sum() / (n * math.sqrt(n)))


def two_hop_coverage(allowed: np.ndarray) -> float:
    """Share of causal (query, key) pairs reachable through at most two allowed hops."""
    a = allowed.astype(np.int64)
    reach = (a + a @ a) > 0
    causal = np.tril(np.ones_like(reach, dtype=bool))
    return float((reach & causal).sum() / causal.sum())
