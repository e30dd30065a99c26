"""The char RNN beside the GPT: its causality and loss, the parameter count the width is
matched by, and the race trainer (the transformer's run is the Train tab's run, both models
learn, a saved state resumes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.language_models import GPTConfig, GPTTrainer, encode, generate, n_parameters, split_text
from engine.language_models.race import RaceTrainer
from engine.language_models.rnn import CELLS, CharRNN, RNNConfig, matched_hidden

TINY = GPTConfig(context=16, width=16, heads=2, layers=1)
TEXT = "the cat sat on the mat. the dog sat on the log. " * 40


@pytest.mark.parametrize("cell", CELLS)
def test_matched_width_counts_the_parameters_pytorch_counts(cell):
    for target in (20_000, 164_480):
        h = matched_hidden(target, cell)
        n = n_parameters(CharRNN(RNNConfig(hidden=h, cell=cell)))
        n_next = n_parameters(CharRNN(RNNConfig(hidden=h + 1, cell=cell)))
        n_prev = n_parameters(CharRNN(RNNConfig(hidden=h - 1, cell=cell)))
        assert abs(n - target) <= min(abs(n_next - target), abs(n_prev - target))


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_output_at_t_ignores_later_tokens_and_loss_is_the_nll(cell):
    torch.manual_seed(0)
    m = CharRNN(RNNConfig(hidden=24, embed=8, cell=cell)).eval()
    x = torch.as_tensor(encode("abcdefghijkl").ids)[None]
    y = x.clone()
    y[0, 6:] = torch.as_tensor(encode("ZZZZZZ").ids)
    with torch.no_grad():
        a, b = m(x), m(y)
        torch.testing.assert_close(a[0, :6], b[0, :6])
        assert not torch.allclose(a[0, 6:], b[0, 6:])
        logp = a[0, :-1].log_softmax(-1)
        ref = -logp[torch.arange(x.shape[1] - 1), x[0, 1:]].mean()
        torch.testing.assert_close(m.loss(x[:, :-1], x[:, 1:]), ref)
    assert len(generate(m, encode("the ").ids, 5, 0.8, seed=0).text) == 5


def _race(seed: int = 0) -> RaceTrainer:
    s = split_text(TEXT)
    return RaceTrainer(s.train, s.held, TINY, RNNConfig(context=16, embed=8, hidden=24),
                       lr=1e-2, batch=8, seed=seed, prompt="the")


def test_the_race_transformer_is_the_train_tabs_run_and_both_learn():
    r = _race(1)
    s = split_text(TEXT)
    g = GPTTrainer(s.train, s.held, TINY, lr=1e-2, batch=8, seed=1, prompts=("the",))
    first = r.rnn_held_ce()
    r.step(20)
    g.step(20)
    for pa, pb in zip(r.model.parameters(), g.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    snap = r.snapshot()
    assert snap.rnn_ce < first - 0.5 and snap.step == 20
    assert np.isfinite(snap.gpt_ms) and snap.gpt_ms > 0 and snap.rnn_ms > 0
    steps, held = r.history.as_arrays("rnn_held_out")
    assert list(steps) == [20] and held[-1] == pytest.approx(snap.rnn_ce, rel=1e-6)
    assert len(snap.rnn_sample) == len(snap.gpt_sample) == 60


def test_a_saved_race_resumes_the_same_run():
    a = _race(2)
    a.step(3)
    saved = a.state_dict()
    a.step(3)
    b = _race(2)
    b.load_state_dict(saved)
    b.step(3)
    for pa, pb in zip(a.rnn.parameters(), b.rnn.parameters()):
        torch.testing.assert_close(pa, pb)


def test_an_unknown_cell_is_refused_in_words():
    with pytest.raises(ValueError, match="cell must be one of"):
        CharRNN(RNNConfig(cell="rnn"))
