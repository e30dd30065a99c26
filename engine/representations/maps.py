"""2-D maps of learned representations (notes 004, Fig. 13.10; notes 001, L4822) and how well
a map keeps the classes apart.

    tsne_map(features, perplexity, seed): scikit-learn's t-SNE (PCA initialisation, seeded) of
        the standardised features (n, d) -> (n, 2). t-SNE keeps each point's near neighbours
        near; distances between far clusters mean little.
    knn_accuracy(points, y, k): leave-one-out k-nearest-neighbour accuracy in `points`: the
        share of points i whose k nearest other points (Euclidean) vote y_i by majority (ties
        broken toward the smallest label), a number in [0, 1]."""
from __future__ import annotations

import numpy as np
from sklearn.manifold import TSNE
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler


def check_tsne(n: int, perplexity: float) -> str | None:
    """A sentence when t-SNE cannot map n points at this perplexity, else None."""
    if n < 3:
        return f"{n} points: t-SNE needs at least 3"
    if perplexity >= n:
        return (f"perplexity {perplexity:g} with {n} points: the perplexity (about how many "
                f"neighbours each point keeps) must be smaller than the number of points")
    if perplexity <= 0:
        return "the perplexity must be positive"
    return None


def tsne_map(features: np.ndarray, perplexity: float = 30.0, seed: int = 0) -> np.ndarray:
    """(n, 2) float32 t-SNE map of features (n, d) (module docstring)."""
    problem = check_tsne(len(features), float(perplexity))
    if problem:
        raise ValueError(problem)
    x = StandardScaler().fit_transform(np.asarray(features, dtype=np.float64))
    x = np.nan_to_num(x)                                     # a constant feature scales to 0/0
    tsne = TSNE(n_components=2, perplexity=float(perplexity), init="pca",
                random_state=int(seed))
    return tsne.fit_transform(x).astype(np.float32)


def knn_accuracy(points: np.ndarray, y: np.ndarray, k: int = 5) -> float:
    """Leave-one-out k-NN accuracy of the module docstring."""
    n = len(points)
    if not 1 <= int(k) < n:
        raise ValueError(f"{k} neighbours of {n} points: choose 1 to {n - 1}")
    y = np.asarray(y)
    _, idx = NearestNeighbors(n_neighbors=int(k) + 1).fit(points).kneighbors(points)
    # drop each point itself (a duplicate may come first, so remove i wherever it sits)
    others = np.array([[j for j in row if j != i][:int(k)] for i, row in enumerate(idx)])
    classes = np.unique(y)
    votes = (y[others][..., None] == classes).sum(1)                         # (n, classes)
    return float((classes[votes.argmax(1)] == y).mean())
