"""engine/generalization/__init__.py and engine/generalization/double_descent.py: dropout, the two penalties against
torch's optimizers, the trainer protocol, random-label memorization, and the random-features
curve against a NumPy pinv reference."""
import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from engine.generalization import double_descent as dd
from engine import generalization as G
from engine.training import Trainer

SMALL = G.TrainConfig(n_train=40, n_val=100, width=16, depth=2, lr=0.01, log_every=5)


def _trainer(device="cpu", seed=0, **kw):
    return G.GeneralizationTrainer(G.TrainConfig(**{**SMALL.__dict__, **kw}), seed=seed, device=device)


# ------------------------------------------------------------------------------ dropout

def test_dropout_is_identity_in_eval_mode():
    h = torch.randn(50, 30)
    assert torch.equal(G.dropout(h, 0.5, training=False), h)
    assert torch.equal(G.dropout(h, 0.0, training=True), h)


def test_dropout_zeroes_or_scales_by_one_over_keep_probability():
    p = 0.3
    h = torch.rand(400, 500) + 0.5                       # strictly positive
    out = G.dropout(h, p, training=True, generator=torch.Generator().manual_seed(0))
    kept = out != 0
    assert torch.allclose(out[kept], h[kept] / (1 - p))
    assert abs(kept.float().mean().item() - (1 - p)) < 0.01        # 200,000 Bernoulli draws
    assert abs((out / h).mean().item() - 1.0) < 0.01                # E[drop(h)] = h


def test_model_eval_mode_is_deterministic_and_train_mode_is_not():
    m = G.MLP((2, 64, 64, 2), p=0.5, seed=0)
    x = torch.randn(20, 2)
    m.training = False
    assert torch.equal(m(x), m(x))
    m.training = True
    assert not torch.equal(m(x), m(x))


# ------------------------------------------------------------------------------ penalties and updates

def test_coupled_l2_gradient_is_loss_gradient_plus_lambda_theta():
    lam = 0.37
    a, b = _trainer(l2=0.0), _trainer(l2=lam)
    ga = torch.autograd.grad(a.objective(), a.model.theta)[0]
    gb = torch.autograd.grad(b.objective(), b.model.theta)[0]
    assert torch.allclose(gb, ga + lam * b.model.theta.detach(), atol=1e-6)
    assert not torch.allclose(gb, ga, atol=1e-3)


def _torch_reference(trainer, optimizer):
    """The same MLP with theta as an nn.Parameter driven by a torch optimizer."""
    ref = G.MLP(trainer.model.sizes, 0.0, 0)
    ref.theta = torch.nn.Parameter(trainer.model.theta.detach().clone())
    return ref, optimizer([ref.theta])


@pytest.mark.parametrize("name, kw, make", [
    ("adamw", dict(optimizer="adam", weight_decay=0.5),
     lambda lr: lambda ps: torch.optim.AdamW(ps, lr=lr, weight_decay=0.5)),
    ("adam + coupled l2", dict(optimizer="adam", l2=0.5),
     lambda lr: lambda ps: torch.optim.Adam(ps, lr=lr, weight_decay=0.5)),
    ("momentum", dict(optimizer="momentum"),
     lambda lr: lambda ps: torch.optim.SGD(ps, lr=lr, momentum=0.9)),
    ("sgd + decoupled decay", dict(optimizer="sgd", weight_decay=0.5),
     lambda lr: lambda ps: torch.optim.SGD(ps, lr=lr, weight_decay=0.5)),
])
def test_updates_equal_torch_optimizers_step_for_step(name, kw, make):
    """AdamW = torch.optim.AdamW; Adam + L2 in the loss = torch.optim.Adam(weight_decay);
    for plain SGD decoupled decay and L2 coincide (torch's SGD weight_decay)."""
    tr = _trainer(lr=0.01, **kw)
    ref, opt = _torch_reference(tr, make(0.01))
    theta0 = tr.model.theta.detach().clone()
    for _ in range(25):
        tr.step(1)
        opt.zero_grad()
        F.cross_entropy(ref(tr.x), tr.y).backward()
        opt.step()
        assert torch.allclose(tr.model.theta.detach(), ref.theta.detach(), atol=1e-6, rtol=1e-5)
    assert (tr.model.theta.detach() - theta0).abs().max() > 1e-2   # it did move


