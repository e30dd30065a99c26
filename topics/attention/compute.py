"""The attention page's computations of the settings dict s (topics/attention/page.py): the
mechanics of one head, positional encodings, the shipped snapshots and their predictions,
masks, and the measurements the claims read (each also shown on the page). Shared by the
views and the claims."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine import attention
from engine.attention import reads
from ui import shipped_models
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
DK_OPTIONS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
D_MODEL = 8                      # embedding size of the mechanics tokens
ENTROPY_DIMS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
ENTROPY_KEYS = 16
PE_TOKENS, PE_DK = 6, 4          # the permutation test of the positions view
SOURCES = ["shipped weights", "train from scratch"]
EXAMPLES = {"reverse": "3 1 4 1 5 9 2 6", "sort": "7 2 9 4 4 0 5 1",
            "copy": "2 7 1 8 2 8 1 8", "lookup": "1 7 4 2 9 0 3 5 9"}
AUTO = "most informative head"
LAYER_CHOICES, HEAD_CHOICES = [1, 2, 3], [1, 2, 4]
HEAD_NAMES = [f"layer {l} · head {h}" for l in LAYER_CHOICES for h in range(1, max(HEAD_CHOICES) + 1)]


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def perm_of(s: Mapping[str, Any], seed: int = 0) -> list[int] | None:
    return attention.seeded_permutation(int(s["at_n"]), seed) if s["at_perm"] else None


def mechanics_of(s: Mapping[str, Any], seed: int = 0) -> attention.Mechanics:
    return attention.mechanics(int(s["at_n"]), D_MODEL, int(s["at_dk"]), float(s["at_temp"]),
                       bool(s["at_scale"]), bool(s["at_causal"]), seed, perm=perm_of(s, seed))


@lesson_measure
def permutation_error_of(s: Mapping[str, Any], seed: int = 0) -> float:
    """max |out(Px) − P·out(x)| of the mechanics view (identity permutation when off)."""
    perm = perm_of(s, seed) or attention.seeded_permutation(int(s["at_n"]), seed)
    return attention.permutation_error(int(s["at_n"]), D_MODEL, int(s["at_dk"]), perm, seed,
                               causal=bool(s["at_causal"]), temperature=float(s["at_temp"]),
                               scale=bool(s["at_scale"]))


@lesson_measure
def above_diagonal(s: Mapping[str, Any]) -> float:
    """Largest weight a query puts on a later key."""
    return float(np.triu(mechanics_of(s).weights, 1).max())


@lesson_measure
def row_sum_error(s: Mapping[str, Any]) -> float:
    return float(np.abs(mechanics_of(s).weights.sum(1) - 1).max())


@lesson_measure
def context_error(s: Mapping[str, Any]) -> float:
    """max |output − weights · values| of the mechanics view: each output row (the context
    vector of one query) is its row of weights times the values."""
    m = mechanics_of(s)
    return float(np.abs(m.out - m.weights @ m.v).max())


@lesson_measure
def query_count(s: Mapping[str, Any]) -> float:
    """Rows of the output panel: one context vector per query."""
    return float(mechanics_of(s).out.shape[0])


@st.cache_data(max_entries=16, show_spinner=False)
def entropy_curves(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean softmax entropy over 16 keys vs d_k, (scaled, unscaled)."""
    return (attention.softmax_entropy_vs_dim(ENTROPY_DIMS, True, seed, n_keys=ENTROPY_KEYS, n_rows=512),
            attention.softmax_entropy_vs_dim(ENTROPY_DIMS, False, seed, n_keys=ENTROPY_KEYS, n_rows=512))


def curve_entropy(dk: int, scaled: bool, seed: int = 0) -> float:
    return float(entropy_curves(seed)[0 if scaled else 1][ENTROPY_DIMS.index(dk)])


def pe_errors(s: Mapping[str, Any], seed: int = 0) -> dict[str, float]:
    """max |out(Px) − P·out(x)| of the positions view's test, without and with PE."""
    perm = attention.seeded_permutation(PE_TOKENS, seed)
    return {m: attention.permutation_error(PE_TOKENS, D_MODEL, PE_DK, perm, seed,
                                   positions=(m != "none"))
            for m in ("none", "add sinusoidal PE")}


def shipped_path(task: str):
    return shipped_models.path_of(f"attention_{task}.pt")


def shipped_tasks() -> list[str]:
    """Tasks with a shipped snapshot in assets/weights (scripts/pretrain_attention.py)."""
    return [t for t in attention.TASKS if shipped_path(t).exists()]


