"""engine/gan/: mode coverage, losses, penalties, the optimal discriminator, the Dirac-GAN,
the parallel lines, determinism, and the presets' claims (few, small trainings)."""
from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from engine import gan
from engine.datasets import ring

ROOT = Path(__file__).resolve().parents[2]


# ---- mode coverage ------------------------------------------------------------------------

def test_coverage_of_exact_mixture_samples_is_full():
    data = ring(2000, seed=1, noise=0.05, k=8)
    cov = gan.mode_coverage(data.points, data.centers, data.std)
    assert cov.modes_covered == 8 and cov.n_modes == 8
    # 3σ disc of a 2-D Gaussian holds 1 − exp(−9/2) = 98.9% of its mass
    assert cov.high_quality_fraction == pytest.approx(1 - math.exp(-4.5), abs=0.01)
    assert cov.reverse_kl < 0.01
    assert cov.histogram.sum() == round(cov.high_quality_fraction * 2000)


def test_coverage_of_one_mode_and_of_far_samples():
    data = ring(2000, seed=2, noise=0.05, k=8)
    one = data.points[data.labels == 3]
    cov = gan.mode_coverage(one, data.centers, data.std)
    assert cov.modes_covered == 1 and cov.histogram.argmax() == 3
    assert cov.reverse_kl == pytest.approx(math.log(8))
    far = data.points + 10.0
    cov = gan.mode_coverage(far, data.centers, data.std)
    assert cov.modes_covered == 0 and cov.high_quality_fraction == 0.0
    assert math.isnan(cov.reverse_kl)


def test_coverage_threshold_is_one_percent_of_samples():
    c = np.array([[0.0, 0.0], [5.0, 0.0]])
    pts = np.r_[np.zeros((1980, 2)), np.tile([[5.0, 0.0]], (20, 1))]   # 20 of 2000 = 1%
    assert gan.mode_coverage(pts, c, 0.1).modes_covered == 2
    pts = np.r_[np.zeros((1981, 2)), np.tile([[5.0, 0.0]], (19, 1))]
    assert gan.mode_coverage(pts, c, 0.1).modes_covered == 1


# ---- losses and penalties -----------------------------------------------------------------

def test_losses_match_their_formulas():
    r, f = torch.tensor([0.3, -1.2]), torch.tensor([0.7, -2.0])
    sig = torch.sigmoid
    mm = gan.LOSSES["minimax"]
    assert mm.d_loss(r, f) == pytest.approx(float(-(torch.log(sig(r)) + torch.log(1 - sig(f))).mean()))
    assert mm.g_loss(f) == pytest.approx(float(torch.log(1 - sig(f)).mean()))
    assert gan.LOSSES["nonsaturating"].g_loss(f) == pytest.approx(float(-torch.log(sig(f)).mean()))
    assert gan.LOSSES["lsgan"].d_loss(r, f) == pytest.approx(
        float((0.5 * (r - 1) ** 2 + 0.5 * f ** 2).mean()))
    assert gan.LOSSES["hinge"].d_loss(r, f) == pytest.approx(
        float((torch.relu(1 - r) + torch.relu(1 + f)).mean()))
    assert gan.LOSSES["wgan-gp"].d_loss(r, f) == pytest.approx(float(f.mean() - r.mean()))


def test_gradient_penalty_is_zero_for_unit_slope_linear_critic():
    g = torch.Generator().manual_seed(0)
    real, fake = torch.randn(64, 2, generator=g), torch.randn(64, 2, generator=g) + 3
    eps = torch.rand(64, 1, generator=g)
    w = torch.tensor([0.6, 0.8])                                  # ‖w‖ = 1
    assert float(gan.gradient_penalty(lambda x: x @ w, real, fake, eps)) < 1e-10
    assert float(gan.gradient_penalty(lambda x: x @ (2 * w), real, fake, eps)) == pytest.approx(1.0)
    assert float(gan.r1_penalty(lambda x: x @ (2 * w), real)) == pytest.approx(0.5 * 4.0)