def test_decoupled_decay_shrinks_by_one_minus_lr_lambda_without_gradient():
    tr = _trainer(optimizer="sgd", lr=0.1, weight_decay=2.0)
    theta0 = tr.model.theta.detach().clone()
    g = torch.zeros_like(theta0)
    with torch.no_grad():                    # one update with a zero gradient, as step() does
        u = tr.update(g, tr.opt_state, 1)
        tr.model.theta.mul_(1 - 0.1 * 2.0).sub_(u, alpha=0.1)
    assert torch.allclose(tr.model.theta.detach(), 0.8 * theta0)


# ------------------------------------------------------------------------------ data

def test_flip_labels_changes_exactly_the_fraction_to_other_classes():
    y = np.arange(1000) % 10
    out = G.flip_labels(y, 0.23, 10, np.random.default_rng(0))
    assert (out != y).sum() == 230
    assert out.min() >= 0 and out.max() <= 9


def test_split_label_noise_and_random_labels():
    clean = G.make_split("two_moons", 100, 200, 0.1, seed=3)
    noisy = G.make_split("two_moons", 100, 200, 0.1, label_noise=0.2, seed=3)
    wrong = np.concatenate([noisy.y_train != clean.y_train, noisy.y_val != clean.y_val])
    assert wrong.sum() == 60 and (noisy.y_train != clean.y_train).any() and (noisy.y_val != clean.y_val).any()
    rand = G.make_split("digits", 300, 359, random_labels=True, seed=0)
    real = G.make_split("digits", 300, 359, seed=0)
    assert rand.x_train.shape == (300, 64) and rand.n_classes == 10
    assert np.array_equal(rand.y_val, real.y_val) and np.array_equal(rand.clean_train, real.y_train)
    assert 0.02 < (rand.y_train == real.y_train).mean() < 0.2                  # ~ 1/10 by chance
    with pytest.raises(KeyError):
        G.make_split("nope")


# ------------------------------------------------------------------------------ trainer

def test_follows_protocol_and_logs_every_metric(device):
    tr = _trainer(device)
    assert isinstance(tr, Trainer)
    m = tr.step(20)
    assert set(m) == {"train_loss", "val_loss", "train_acc", "val_acc", "weight_norm"}
    snap = tr.snapshot()
    assert list(snap.steps) == [0, 5, 10, 15, 20] and snap.step == 20
    assert snap.weight_norm[-1] == pytest.approx(tr.model.theta.detach().norm().item(), rel=1e-6)


def test_best_step_and_early_stopping_follow_the_logged_validation_loss():
    tr = _trainer(label_noise=0.3, width=64, lr=0.02, patience=4)
    tr.step(400)
    s = tr.snapshot()
    assert tr.best_step == s.steps[int(np.argmin(s.val_loss))]
    # stop_step: the first evaluation with `patience` evaluations since the running best
    run_best, since, expected = math.inf, 0, None
    for step, v in zip(s.steps, s.val_loss):
        if v < run_best:
            run_best, since = v, 0
        else:
            since += 1
            if expected is None and since >= 4:
                expected = step
    assert expected is not None and tr.stop_step == expected
    best = tr.best_model()
    with torch.no_grad():
        assert F.cross_entropy(best(tr.x_val), tr.y_val).item() == pytest.approx(tr.best_val, rel=1e-5)


def test_same_seed_same_run_and_state_dict_roundtrip(device):
    a, b = _trainer(device, dropout=0.3, seed=4), _trainer(device, dropout=0.3, seed=4)
    a.step(15), b.step(15)
    assert a.history.values == b.history.values
    c = _trainer(device, dropout=0.3, seed=5)
    c.step(15)
    assert c.history.values["train_loss"] != a.history.values["train_loss"]
    state = a.state_dict()
    a.step(10)
    d = _trainer(device, dropout=0.3, seed=4)
    d.load_state_dict(state)
    d.step(10)
    assert d.history.values == a.history.values and d.steps == 25


def test_divergence_is_a_result():
    tr = _trainer(optimizer="sgd", lr=1e30)
    tr.step(50)
    assert tr.diverged_at is not None
    steps = tr.steps
    tr.step(10)
    assert tr.steps == steps


def test_pair_trainer_steps_every_member():
    pair = G.PairTrainer({"a": _trainer(), "b": _trainer(l2=0.1)})
    m = pair.step(10)
    assert pair.steps == 10 and "a/val_acc" in m and "b/weight_norm" in m
    assert isinstance(pair, Trainer) and set(pair.snapshot()) == {"a", "b"}