def shipped_model(task: str, device: str = "cpu"):
    """(model, info) of the shipped snapshot, or None (missing or unusable: shipped_problem)."""
    return shipped_models.shipped(f"attention_{task}.pt", attention.load_pretrained, device)[0]


def shipped_problem(task: str, device: str = "cpu") -> str | None:
    """Why a shipped file that is there cannot be used (stale, corrupt), else None."""
    return shipped_models.shipped(f"attention_{task}.pt", attention.load_pretrained, device)[1]


def digits_of(s: Mapping[str, Any]) -> tuple[list[int], str | None]:
    """(the digits fed to the model, the reason the typed input was rejected or None)."""
    task = attention.TASKS[s["at_task"]]
    example = EXAMPLES[s["at_task"]]
    try:
        return attention.parse_sequence(s["at_seq"] or example, task), None
    except ValueError as exc:
        return attention.parse_sequence(example, task), str(exc)


@st.cache_data(max_entries=32, show_spinner=False)
def shipped_prediction(task_name: str, digits: tuple[int, ...],
                       device: str = "cpu") -> attention.Prediction:
    """The shipped snapshot's greedy answer and attention maps for `digits` (cached: the
    trained view and its export draw the same one)."""
    return attention.predict(shipped_model(task_name, device)[0], attention.TASKS[task_name], list(digits))


def prediction_of(s: Mapping[str, Any]) -> attention.Prediction:
    """The greedy answer and attention maps of the shipped snapshot (what the view shows)."""
    return shipped_prediction(s["at_task"], tuple(digits_of(s)[0]))


def head_masses(pred: attention.Prediction, task: attention.Task) -> np.ndarray:
    """(layers, heads): mean weight the answer rows put on the input positions holding the
    digit they must write."""
    return attention.source_mass(pred.attention, pred.inputs, pred.correct, task)


def shown_head(pred: attention.Prediction, task: attention.Task, choice: str) -> tuple[int, int]:
    """(layer, head), 0-based, of the enlarged head: the chosen one, or for AUTO (and a
    choice this model does not have) the head with the most weight on the source digits."""
    n_layers, n_heads = pred.attention.shape[:2]
    if choice in HEAD_NAMES:
        l, h = (int(p.split()[-1]) - 1 for p in choice.split(" · "))
        if l < n_layers and h < n_heads:
            return l, h
    return tuple(int(i) for i in np.unravel_index(np.argmax(head_masses(pred, task)),
                                                  (n_layers, n_heads)))


@lesson_measure
def shown_mass(s: Mapping[str, Any]) -> float:
    task = attention.TASKS[s["at_task"]]
    pred = prediction_of(s)
    return float(head_masses(pred, task)[shown_head(pred, task, s["at_head"])])


def shown_layer(s: Mapping[str, Any]) -> int:
    task = attention.TASKS[s["at_task"]]
    pred = prediction_of(s)
    return shown_head(pred, task, s["at_head"])[0] + 1


@lesson_measure
def example_accuracy(s: Mapping[str, Any]) -> float:
    return float(prediction_of(s).is_correct.mean())


@lesson_measure
def copy_layer1_mass(s: Mapping[str, Any]) -> float:
    return reads.copy_layer1_mass(prediction_of(s))


def lookup_heads(s: Mapping[str, Any]) -> tuple[float, float]:
    return reads.lookup_heads(prediction_of(s))


def allowed_of(s: Mapping[str, Any]) -> np.ndarray:
    return np.isfinite(attention.MASKS[s["at_mask"]](int(s["at_mask_n"]), int(s["at_window"])).numpy())


@lesson_measure
def entries_per_n_sqrt_n(s: Mapping[str, Any]) -> float:
    return reads.entries_per_n_sqrt_n(allowed_of(s))


@lesson_measure
def two_hop_coverage(s: Mapping[str, Any]) -> float:
    return reads.two_hop_coverage(allowed_of(s))


@st.cache_data(max_entries=8, show_spinner=False)
def nonzero_counts(ns: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {name: attention.mask_nonzeros(name, ns) for name in attention.MASKS}


NS = tuple(int(v) for v in 2 ** np.arange(2, 10))


def sparse_constant_at(n: int) -> float:
    """Entries of local + strided at window = stride = ⌈√n⌉, divided by n√n."""
    return float(nonzero_counts(NS)["local + strided"][NS.index(n)] / n ** 1.5)

