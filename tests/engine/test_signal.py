"""Signal propagation, the mean-field map and batch norm (engine/signal/__init__.py), and the deep-net
trainer (engine/signal/training.py): numbers against closed forms and torch references."""
import math

import numpy as np
import pytest
import torch
from torch import nn

from engine import signal as S
from engine.signal import training as T
from engine.training import Trainer


# --- propagate: the variance argument --------------------------------------------------

def test_linear_net_variance_ratio_is_n_var_w_to_the_L():
    """Var(h_L)/Var(x) = (n · Var W)^L = σ_w^(2L) for init normal (Var W = σ_w²/n)."""
    ratios = [S.propagate(10, 256, "linear", "normal", 2048, seed, sigma_w=1.1).act_var[10]
              / S.propagate(10, 256, "linear", "normal", 2048, seed, sigma_w=1.1).act_var[0]
              for seed in range(4)]
    assert np.mean(ratios) == pytest.approx(1.1 ** 20, rel=0.06)
    assert all(abs(r / 1.1 ** 20 - 1) < 0.15 for r in ratios)


def test_relu_halves_the_second_moment():
    """E[relu(z)²] = Var(z)/2 for z symmetric around 0 (layer 1: z = W x, x ~ N(0, I))."""
    p = S.propagate(5, 256, "relu", "kaiming_normal", 2048, seed=0)
    second_moment = p.act_var + p.act_mean ** 2
    assert second_moment[1] == pytest.approx(p.preact_var[1] / 2, rel=0.02)
    assert np.mean(second_moment[1:] / p.preact_var[1:]) == pytest.approx(0.5, rel=0.1)


@pytest.mark.parametrize("seed", [0, 1])
def test_relu_he_preserves_and_xavier_halves_the_variance(seed):
    he = S.propagate(20, 256, "relu", "kaiming_normal", 1024, seed)
    xavier = S.propagate(20, 256, "relu", "xavier_normal", 1024, seed)
    assert he.preact_var[1] == pytest.approx(2.0, rel=0.03)       # 2/n · n · E[x²] = 2
    assert S.per_layer_ratio(he.act_var) == pytest.approx(1.0, abs=0.05)
    assert S.per_layer_ratio(xavier.act_var) == pytest.approx(0.5, abs=0.05)
    assert S.per_layer_ratio(xavier.preact_var) == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize("sigma_w,sigma_b", [(0.8, 0.0), (1.5, 0.0), (2.5, 0.5), (1.2, 0.3)])
def test_gradient_ratio_per_layer_is_mean_field_chi(sigma_w, sigma_b):
    """Backwards Var(g_{l-1})/Var(g_l) = σ_w² E[φ'(z)²] = χ once q_l reached its fixed point."""
    chi = S.chi_at("tanh", sigma_w, sigma_b)
    p = S.propagate(50, 256, "tanh", "normal", 512, seed=0, sigma_w=sigma_w, sigma_b=sigma_b)
    measured = S.per_layer_ratio(p.grad_var[::-1], 10, 40)   # layers 40 -> 10, backwards
    assert measured == pytest.approx(chi, rel=0.03)
    assert p.grad_var[-1] == pytest.approx(1.0, rel=0.02)     # readout r ~ N(0, I)


