"""The representation-learning page's engine: DEC's soft assignment, target and gradient
against their formulas and autograd, the ARI against scikit-learn's, cluster accuracy's
invariance to renaming clusters, the clustering methods and the few-labels helpers on inputs
whose answer is known, and the DEC trainer (a seed repeats a run, a saved state resumes it)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import adjusted_rand_score

from engine.representations import (DECTrainer, adjusted_rand, check_clusterable, cluster,
                                    cluster_accuracy, gradient_terms, kl_loss, make_shape,
                                    prototypes, pull_toward, shipped_state, soft_assign,
                                    spread_labels, target_distribution)
from engine.representations.trainer import top_members


def _codes(seed: int, n: int = 30, k: int = 4, d: int = 3):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d, generator=g, dtype=torch.float64),
            torch.randn(k, d, generator=g, dtype=torch.float64))


@pytest.mark.parametrize("alpha", [0.5, 1.0, 3.0])
def test_soft_assignment_is_the_student_t_formula(alpha):
    z, mu = _codes(0)
    q = soft_assign(z, mu, alpha)
    for i in (0, 7, 29):
        kernel = np.array([(1 + float(((z[i] - m) ** 2).sum()) / alpha) ** (-(alpha + 1) / 2)
                           for m in mu])
        np.testing.assert_allclose(q[i].numpy(), kernel / kernel.sum(), rtol=1e-12)
    torch.testing.assert_close(q.sum(1), torch.ones(30, dtype=torch.float64))


def test_target_distribution_is_its_formula():
    z, mu = _codes(1)
    q = soft_assign(z, mu)
    p = target_distribution(q)
    f = q.sum(0)
    for i in (0, 12):
        w = np.array([float(q[i, j] ** 2 / f[j]) for j in range(4)])
        np.testing.assert_allclose(p[i].numpy(), w / w.sum(), rtol=1e-12)
    torch.testing.assert_close(p.sum(1), torch.ones(30, dtype=torch.float64))


def test_gradient_terms_sum_to_the_autograd_gradient():
    z, mu = _codes(2)
    p = target_distribution(soft_assign(z, mu)).detach()
    zr = z.clone().requires_grad_(True)
    kl_loss(p, soft_assign(zr, mu)).backward()
    q = soft_assign(z, mu)
    torch.testing.assert_close(gradient_terms(z, mu, p, q).sum(1), zr.grad, rtol=1e-10,
                               atol=1e-14)


def test_kl_loss_is_zero_only_for_equal_distributions():
    z, mu = _codes(3)
    q = soft_assign(z, mu)
    assert float(kl_loss(q, q)) == pytest.approx(0, abs=1e-15)
    p = target_distribution(q)
    expected = float((p * (p / q).log()).sum(1).mean())
    assert float(kl_loss(p, q)) == pytest.approx(expected, rel=1e-12) and expected > 0


def test_pull_is_the_gradient_term_along_the_centre_direction():
    z, mu = _codes(4)
    q = soft_assign(z, mu)
    p = target_distribution(q)
    pull = pull_toward(z, mu, p, q, 1.0, 2)
    d2 = ((z - mu[2]) ** 2).sum(1)
    expected = 2 / (1 + d2) * (p[:, 2] - q[:, 2]) * d2.sqrt()        # alpha = 1
    torch.testing.assert_close(pull, expected, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ari_equals_scikit_learns(seed):
    rng = np.random.default_rng(seed)
    y, c = rng.integers(0, 4, 200), rng.integers(-1, 5, 200)
    c[:100] = y[:100]
    assert adjusted_rand(y, c) == pytest.approx(adjusted_rand_score(y, c), abs=1e-12)
    assert adjusted_rand(y, y) == 1.0


def test_cluster_accuracy_is_invariant_to_renaming_clusters():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 300)
    c = np.where(rng.random(300) < 0.8, y, rng.integers(0, 5, 300))
    base = cluster_accuracy(y, c)
    for perm in (rng.permutation(5) for _ in range(3)):
        assert cluster_accuracy(y, perm[c]) == base
    assert cluster_accuracy(y, (y + 1) % 5) == 1.0
    assert cluster_accuracy(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])) == 0.5


def test_kmeans_fails_and_spectral_succeeds_on_moons():
    x, y, k = make_shape("moons", 400, 0)
    assert k == 2 and x.shape == (400, 2)
    np.testing.assert_allclose(x.mean(0), 0, atol=1e-12)
    assert adjusted_rand(y, cluster(x, "kmeans", k)[0]) < 0.6
    assert adjusted_rand(y, cluster(x, "spectral", k)[0]) > 0.95


def test_impossible_clusterings_are_refused_in_words():
    assert "One cluster" in check_clusterable(100, 1)
    assert "12 clusters from 5 points" in check_clusterable(5, 12)
    with pytest.raises(ValueError, match="12 clusters from 5 points"):
        cluster(np.zeros((5, 2)), "kmeans", 12)
    x = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 10, axis=0)    # duplicates only
    for method in ("kmeans", "gmm", "dbscan", "agglomerative"):
        assert len(cluster(x, method, 2)[0]) == 20


def test_label_spreading_reaches_neighbours_first_and_refuses_no_labels():
    x = np.arange(20, dtype=float)[:, None] * np.array([[1.0, 0.0]])
    y = (np.arange(20) >= 10).astype(int)
    labelled = np.zeros(20, bool)
    labelled[[0, 19]] = True
    predicted, _ = spread_labels(x, labelled, y, 1, neighbours=3)
    assert predicted[1] == 0 and predicted[18] == 1 and predicted[10] == -1
    assert (spread_labels(x, labelled, y, 50, neighbours=3)[0] == y).all()
    with pytest.raises(ValueError, match="no point is labelled"):
        spread_labels(x, np.zeros(20, bool), y, 5)
    with pytest.raises(ValueError, match="every point is labelled"):
        spread_labels(x, np.ones(20, bool), y, 5)


def test_prototypes_are_class_means_of_the_support():
    z = np.array([[0.0, 0], [2, 0], [10, 0], [12, 0], [1, 1], [11, -1]])
    y = np.array([0, 0, 1, 1, 0, 1])
    classes, protos, nearest = prototypes(z, y, np.array([0, 1, 2, 3]))
    np.testing.assert_allclose(protos, [[1, 0], [11, 0]])
    assert classes.tolist() == [0, 1] and nearest.tolist() == y.tolist()


def test_top_members_are_the_most_confident_first():
    top = top_members(np.array([0, 1, 0, 0]), np.array([0.5, 0.9, 0.8, 0.1]), 3, top=2)
    assert top.tolist() == [[2, 0], [1, -1], [-1, -1]]


def test_dec_starts_at_kmeans_and_repeats_with_a_seed():
    a = DECTrainer(shipped_state(), seed=1, batch=64)
    b = DECTrainer(shipped_state(), seed=1, batch=64)
    assert a.snapshot().accuracy == pytest.approx(a.kmeans_accuracy, abs=0.02)
    a.step(15)
    b.step(15)
    for pa, pb in zip(a.ae.parameters(), b.ae.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    snap = a.snapshot()
    assert snap.points.shape == (1797, 2) and snap.top.shape == (10, 8)
    assert a.history.as_arrays("accuracy")[0].tolist() == [0]


def test_dec_resumes_from_a_saved_state():
    a = DECTrainer(shipped_state(), k=5, seed=2, batch=64, update_interval=4)
    a.step(6)
    saved = a.state_dict()
    a.step(6)
    b = DECTrainer(shipped_state(), k=5, seed=2, batch=64, update_interval=4)
    b.load_state_dict(saved)
    b.step(6)
    torch.testing.assert_close(a.centres.mu, b.centres.mu)


def test_dec_refuses_impossible_settings():
    with pytest.raises(ValueError, match="choose 2 to"):
        DECTrainer(shipped_state(), k=1)
    with pytest.raises(ValueError, match="alpha must be positive"):
        DECTrainer(shipped_state(), alpha=0)