def test_optimal_discriminator_on_two_gaussians(device):
    """σ(D) trained with the discriminator loss approaches p_data / (p_data + p_g)."""
    real = lambda gen, n: torch.randn(n, 1, generator=gen, device=gen.device)       # N(0, 1)
    fake = lambda gen, n: torch.randn(n, 1, generator=gen, device=gen.device) + 1.5  # N(1.5, 1)
    prob = gan.fit_discriminator(real, fake, hidden=(32, 32), steps=200, batch_size=256,
                                 seed=0, device=device)
    x = np.linspace(-1.0, 2.5, 15)
    p_data, p_g = np.exp(-x ** 2 / 2), np.exp(-(x - 1.5) ** 2 / 2)
    np.testing.assert_allclose(prob(x), gan.optimal_discriminator(p_data, p_g), atol=0.06)


# ---- Dirac-GAN ----------------------------------------------------------------------------

@pytest.mark.parametrize("loss", list(gan.DIRAC_DERIVATIVES))
def test_dirac_derivatives_match_autograd_of_losses(loss):
    f = torch.linspace(-3, 3, 13, dtype=torch.float64).requires_grad_(True)
    spec = gan.LOSSES[loss]
    (gd,) = torch.autograd.grad(spec.d_loss(torch.zeros_like(f), f) * len(f), f)
    (gg,) = torch.autograd.grad(spec.g_loss(f) * len(f), f)
    d_prime, g_prime = gan.DIRAC_DERIVATIVES[loss]
    fn = f.detach().numpy()
    np.testing.assert_allclose(d_prime(fn), gd.numpy(), atol=1e-12)
    np.testing.assert_allclose(g_prime(fn), gg.numpy(), atol=1e-12)


def test_dirac_field_is_a_rotation_at_the_origin():
    th, ps, vt, vp = gan.dirac_gan_field("minimax", 0.0, box=0.01, res=3)
    np.testing.assert_allclose(vt, ps / 2, atol=1e-6)     # θ̇ = ψ f′(0) = ψ/2
    np.testing.assert_allclose(vp, -th / 2, atol=1e-6)    # ψ̇ = −θ/2


def test_dirac_standard_gan_does_not_converge_and_r1_does():
    sim = gan.dirac_gan("minimax", lr=0.1, steps=300, simultaneous=True)
    assert sim.distance[-1] > sim.distance[0]                 # spirals out
    alt = gan.dirac_gan("minimax", lr=0.1, steps=300, simultaneous=False)
    assert alt.distance.min() > 0.9 * alt.distance[0]         # circles, never approaches 0
    r1 = gan.dirac_gan("minimax", lr=0.1, steps=300, gamma=1.0)
    assert r1.distance[-1] < 1e-3 * r1.distance[0]


# ---- parallel lines -----------------------------------------------------------------------

def test_parallel_lines_jsd_and_w1():
    pl = gan.parallel_lines(np.array([-1.5, -0.1, 0.0, 0.2, 2.0]))
    np.testing.assert_allclose(pl.jsd, [math.log(2)] * 2 + [0.0] + [math.log(2)] * 2, rtol=1e-6)
    np.testing.assert_allclose(pl.w1, [1.5, 0.1, 0.0, 0.2, 2.0], rtol=1e-6)


# ---- targets, upload ----------------------------------------------------------------------

def test_targets_registry_and_mixtures_expose_modes():
    for name in gan.TARGETS:
        t = gan.make_target(name, 0.05, seed=0, n=500)
        assert t.points.shape == (500, 2) and np.isfinite(t.points).all()
    assert len(gan.make_target("5x5 grid", 0.05, n=10).centers) == 25
    assert gan.make_target("ring of 8", 0.05, n=10).std == 0.05
    with pytest.raises(KeyError):
        gan.make_target("nope")


# ---- the trainer --------------------------------------------------------------------------

