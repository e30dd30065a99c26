"""The Embeddings tab's engine: PCA against an SVD, the placed point against the fitted map,
the probe and silhouette on data whose answer is known, cosine neighbours against PyTorch,
and the packaged encoder's embeddings (unit length, independent of the batch, similar for
similar phrases, bad text refused in words)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.language_models import embeddings as emb


def _blobs(n: int = 12, d: int = 6, gap: float = 8.0):
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(0, 1, (n, d)) + gap * k * np.eye(d)[k] for k in range(3)])
    return x, [str(k) for k in range(3) for _ in range(n)]


def test_pca_is_the_svd_projection_and_places_extra_points_with_it():
    x, _ = _blobs()
    extra = x[:2] + 0.5
    p = emb.project(x, extra)
    c = x - x.mean(0)
    _, sv, vt = np.linalg.svd(c, full_matrices=False)
    ref = c @ vt[:2].T                                           # (n, 2)
    signs = np.sign((p.pca * ref).sum(0))
    np.testing.assert_allclose(p.pca, ref * signs, atol=1e-10)
    np.testing.assert_allclose(p.extra_pca, (extra - x.mean(0)) @ vt[:2].T * signs, atol=1e-10)
    np.testing.assert_allclose(p.explained, sv[:2] ** 2 / (sv ** 2).sum(), rtol=1e-10)
    assert p.tsne.shape == (len(x) + 2, 2) and np.isfinite(p.tsne).all()


def test_probe_and_silhouette_on_separated_and_on_random_labels():
    x, labels = _blobs()
    assert emb.probe_accuracy(x, labels) == 1.0
    assert emb.silhouette(x, labels, "euclidean") > 0.5
    rng = np.random.default_rng(1)
    shuffled = list(rng.permutation(labels))
    assert emb.probe_accuracy(x, shuffled) < 0.6
    assert abs(emb.silhouette(x, shuffled, "euclidean")) < 0.1


def test_neighbours_are_torch_cosine_similarity_ranked():
    x, _ = _blobs()
    q = x[3] + 0.1
    idx, sims = emb.neighbours(q, x, 4)
    ref = torch.nn.functional.cosine_similarity(torch.as_tensor(x), torch.as_tensor(q)[None])
    top = torch.topk(ref, 4)
    np.testing.assert_array_equal(idx, top.indices.numpy())
    np.testing.assert_allclose(sims, top.values.numpy(), rtol=1e-12)


def test_the_encoder_embeds_unit_vectors_independent_of_the_batch():
    from engine.attention import language_model as encoder
    texts = ("a wonderful day", "a lovely day", "the invoice has two pages")
    e = emb.embed(texts)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(emb.embed(texts[1:2])[0], e[1], atol=1e-6)
    assert e[0] @ e[1] > e[0] @ e[2] + 0.2
    with pytest.raises(encoder.TextProblem):
        emb.embed(("\u200b",))
