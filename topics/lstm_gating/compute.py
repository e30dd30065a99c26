"""The LSTM gating page's computations of the settings dict s (topics/lstm_gating/page.py):
the shipped nets, the traced input, gradient flows, the one-unit cell, and the measurements
the claims read (each also shown on the page). Shared by the views and the claims."""
from __future__ import annotations

import functools
import math
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.recurrent import reads
from engine import recurrent as rec
from ui import shipped_models
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
WEIGHTS = shipped_models.WEIGHTS
KINDS = ("rnn", "gru", "lstm")
K = 4                                   # symbols A-D
HIDDEN = 16
DELAYS = (1, 60)                        # the shipped nets were trained on every delay in here
                                        # (scripts/pretrain_lstm_gating.py); the slider offers it
CHECK_DELAYS = (1, 2, 5, 10, 20, 30, 40, 50, 60)
PROBE = dict(n=128, delay=40, seed=12345)   # the batch on which the storing unit is chosen
RACE_AT = 600                           # iteration the Train claim is checked at
RACE_EVAL_EVERY = 100                   # the live race logs held-out accuracy this often
                                        # (a divisor of RACE_AT: the card reads it there)
RACE_EVAL_N = 256                       # on as many sequences as the claims (reads.race_accuracy)
RACE_SEEDS = (0, 1)
FLOW_LAG = 100
GATE_TITLES = {"i": "input gate i", "f": "forget gate f", "o": "output gate o"}


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def load_shipped(kind: str, device: str = "cpu"):
    """The shipped net and its meta, or None (missing or unusable file: see shipped_problem)."""
    return shipped_models.shipped(f"lstm_gating_{kind}.pt", rec.load_net, device)[0]


def shipped_problem(kind: str = "lstm") -> str | None:
    """Why a shipped file that is there cannot be used (stale, corrupt), else None."""
    return shipped_models.shipped(f"lstm_gating_{kind}.pt", rec.load_net)[1]


def lstm_net() -> tuple[rec.RecurrentNet, dict]:
    shipped = load_shipped("lstm")
    if shipped is None:
        return rec.RecurrentNet("lstm", K + 1, HIDDEN, K), {"distract": 1.0, "n_symbols": K}
    return shipped


def clamps_of(s: Mapping[str, Any]) -> dict[str, float]:
    return {g: float(s[f"lg_clamp_{g}"]) for g in GATE_TITLES if s[f"lg_clamp_{g}"] != "free"}


def input_of(s: Mapping[str, Any], seed: int = 0) -> tuple[np.ndarray, list[str], int | None]:
    """(x (T, K+1), a label per step, the correct symbol or None)."""
    if s["lg_input"] == "task sample":
        b = rec.make_task_batch("delayed_recall", 1, int(s["lg_delay"]), seed=seed,
                              n_symbols=K, distract=1.0)
        x, answer = b.x[0].cpu().numpy(), int(b.y[0])
    elif s["lg_input"] == "typed symbols":
        x, answer = rec.encode_recall(s["lg_text"], K), None
    else:
        names = [*rec.RECALL_ALPHABET[:K], "go"]
        x = rec.signal_input(s["lg_input"], int(s["lg_len"]), K + 1,
                           channel=names.index(s["lg_channel"]), at=2, seed=seed)
        answer = None
    return x, rec.recall_labels(x, K), answer


def trace_of(s: Mapping[str, Any], seed: int = 0):
    """(trace with the clamps, trace without them or None, labels, correct symbol)."""
    x, labels, answer = input_of(s, seed)
    net = lstm_net()[0]
    clamp = clamps_of(s)
    trace = rec.lstm_trace(net.rnn, x, clamp=clamp)
    free = rec.lstm_trace(net.rnn, x) if clamp else None
    return trace, free, labels, answer


@st.cache_data(max_entries=8, show_spinner=False)
def storing_units() -> dict[int, tuple[int, float]]:
    """For each symbol: (the unit whose tanh(c) at '?' best tells that symbol from the
    others, its d′) over PROBE's sequences (engine/recurrent/reads.py)."""
    return reads.storing_units(lstm_net()[0], PROBE["n"], PROBE["delay"], PROBE["seed"], K)


def unit_of(s: Mapping[str, Any], labels) -> int:
    """The chosen unit: 'auto' picks the unit that stores the first symbol shown."""
    if s["lg_unit"] != "auto":
        return int(s["lg_unit"])
    first = next((lab for lab in labels if lab in rec.RECALL_ALPHABET[:K]), None)
    sym = rec.RECALL_ALPHABET.index(first) if first else int(
        max(storing_units(), key=lambda k: storing_units()[k][1]))
    return storing_units()[sym][0]


@st.cache_data(max_entries=4, show_spinner="Testing the shipped LSTM at every delay…")
def accuracy_by_delay(kind: str = "lstm") -> np.ndarray:
    net = load_shipped(kind)[0]
    return rec.accuracy_by_length(net, "delayed_recall", CHECK_DELAYS, n=512, distract=1.0)


@st.cache_data(max_entries=16, show_spinner=False)
def clamped_accuracy(clamp: tuple, delay: int, n: int = 64) -> float:
    """Accuracy of the shipped LSTM with gates clamped, on n seeded sequences."""
    return reads.clamped_accuracy(lstm_net()[0], dict(clamp), delay, n, K)