def _tiny(loss="nonsaturating", seed=0, device=None, **kw):
    target = gan.make_target("ring of 8", 0.05, seed=0, n=2000)
    return gan.GANTrainer(target, loss=loss, g_hidden=(16,), d_hidden=(16,), batch_size=32,
                          seed=seed, device=device, eval_n=200, eval_every=5, **kw)


def test_same_seed_same_samples(device):
    a, b, c = _tiny(device=device), _tiny(device=device), _tiny(seed=1, device=device)
    for t in (a, b, c):
        t.step(3)
    np.testing.assert_array_equal(a.sample(50, seed=5), b.sample(50, seed=5))
    assert not np.allclose(a.sample(50, seed=5), c.sample(50, seed=5))


@pytest.mark.parametrize("loss,remedy", [(n, {}) for n in gan.LOSSES]
                         + [("nonsaturating", {"unrolled_steps": 2}),
                            ("nonsaturating", {"r1_gamma": 1.0}),
                            ("hinge", {"spectral_norm": True}),
                            ("lsgan", {"minibatch_std": True, "pack": 2})])
def test_every_loss_and_remedy_trains_and_logs(loss, remedy):
    t = _tiny(loss, **remedy)
    m = t.step(5)
    assert set(m) == {"loss_d", "loss_g"} and all(math.isfinite(v) for v in m.values())
    assert t.steps == 5 and t.history.as_arrays("modes")[0].tolist() == [0, 5]
    snap = t.snapshot(res=8, n_arrows=4)
    assert snap.critic.values.shape == (8, 8) and snap.arrows.shape == (4, 2)
    if loss == "wgan-clip":
        assert max(float(p.detach().abs().max()) for p in t.D.parameters()) <= t.clip + 1e-7


