"""Measurements the LSTM gating page states as facts (its claims) and shows: which unit stores
a symbol, how the gates of that unit move, the accuracy with clamped gates, and the race
between an RNN and an LSTM trained from scratch. Pure numpy/torch on engine.recurrent results.

    d′(unit, symbol)   = |mean_sym tanh c − mean_rest tanh c| / sqrt(½ (var_sym + var_rest))
                         of tanh(c) at '?' over a seeded batch (the storing unit: argmax d′)
    forget over delay  = mean_t f_t[unit]   over the distractors (t = 1 .. T−2)
    input jump         = i_0[unit] − mean_t i_t[unit]    (the symbol vs the delay)
    output jump        = o_{T−1}[unit] − mean_t o_t[unit] ('?' vs the delay)
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from engine import recurrent

TASK = "delayed_recall"


def storing_units(net: recurrent.RecurrentNet, n: int, delay: int, seed: int,
                  n_symbols: int) -> dict[int, tuple[int, float]]:
    """For each symbol: (the unit whose tanh(c) at '?' best tells that symbol from the
    others, its d′) over n seeded sequences at `delay`."""
    b = recurrent.make_task_batch(TASK, n, delay, seed=seed, n_symbols=n_symbols, distract=1.0)
    x, y = b.x.cpu().numpy(), b.y.cpu().numpy()
    cq = np.array([np.tanh(recurrent.lstm_trace(net.rnn, xi).c[-1]) for xi in x])
    out = {}
    for sym in range(n_symbols):
        a, r = cq[y == sym], cq[y != sym]
        d = np.abs(a.mean(0) - r.mean(0)) / np.sqrt(0.5 * (a.var(0) + r.var(0)) + 1e-12)
        out[sym] = (int(d.argmax()), float(d.max()))
    return out


def clamped_accuracy(net: recurrent.RecurrentNet, clamp: Mapping[str, float], delay: int, n: int,
                     n_symbols: int, seed: int = 7) -> float:
    """Share of n seeded sequences the LSTM answers right with the gates `clamp` held
    constant at every step (the readout of the clamped h_T)."""
    b = recurrent.make_task_batch(TASK, n, delay, seed=seed, n_symbols=n_symbols, distract=1.0)
    right = 0
    for xi, yi in zip(b.x.cpu().numpy(), b.y.cpu().numpy()):
        h = recurrent.lstm_trace(net.rnn, xi, clamp=dict(clamp)).h[-1]
        right += int(recurrent.head_probs(net, h).argmax() == yi)
    return right / n


def forget_over_delay(trace: recurrent.LSTMTrace, unit: int) -> float:
    return float(trace.f[1:-1, unit].mean())


def input_gate_jump(trace: recurrent.LSTMTrace, unit: int) -> float:
    return float(trace.i[0, unit] - trace.i[1:-1, unit].mean())


def output_gate_jump(trace: recurrent.LSTMTrace, unit: int) -> float:
    return float(trace.o[-1, unit] - trace.o[1:-1, unit].mean())


def race_accuracy(kind: str, seed: int, curriculum: bool, delay: int, steps: int,
                  n_symbols: int, hidden: int = 16, lr: float = 0.01, batch: int = 64,
                  forget_bias: float = 2.0) -> float:
    """Held-out accuracy at `delay` (256 sequences) after `steps` iterations of one racer
    of the page's race: a SequenceTrainer trained from scratch (the curriculum starts at
    delay 2). A racer of recurrent.RaceTrainer is an independent SequenceTrainer with these
    arguments."""
    tr = recurrent.SequenceTrainer(kind, task=TASK, length=2 if curriculum else delay,
                           max_length=delay, curriculum=curriculum, hidden=hidden, lr=lr,
                           batch=batch, seed=seed, device="cpu", forget_bias=forget_bias,
                           task_params={"n_symbols": n_symbols, "distract": 1.0})
    tr.step(steps)
    return float(recurrent.accuracy_by_length(tr.net, TASK, [delay], n=256, seed=seed,
                                      distract=1.0)[0])


def race_accuracy_by_delay(race: recurrent.RaceTrainer, delays: Sequence[int], seed: int,
                           n: int = 100) -> dict[str, np.ndarray]:
    """Each racer's held-out accuracy at every delay (n seeded sequences each): plain
    arrays, so it can run next to the trainer (live.controls.read_trainer) and cross a process."""
    return {k: np.asarray(recurrent.accuracy_by_length(r.net, TASK, list(delays), n=n, seed=seed,
                                               distract=1.0), dtype=float)
            for k, r in race.racers.items()}