def test_tanh_small_sigma_dies_large_sigma_saturates():
    small = S.propagate(30, 256, "tanh", "normal", 512, 0, sigma_w=0.5)
    large = S.propagate(30, 256, "tanh", "normal", 512, 0, sigma_w=3.0)
    assert small.act_var[30] < 1e-15                      # ~ 0.25^30
    assert large.saturated[30] > 0.3 and large.act_var[30] > 0.6   # piles up at ±1
    centre = small.hist[30][S.HIST_BINS // 2 - 1: S.HIST_BINS // 2 + 1].sum()
    assert centre == pytest.approx(1.0)
    np.testing.assert_allclose(small.hist.sum(1), np.ones(31), rtol=1e-12)


def test_batchnorm_keeps_unit_preactivations_and_rescues_an_exploding_init():
    wild = S.propagate(50, 256, "relu", "normal", 512, 0, sigma_w=4.0)
    assert S.per_layer_ratio(wild.act_var) == pytest.approx(8.0, rel=0.05)   # σ_w²/2 per layer
    overflow = S.propagate(50, 256, "relu", "normal", 512, 0, sigma_w=12.0)
    assert overflow.diverged_at is not None and overflow.diverged_at > 30     # 72^l > 3e38
    assert np.isnan(overflow.act_var[overflow.diverged_at:]).all()
    assert np.isfinite(overflow.act_var[:overflow.diverged_at]).all()
    bn = S.propagate(50, 256, "relu", "normal", 512, 0, norm="batchnorm", sigma_w=4.0)
    assert bn.diverged_at is None
    np.testing.assert_allclose(bn.preact_var[1:], 1.0, atol=1e-3)    # x̂: mean 0, var 1
    ln = S.propagate(20, 256, "relu", "normal", 512, 0, norm="layernorm", sigma_w=4.0)
    np.testing.assert_allclose(ln.preact_var[1:], 1.0, atol=1e-3)


def test_sigmoid_gradients_vanish_towards_the_input():
    p = S.propagate(30, 256, "sigmoid", "xavier_normal", 512, 0)
    assert p.grad_var[0] < 1e-30 * p.grad_var[-1]        # ≤ (1/16)^30 shrinkage
    assert p.eff_rank[30] < 1.5                           # all inputs on one line


def test_propagate_is_seeded_and_validates_names():
    a = S.propagate(5, 64, "gelu", "orthogonal", 128, seed=3)
    b = S.propagate(5, 64, "gelu", "orthogonal", 128, seed=3)
    c = S.propagate(5, 64, "gelu", "orthogonal", 128, seed=4)
    np.testing.assert_array_equal(a.act_var, b.act_var)
    assert not np.array_equal(a.act_var, c.act_var)
    assert a.act_var.shape == a.grad_var.shape == a.eff_rank.shape == (6,)
    with pytest.raises(KeyError, match="activation"):
        S.propagate(3, 8, "softsign")
    with pytest.raises(KeyError, match="norm"):
        S.propagate(3, 8, norm="groupnorm")
    with pytest.raises(ValueError):
        S.propagate(0, 8)


def test_zeros_init_gives_zero_signal_and_rank():
    p = S.propagate(4, 32, "tanh", "zeros", 64, 0)
    assert (p.act_var[1:] == 0).all() and (p.eff_rank[1:] == 0).all()


def test_effective_rank_closed_forms():
    assert S.effective_rank(np.eye(6))[()] == pytest.approx(6.0)
    rank_one = np.outer(np.arange(1, 5), np.ones(3))
    assert S.effective_rank(rank_one)[()] == pytest.approx(1.0, abs=1e-6)
    two = np.diag([3.0, 1.0])        # p = (0.75, 0.25): exp(H)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert S.effective_rank(two)[()] == pytest.approx(math.exp(h))


def test_per_layer_ratio():
    assert S.per_layer_ratio(np.array([5.0, 1.0, 0.5, 0.25])) == pytest.approx(0.5)
    assert math.isnan(S.per_layer_ratio(np.array([1.0, 1.0, np.nan])))


# --- the mean-field map ----------------------------------------------------------------

def test_tanh_edge_of_chaos_at_sigma_b_zero_is_sigma_w_one():
    m = S.variance_map("tanh", (0.5, 1.5), (0.0, 0.01), depth=1000, resolution=201)
    assert m.boundary_w[0] == pytest.approx(1.0, abs=0.01)
    # ordered side: q -> 0, so χ -> σ_w² tanh'(0)² = σ_w²
    i = np.searchsorted(m.sigma_w, 0.8)
    assert m.chi[0, i] == pytest.approx(m.sigma_w[i] ** 2, rel=1e-3)


def test_relu_chi_is_half_sigma_w_squared_everywhere():
    m = S.variance_map("relu", (0.5, 2.0), (0.0, 1.0), depth=5, resolution=7)
    np.testing.assert_allclose(m.chi, np.broadcast_to(m.sigma_w ** 2 / 2, m.chi.shape), rtol=1e-3)
    np.testing.assert_allclose(m.boundary_w, np.full(7, math.sqrt(2)), atol=0.05)


def test_linear_map_q_closed_form():
    m = S.variance_map("linear", (0.9, 1.1), (0.0, 0.0), depth=4, resolution=3)
    sw = m.sigma_w
    expected = sw ** 8          # q_1 = σ_w², q_l = σ_w² q_{l-1}
    np.testing.assert_allclose(m.q[0], expected, rtol=1e-9)


def test_boundary_rises_with_sigma_b_for_tanh():
    m = S.variance_map("tanh", depth=50, resolution=40)
    b = m.boundary_w[np.isfinite(m.boundary_w)]
    assert len(b) > 30 and np.all(np.diff(b) > 0)


# --- batch norm ------------------------------------------------------------------------

def test_batchnorm_trace_equals_torch_batchnorm1d():
    trace = S.batchnorm_trace(batch_size=8, n_batches=30, momentum=0.2, gamma=1.5, beta=-0.5,
                              seed=1)
    bn = nn.BatchNorm1d(3, momentum=0.2).double()
    with torch.no_grad():
        bn.weight.fill_(1.5), bn.bias.fill_(-0.5)
    xs = S._batches(30, 8, S.DATA_MEAN, S.DATA_STD, 1)
    for i, xb in enumerate(xs):
        y = bn(torch.as_tensor(xb))
        np.testing.assert_allclose(bn.running_mean.numpy(), trace.running_mean[i + 1], rtol=1e-12)
        np.testing.assert_allclose(bn.running_var.numpy(), trace.running_var[i + 1], rtol=1e-12)
    np.testing.assert_allclose(y.detach().numpy(), trace.y_train, rtol=1e-9, atol=1e-12)
    bn.eval()
    np.testing.assert_allclose(bn(torch.as_tensor(xs[-1])).detach().numpy(), trace.y_eval,
                               rtol=1e-9, atol=1e-12)


def test_batchnorm_train_output_has_mean_zero_var_one_per_feature():
    t = S.batchnorm_trace(batch_size=16, seed=0)
    np.testing.assert_allclose(t.x_hat.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(t.x_hat.var(0), t.batch_var / (t.batch_var + t.eps), rtol=1e-12)
    assert t.x_hat.var(0) == pytest.approx(np.ones(3), abs=1e-4)


def test_running_mean_converges_to_the_data_mean():
    t = S.batchnorm_trace(batch_size=32, n_batches=300, momentum=0.1, seed=0)
    # stationary std of the EMA of batch means: σ/√B · √(m/(2-m))
    tol = 4 * S.DATA_STD / math.sqrt(32) * math.sqrt(0.1 / 1.9)
    assert np.all(np.abs(t.running_mean[-1] - S.DATA_MEAN) < tol)
    np.testing.assert_array_equal(t.running_mean[0], np.zeros(3))        # started at 0
    early = np.abs(t.running_mean[5] - S.DATA_MEAN)                      # (1 - m)^5 = 59% left
    assert np.all(early > 0.4 * np.abs(S.DATA_MEAN))
    assert np.all(np.abs(t.running_var[-1] / S.DATA_STD ** 2 - 1) < 0.25)


@pytest.mark.parametrize("seed", [0, 1])
def test_train_eval_gap_shrinks_with_batch_size(seed):
    gaps = [S.train_vs_eval_gap(b, seed=seed) for b in (2, 4, 16, 64)]
    assert all(a > b for a, b in zip(gaps, gaps[1:]))
    assert gaps[0] > 4 * gaps[-1]


def test_batchnorm_needs_two_samples():
    with pytest.raises(ValueError, match="at least 2"):
        S.batchnorm_trace(batch_size=1)


# --- the deep-net trainer --------------------------------------------------------------

def _small(seed=0, nets=T.DEFAULT_NETS, lr=0.05):
    return T.DeepNetsTrainer(T.DeepNetsConfig(nets, depth=4, width=16, lr=lr, log_every=5,
                                              seed=seed), device="cpu")


def test_trainer_protocol_and_snapshot_shapes():
    tr = _small()
    assert isinstance(tr, Trainer)
    tr.step(12)
    s = tr.snapshot()
    assert s.step == 12 and s.losses.shape == (3, 12)
    assert list(s.grad_steps) == [0, 5, 10] and s.grad_norms.shape == (3, 3, 5)
    assert s.losses[0, 0] == pytest.approx(math.log(10), abs=0.05)  # tiny init: chance level
    assert s.test_accuracy.shape == (3,)


def test_trainer_logs_stay_bounded_when_left_playing(monkeypatch):
    """A live page may play for an hour: the loss and gradient logs keep at most MAX_LOG
    entries, the newest at full rate, in step order (the snapshot carries them every frame)."""
    monkeypatch.setattr(T.DeepNetsTrainer, "MAX_LOG", 10)
    tr = _small()
    tr.step(40)
    s = tr.snapshot()
    assert len(s.loss_steps) <= 10 and s.losses.shape == (3, len(s.loss_steps))
    assert s.loss_steps[-1] == 40 and list(s.loss_steps[-5:]) == [36, 37, 38, 39, 40]
    assert np.all(np.diff(s.loss_steps) > 0) and len(s.grad_steps) <= 10
    assert s.grad_norms.shape == (len(s.grad_steps), 3, 5)


def test_trainer_same_seed_same_run_and_state_roundtrip():
    a, b = _small(seed=2), _small(seed=2)
    a.step(7), b.step(7)
    np.testing.assert_array_equal(a.snapshot().losses, b.snapshot().losses)
    state = a.state_dict()
    c = _small(seed=2)                 # same config (the data split is the config's)
    c.step(3)                          # ... in another state
    c.load_state_dict(state)
    a.step(4), c.step(4)
    np.testing.assert_array_equal(a.snapshot().losses, c.snapshot().losses)
    np.testing.assert_array_equal(a.snapshot().grad_norms, c.snapshot().grad_norms)


def test_init_probe_leaves_batchnorm_running_stats_alone():
    nets = (T.NetSpec("kaiming_normal", norm="batchnorm"),)
    tr = _small(nets=nets)
    bn = next(m for m in tr.models[0].modules() if isinstance(m, nn.BatchNorm1d))
    assert float(bn.running_mean.abs().max()) == 0.0 and bn.momentum == 0.1
    assert np.isfinite(tr.snapshot().grad_norms[0]).all()


def test_one_diverging_net_stops_alone():
    nets = (T.NetSpec("kaiming_normal"), T.NetSpec("kaiming_normal", gain=30.0))
    tr = _small(nets=nets, lr=50.0)
    tr.step(30)
    s = tr.snapshot()
    assert s.diverged_at[1] is not None and np.isnan(s.losses[1, -1])
    assert s.diverged_at[0] is None or tr.diverged_at is not None


def test_small_init_has_tiny_gradients_in_every_layer():
    tr = T.DeepNetsTrainer(T.DeepNetsConfig(depth=20, width=64, seed=0), device="cpu")
    g = tr.snapshot().grad_norms[0]          # (nets, layers) at initialisation (step 0)
    assert g[0].max() < 1e-6 * g[2].min()    # normal σ_w = 0.5 vs He


@pytest.mark.slow
def test_lr_sweep_batchnorm_allows_larger_rates():
    for seed in (0, 1):
        r = T.lr_sweep(seed=seed)
        assert r.max_stable_lr[1] >= 10 * r.max_stable_lr[0]


def test_covariance_spectra_are_those_of_propagates_network():
    """Same seed, same network: each layer's covariance trace is width × the variance
    propagate reports; the whitened input is well conditioned, a linear stack is not."""
    sp = S.covariance_spectra(5, 32, "linear", "xavier_normal", 1024, seed=0)
    p = S.propagate(5, 32, "linear", "xavier_normal", 1024, seed=0)
    assert sp.shape == (6, 32) and np.all(np.diff(sp, axis=1) <= 1e-12)
    np.testing.assert_allclose(sp.sum(1), 32 * p.act_var, rtol=5e-3)
    assert sp[0, 0] / sp[0, -1] < 3 and sp[5, 0] / sp[5, -1] > 1e6