def test_step_parts_update_only_one_network():
    t = _tiny()
    g0 = [p.detach().clone() for p in t.G.parameters()]
    d0 = [p.detach().clone() for p in t.D.parameters()]
    t.step(1, part="d")
    assert all(torch.equal(a, b) for a, b in zip(g0, t.G.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(d0, t.D.parameters()))
    d1 = [p.detach().clone() for p in t.D.parameters()]
    t.step(1, part="g")
    assert all(torch.equal(a, b) for a, b in zip(d1, t.D.parameters()))
    assert t.steps == 0   # an iteration counts D and G together


def test_fake_gradients_are_minus_grad_of_generator_loss():
    """For the non-saturating loss, −∇ₓ softplus(−D(x)) = σ(−D(x)) ∇ₓD(x)."""
    t = _tiny()
    x = torch.tensor([[0.5, -0.3], [1.0, 1.0]], device=t.device, requires_grad=True)
    d = t.D.pointwise(x)
    (gd,) = torch.autograd.grad(d.sum(), x)
    expected = torch.sigmoid(-d).detach()[:, None] * gd
    np.testing.assert_allclose(t.fake_gradients(x.detach().cpu().numpy()),
                               expected.cpu().numpy(), rtol=1e-5)


@pytest.mark.parametrize("optimizer", list(gan.UNROLL_UPDATES))
def test_unrolled_d_equals_k_steps_of_ds_own_optimizer(optimizer):
    """The unroll is D's optimizer made differentiable: its parameters after k unrolled
    updates equal D's after k real opt_d.step() calls on the same batches (Adam and RMSprop
    continue from opt_d's moments)."""
    t = _tiny(optimizer=optimizer, unrolled_steps=3, lr_d=1e-2)
    t.step(2)                                        # opt_d has a state now
    fake = t.G(t._z()).detach()
    gen_state = t.gen.get_state()
    unrolled = t.unrolled_params(fake)
    t.gen.set_state(gen_state)                       # the same real batches again
    for _ in range(3):
        real = t._real_batch()
        t.opt_d.zero_grad(set_to_none=True)
        t.loss.d_loss(t.D(real), t.D(fake)).backward()
        t.opt_d.step()
    for name, p in t.D.named_parameters():
        torch.testing.assert_close(unrolled[name], p.detach(), rtol=1e-5, atol=1e-6)


def test_unrolled_generator_gradient_flows_through_the_unroll():
    """G's gradient against the unrolled D differs from the one against D itself (the unroll
    depends on G's samples), while D is left unchanged."""
    t = _tiny(unrolled_steps=3, lr_d=1e-2)
    t.step(2)
    d0 = [p.detach().clone() for p in t.D.parameters()]
    fake = t.G(t._z())
    loss_u = t.loss.g_loss(torch.func.functional_call(t.D, t.unrolled_params(fake), (fake,)))
    (g_u,) = torch.autograd.grad(loss_u, [next(t.G.parameters())], retain_graph=True)
    (g_0,) = torch.autograd.grad(t.loss.g_loss(t.D(fake)), [next(t.G.parameters())])
    assert torch.isfinite(g_u).all() and not torch.allclose(g_u, g_0)
    assert all(torch.equal(a, b) for a, b in zip(d0, t.D.parameters()))


def test_divergence_is_a_result():
    t = _tiny(lr_g=1e30, lr_d=1e30, optimizer="sgd")
    for _ in range(20):
        t.step(5)
    assert t.diverged_at is not None
    steps = t.steps
    t.step(5)
    assert t.steps == steps


def test_divergence_stops_at_the_first_non_finite_iteration():
    """TrainerBase checks every iteration: the run ends where the losses first turn NaN/inf,
    and that iteration's losses are in the history."""
    from engine.training import TrainerBase
    t = _tiny(lr_g=1e30, lr_d=1e30, optimizer="sgd")
    assert isinstance(t, TrainerBase)
    t.step(50)
    assert t.diverged_at == t.steps < 50
    steps, values = t.history.as_arrays("loss_g")
    ld = t.history.as_arrays("loss_d")[1]
    assert steps[-1] == t.diverged_at and not (np.isfinite(values[-1]) and np.isfinite(ld[-1]))
    with pytest.raises(ValueError, match="part"):
        t.step(1, part="D")


def test_state_dict_holds_copies_of_the_optimizer_state():
    t = _tiny()
    t.step(2)
    live = {p.data_ptr() for s in t.opt_d.state.values() for p in s.values()
            if torch.is_tensor(p)}
    saved = t.state_dict()["opt_d"]["state"]
    assert saved and not live & {v.data_ptr() for s in saved.values() for v in s.values()
                                 if torch.is_tensor(v)}


def test_mode_history_of_a_target_without_modes_is_empty():
    t = gan.GANTrainer(gan.make_target("two moons", 0.05, n=500), g_hidden=(8,), d_hidden=(8,),
                       batch_size=16, eval_every=1)
    t.step(2)
    steps, hists = t.mode_history()
    assert t.coverage() is None and steps.shape == (0,) and hists.shape == (0, 0)


def test_state_dict_round_trip():
    a = _tiny()
    a.step(4)
    b = _tiny(seed=3)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.sample(20, seed=1), b.sample(20, seed=1))
    a.step(2)
    b.step(2)
    np.testing.assert_array_equal(a.sample(20, seed=1), b.sample(20, seed=1))


# ---- pretrained snapshots -----------------------------------------------------------------

def test_saved_trainer_loads_and_continues_identically():
    kwargs = dict(g_hidden=(8,), d_hidden=(8,), batch_size=16, eval_n=200, eval_every=2)
    a = gan.GANTrainer(gan.make_target("ring of 8", 0.05, 0), seed=0, device="cpu", **kwargs)
    a.step(4)
    buf = io.BytesIO()
    gan.save_trainer(a, buf, gan.trainer_config("ring of 8", 0.05, 0, kwargs), {"steps": 4})
    b, cfg = gan.load_trainer(buf.getvalue(), "cpu")
    assert cfg == gan.trainer_config("ring of 8", 0.05, 0, kwargs) and b.pretrained == {"steps": 4}
    assert b.steps == 4 and b.mode_history()[0].tolist() == a.mode_history()[0].tolist()
    a.step(3)
    b.step(3)
    np.testing.assert_array_equal(a.sample(20, seed=1), b.sample(20, seed=1))


