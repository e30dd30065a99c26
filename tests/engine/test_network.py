"""The A network you build page's engine: the trainer's loss equals its formula, a seed repeats a run,
and a saved state resumes the same run."""
from __future__ import annotations

import numpy as np
import torch

from engine.network import NetworkTrainer, make_points


def test_points_are_two_seeded_classes():
    x, y = make_points(100, 0.1, seed=3)
    assert x.shape == (100, 2) and x.dtype == np.float32 and set(np.unique(y)) == {0.0, 1.0}
    np.testing.assert_array_equal(x, make_points(100, 0.1, seed=3)[0])


def test_loss_is_the_mean_binary_cross_entropy():
    tr = NetworkTrainer(n=50, seed=0)
    with torch.no_grad():
        p = torch.sigmoid(tr.model(tr.x).squeeze(-1)).double()
        y = tr.y.double()
        expected = -(y * p.log() + (1 - y) * (1 - p).log()).mean()
        assert abs(float(tr.loss()) - float(expected)) < 1e-6     # float32 rounding


def test_training_lowers_the_loss_and_repeats_with_a_seed():
    a, b = NetworkTrainer(n=80, seed=1), NetworkTrainer(n=80, seed=1)
    first = float(a.loss())
    a.step(50)
    b.step(50)
    assert float(a.loss()) < first
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)


def test_a_saved_state_resumes_the_same_run():
    a = NetworkTrainer(n=80, seed=2)
    a.step(10)
    saved = a.state_dict()
    a.step(10)
    b = NetworkTrainer(n=80, seed=2)
    b.load_state_dict(saved)
    b.step(10)
    assert b.steps == a.steps == 20
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb)
