"""Sentence embeddings of short phrases by the attention page's pretrained encoder
(all-MiniLM-L6-v2, engine.attention.language_model), projected to 2-D, and how well they
separate by label.

    e(text)      = mean_t h_t / ||mean_t h_t||     h_t: the encoder's last hidden states
    PCA          y = (e - mean) U_2,   U_2: the top two right singular vectors of the
                 centred embedding matrix (fitted on the labelled phrases only, so a typed
                 phrase is placed without moving them)
    t-SNE        2-D points whose Student-t similarities match the embeddings' Gaussian ones
                 (scikit-learn, seeded); it has no transform, so a typed phrase is
                 embedded with the others and the map is computed again
    probe        a logistic regression on e, accuracy by stratified k-fold cross-validation
                 (chance = 1 / number of labels)
    silhouette   mean over points of (b - a) / max(a, b), cosine distance: a = mean distance
                 to its own label, b = to the nearest other label (1: tight, 0: overlapping)
    neighbours   the phrases of largest cosine similarity e_i . e_j"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

FOLDS = 4


def embed(texts: tuple[str, ...]) -> np.ndarray:
    """(n, d) float64 unit-length sentence embeddings of `texts`; raises the encoder's
    TextProblem for a text with nothing to read, WeightsMissing without the model."""
    from engine.attention import language_model as encoder
    lm = encoder.load()
    keep_all = torch.ones(1, lm.layers, lm.heads)                     # (1, layers, heads)
    e = np.stack([encoder.sentence_embeddings(t, keep_all)[0] for t in texts])   # (n, d)
    e = e.astype(np.float64)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


@dataclass(frozen=True)
class Projection:
    pca: np.ndarray              # (n, 2)
    explained: tuple[float, float]   # each PCA axis's share of the variance
    extra_pca: np.ndarray        # (m, 2) the extra points, placed by the same PCA
    tsne: np.ndarray             # (n + m, 2) every point, extra ones last


def project(e: np.ndarray, extra: np.ndarray | None = None, seed: int = 0,
            perplexity: float = 10.0) -> Projection:
    """PCA fitted on e (n, d), extra (m, d) placed with it; t-SNE of all n + m points."""
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE
    extra = np.zeros((0, e.shape[1])) if extra is None else np.asarray(extra, np.float64)
    pca = PCA(2, random_state=seed).fit(e)
    both = np.vstack([e, extra])                                      # (n + m, d)
    tsne = TSNE(2, perplexity=min(perplexity, (len(both) - 1) / 3), init="pca",
                random_state=seed, metric="cosine").fit_transform(both)
    ratio = pca.explained_variance_ratio_
    return Projection(pca.transform(e), (float(ratio[0]), float(ratio[1])),
                      pca.transform(extra) if len(extra) else np.zeros((0, 2)), tsne)


def probe_accuracy(x: np.ndarray, labels, folds: int = FOLDS, seed: int = 0) -> float:
    """Mean cross-validated accuracy of a logistic regression predicting labels from x."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    return float(cross_val_score(LogisticRegression(max_iter=2000), x, list(labels),
                                 cv=cv).mean())


def silhouette(x: np.ndarray, labels, metric: str = "cosine") -> float:
    from sklearn.metrics import silhouette_score
    return float(silhouette_score(x, list(labels), metric=metric))


def neighbours(query: np.ndarray, e: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """(indices, cosine similarities) of the k rows of e closest to query, closest first."""
    q = np.asarray(query, np.float64)
    sims = (e @ q) / (np.linalg.norm(e, axis=1) * np.linalg.norm(q))  # (n,)
    idx = np.argsort(-sims, kind="stable")[:k]
    return idx, sims[idx]