def test_shipped_default_snapshot_is_the_live_defaults_trained_and_covers_the_ring():
    spec = gan.PRETRAINED["default"]
    assert (spec.target, spec.std) == gan.LIVE_TARGET and spec.kwargs == gan.LIVE_DEFAULTS
    path = ROOT / "assets" / "weights" / "gan_default.pt"
    assert path.stat().st_size < 1_000_000
    t, cfg = gan.load_trainer(path.read_bytes(), "cpu")
    assert cfg == gan.trainer_config(spec.target, spec.std, spec.seed, spec.kwargs)
    assert t.steps == spec.steps == t.pretrained["steps"]
    assert t.coverage().modes_covered >= 7


def test_rowwise_discriminator_scores_real_and_fake_rows_the_same_in_one_forward():
    """The trainer scores [real; fake] in one forward only when D's rows are independent: the
    result equals two forwards, and packing, minibatch std or spectral norm turn it off."""
    import torch

    from engine.gan.nets import Discriminator
    torch.manual_seed(0)
    d = Discriminator((16, 16))
    real, fake = torch.randn(32, 2), torch.randn(24, 2)
    joint = d(torch.cat([real, fake])).split([32, 24])
    assert d.rowwise
    torch.testing.assert_close(joint[0], d(real))
    torch.testing.assert_close(joint[1], d(fake))
    assert not Discriminator((16,), pack=2).rowwise
    assert not Discriminator((16,), minibatch_std=True).rowwise
    assert not Discriminator((16,), spectral=True).rowwise


def test_generator_loss_curves_are_the_two_classifier_losses_and_their_logit_slopes():
    """log(1 − D) saturates where D rejects the fake (slope −D → 0 in D's logit), −log D does
    not (slope −(1 − D) → −1); both losses are the trainer's own LOSSES[...].g_loss."""
    from engine.gan import generator_loss_curves
    d = np.array([1e-3, 0.01, 0.3, 0.5, 0.9])
    c = generator_loss_curves(d)
    np.testing.assert_allclose(c.loss["minimax"], np.log(1 - d), rtol=1e-9)
    np.testing.assert_allclose(c.loss["nonsaturating"], -np.log(d), rtol=1e-9)
    np.testing.assert_allclose(c.slope["minimax"], -d, rtol=1e-9)
    np.testing.assert_allclose(c.slope["nonsaturating"], -(1 - d), rtol=1e-9)


def test_optimal_discriminator_saturates_while_the_critic_stays_linear():
    from engine.gan import discriminator_vs_critic
    x = np.linspace(-4.0, 8.0, 1201)
    c = discriminator_vs_critic(x, mu_real=4.0, mu_fake=0.0)
    np.testing.assert_allclose(c.d_star, c.p_real / (c.p_real + c.p_fake))
    # the slope formula against a finite difference of D*
    np.testing.assert_allclose(c.d_slope[1:-1], (c.d_star[2:] - c.d_star[:-2]) / 0.02,
                               atol=5e-4)
    at_fake = np.argmin(np.abs(x))
    assert c.d_star[at_fake] < 1e-3 and abs(c.d_slope[at_fake]) < 2e-3
    np.testing.assert_array_equal(c.critic_slope, 1.0)                  # f(x) = x + const
    np.testing.assert_allclose(np.diff(c.critic), np.diff(x), atol=1e-12)
    assert c.critic[np.argmin(np.abs(x - 2.0))] == pytest.approx(0.0, abs=1e-9)
    # W₁ of two shifted Gaussians is the shift: E_r f − E_f f with f(x) = x
    w1 = np.trapezoid(c.critic * (c.p_real - c.p_fake), x)
    assert w1 == pytest.approx(4.0, abs=1e-3)
