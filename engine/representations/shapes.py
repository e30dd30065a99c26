"""The toy clustering problems of the clustering-shapes figure (notes 001, L4384) and the
clustering methods compared on them, all scikit-learn's implementations.

    make_shape(name, n, seed) -> (x (n, 2) standardised, y (n,) true cluster, k)
    cluster(x, method, k, seed, eps, linkage) -> (labels (n,), seconds)

DBSCAN labels the points it calls noise -1; the metrics treat -1 as one more cluster."""
from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.datasets import make_blobs, make_circles, make_moons
from sklearn.mixture import GaussianMixture

SHAPES = ("blobs", "anisotropic", "moons", "circles", "varied")
METHODS = ("kmeans", "gmm", "spectral", "dbscan", "agglomerative")
METHOD_NAMES = {"kmeans": "k-means", "gmm": "GMM", "spectral": "Spectral",
                "dbscan": "DBSCAN", "agglomerative": "Agglomerative"}
LINKAGES = ("ward", "average", "single")
ANISO = np.array([[0.6, -0.6], [-0.4, 0.8]])        # the shear of the anisotropic blobs


def make_shape(name: str, n: int, seed: int, noise: float = 0.05
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """(x (n, 2) float64 standardised to mean 0 and std 1 per axis, y (n,) int64 true
    cluster, k the number of true clusters) of one of SHAPES, seeded."""
    n, seed = int(n), int(seed)
    if n < 1:
        raise ValueError("at least one point is needed")
    if name == "blobs":
        x, y = make_blobs(n_samples=n, centers=3, random_state=seed + 8)
    elif name == "anisotropic":
        x, y = make_blobs(n_samples=n, centers=3, random_state=seed + 170)
        x = x @ ANISO
    elif name == "moons":
        x, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    elif name == "circles":
        x, y = make_circles(n_samples=n, factor=0.5, noise=noise, random_state=seed)
    elif name == "varied":
        x, y = make_blobs(n_samples=n, centers=3, cluster_std=[1.0, 2.5, 0.5],
                          random_state=seed + 170)
    else:
        raise ValueError(f"unknown shape {name!r}: one of {', '.join(SHAPES)}")
    std = x.std(0)
    x = (x - x.mean(0)) / np.where(std > 0, std, 1.0)
    return x.astype(np.float64), y.astype(np.int64), int(len(np.unique(y)))


def check_clusterable(n: int, k: int) -> str | None:
    """A plain sentence for what no method can do (None: fine)."""
    if k < 2:
        return "One cluster is no clustering: every point gets the same label. Ask for 2 or more."
    if k > n:
        return (f"{k} clusters from {n} points: a cluster needs at least one point. "
                "Ask for fewer clusters or more points.")
    return None


def cluster(x: np.ndarray, method: str, k: int, seed: int = 0, eps: float = 0.3,
            linkage: str = "ward") -> tuple[np.ndarray, float]:
    """(labels (n,) int64, seconds the fit took) of scikit-learn's `method` on x (n, 2) with
    k clusters (DBSCAN ignores k and uses eps with 5 neighbours)."""
    problem = check_clusterable(len(x), int(k))
    if problem:
        raise ValueError(problem)
    k = int(k)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # duplicate points, disconnected graphs
        if method == "kmeans":
            labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(x)
        elif method == "gmm":
            labels = GaussianMixture(n_components=k, covariance_type="full",
                                     random_state=seed).fit(x).predict(x)
        elif method == "spectral":
            neighbours = max(2, min(10, len(x) - 1))
            labels = SpectralClustering(n_clusters=k, affinity="nearest_neighbors",
                                        n_neighbors=neighbours, assign_labels="cluster_qr",
                                        random_state=seed).fit_predict(x)
        elif method == "dbscan":
            labels = DBSCAN(eps=float(eps), min_samples=5).fit_predict(x)
        elif method == "agglomerative":
            labels = AgglomerativeClustering(n_clusters=k, linkage=linkage).fit_predict(x)
        else:
            raise ValueError(f"unknown method {method!r}: one of {', '.join(METHODS)}")
    return np.asarray(labels, dtype=np.int64), time.perf_counter() - t0
