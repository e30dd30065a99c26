"""engine/optim/reads.py: the trajectory measurements behind the gradient-descent claims."""
import numpy as np
import pytest

from engine import optim
from engine.optim import reads as M


def test_sign_flip_share_counts_sign_changes():
    assert M.sign_flip_share([1, -1, 1, -1, 1]) == 1.0
    assert M.sign_flip_share([4, 3, 2, 1]) == 0.0
    assert M.sign_flip_share([1, -1, 1e-15, 1]) == pytest.approx(2 / 2)   # rounding ignored
    assert M.sign_flip_share([1, 2]) == 0.0


def test_gd_on_a_diagonal_quadratic_matches_its_step_factors():
    """κ = 50, η = 1.9: steep factor 1 − 1.9 = −0.9 (flips every step), flat 1 − 1.9/50."""
    q = optim.make_landscape("quadratic", (1 / 50, 1.0), 0.0)
    tr = optim.optimize(q, "gd", (-2.5, 1.5), 300, lr=1.9)
    assert M.eigen_flip_share(q, tr, 1) == 1.0 and M.eigen_flip_share(q, tr, 0) == 0.0
    assert M.tail_rate(q, tr) == pytest.approx(1 - 1.9 / 50, abs=2e-3)
    assert M.diverged_at(tr) == np.inf and M.gap(q, tr, 0) > M.gap(q, tr) > 0
    assert M.mean_late_step(np.c_[np.arange(11.0), np.zeros(11)], last=5) == 1.0


def test_steps_to_and_divergence():
    q = optim.make_landscape("quadratic", (1.0, 1.0), 0.0)
    assert M.steps_to(q, optim.optimize(q, "gd", (1.0, 1.0), 10, lr=1.0), 1e-8) == 1
    bad = optim.optimize(q, "gd", (1.0, 1.0), 100, lr=2.5)
    assert M.diverged_at(bad) < 100 and M.steps_to(q, bad, 1e-8) == np.inf