@st.cache_data(show_spinner=False, max_entries=64)
def _flows(kinds: tuple, T: int, hidden: int, seed: int, rho: float, fb: float, clip,
           device: str):
    return {k: rec.gradient_flow(k, T=T, hidden=hidden, seed=seed, spectral_radius=rho,
                               forget_bias=fb, clip=clip, device=device) for k in kinds}


def flows_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu",
             **override) -> dict[str, rec.GradientFlow]:
    s = {**s, **override}
    clip = None if s["lg_clip"] == "off" else float(s["lg_clip"])
    return _flows(tuple(k for k in KINDS if k in s["lg_kinds"]), int(s["lg_T"]), 32, seed,
                  float(s["lg_rho"]), float(s["lg_fb"]), clip, device)


@lesson_measure
def flow_at(s, kind: str, lag: int = FLOW_LAG, **override) -> float:
    return float(flows_of(s, **override)[kind].norms[lag])


def cell_trace_of(s: Mapping[str, Any]):
    weights = {g: tuple(float(s[f"lg_s_{g}_{n}"]) for n in "wub") for g in "ifgo"}
    xs = rec.pulse(60, at=5, amplitude=float(s["lg_s_amp"]))
    return xs, rec.lstm_trace(rec.scalar_lstm(weights), xs[:, None])


# ---- measurements the claims use (also shown on the page)
def min_accuracy(_s) -> float:
    return float(accuracy_by_delay("lstm").min())


def rnn_max_accuracy(_s) -> float:
    return float(accuracy_by_delay("rnn").max())


@lesson_measure
def accuracy_at(s) -> float:
    return float(rec.accuracy_by_length(lstm_net()[0], "delayed_recall", [int(s["lg_delay"])],
                                      n=512, distract=1.0)[0])


@lesson_measure
def unit_forget_over_delay(s) -> float:
    """Mean forget gate of the chosen unit between the symbol and '?' (this sequence)."""
    trace, _, labels, _ = trace_of(s)
    return reads.forget_over_delay(trace, unit_of(s, labels))


@lesson_measure
def unit_cell_at_query(s) -> float:
    """|c| of the chosen unit at '?' (this sequence)."""
    trace, _, labels, _ = trace_of(s)
    return float(abs(trace.c[-1, unit_of(s, labels)]))


@lesson_measure
def unit_input_gate_jump(s) -> float:
    """i at the symbol − mean i over the delay, chosen unit (this sequence)."""
    trace, _, labels, _ = trace_of(s)
    return reads.input_gate_jump(trace, unit_of(s, labels))


@lesson_measure
def unit_output_gate_jump(s) -> float:
    """o at '?' − mean o over the delay, chosen unit (this sequence)."""
    trace, _, labels, _ = trace_of(s)
    return reads.output_gate_jump(trace, unit_of(s, labels))


def weakest_storing_unit(_s) -> float:
    """The smallest d′ over the four symbols' storing units."""
    return min(d for _, d in storing_units().values())


@lesson_measure
def max_abs_cell(s) -> float:
    return float(np.abs(trace_of(s)[0].c).max())


@lesson_measure
def clamped_acc(s) -> float:
    return clamped_accuracy(tuple(sorted(clamps_of(s).items())), int(s["lg_delay"]))


def clamped_note(s) -> str:
    """The clamped net's accuracy beside the shipped (unclamped) one's, or "" when no gate is
    clamped: the caption's 100% is the free net's, not the one on screen."""
    clamps = clamps_of(s)
    if not clamps:
        return ""
    names = ", ".join(f"{g} = {v:g}" for g, v in sorted(clamps.items()))
    return (f" With {names} clamped: {clamped_acc(s):.1%} at D={int(s['lg_delay'])} "
            f"(64 sequences; chance {1 / K:.0%}).")


def chance(_s) -> float:
    """Accuracy of a guess among the K symbols."""
    return 1.0 / K


@lesson_measure
def rnn_fall(s) -> float:
    """Orders of magnitude the RNN's gradient falls from lag 0 to the longest lag."""
    n = flows_of(s)["rnn"].norms
    return math.log10(n[0] / n[-1])


@lesson_measure
def orders_lstm_over_rnn(s) -> float:
    return math.log10(flow_at(s, "lstm") / flow_at(s, "rnn"))


@lesson_measure
def orders_fb2_over_fb0(s) -> float:
    return math.log10(flow_at(s, "lstm", lg_fb=2) / flow_at(s, "lstm", lg_fb=0))


@lesson_measure
def unclipped_growth(s) -> float:
    """RNN gradient at lag 99 / at lag 1 without clipping (ρ of the setting)."""
    fl = flows_of(s, lg_clip="off")["rnn"]
    return float(fl.norms[99] / fl.norms[1])


@lesson_measure
def clipped_max(s) -> float:
    return float(np.nanmax(flows_of(s)["rnn"].norms))


@lesson_measure
def f_at_rest(s) -> float:
    return float(cell_trace_of(s)[1].f[-1, 0])


@lesson_measure
def half_life(s) -> float:
    return float(rec.memory_half_life(f_at_rest(s)))


@functools.lru_cache(maxsize=16)
def race_accuracy(kind: str, seed: int, curriculum: bool = False, delay: int = 40,
                  steps: int = RACE_AT) -> float:
    """Held-out accuracy at `delay` after `steps` iterations of one racer of the Train tab
    (its defaults: hidden 16, lr 0.01, batch 64, forget bias 2)."""
    return reads.race_accuracy(kind, seed, curriculum, delay, steps, K)