def test_decision_grid_matches_the_model_at_grid_points():
    tr = _trainer(dropout=0.5)
    tr.step(30)
    grid = G.decision_grid(tr.model, (-1.5, 2.5, -1.0, 1.5), res=7)
    assert grid.probability.shape == (7, 7)
    x = torch.tensor([[grid.grid_x[3], grid.grid_y[5]]], dtype=torch.float32)
    tr.model.training = False
    p = torch.softmax(tr.model(x), -1)[0, 1].item()
    assert grid.probability[5, 3] == pytest.approx(p, abs=1e-6)
    assert set(np.unique(grid.label)) <= {0, 1}


# ------------------------------------------------------------------------------ random labels (Zhang et al.)

def _steps_to(tr, acc, limit):
    while tr.steps < limit:
        tr.step(tr.config.log_every)
        if tr.latest()["train_acc"] >= acc:
            return tr.steps
    return math.inf


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_random_labels_are_memorized_slower_and_do_not_generalize(seed):
    cfg = G.TrainConfig(dataset="digits", n_train=500, n_val=359, width=128, depth=2, lr=1e-3,
                        log_every=25)
    real = G.GeneralizationTrainer(cfg, seed=seed)
    rand = G.GeneralizationTrainer(G.TrainConfig(**{**cfg.__dict__, "random_labels": True}), seed=seed)
    t_real, t_rand = _steps_to(real, 0.95, 400), _steps_to(rand, 0.95, 400)
    assert t_rand <= 400 and t_real * 2 <= t_rand            # measured 50 vs 200 (seeds 0, 1)
    rand.step(400 - rand.steps)
    assert rand.latest()["train_acc"] >= 0.95 and rand.latest()["val_acc"] <= 0.15
    assert real.latest()["val_acc"] >= 0.85


# ------------------------------------------------------------------------------ double descent

def _reference_errors(prob, n, widths, ridge):
    """NumPy: a = pinv(Phi_p / sqrt(p)) y (ridge 0) or the normal equations with ridge."""
    out = []
    for p in widths:
        errs = []
        for t in range(prob.phi_train.shape[0]):
            phi = prob.phi_train[t, :, :p] / math.sqrt(p)
            if ridge == 0:
                a = np.linalg.pinv(phi, rcond=dd.RCOND) @ prob.y_train[t]
            else:
                a = np.linalg.solve(phi.T @ phi + n * ridge * np.eye(p), phi.T @ prob.y_train[t])
            errs.append(np.mean((prob.phi_test[t, :, :p] / math.sqrt(p) @ a - prob.f_test[t]) ** 2))
        out.append(np.mean(errs))
    return np.array(out)


@pytest.mark.parametrize("ridge", [0.0, 1e-2])
def test_random_features_curve_equals_numpy_pinv_reference(ridge):
    n, widths = 60, [3, 30, 59, 60, 61, 200]
    curve = dd.random_features_curve(n, widths, noise=0.5, ridge=ridge, seed=2, n_test=300, trials=2)
    prob = dd.random_features_problem(n, max(widths), 0.5, n_test=300, trials=2, seed=2)
    np.testing.assert_allclose(curve.test_error, _reference_errors(prob, n, widths, ridge), rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_min_norm_curve_peaks_at_p_equals_n_and_ridge_removes_it(seed):
    n = 100
    plain = dd.random_features_curve(n, noise=0.5, seed=seed)
    assert abs(dd.peak_width(plain) - n) <= 0.1 * n
    assert dd.peak_ratio(plain) > 10                      # measured 626 and 70
    assert plain.train_error[plain.widths >= n].max() < 1e-12     # interpolation past p = n
    ridged = dd.random_features_curve(n, noise=0.5, ridge=1e-2, seed=seed)
    assert dd.peak_ratio(ridged) < 1.0                    # measured 0.71 and 0.81
    assert dd.peak_width(ridged) < n / 2


def test_default_widths_hold_n_and_neighbours():
    w = dd.default_widths(100)
    assert {99, 100, 101} <= set(w.tolist()) and w.min() == 1 and w.max() == 1000
    assert np.all(np.diff(w) > 0)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError):
        dd.random_features_curve(1)
    with pytest.raises(ValueError):
        dd.random_features_curve(50, ridge=-1)
    with pytest.raises(KeyError):
        G.GeneralizationTrainer(G.TrainConfig(optimizer="lbfgs"))
