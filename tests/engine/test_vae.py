"""engine/vae/: closed forms (KL, ELBO identity), the reparameterisation, grid placement,
the shipped model, the trainer, and the autoencoder-vs-PCA toy."""
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import norm

from engine import vae as V

WEIGHTS = Path(__file__).resolve().parents[2] / "assets" / "weights"

# Bounds for the shipped 2-D models (scripts/pretrain_vae.py, 120 epochs), measured 2026-11:
# test pixel MSE 0.0358 for the VAE and 0.0320 for the autoencoder (predicting the mean
# training image gives ~0.11); the bounds leave margin.
SHIPPED_VAE_MSE_BOUND = 0.045
SHIPPED_AE_MSE_BOUND = 0.04
CORNER_DISTANCE_BOUND = 1.5   # L2 distance (64 pixels in [0, 1]) between decoded grid corners


# ----------------------------------------------------------------------------- KL, reparam

def test_kl_matches_monte_carlo_estimate():
    g = torch.Generator().manual_seed(0)
    mu = torch.tensor([0.7, -1.2, 0.1], dtype=torch.float64)
    logvar = torch.tensor([-0.5, 0.8, 0.0], dtype=torch.float64)
    closed = float(V.kl_standard_normal(mu, logvar))
    z = V.reparameterize(mu.expand(100_000, 3), logvar.expand(100_000, 3), g)
    q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = torch.distributions.Normal(torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    samples = (q.log_prob(z) - p.log_prob(z)).sum(-1)
    se = float(samples.std()) / math.sqrt(len(samples))
    assert abs(float(samples.mean()) - closed) < 4 * se
    ref = torch.distributions.kl_divergence(q, p).sum()
    assert closed == pytest.approx(float(ref), rel=1e-12)


def test_kl_is_zero_only_at_the_prior():
    assert float(V.kl_standard_normal(torch.zeros(4), torch.zeros(4))) == 0.0
    for mu, lv in [(0.1, 0.0), (0.0, 0.1), (0.0, -0.1), (-2.0, 1.0)]:
        kl = V.kl_standard_normal(torch.tensor([mu, 0.0]), torch.tensor([lv, 0.0]))
        assert float(kl) > 0
    # per example: sums over the last dim only
    assert V.kl_standard_normal(torch.ones(5, 3), torch.zeros(5, 3)).shape == (5,)
    assert torch.allclose(V.kl_standard_normal(torch.ones(5, 3), torch.zeros(5, 3)), torch.full((5,), 1.5))


def test_reparameterized_samples_have_right_moments_and_gradients(device):
    mu = torch.tensor([1.5, -0.5], device=device, requires_grad=True)
    logvar = torch.tensor([math.log(0.25), math.log(4.0)], device=device, requires_grad=True)
    n = 100_000
    g = torch.Generator(device=device).manual_seed(1)
    z = V.reparameterize(mu.expand(n, 2), logvar.expand(n, 2), g)
    mean, var = z.mean(0).detach().cpu(), z.var(0).detach().cpu()
    sd = torch.tensor([0.5, 2.0])
    assert torch.all((mean - torch.tensor([1.5, -0.5])).abs() < 4 * sd / math.sqrt(n))
    assert torch.all((var / sd**2 - 1).abs() < 4 * math.sqrt(2 / n))
    z.sum().backward()
    # dz/dmu = 1, dz/dlogvar = sigma * eps / 2 = (z - mu) / 2
    assert torch.allclose(mu.grad.cpu(), torch.full((2,), float(n)))
    expected = ((z.detach() - mu.detach()) / 2).sum(0)
    assert torch.allclose(logvar.grad, expected, rtol=1e-3, atol=1e-2)
    assert float(logvar.grad.abs().sum()) > 0


# ----------------------------------------------------------------------------- the model

def test_likelihoods_equal_torch_distributions():
    logits = torch.randn(4, 64, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = (torch.rand(4, 64, generator=torch.Generator().manual_seed(1), dtype=torch.float64) > 0.5).double()
    ref_b = -torch.distributions.Bernoulli(logits=logits).log_prob(x).sum(-1)
    assert torch.allclose(V.bernoulli_nll(logits, x), ref_b)
    ref_g = -torch.distributions.Normal(torch.sigmoid(logits), V.GAUSSIAN_SIGMA).log_prob(x).sum(-1)
    assert torch.allclose(V.gaussian_nll(logits, x), ref_g)


@torch.no_grad()
def test_loss_parts_and_the_autoencoder():
    x = torch.as_tensor(V.load_digit_data().x_test[:32])
    model = V.VAE(seed=0)
    total, recon, kl = model.loss(x, beta=2.5, generator=torch.Generator().manual_seed(0))
    assert float(total) == pytest.approx(float(recon) + 2.5 * float(kl), rel=1e-6)
    mu, logvar = model.encode(x)
    assert float(kl) == pytest.approx(float(V.kl_standard_normal(mu, logvar).mean()), rel=1e-6)
    ae = V.VAE(seed=0, deterministic=True)
    t, r, k = ae.loss(x, beta=5.0)
    assert float(k) == 0.0 and float(t) == float(r)
    assert float(r) == pytest.approx(float(V.bernoulli_nll(ae.decoder(ae.encode(x)[0]), x).mean()), rel=1e-6)
    # same seed -> same weights; another seed -> different
    assert torch.equal(V.VAE(seed=3).encoder[0].weight, V.VAE(seed=3).encoder[0].weight)
    assert not torch.equal(V.VAE(seed=3).encoder[0].weight, V.VAE(seed=4).encoder[0].weight)


@pytest.mark.parametrize("reparam", [True, False])
def test_without_reparameterization_recon_sends_no_gradient_to_encoder(reparam):
    x = torch.as_tensor(V.load_digit_data().x_test[:32])
    model = V.VAE(seed=0)
    _, recon, _ = model.loss(x, generator=torch.Generator().manual_seed(0), reparam=reparam)
    grads = torch.autograd.grad(recon, list(model.encoder.parameters()), allow_unused=True)
    norm_ = sum(float(g.pow(2).sum()) for g in grads if g is not None)
    assert (norm_ > 1e-6) if reparam else (norm_ == 0.0)


def test_latent_grid_shape_orientation_and_quantiles(device):
    model = V.VAE(latent_dim=3, seed=0).to(device)
    grid = V.latent_grid(model, n=7, span="quantiles", dims=(2, 0))
    assert grid.images.shape == (7, 7, 8, 8)
    assert np.allclose(grid.zx, norm.ppf(np.linspace(0.05, 0.95, 7)), atol=1e-9)
    assert grid.zx[0] == pytest.approx(-1.6448536, abs=1e-6) and grid.zx[3] == pytest.approx(0.0, abs=1e-12)
    for iy, ix in [(0, 6), (5, 1)]:
        z = np.zeros(3)
        z[2], z[0] = grid.zx[ix], grid.zy[iy]
        assert np.allclose(grid.images[iy, ix], V.decode_point(model, z), atol=1e-6)
    lin = V.latent_grid(model, n=5, span="linear")
    assert np.allclose(lin.zx, [-3, -1.5, 0, 1.5, 3])
    with pytest.raises(ValueError):
        V.latent_grid(model, n=5, dims=(1, 1))
    with pytest.raises(ValueError):
        V.latent_grid(model, n=5, span="nope")


def test_tile_places_row_zero_at_the_bottom():
    imgs = np.arange(2 * 3).reshape(2, 3, 1, 1).astype(np.float32) * np.ones((1, 1, 2, 2))
    t = V.tile(imgs, pad=1, flip_rows=True)
    assert t.shape == (2 * 3 - 1, 3 * 3 - 1)
    assert t[0, 0] == imgs[1, 0, 0, 0] and t[-1, 0] == imgs[0, 0, 0, 0] and np.isnan(t[2, 0])


def test_interpolation_endpoints_decode_the_encoder_means():
    data = V.load_digit_data()
    model = V.VAE(seed=0)
    path = V.interpolate(model, data.x_test[0], data.x_test[1], steps=5)
    codes = V.encode_dataset(model, data.x_test[:2], data.y_test[:2])
    assert path.shape == (5, 8, 8)
    assert np.allclose(path[0], V.decode_point(model, codes.means[0]), atol=1e-6)
    assert np.allclose(path[-1], V.decode_point(model, codes.means[1]), atol=1e-6)


# ----------------------------------------------------------------------------- shipped model

def _shipped(name):
    path = WEIGHTS / name
    assert path.exists() and path.stat().st_size < 2e6, f"{name} missing: python -m scripts.pretrain vae"
    return V.load_model(V.load_shipped(name))


def test_shipped_vae_reconstructs_and_its_grid_varies():
    data = V.load_digit_data()
    model = _shipped("vae_d2_bernoulli.pt")
    assert V.reconstruction_mse(model, data.x_test) < SHIPPED_VAE_MSE_BOUND
    # a useless model (the mean training image) is far worse
    baseline = float(((data.x_test - data.x_train.mean(0)) ** 2).mean())
    assert V.reconstruction_mse(model, data.x_test) < 0.5 * baseline
    grid = V.latent_grid(model, n=15)
    corners = np.stack([grid.images[i, j].ravel() for i in (0, -1) for j in (0, -1)])
    d = np.linalg.norm(corners[:, None] - corners[None], axis=-1)
    assert d[np.triu_indices(4, 1)].min() > CORNER_DISTANCE_BOUND
    # the KL term made the code cloud centred and roughly unit-scaled
    means = V.encode_dataset(model, data.x_test, data.y_test).means
    assert np.all(np.abs(means.mean(0)) < 0.3) and np.all((means.std(0) > 0.5) & (means.std(0) < 1.5))


def test_shipped_autoencoder_reconstructs_better_but_has_no_prior_scale():
    data = V.load_digit_data()
    ae, vae = _shipped("vae_ae_d2_bernoulli.pt"), _shipped("vae_d2_bernoulli.pt")
    assert ae.deterministic
    assert V.reconstruction_mse(ae, data.x_test) < SHIPPED_AE_MSE_BOUND
    assert V.reconstruction_mse(ae, data.x_test) < V.reconstruction_mse(vae, data.x_test)


# ----------------------------------------------------------------------------- trainer

def test_trainer_learns_is_deterministic_and_round_trips(device):
    data = V.load_digit_data()
    kw = dict(seed=5, device=device, data=data, log_every=5, snapshot_every=5)
    a, b = V.VAETrainer(**kw), V.VAETrainer(**kw)
    first = a.history.last("test_elbo")
    a.step(40)
    b.step(40)
    assert a.history.values["train_loss"] == pytest.approx(b.history.values["train_loss"], rel=1e-5)
    assert a.history.last("test_elbo") > first + 5    # 40 Adam steps: ELBO up by > 5 nats
    assert len(a.snapshots) == 8 and a.snapshots[-1][1].shape == (359, 2)
    assert a.history.last("enc_grad_recon") > 0
    c = V.VAETrainer(**kw)
    c.load_state_dict(a.state_dict())
    assert c.steps == 40 and [s for s, _ in c.snapshots] == [s for s, _ in a.snapshots]
    assert np.array_equal(c.snapshots[3][1], a.snapshots[3][1])
    assert np.allclose(c.snapshot().codes.means, a.snapshot().codes.means, atol=1e-6)


def test_saved_trainer_file_restores_model_history_and_replay(tmp_path):
    """save_trainer -> load_shipped: an engine.weights file (model_config = VAE.config()) that
    VAETrainer.load_state_dict and load_model take back exactly."""
    from engine import weights
    data = V.load_digit_data()
    kw = dict(hidden=(32, 16), batch_size=64, log_every=4, snapshot_every=4, data=data)
    a = V.VAETrainer(**kw)
    a.step(12)
    path = tmp_path / "vae_small.pt"
    V.save_trainer(a, path, {"steps": a.steps})
    raw = weights.load(path)
    assert raw.model_config == a.model.config() and raw.meta == {"steps": 12}
    state = V.load_shipped(path)
    b = V.VAETrainer(seed=9, **kw)
    b.load_state_dict(state)
    assert b.steps == 12 and b.history.values == a.history.values
    assert [s for s, _ in b.snapshots] == [s for s, _ in a.snapshots] == [4, 8, 12]
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(pa, pb)
    m = V.load_model(state)
    x = torch.as_tensor(data.x_test[:5])
    assert torch.equal(m.encode(x)[0], a.model.encode(x)[0])


def test_trainer_without_reparameterization_reports_zero_encoder_gradient():
    tr = V.VAETrainer(reparam=False, seed=0, device="cpu", log_every=5)
    tr.step(10)
    assert tr.history.values["enc_grad_recon"][-1] == 0.0


def test_test_metrics_and_snapshots_are_logged_densely_first_then_sparsely():
    tr = V.VAETrainer(seed=0, device="cpu", log_every=2, snapshot_every=4)
    n = 2 * (tr.DENSE_LOGS + 3 * tr.SPARSE_EVERY)
    tr.step(n)
    assert tr.history.steps["train_elbo"] == list(range(2, n + 1, 2))     # every log
    logs = [k for k in range(n // 2 + 1)
            if k <= tr.DENSE_LOGS or k % tr.SPARSE_EVERY == 0]
    assert len(logs) == tr.DENSE_LOGS + 1 + 3                     # step 0, dense, 3 sparse
    for name in ("test_elbo", "test_kl", "enc_grad_recon"):
        assert tr.history.steps[name] == [2 * k for k in logs], name
    dense = 2 * tr.DENSE_LOGS // 4                                # snapshots: the same rule
    kept = [4 * c for c in range(1, n // 4 + 1)
            if c <= dense or c % tr.SNAPSHOT_SPARSE_EVERY == 0]
    assert [s for s, _ in tr.snapshots] == kept and len(kept) < n // 4


def test_trainer_thins_snapshots_and_flags_divergence():
    tr = V.VAETrainer(seed=0, device="cpu", snapshot_every=1, max_snapshots=6, log_every=100)
    tr.step(12)
    assert len(tr.snapshots) <= 6 and tr.snapshots[0][0] == 1 and tr.snapshots[-1][0] == 12
    bad = V.VAETrainer(seed=0, device="cpu", lr=1e6, log_every=100)
    bad.step(30)
    if bad.diverged_at is not None:   # a huge lr usually blows up; then the run stops there
        assert bad.steps == bad.diverged_at


# ----------------------------------------------------------------------------- 1-D ELBO toy

@pytest.mark.parametrize("x", [-2.0, 0.0, 0.7, 3.0])
def test_elbo_is_a_lower_bound_with_gap_equal_to_kl(x):
    m, s = np.meshgrid(np.linspace(-3, 3, 13), np.array([0.05, 0.2, 0.5, 1.0, 2.0]))
    lp = V.toy_log_px(x)
    el = V.elbo_gaussian_q(x, m, s)
    assert np.all(el <= lp + 1e-9)
    for mi, si in [(0.0, 1.0), (1.2, 0.3), (-1.7, 0.15)]:
        gap = lp - float(V.elbo_gaussian_q(x, mi, si))
        assert gap == pytest.approx(V.kl_q_posterior(x, mi, si), rel=1e-4, abs=1e-6)


def test_toy_marginal_is_bimodal_and_posterior_is_normalised():
    xs = np.linspace(-30, 30, 1201)          # the cubic g gives long tails
    px = np.exp(V.toy_log_px(xs))
    assert np.trapezoid(px, xs) == pytest.approx(1.0, abs=2e-3)
    peaks = np.where((px[1:-1] > px[:-2]) & (px[1:-1] > px[2:]))[0]
    assert len(peaks) == 2 and px[600] < 0.9 * px[peaks].min()   # dip at x = 0
    z = V.toy_z_grid()
    post = V.true_posterior(0.0, z)
    assert np.trapezoid(post, z) == pytest.approx(1.0, abs=1e-9)
    modes = np.where((post[1:-1] > post[:-2]) & (post[1:-1] > post[2:]))[0]
    assert len(modes) == 3   # z near 0 and +-sqrt(3)
    # log p(x) against a Monte-Carlo average of p(x|z) over the prior
    zs = np.random.default_rng(0).standard_normal(400_000)
    lik = norm.pdf(0.5, V.toy_g(zs), V.TOY_NOISE)
    assert float(np.exp(V.toy_log_px(0.5))) == pytest.approx(lik.mean(), abs=4 * lik.std() / math.sqrt(len(zs)))


def test_fit_q_raises_the_elbo_and_finds_a_mode():
    x = -2.0
    m, s = V.fit_q(x, 0.5, 1.0)
    assert V.elbo_gaussian_q(x, m, s) > V.elbo_gaussian_q(x, 0.5, 1.0) + 0.1
    grid = np.linspace(-2.5, 2.5, 501)
    best = grid[np.argmax(V.true_posterior(x, grid))]
    assert abs(m - best) < 0.3


# ----------------------------------------------------------------------------- AE vs PCA

def test_pca_reconstruction_equals_sklearn():
    from sklearn.decomposition import PCA
    pts = V.curved_manifold(200, seed=1)
    rec = V.pca_reconstruct(pts, 1)
    p = PCA(1).fit(pts)
    assert np.allclose(rec.recon, p.inverse_transform(p.transform(pts)), atol=1e-5)


def test_linear_autoencoder_learns_pca_line_and_nonlinear_beats_it():
    pts = V.curved_manifold(300, seed=0, noise=0.05)
    pca = V.pca_reconstruct(pts, 1)
    lin = V.fit_autoencoder_2d(pts, linear=True, steps=300, lr=0.05, seed=0, device="cpu")
    assert lin.mse == pytest.approx(pca.mse, rel=0.02)
    d_lin = lin.curve[-1] - lin.curve[0]
    d_pca = pca.curve[-1] - pca.curve[0]
    cos = abs(d_lin @ d_pca) / np.linalg.norm(d_lin) / np.linalg.norm(d_pca)
    assert cos > 0.999
    non = V.fit_autoencoder_2d(pts, 16, steps=500, lr=0.02, seed=0, device="cpu")
    assert non.mse < 0.5 * pca.mse
