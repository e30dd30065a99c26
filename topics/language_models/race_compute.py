"""The Char-RNN vs transformer tab's computations: a seeded run of both models on a text the
Train tab offers, summarised after a number of steps (what the slow claims measure; the live
tab reaches the same losses after the same steps with the same seed on a CPU), and the two
models' parameter counts."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import streamlit as st

from engine.language_models.gpt import GPT, n_parameters
from engine.language_models.reads import build_race
from engine.language_models.rnn import CharRNN, RNNConfig, matched_hidden
from topics.language_models.compute import BATCH, corpus_text

RACE_STEPS = 200         # what the race claims measure after
CELLS = ("LSTM", "GRU")   # the choices on screen; the engine takes them in lower case


@dataclass(frozen=True)
class RaceSummary:
    steps: int
    gpt_ce: float
    rnn_ce: float
    bigram_ce: float
    gpt_ms: float            # median ms per step over the last iterations
    rnn_ms: float


@st.cache_data(max_entries=4, show_spinner="Training both models…")
def race_of(corpus: str, lr: float, cell: str, steps: int = RACE_STEPS, seed: int = 0
            ) -> RaceSummary:
    tr = build_race(corpus_text(corpus), lr, BATCH, seed, "cpu", cell.lower())
    tr.step(steps)
    snap = tr.snapshot()
    return RaceSummary(tr.steps, snap.gpt_ce, snap.rnn_ce, snap.bigram_ce, snap.gpt_ms,
                       snap.rnn_ms)


def race_measure(name: str, steps: int = RACE_STEPS):
    """A claim's measure on race_of(settings): 'gap' (transformer's held-out CE minus the
    RNN's), 'rnn_below_bigram', 'time_ratio' (transformer's ms per step / the RNN's)."""
    def measure(s: Mapping[str, Any]) -> float:
        r = race_of(str(s["lm_corpus"]), float(s["lm_lr"]), str(s["lm_cell"]), steps)
        if name == "gap":
            return r.gpt_ce - r.rnn_ce
        if name == "rnn_below_bigram":
            return r.bigram_ce - r.rnn_ce
        if name == "time_ratio":
            return r.gpt_ms / r.rnn_ms
        return float(getattr(r, name))
    return measure


def params_of(cell: str) -> tuple[int, int]:
    """(the GPT's parameters, the matched RNN's)."""
    g, c = n_parameters(GPT()), cell.lower()
    return g, n_parameters(CharRNN(RNNConfig(hidden=matched_hidden(g, c), cell=c)))


def params_gap(s: Mapping[str, Any]) -> float:
    """|RNN parameters - GPT parameters| / GPT parameters."""
    g, r = params_of(str(s["lm_cell"]))
    return abs(r - g) / g
