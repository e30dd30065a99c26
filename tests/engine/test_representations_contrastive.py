"""SimCLR and the t-SNE maps of the representation-learning page: the NT-Xent loss against a
direct per-pair computation, the augmentations on images whose answer is known, the
contrastive trainer (a seed repeats a run, a saved state resumes it), the k-NN score of a map
and the words for what cannot run."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.representations import (ContrastiveTrainer, augment, check_augmentations,
                                    check_tsne, knn_accuracy, nt_xent, simclr_features,
                                    tsne_map)


def _direct_nt_xent(z1, z2, tau):
    """The docstring's formula, one term at a time."""
    rows = [[c / math.sqrt(sum(a * a for a in v)) for c in v]
            for v in torch.cat([z1, z2]).tolist()]
    b, total = len(z1), 0.0
    for i, u in enumerate(rows):
        s = [sum(a * c for a, c in zip(u, w)) / tau for w in rows]
        partner = (i + b) % (2 * b)
        total += -(s[partner] - math.log(sum(math.exp(s[k]) for k in range(2 * b) if k != i)))
    return total / (2 * b)


@pytest.mark.parametrize("tau", [0.1, 0.5, 2.0])
def test_nt_xent_is_its_formula(tau):
    g = torch.Generator().manual_seed(0)
    z1, z2 = (torch.randn(6, 4, generator=g, dtype=torch.float64) for _ in range(2))
    assert float(nt_xent(z1, z2, tau)) == pytest.approx(_direct_nt_xent(z1, z2, tau),
                                                        rel=1e-12)
    # scaling a projection changes nothing (cosine similarity); swapping the views neither
    assert float(nt_xent(3 * z1, z2, tau)) == pytest.approx(float(nt_xent(z1, z2, tau)),
                                                            rel=1e-12)
    assert float(nt_xent(z2, z1, tau)) == pytest.approx(float(nt_xent(z1, z2, tau)),
                                                        rel=1e-12)
    with pytest.raises(ValueError, match="positive"):
        nt_xent(z1, z2, 0.0)


def test_shift_moves_a_pixel_by_at_most_one_and_keeps_its_ink():
    x = torch.zeros(20, 64)
    x[:, 3 * 8 + 4] = 1.0                                   # one lit pixel, row 3, column 4
    out = augment(x, ("shift",), torch.Generator().manual_seed(1)).view(20, 8, 8)
    torch.testing.assert_close(out.sum((1, 2)), torch.ones(20))
    rows, cols = torch.arange(8.0)[:, None], torch.arange(8.0)[None, :]
    dy = (out * rows).sum((1, 2)) - 3
    dx = (out * cols).sum((1, 2)) - 4
    assert float(dy.abs().max()) <= 1 + 1e-6 and float(dx.abs().max()) <= 1 + 1e-6
    assert float(dx.abs().max()) > 0.2                      # it does move


def test_noise_only_adds_clipped_noise_and_no_augmentation_is_refused():
    x = torch.rand(5, 64)
    out = augment(x, ("noise",), torch.Generator().manual_seed(2))
    assert float(out.min()) >= 0 and float(out.max()) <= 1
    assert 0.05 < float((out - x).std()) < 0.2
    assert "no augmentation is on" in check_augmentations(())
    with pytest.raises(ValueError, match="unknown augmentation"):
        augment(x, ("blur",), torch.Generator())


def test_trainer_repeats_with_a_seed_and_resumes_from_a_state():
    a = ContrastiveTrainer(batch=32, probe_every=2, seed=3)
    b = ContrastiveTrainer(batch=32, probe_every=2, seed=3)
    a.step(2)
    b.step(2)
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    assert a.history.as_arrays("probe")[0].tolist() == [0, 2]
    saved = a.state_dict()
    a.step(2)
    b.load_state_dict(saved)
    b.step(2)
    torch.testing.assert_close(a.model.encoder[0].weight, b.model.encoder[0].weight)
    snap = a.snapshot()
    assert snap.views.shape == (2, 8, 8, 8) and snap.similarity.shape == (16, 16)
    np.testing.assert_allclose(np.diag(snap.similarity), 1, rtol=1e-5)


def test_knn_accuracy_counts_majorities_of_the_other_points():
    points = np.array([[0.0, 0], [0, 1], [1, 0], [10, 10], [10, 11], [11, 10], [0.5, 0.5]])
    y = np.array([0, 0, 0, 1, 1, 1, 1])                     # the last one sits among the 0s
    assert knn_accuracy(points, y, 3) == pytest.approx(6 / 7)
    with pytest.raises(ValueError, match="choose 1 to 6"):
        knn_accuracy(points, y, 7)


def test_tsne_maps_and_refuses_a_perplexity_too_large():
    assert "must be smaller than the number of points" in check_tsne(20, 30)
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 1, (15, 5)), rng.normal(8, 1, (15, 5))])
    m = tsne_map(x, perplexity=5)
    assert m.shape == (30, 2) and knn_accuracy(m, np.repeat([0, 1], 15), 3) == 1.0
    with pytest.raises(ValueError, match="perplexity 40"):
        tsne_map(x, perplexity=40)


def test_shipped_encoder_gives_features_of_every_digit():
    h = simclr_features()
    assert h.shape == (1797, 32) and np.isfinite(h).all() and h.std(0).min() > 0
