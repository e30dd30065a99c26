"""engine/optim/ (engine.optim): closed forms from docs/MATH.md and step-for-step equality with torch.optim."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.optim import (LANDSCAPES, OPTIMIZERS, Quadratic, RaceEntry, distance_to_minimizer,
                          eigen_errors, gd_rate, heavy_ball_rate, landscape_grid, make_landscape,
                          measured_rate, optimal_gd_lr, optimal_gd_rate, optimal_momentum,
                          optimal_momentum_rate, optimize, optimize_many, race, rate_map,
                          taylor_gap, taylor_model)

ALL_LANDSCAPES = ["quadratic", *LANDSCAPES]


def _problem(name):
    return make_landscape(name, eigenvalues=(0.3, 4.0), angle_deg=25.0)


# ----------------------------------------------------------------------------- landscapes

def test_from_spectrum_has_the_requested_eigenpairs():
    q = Quadratic.from_spectrum((2.0, -0.5), angle_deg=40.0, minimizer=(1.0, -2.0))
    vals, vecs = np.linalg.eigh(q.A)
    np.testing.assert_allclose(vals, [-0.5, 2.0], atol=1e-14)
    for lam, v in zip(q.eigenvalues, q.eigenvectors.T):
        np.testing.assert_allclose(q.A @ v, lam * v, atol=1e-14)
    np.testing.assert_allclose(q.eigenvectors[:, 0], [math.cos(math.radians(40)),
                                                      math.sin(math.radians(40))])
    assert q.value(np.array([1.0, -2.0])) == 0.0


@pytest.mark.parametrize("name", ALL_LANDSCAPES)
def test_gradient_and_hessian_equal_autograd(name):
    problem = _problem(name)
    pts = torch.tensor(np.random.default_rng(0).uniform(-1.5, 1.5, (7, 2)), dtype=torch.float64)
    x = pts.clone().requires_grad_(True)
    auto_grad, = torch.autograd.grad(problem.value(x).sum(), x)
    np.testing.assert_allclose(problem.grad(pts.numpy()), auto_grad.numpy(), rtol=1e-12,
                               atol=1e-12)
    for p in pts:
        h = torch.autograd.functional.hessian(lambda v: problem.value(v), p)
        np.testing.assert_allclose(np.asarray(problem.hessian(p.numpy())), h.numpy(),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ALL_LANDSCAPES)
def test_minimizer_is_stationary_and_f_star_is_its_value(name):
    problem = _problem(name)
    np.testing.assert_allclose(problem.grad(problem.minimizer), [0, 0], atol=1e-12)
    assert problem.value(problem.minimizer) == pytest.approx(problem.f_star, abs=1e-12)
    grid = landscape_grid(problem, res=60)
    assert grid.values.shape == (60, 60)
    assert grid.values.min() >= problem.f_star - 1e-12
    vals, _ = problem.curvature()
    assert (vals > 0).all()          # the global minimizer is a minimum


def test_two_minima_has_a_worse_local_minimum():
    p = LANDSCAPES["two_minima"]()
    assert p.minimizer[0] < 0
    local = optimize(p, "gd", p.default_start, 500, lr=0.05)
    np.testing.assert_allclose(p.grad(local.points[-1]), [0, 0], atol=1e-9)
    assert local.points[-1, 0] > 0 and local.losses[-1] > p.f_star + 0.5


# ----------------------------------------------------------------------------- GD theory

def test_measured_gd_rate_equals_gd_rate():
    q = Quadratic.from_spectrum((1.0, 10.0), angle_deg=30.0)
    lr = 0.15                      # |1 - 0.15| = 0.85 > |1 - 1.5| = 0.5
    tr = optimize(q, "gd", (2.0, -1.0), 150, lr=lr)
    err = distance_to_minimizer(q, tr.points)
    assert err[-1] / err[-2] == pytest.approx(gd_rate(lr, q.eigenvalues), abs=1e-6)
    assert measured_rate(err) == pytest.approx(0.85, abs=1e-6)
    assert gd_rate(lr, q.eigenvalues) == pytest.approx(0.85)


def test_eigen_errors_follow_the_closed_form():
    q = Quadratic.from_spectrum((0.5, 3.0), angle_deg=70.0)
    lr, k = 0.4, np.arange(31)
    tr = optimize(q, "gd", (1.0, 2.0), 30, lr=lr)
    z = eigen_errors(q, tr.points)
    np.testing.assert_allclose(z[:, 0], z[0, 0] * (1 - lr * 0.5) ** k, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(z[:, 1], z[0, 1] * (1 - lr * 3.0) ** k, rtol=1e-12, atol=1e-15)


def test_gd_converges_below_two_over_lmax_and_diverges_above():
    q = Quadratic.from_spectrum((0.5, 4.0))       # axis-aligned: eigen-coordinates = x
    edge = 2.0 / 4.0
    ok = optimize(q, "gd", (1.0, 1.0), 3000, lr=0.98 * edge)
    assert ok.diverged_at is None and ok.losses[-1] < 1e-20
    lr = 1.05 * edge
    bad = optimize(q, "gd", (1.0, 1.0), 3000, lr=lr)
    k = np.arange(3001)
    closed = np.hypot((1 - lr * 0.5) ** k, (1 - lr * 4.0) ** k)   # |x_k| in closed form
    assert bad.diverged_at == int(np.argmax(closed > 1e6))
    assert len(bad.points) == bad.diverged_at and np.isfinite(bad.points).all()


def test_kappa_one_with_lr_one_over_lambda_lands_in_one_step():
    q = Quadratic.from_spectrum((2.5, 2.5), angle_deg=13.0, minimizer=(0.7, -0.2))
    tr = optimize(q, "gd", (-2.0, 3.0), 1, lr=1 / 2.5)
    np.testing.assert_allclose(tr.points[1], q.minimizer, atol=1e-15)
    assert optimal_gd_lr(q.eigenvalues) == pytest.approx(1 / 2.5)
    assert optimal_gd_rate(q.eigenvalues) == 0.0


def test_newton_reaches_the_minimizer_in_one_step():
    q = Quadratic.from_spectrum((0.01, 7.0), angle_deg=33.0, minimizer=(1.0, -1.0))
    tr = optimize(q, "newton", (-2.5, 2.0), 1)
    np.testing.assert_allclose(tr.points[1], q.minimizer, atol=1e-13)
    rb = LANDSCAPES["rosenbrock"]()
    tr = optimize(rb, "newton", rb.default_start, 20)
    np.testing.assert_allclose(tr.points[-1], [1.0, 1.0], atol=1e-10)


def test_optimal_step_sizes_and_heavy_ball_theory():
    lam = (0.02, 1.0)
    k = 50.0
    assert optimal_gd_lr(lam) == pytest.approx(2 / 1.02)
    assert optimal_gd_rate(lam) == pytest.approx(49 / 51)
    lr, beta = optimal_momentum(lam)
    assert lr == pytest.approx(4 / (1 + math.sqrt(0.02)) ** 2)
    assert beta == pytest.approx(((math.sqrt(k) - 1) / (math.sqrt(k) + 1)) ** 2)
    assert heavy_ball_rate(lr, beta, lam) == pytest.approx(optimal_momentum_rate(lam), abs=1e-6)
    assert heavy_ball_rate(0.7, 0.0, lam) == pytest.approx(gd_rate(0.7, lam))
    with pytest.raises(ValueError):
        optimal_gd_lr((-1.0, 1.0))


def test_heavy_ball_at_optimal_momentum_attains_its_rate():
    """At the optimum both modes have a double root +rho (l_min) and -rho (l_max), so the
    error along each eigenvector is (a + b k) (+-rho)^k: divided by (+-rho)^k it is affine."""
    q = Quadratic.from_spectrum((0.02, 1.0), angle_deg=20.0)
    lr, beta = optimal_momentum(q.eigenvalues)
    rho = optimal_momentum_rate(q.eigenvalues)
    n = 60
    z = eigen_errors(q, optimize(q, "momentum", (-2.0, 1.5), n, lr=lr, beta=beta).points)
    k = np.arange(n + 1)
    for mode, sign in ((0, 1.0), (1, -1.0)):
        scaled = z[:, mode] / (sign * rho) ** k
        a, b = np.polyfit(k, scaled, 1)[::-1]
        np.testing.assert_allclose(scaled, a + b * k, atol=1e-6 * np.abs(scaled).max())
    lrs = np.array([lr])
    rm = rate_map(q, lrs, np.array([beta]), steps=400)
    assert rm.measured[0, 0] == pytest.approx(rho, abs=0.02)


def test_rate_map_matches_theory():
    q = Quadratic.from_spectrum((0.1, 1.0), angle_deg=30.0)
    lrs, betas = np.geomspace(0.05, 4.0, 12), np.linspace(0.0, 0.95, 10)
    rm = rate_map(q, lrs, betas, steps=300)
    assert rm.measured.shape == (10, 12)
    converging = rm.theory < 0.97
    assert np.abs(rm.measured - rm.theory)[converging].max() < 0.05
    assert np.median(np.abs(rm.measured - rm.theory)[converging]) < 1e-6
    assert (rm.measured[rm.theory > 1.02] >= 1.0).all()
    assert not (rm.measured[rm.theory < 0.999] >= 1.0).any()    # no false "diverges"
    # beta = 0 row is plain GD (close to the optimal lr both modes decay almost equally fast,
    # so the finite window sees a little of the second one)
    keep = rm.theory[0] < 0.97
    np.testing.assert_allclose(rm.measured[0][keep],
                               [gd_rate(lr, q.eigenvalues) for lr in lrs[keep]], atol=3e-3)


# ----------------------------------------------------------------------------- vs torch.optim

def _torch_trajectory(problem, x0, steps, make_opt):
    p = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    opt = make_opt([p])
    out = [p.detach().clone()]
    for _ in range(steps):
        opt.zero_grad()
        problem.value(p).backward()
        opt.step()
        out.append(p.detach().clone())
    return torch.stack(out).numpy()


TORCH_REFERENCES = {
    "gd": ({"lr": 0.3}, lambda ps: torch.optim.SGD(ps, lr=0.3)),
    "momentum": ({"lr": 0.3, "beta": 0.8},
                 lambda ps: torch.optim.SGD(ps, lr=0.3, momentum=0.8)),
    "nesterov": ({"lr": 0.3, "beta": 0.8},
                 lambda ps: torch.optim.SGD(ps, lr=0.3, momentum=0.8, nesterov=True)),
    "adagrad": ({"lr": 0.5}, lambda ps: torch.optim.Adagrad(ps, lr=0.5)),
    "rmsprop": ({"lr": 0.05}, lambda ps: torch.optim.RMSprop(ps, lr=0.05, alpha=0.9, eps=1e-8)),
    "adam": ({"lr": 0.1}, lambda ps: torch.optim.Adam(ps, lr=0.1)),
    "amsgrad": ({"lr": 0.1}, lambda ps: torch.optim.Adam(ps, lr=0.1, amsgrad=True)),
    "rprop": ({"lr": 0.05}, lambda ps: torch.optim.Rprop(ps, lr=0.05)),
}


def test_every_first_order_method_has_a_torch_reference():
    assert set(TORCH_REFERENCES) | {"newton"} == set(OPTIMIZERS)


@pytest.mark.parametrize("method", sorted(TORCH_REFERENCES))
@pytest.mark.parametrize("landscape", ["quadratic", "rosenbrock"])
def test_trajectories_equal_torch_optim(method, landscape):
    problem = make_landscape(landscape, eigenvalues=(0.2, 3.0), angle_deg=35.0)
    hyper, make_opt = TORCH_REFERENCES[method]
    x0 = (-1.2, 1.4) if landscape == "rosenbrock" else (-2.0, 1.5)
    if landscape == "rosenbrock":
        hyper = {**hyper, "lr": hyper["lr"] * 0.004 if method in ("gd", "momentum", "nesterov")
                 else hyper["lr"]}
        ref_opt = {"gd": lambda ps: torch.optim.SGD(ps, lr=0.3 * 0.004),
                   "momentum": lambda ps: torch.optim.SGD(ps, lr=0.3 * 0.004, momentum=0.8),
                   "nesterov": lambda ps: torch.optim.SGD(ps, lr=0.3 * 0.004, momentum=0.8,
                                                          nesterov=True)}
        make_opt = ref_opt.get(method, make_opt)
    ours = optimize(problem, method, x0, 40, **hyper)
    ref = _torch_trajectory(problem, x0, 40, make_opt)
    assert ours.diverged_at is None
    np.testing.assert_allclose(ours.points, ref, rtol=1e-9, atol=1e-12)


def test_first_adam_step_is_lr_times_sign_of_gradient():
    q = Quadratic.from_spectrum((0.01, 50.0), angle_deg=10.0)
    x0 = np.array([1.0, -2.0])
    for lr in (0.001, 0.3):
        tr = optimize(q, "adam", x0, 1, lr=lr)
        np.testing.assert_allclose(tr.points[1] - x0, -lr * np.sign(q.grad(x0)), rtol=1e-6)


# ----------------------------------------------------------------------------- noise, batches

def test_seeded_noise_is_reproducible_and_shared_by_a_race():
    q = Quadratic.from_spectrum((0.5, 2.0))
    a = optimize(q, "gd", (1.0, 1.0), 50, lr=0.2, seed=7, grad_noise=0.5)
    b = optimize(q, "gd", (1.0, 1.0), 50, lr=0.2, seed=7, grad_noise=0.5)
    c = optimize(q, "gd", (1.0, 1.0), 50, lr=0.2, seed=8, grad_noise=0.5)
    clean = optimize(q, "gd", (1.0, 1.0), 50, lr=0.2)
    np.testing.assert_array_equal(a.points, b.points)
    assert np.abs(a.points - c.points).max() > 1e-3
    assert np.abs(a.points - clean.points).max() > 1e-3
    # x_{k+1} - x_k = -lr (A x_k + noise_k): noise recovered from the path has std ~ 0.5
    noise = -(np.diff(a.points, axis=0) / 0.2) - q.grad(a.points[:-1])
    assert 0.35 < noise.std() < 0.65
    entries = [RaceEntry("gd", 0.2), RaceEntry("adam", 0.1), RaceEntry("rprop", 0.05),
               RaceEntry("momentum", 0.1, {"beta": 0.5})]
    result = race(q, entries, (1.0, 1.0), 50, seed=7, grad_noise=0.5)
    assert list(result) == ["gd", "adam", "rprop", "momentum"]
    # a race runs its family as one batch: another code path, compared at float64 tolerance
    np.testing.assert_allclose(result["gd"].points, a.points, rtol=1e-12, atol=1e-15)
    solo = optimize(q, "momentum", (1.0, 1.0), 50, lr=0.1, beta=0.5, seed=7, grad_noise=0.5)
    np.testing.assert_allclose(result["momentum"].points, solo.points, atol=1e-15)


def test_saddle_stalls_without_noise_and_escapes_with_it():
    s = LANDSCAPES["saddle"]()
    stuck = optimize(s, "gd", (2.0, 0.0), 300, lr=0.1)
    np.testing.assert_allclose(stuck.points[-1], [0.0, 0.0], atol=1e-10)
    assert stuck.losses[-1] == pytest.approx(0.0, abs=1e-12)
    free = optimize(s, "gd", (2.0, 0.0), 300, lr=0.1, seed=0, grad_noise=0.05)
    assert abs(free.points[-1, 1]) > 0.8 and free.losses[-1] < -0.2


def test_batch_of_hyperparameters_equals_single_runs(device):
    q = Quadratic.from_spectrum((0.1, 2.0), angle_deg=45.0)
    lrs, betas = np.array([0.1, 0.5, 1.2]), np.array([0.0, 0.5, 0.9])
    batch = optimize_many(q, "momentum", (1.0, -1.0), 80, lr=lrs, beta=betas, device=device)
    assert batch.points.shape == (81, 3, 2)
    for b in range(3):
        single = optimize(q, "momentum", (1.0, -1.0), 80, lr=lrs[b], beta=betas[b])
        np.testing.assert_allclose(batch.points[:, b], single.points, rtol=1e-12, atol=1e-15)
    starts = np.array([[1.0, 0.0], [0.0, 1.0], [-2.0, 2.0]])
    many = optimize_many(q, "adam", starts, 30, lr=0.1, device=device)
    for b in range(3):
        np.testing.assert_allclose(many.points[:, b],
                                   optimize(q, "adam", starts[b], 30, lr=0.1).points,
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("method", sorted(OPTIMIZERS))
def test_numpy_and_torch_backends_agree(method, device):
    problem = LANDSCAPES["two_minima"]()
    lr = {"newton": 0.5}.get(method, 0.02)
    a = optimize(problem, method, (0.3, 1.5), 50, lr=lr, seed=3, grad_noise=0.1)
    b = optimize(problem, method, (0.3, 1.5), 50, lr=lr, seed=3, grad_noise=0.1, device=device)
    np.testing.assert_allclose(a.points, b.points, rtol=1e-10, atol=1e-12)


def test_bad_input_raises_clear_errors():
    q = Quadratic.from_spectrum((1.0, 2.0))
    with pytest.raises(ValueError, match="unknown method"):
        optimize(q, "sgdx", (0, 0), 5)
    with pytest.raises(ValueError, match="no hyperparameter"):
        optimize(q, "gd", (0, 0), 5, beta=0.9)
    with pytest.raises(ValueError, match="steps"):
        optimize(q, "gd", (0, 0), -1)
    with pytest.raises(ValueError, match="grad_noise"):
        optimize(q, "gd", (0, 0), 5, grad_noise=-1.0)
    with pytest.raises(ValueError, match="unknown landscape"):
        make_landscape("moon")
    with pytest.raises(ValueError, match="once"):
        race(q, [RaceEntry("gd"), RaceEntry("gd")], (1, 1), 5)


def test_divergence_of_every_run_stops_early_and_reports_nan_free_prefix():
    q = Quadratic.from_spectrum((1.0, 10.0))
    tr = race(q, [RaceEntry("gd", 1.0), RaceEntry("momentum", 1.0), RaceEntry("adam", 0.1)],
              (1.0, 1.0), 1000)
    assert tr["gd"].diverged_at is not None and tr["momentum"].diverged_at is not None
    assert tr["adam"].diverged_at is None
    for t in tr.values():
        assert np.isfinite(t.points).all() and np.isfinite(t.losses).all()


def test_taylor_model_matches_the_loss_to_second_order_and_its_minimum_is_newtons_step():
    p = make_landscape("rosenbrock")
    w0 = (-1.5, 2.0)
    m = taylor_model(p, w0)
    assert m(np.array(w0)) == pytest.approx(p.value(np.array(w0)))
    # third-order error: ten times closer, a thousand times smaller
    assert taylor_gap(p, w0, 0.01) == pytest.approx(taylor_gap(p, w0, 0.1) / 1e3,
                                                           rel=0.05)
    newton = optimize(p, "newton", w0, 1, lr=1.0).points[1]
    np.testing.assert_allclose(m.minimizer, newton, atol=1e-12)
    for factor, ring in zip((0.5, 1.0), m.level_ellipses((0.5, 1.0))):
        np.testing.assert_allclose(m(ring) - m(m.minimizer), factor * (m.value - m(m.minimizer)),
                                   rtol=1e-9)
    saddle = taylor_model(make_landscape("saddle"), (0.0, 0.0))
    assert saddle.minimizer is None and saddle.level_ellipses((1.0,)) == []
