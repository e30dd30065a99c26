"""Diffusion engine: schedules, forward process, exact mixture denoiser, samplers, metrics."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.diffusion import (PRETRAINED, DiffusionTrainer, EpsMLP, MixtureDenoiser,
                              ReverseSetup, Schedule, annealed_langevin, annealed_step,
                              ddim_sample, ddim_timesteps, ddpm_sample, geometric_sigmas,
                              guidance, langevin, load_model, mmd_rbf, mode_weights, network_eps,
                              parse_points_csv, q_sample, q_step, reverse_run,
                              sliced_wasserstein, steps_vs_quality, two_mode_gap,
                              weighted_mixture)

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- schedules, forward process

def test_linear_alpha_bar_matches_product_formula():
    s = Schedule.linear(1000, 1e-4, 0.02)
    betas = np.linspace(1e-4, 0.02, 1000)
    for t, approx in [(100, 0.897), (500, 0.0786), (1000, 4.04e-5)]:
        exact = float(np.prod(1 - betas[:t]))
        assert s.alpha_bar(t) == pytest.approx(exact, rel=1e-10)
        assert s.alpha_bar(t) == pytest.approx(approx, rel=5e-3)
    assert s.alpha_bar(0) == 1.0
    assert float(s.betas[0]) == pytest.approx(1e-4) and float(s.betas[-1]) == pytest.approx(0.02)


def test_cosine_alpha_bar_closed_form():
    T, s_ = 1000, 0.008
    s = Schedule.cosine(T, s_)
    f = lambda t: math.cos((t / T + s_) / (1 + s_) * math.pi / 2) ** 2  # noqa: E731
    for t in (1, 250, 500, 900):
        assert s.alpha_bar(t) == pytest.approx(f(t) / f(0), rel=1e-9)
    assert float(s.betas.max()) <= 0.999
    assert float(s.snr()[499]) == pytest.approx(s.alpha_bar(500) / (1 - s.alpha_bar(500)))


def test_iterated_forward_steps_match_q_sample(device):
    """x_t from t single steps q(x_t|x_{t-1}) has mean sqrt(ab_t) x0, variance 1 - ab_t."""
    s = Schedule.linear()
    n, t = 8000, 150
    g = torch.Generator(device=device).manual_seed(0)
    x0 = torch.tensor([[1.5, -2.0]], device=device).expand(n, 2)
    x = x0.clone()
    for k in range(1, t + 1):
        x = q_step(x, k, torch.randn(n, 2, generator=g, device=device), s)
    ab = s.alpha_bar(t)
    assert torch.allclose(x.mean(0).cpu(), math.sqrt(ab) * torch.tensor([1.5, -2.0]), atol=0.04)
    assert torch.allclose(x.var(0).cpu(), torch.full((2,), 1 - ab), rtol=0.06)
    noise = torch.randn(n, 2, generator=g, device=device)
    direct = q_sample(x0, t, noise, s)
    assert torch.allclose(direct, math.sqrt(ab) * x0 + math.sqrt(1 - ab) * noise, atol=1e-6)
    tt = torch.full((n,), t)
    assert torch.allclose(q_sample(x0, tt, noise, s), direct, atol=1e-6)


# ---------------------------------------------------------------- exact denoiser

@pytest.mark.parametrize("full_cov", [False, True])
def test_mixture_denoiser_matches_autograd_and_torch_distributions(full_cov, device):
    means = np.array([[-1.0, 0.5], [2.0, 1.0], [0.0, -2.0]])
    std = (np.array([[[0.3, 0.1], [0.1, 0.2]], [[0.5, 0.0], [0.0, 0.1]], [[0.2, -0.05], [-0.05, 0.3]]])
           if full_cov else np.array([0.3, 0.5, 0.2]))
    w = np.array([0.5, 0.3, 0.2])
    s = Schedule.linear()
    den = MixtureDenoiser(means, std, w, s, device=device)
    x = torch.randn(64, 2, generator=torch.Generator().manual_seed(1)).to(device) * 2
    for t in (1, 50, 400):
        ab = s.alpha_bar(t)
        covs = den.covs.cpu().double() * ab + (1 - ab) * torch.eye(2, dtype=torch.float64)
        ref = torch.distributions.MixtureSameFamily(
            torch.distributions.Categorical(torch.tensor(w)),
            torch.distributions.MultivariateNormal(math.sqrt(ab) * torch.tensor(means), covs))
        xr = x.cpu().double().requires_grad_(True)
        lp = ref.log_prob(xr)
        (grad,) = torch.autograd.grad(lp.sum(), xr)
        assert torch.allclose(den.log_prob(x, t).cpu().double(), lp.detach(), atol=1e-4)
        assert torch.allclose(den.score(x, t).cpu().double(), grad, atol=1e-3, rtol=1e-3)
        assert torch.allclose(den.eps(x, t).cpu().double(), -math.sqrt(1 - ab) * grad,
                              atol=1e-3, rtol=1e-3)


def test_class_conditional_denoiser_is_single_component(device):
    den = MixtureDenoiser([[-2.0, 0.0], [2.0, 0.0]], 0.3, [0.7, 0.3], device=device)
    alone = MixtureDenoiser([[2.0, 0.0]], 0.3, None, device=device)
    x = torch.randn(32, 2, device=device)
    assert torch.allclose(den.eps(x, 200, c=1), alone.eps(x, 200), atol=1e-5)


# ---------------------------------------------------------------- samplers

def test_ddpm_exact_denoiser_reproduces_two_mode_mixture(device):
    data = two_mode_gap(noise=0.4, gap=4.0, first_weight=0.7)
    den = MixtureDenoiser(data.centers, data.std, data.weights, device=device)
    res = ddpm_sample(den, 1000, den.schedule, seed=0, device=device)
    w = mode_weights(res.samples, data.centers)
    assert np.abs(w - [0.7, 0.3]).max() < 0.05
    near = ((res.samples[:, None] - data.centers[None]) ** 2).sum(-1).argmin(1)
    for k in range(2):
        assert np.abs(res.samples[near == k].mean(0) - data.centers[k]).max() < 0.1
        assert res.samples[near == k].std(0) == pytest.approx([0.4, 0.4], abs=0.05)


def test_ddim_deterministic_and_close_to_ddpm(device):
    data = weighted_mixture(noise=0.3, k=3, first_weight=0.5)
    den = MixtureDenoiser(data.centers, data.std, data.weights, device=device)
    s = den.schedule
    a = ddim_sample(den, 1500, s, steps=50, eta=0.0, seed=3, device=device)
    b = ddim_sample(den, 1500, s, steps=50, eta=0.0, seed=3, device=device)
    np.testing.assert_array_equal(a.samples, b.samples)
    x_T = torch.randn(1500, 2, generator=torch.Generator(device=device).manual_seed(3), device=device)
    c = ddim_sample(den, 1500, s, steps=50, eta=0.0, seed=99, device=device, x_T=x_T)
    np.testing.assert_allclose(a.samples, c.samples, atol=1e-6)   # only x_T matters at eta=0
    ddpm = ddpm_sample(den, 1000, s, seed=4, device=device)
    floor = sliced_wasserstein(den.sample(1000, seed=1), den.sample(1500, seed=2))
    close = sliced_wasserstein(a.samples, ddpm.samples)
    crude = sliced_wasserstein(ddim_sample(den, 1500, s, steps=2, seed=3, device=device).samples,
                               ddpm.samples)
    assert close < 3 * floor and close < crude / 2
    assert ddim_timesteps(1000, 50)[-1] == 1000 and len(ddim_timesteps(1000, 50)) == 50


def test_ddim_eta1_full_steps_is_stochastic_and_records_frames(device):
    den = MixtureDenoiser([[0.0, 0.0]], 0.5, device=device)
    s = Schedule.linear(100)
    den.schedule = s
    a = ddim_sample(den, 200, s, steps=100, eta=1.0, seed=0, device=device, record=11)
    b = ddim_sample(den, 200, s, steps=100, eta=0.0, seed=0, device=device)
    assert not np.allclose(a.samples, b.samples)
    assert a.frames.shape == (11, 200, 2) and a.times[0] == 100 and a.times[-1] == 0
    np.testing.assert_array_equal(a.frames[-1], a.samples)


def test_guidance_w0_equals_conditional_and_formula(device):
    den = MixtureDenoiser([[-2.0, 0.0], [2.0, 0.0]], 0.3, [0.5, 0.5], device=device)
    cond, unc = (lambda x, t: den.eps(x, t, 1)), (lambda x, t: den.eps(x, t))
    x = torch.randn(16, 2, device=device)
    assert torch.equal(guidance(cond, unc, 0.0)(x, 300), cond(x, 300))
    assert torch.allclose(guidance(cond, unc, 2.0)(x, 300), 3 * cond(x, 300) - 2 * unc(x, 300))
    a = ddim_sample(guidance(cond, unc, 0.0), 300, den.schedule, steps=20, seed=0, device=device)
    b = ddim_sample(cond, 300, den.schedule, steps=20, seed=0, device=device)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert mode_weights(a.samples, [[-2, 0], [2, 0]])[1] > 0.99


def test_plain_langevin_misweights_annealed_recovers(device):
    data = two_mode_gap(noise=0.5, gap=8.0, first_weight=0.8)
    den = MixtureDenoiser(data.centers, data.std, data.weights, device=device)
    x0 = np.random.default_rng(0).uniform(-8, 8, (1000, 2))
    plain = langevin(lambda x: den.score(x, 0), x0, 0.05, 300, seed=0, device=device)
    sig = geometric_sigmas(10, 0.1, 10)
    ann = annealed_langevin(lambda x, sg: den.score_sigma(x, sg), sig, x0, annealed_step(sig), 60,
                            seed=0, device=device)
    assert np.isfinite(ann.samples).all()
    w_plain = mode_weights(plain.samples, data.centers)
    w_ann = mode_weights(ann.samples, data.centers)
    assert abs(w_plain[0] - 0.8) > 0.2          # stays near the basin split of the start (~0.5)
    assert abs(w_ann[0] - 0.8) < 0.05
    assert ann.samples[:, 1].std() == pytest.approx(0.5, abs=0.05)   # last level ~ the data


@pytest.mark.parametrize("sampler", ["DDPM", "DDIM", "Langevin", "annealed Langevin"])
def test_reverse_run_every_sampler_is_finite_with_a_field(sampler):
    data = weighted_mixture(noise=0.3)
    # DDPM's 1000-step betas compressed to 200 steps (beta x 1000/T) so that alpha_bar_T ~ 3e-5
    # as at T = 1000. With the unscaled betas alpha_bar_200 = 0.13: x_T is not N(0, I), and
    # starting from N(0, I) flattens the mode weights (measured 0.53 instead of 0.6).
    den = MixtureDenoiser(data.centers, data.std, data.weights, Schedule.linear(200, 5e-4, 0.1))
    assert float(den.schedule.alpha_bars[-1]) < 1e-4
    run = reverse_run(sampler, ReverseSetup(den.eps, den, den.schedule, n=300, steps=20,
                                            langevin_steps=200, record=5), res=7)
    assert np.isfinite(run.result.samples).all()
    assert run.result.frames.shape == (5, 300, 2) and run.field.shape == (5, 49, 2)
    w = mode_weights(run.result.samples, data.centers)
    if sampler != "Langevin":                       # plain Langevin keeps its start's split
        assert np.abs(w - data.weights).max() < 0.1


# ---------------------------------------------------------------- network and trainer

def test_trainer_learns_deterministic_and_round_trips(device):
    data = weighted_mixture(800, seed=0)
    a = DiffusionTrainer(data.points, data.labels, seed=1, device=device, hidden=32, batch=128)
    first = a.step(1)["loss"]
    a.step(100)
    late = a.step(50)["loss"]
    assert late < 0.8 * first and a.steps == 151
    b = DiffusionTrainer(data.points, data.labels, seed=1, device=device, hidden=32, batch=128)
    b.step(151)
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        assert torch.allclose(pa, pb, atol=1e-6)
    c = DiffusionTrainer(data.points, data.labels, seed=5, device=device, hidden=32, batch=128)
    c.load_state_dict(a.state_dict())
    x = torch.randn(8, 2, device=device)
    assert torch.equal(c.model(x, 10, 0), a.model(x, 10, 0)) and c.steps == 151
    snap = a.snapshot()
    assert snap.samples.shape == (400, 2) and np.isfinite(snap.samples).all()


def test_trainer_divergence_is_a_result(device):
    data = weighted_mixture(200, seed=0)
    tr = DiffusionTrainer(data.points, None, seed=0, device=device, hidden=16, lr=1e6)
    tr.step(200)
    assert tr.diverged_at is not None and tr.steps == tr.diverged_at
    assert tr.step(5) == {} and tr.steps == tr.diverged_at


def test_a_loaded_trainer_shares_no_optimizer_state_with_its_source():
    """TrainerBase deep-copies optimizer state: training the source after the copy (the
    aliasing bug: both trainers updated the same Adam moments) leaves the copy's run
    unchanged, bit for bit."""
    from engine.training import TrainerBase
    data = weighted_mixture(300, seed=0)

    def make(seed=0):
        return DiffusionTrainer(data.points, data.labels, Schedule.linear(100), hidden=16,
                                depth=2, batch=64, seed=seed)
    src = make()
    assert isinstance(src, TrainerBase)
    src.step(6)
    saved = src.state_dict()
    clean, shared = make(5), make(5)
    clean.load_state_dict(saved)
    shared.load_state_dict(saved)
    src.step(3)                                   # moves src's moments, not the copies'
    clean.step(2)
    shared.step(2)
    fresh = make(5)
    fresh.load_state_dict(saved)                  # the saved dict itself is unchanged too
    fresh.step(2)
    for a, b, c in zip(clean.model.parameters(), shared.model.parameters(),
                       fresh.model.parameters()):
        assert torch.equal(a, b) and torch.equal(a, c)


def test_epsmlp_null_token_is_unconditional():
    torch.manual_seed(0)
    m = EpsMLP(hidden=16, num_classes=3)
    x = torch.randn(5, 2)
    # the split first layer equals the plain MLP on [x, emb(t), emb(c)]
    from engine.diffusion import timestep_embedding
    t, c = torch.tensor([3, 7, 7, 1, 9]), torch.tensor([0, 1, 2, 3, 1])
    ref = m.net(torch.cat([x, timestep_embedding(t, 32), m.class_emb(c)], -1))
    assert torch.allclose(m(x, t, c), ref, atol=1e-6)
    ref7 = m.net(torch.cat([x, timestep_embedding(torch.full((5,), 7), 32),
                            m.class_emb(torch.full((5,), 2))], -1))
    assert torch.allclose(m(x, 7, 2), ref7, atol=1e-6)
    assert torch.equal(m(x, 7), m(x, 7, 3))
    assert not torch.equal(m(x, 7, 0), m(x, 7, 1))


@pytest.mark.parametrize("name", PRETRAINED)
def test_shipped_weights_load_and_sample(name):
    model, schedule, meta = load_model(ROOT / "assets" / "weights" / f"diffusion_{name}.pt")
    assert meta["dataset"] == name and schedule.T == 1000
    res = ddim_sample(network_eps(model), 500, schedule, steps=20, seed=0)
    assert np.isfinite(res.samples).all() and np.quantile(np.abs(res.samples), 0.99) < 4


def test_shipped_mixture_net_gets_mode_weights():
    model, schedule, _ = load_model(ROOT / "assets" / "weights" / "diffusion_mixture.pt")
    data = weighted_mixture()
    res = ddim_sample(network_eps(model), 1500, schedule, steps=50, seed=0)
    assert np.abs(mode_weights(res.samples, data.centers) - data.weights).max() < 0.05


def test_shipped_swiss_roll_net_draws_the_roll():
    """The unconditional Swiss-roll network (scripts/pretrain_diffusion.py RECIPES): its
    samples are within 0.2 sliced W of the data (the exact kernel denoiser: 0.09; the old
    conditional net sampled unconditionally: 0.28, a shapeless cloud)."""
    from engine.diffusion import DIFFUSION_DATA, sliced_wasserstein
    model, schedule, meta = load_model(ROOT / "assets" / "weights" / "diffusion_swiss_roll.pt")
    assert model.num_classes == 0 and meta["steps"] == 6000
    data = DIFFUSION_DATA["swiss_roll"](n=1000, seed=0)
    res = ddim_sample(network_eps(model), 1000, schedule, steps=50, seed=0)
    assert sliced_wasserstein(res.samples, data.points) < 0.2


# ---------------------------------------------------------------- metrics, data

def test_sliced_wasserstein_of_a_shift():
    a = np.random.default_rng(0).standard_normal((3000, 2))
    d = np.array([1.0, 2.0])
    # SW2^2 = mean_theta <d, theta>^2 -> |d|^2 / 2 for uniform directions in 2-D
    assert sliced_wasserstein(a, a + d, n_proj=2000) == pytest.approx(np.linalg.norm(d) / math.sqrt(2),
                                                                       rel=0.05)
    assert sliced_wasserstein(a, a) == 0.0


def test_mmd_rbf_matches_formula():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((50, 2)), rng.standard_normal((40, 2)) + 1
    k = lambda u, v: np.exp(-((u[:, None] - v[None]) ** 2).sum(-1) / (2 * 0.7 ** 2))  # noqa: E731
    ref = k(a, a).mean() + k(b, b).mean() - 2 * k(a, b).mean()
    assert mmd_rbf(a, b, 0.7) == pytest.approx(ref, rel=1e-9)
    assert mmd_rbf(a, a, 0.7) == pytest.approx(0.0, abs=1e-12)


def test_mode_weights_counts_nearest_mean():
    s = np.array([[0.1, 0], [0.2, 0], [3, 0], [np.nan, 0]])
    np.testing.assert_allclose(mode_weights(s, [[0, 0], [3, 0]]), [2 / 3, 1 / 3], rtol=1e-6)


def test_steps_vs_quality_table_shape_and_trend():
    data = weighted_mixture(noise=0.3)
    den = MixtureDenoiser(data.centers, data.std, data.weights)
    ref = den.sample(2000, seed=1)
    # 2000 samples: the sliced-Wasserstein noise floor (~0.06-0.15) stays below the gaps.
    # At S = 2 both etas are equally bad (0.88-0.90, the order flips with the seed / device);
    # at S = 5, eta = 1 was worse by 0.09-0.15 for seeds 0-4.
    q = steps_vs_quality(den, den.schedule, ref, steps=(5, 50), etas=(0.0, 1.0), n=2000)
    assert q.distance.shape == (2, 2)
    assert q.distance[0, 1] < q.distance[0, 0]          # more steps: closer (eta = 0)
    assert q.distance[1, 0] > q.distance[0, 0]          # few steps: eta = 1 worse than eta = 0


def test_parse_points_csv_centres_scales_and_keeps_classes():
    """The page's wrapper of engine.datasets.parse_points_csv (validation tested there):
    optional class column, points centred with the larger axis std 1."""
    rows = "\n".join(f"{i},{2 * i},{i % 2}" for i in range(20))
    d = parse_points_csv("x,y,c\n" + rows)
    assert d.points.shape == (20, 2) and set(d.labels) == {0, 1}
    assert np.allclose(d.points.mean(0), 0, atol=1e-6) and d.points.std(0).max() == pytest.approx(1)
    for bad, msg in [("1,2\n3,4", "at least 10"), ("a,b\n" + "1,x\n" * 12, "not a number"),
                     ("\n".join(["1,2,3,4"] * 12), "columns"), ("\n".join(["1,nan"] * 12), "NaN"),
                     ("\n".join(["1,2,11"] * 12), "integers 0..9"),
                     ("\n".join(["1,1"] * 12), "identical"),
                     ("\n".join(["1,2"] * 5001), "at most 5,000")]:
        with pytest.raises(ValueError, match=msg):
            parse_points_csv(bad)
