"""The pure measures the LSTM gating and attention pages state (engine/recurrent/reads.py,
engine/attention/reads.py), against cases worked out by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine import attention as A
from engine.attention import reads as AM
from engine.recurrent import reads as LM
from engine import recurrent as R


def _trace(T: int = 6, H: int = 2) -> R.LSTMTrace:
    z = np.zeros((T, H))
    i, f, o = z + 0.5, z + 0.9, z + 0.3
    i[0, 1], o[-1, 1] = 0.9, 0.8              # unit 1: opens i at the symbol, o at '?'
    f[1:-1, 0] = 0.2                          # unit 0: forgets over the delay
    return R.LSTMTrace(i=i, f=f, g=z, o=o, c=z, h=z, c0=z[0], h0=z[0])


def test_gate_measures_read_the_delay_between_symbol_and_query():
    tr = _trace()
    assert LM.forget_over_delay(tr, 0) == pytest.approx(0.2)
    assert LM.forget_over_delay(tr, 1) == pytest.approx(0.9)
    assert LM.input_gate_jump(tr, 1) == pytest.approx(0.4)
    assert LM.input_gate_jump(tr, 0) == pytest.approx(0.0)
    assert LM.output_gate_jump(tr, 1) == pytest.approx(0.5)


def test_frozen_memory_answers_the_same_symbol_for_every_sequence():
    net = R.RecurrentNet("lstm", 5, 8, 4)
    acc = LM.clamped_accuracy(net, {"i": 0.0, "f": 1.0}, delay=5, n=64, n_symbols=4)
    # i = 0, f = 1: c stays 0, so h = o·tanh(0) = 0 and the answer is head(0) every time
    k = int(R.head_probs(net, np.zeros(8)).argmax())
    y = R.make_task_batch("delayed_recall", 64, 5, seed=7, n_symbols=4, distract=1.0).y
    assert acc == pytest.approx(float((y.numpy() == k).mean()))


def test_race_accuracy_by_delay_gives_plain_arrays_per_racer():
    race = R.RaceTrainer(("rnn", "lstm"), task="delayed_recall", length=3, hidden=8,
                         batch=8, seed=0, device="cpu",
                         task_params={"n_symbols": 4, "distract": 1.0})
    out = LM.race_accuracy_by_delay(race, (2, 5), seed=0, n=16)
    assert set(out) == {"rnn", "lstm"}
    for a in out.values():
        assert isinstance(a, np.ndarray) and a.shape == (2,) and ((0 <= a) & (a <= 1)).all()


def test_mask_density_and_two_hop_coverage():
    n = 16
    full = np.ones((n, n), dtype=bool)
    assert AM.entries_per_n_sqrt_n(full) == pytest.approx(math.sqrt(n))
    causal = np.tril(full)
    assert AM.two_hop_coverage(causal) == 1.0
    diag = np.eye(n, dtype=bool)                        # each query sees itself only
    assert AM.two_hop_coverage(diag) == pytest.approx(n / (n * (n + 1) / 2))
    local = np.isfinite(A.MASKS["local"](n, 2).numpy())
    assert 0 < AM.two_hop_coverage(local) < 1
