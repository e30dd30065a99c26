"""The Training in practice page's engine: SVGD's update against a hand-computed case and the
closed form on a Gaussian target, the pruning masks (exact fractions, pruned weights stay 0),
the search's budgets and grid, and the uncertainty bands."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.practice import pruning, search, svgd, uncertainty


# ----------------------------------------------------------------------------- SVGD
def test_svgd_direction_matches_a_hand_computed_two_particle_case():
    # x = (0, 1), score = (1, −1), h = 1: k(0, 1) = e^{-1}.
    # φ(x_0) = ½[k(0,0)·1 + k(1,0)·(−1) − 2(1 − 0)·k(1,0)] = ½[1 − e^{-1} − 2e^{-1}]
    # φ(x_1) = ½[k(0,1)·1 + k(1,1)·(−1) − 2(0 − 1)·k(0,1)] = ½[e^{-1} − 1 + 2e^{-1}]
    e = math.exp(-1.0)
    phi = svgd.svgd_direction(np.array([0.0, 1.0]), np.array([1.0, -1.0]), 1.0)
    np.testing.assert_allclose(phi, [0.5 * (1 - 3 * e), 0.5 * (3 * e - 1)], rtol=1e-12)


def test_svgd_direction_is_the_closed_form_on_a_gaussian_target():
    # Target N(0, 1): score = −x; φ(x_i) = 1/n Σ_j k_ji (−x_j − 2(x_j − x_i)/h).
    rng = np.random.default_rng(0)
    x, h = rng.normal(size=7), 0.7
    k = np.exp(-(x[:, None] - x[None, :]) ** 2 / h)
    expected = np.array([np.mean(k[:, i] * (-x - 2 * (x - x[i]) / h)) for i in range(7)])
    np.testing.assert_allclose(svgd.svgd_direction(x, -x, h), expected, rtol=1e-12)


def test_mixture_score_is_the_gradient_of_log_density():
    m, x, eps = svgd.Mixture(), np.linspace(-5, 5, 41), 1e-6
    numeric = (np.log(m.density(x + eps)) - np.log(m.density(x - eps))) / (2 * eps)
    np.testing.assert_allclose(m.score(x), numeric, atol=1e-6)


def test_svgd_particles_cover_both_modes_and_one_particle_is_refused():
    run = svgd.run_svgd(svgd.Mixture(), 40, 300, 0.5, "median", seed=0)
    assert 0.5 < svgd.mode_share(run.frames[-1]) < 0.85
    assert run.frames.shape[1] == 40 and run.iterations[-1] == 300
    with pytest.raises(ValueError, match="at least 2 particles"):
        svgd.run_svgd(svgd.Mixture(), 1, 10, 0.5, 1.0)


# ----------------------------------------------------------------------------- pruning
def test_magnitude_mask_drops_exactly_the_smallest_kept_weights():
    w = torch.tensor([[0.1, -3.0, 0.5], [2.0, -0.05, 1.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    out = magnitude = pruning.magnitude_mask(w, mask, 0.4)       # drop round(0.4·5) = 2
    assert int(magnitude.sum()) == 3
    torch.testing.assert_close(out, torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]))


def test_random_mask_keeps_exactly_the_stated_count():
    m = pruning.random_mask((64, 10), 77, torch.Generator().manual_seed(0))
    assert int(m.sum()) == 77 and set(m.unique().tolist()) == {0.0, 1.0}


def test_rounds_keep_the_stated_fraction_and_pruned_weights_stay_zero():
    tr = pruning.LotteryTrainer(hidden=16, rate=0.5, round_steps=20, seed=0)
    tr.step(40)                                      # two rounds: 50%, then 25% kept
    sizes = [64 * 16, 16 * 10]
    for layer, size in enumerate(sizes):
        kept = round(round(size * 0.5) * 0.5)
        for arm in range(3):
            assert int(tr.masks[layer][arm].sum()) == kept
    tr.step(7)                                       # training inside the third round
    for w, m in zip(tr.ws, tr.masks):
        assert torch.all(w.detach()[m == 0] == 0)
    assert [r.round for r in tr.records] == [0, 1]
    assert tr.records[1].kept == pytest.approx(0.5, abs=1e-3)


def test_the_ticket_is_rewound_to_its_initial_weights():
    tr = pruning.LotteryTrainer(hidden=16, rate=0.3, round_steps=20, seed=1)
    w0 = [w[0].detach().clone() for w in tr.ws]
    tr.step(20)
    for w, m, start in zip(tr.ws, tr.masks, w0):
        torch.testing.assert_close(w[0].detach(), start * m[0])
        torch.testing.assert_close(w[2].detach(), start * m[2])


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_pruning_nothing_or_everything_is_refused(rate):
    with pytest.raises(ValueError, match="between 0% and 100%"):
        pruning.LotteryTrainer(rate=rate)


def test_a_saved_state_resumes_the_same_run():
    a = pruning.LotteryTrainer(hidden=16, rate=0.3, round_steps=10, seed=2)
    a.step(15)
    saved = a.state_dict()
    a.step(10)
    b = pruning.LotteryTrainer(hidden=16, rate=0.3, round_steps=10, seed=2)
    b.load_state_dict(saved)
    b.step(10)
    assert a.steps == b.steps == 25
    for wa, wb in zip(a.ws, b.ws):
        torch.testing.assert_close(wa, wb)


# ----------------------------------------------------------------------------- search
def test_grid_tries_only_the_square_root_of_the_budget_in_u():
    g = search.run_search("grid", 16)
    assert len(g.points) == 16 and g.distinct_u == 4
    r = search.run_search("random", 16, seed=0)
    assert r.distinct_u == 16
    assert np.all(np.diff(r.best_so_far) >= 0)


def test_budgets_are_capped_or_refused():
    assert search.capped_budget(10_000, "random")[0] == search.MAX_BUDGET
    assert "capped" in search.capped_budget(10_000, "random")[1]
    assert search.capped_budget(10_000, "bayesian")[0] == search.MAX_BUDGET_BO
    with pytest.raises(ValueError, match="at least 1"):
        search.capped_budget(0, "grid")


def test_expected_improvement_is_its_formula():
    mu, sd, best = np.array([1.0, 0.5]), np.array([0.2, 0.1]), 0.8
    gain = mu - best - search.XI
    z = gain / sd
    phi = np.exp(-z ** 2 / 2) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in z]))
    np.testing.assert_allclose(search.expected_improvement(mu, sd, best),
                               gain * cdf + sd * phi, rtol=1e-10)


# ----------------------------------------------------------------------------- bands
def test_band_statistics_and_regions():
    xs = uncertainty.grid()
    samples = np.stack([np.where(np.abs(xs) < 1, 1.0, 0.1), -np.where(np.abs(xs) < 1, 1.0,
                                                                        0.1)])
    b = uncertainty.band_of(xs, samples)
    assert b.width_gap == pytest.approx(1.0) and b.width_in == pytest.approx(0.1, rel=1e-6)
    assert b.width_ratio == pytest.approx(10.0, rel=1e-5)


def test_bad_band_settings_are_refused():
    x, y = uncertainty.gap_data(20, 0.1, 0)
    with pytest.raises(ValueError, match="at least 2 members"):
        uncertainty.ensemble_band(x, y, 1, steps=1)
    with pytest.raises(ValueError, match="collapses"):
        uncertainty.mc_dropout_band(x, y, 0.0, steps=1)


def test_a_small_ensemble_is_wider_in_the_gap():
    x, y = uncertainty.gap_data(40, 0.1, 0)
    b = uncertainty.ensemble_band(x, y, 4, hidden=16, steps=150, seed=0)
    assert b.width_ratio > 1.2
    assert uncertainty.gap_data(40, 0.1, 0)[0].min() < -1 and np.all(
        np.abs(uncertainty.gap_data(40, 0.1, 0)[0]) >= 1)


# ----------------------------------------------------------------------------- distillation
def test_distillation_loss_is_its_formula_with_the_t_squared_factor():
    from engine.practice.distill import distillation_loss
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(5, 10, generator=g), torch.randn(5, 10, generator=g)
    y = torch.tensor([0, 3, 9, 1, 1])
    T, alpha = 3.0, 0.7
    p_t = torch.softmax(t / T, -1)
    kl = (p_t * (p_t.log() - torch.log_softmax(s / T, -1))).sum(-1).mean()
    ce = -torch.log_softmax(s, -1)[torch.arange(5), y].mean()
    expected = alpha * T ** 2 * kl + (1 - alpha) * ce
    torch.testing.assert_close(distillation_loss(s, t, y, T, alpha), expected)


def test_soft_targets_flatten_with_temperature():
    from engine.practice.distill import soft_targets
    p = soft_targets(torch.tensor([4.0, 1.0, 0.0]), (1.0, 4.0))
    np.testing.assert_allclose(p.sum(1), 1.0, rtol=1e-6)
    assert p[1].max() < p[0].max()


def test_the_mixtures_mean_and_std_are_its_density_moments():
    from engine.practice.svgd import Mixture
    p = Mixture()
    x = np.linspace(-15, 15, 30001)
    dx = x[1] - x[0]
    dens = p.density(x)
    mean = float(np.sum(x * dens) * dx)
    std = float(np.sqrt(np.sum((x - mean) ** 2 * dens) * dx))
    assert abs(p.mean - mean) < 1e-9 and abs(p.std - std) < 1e-9
