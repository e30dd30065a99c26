"""Constants and the cached pure computations of the representation-learning page: what the
views draw and what the claims measure, from the same engine calls."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st
from sklearn.cluster import KMeans

from engine.representations import (METHODS, DECTrainer, adjusted_rand, check_clusterable,
                                    cluster, cluster_accuracy, digit_codes, digits_pixels,
                                    make_shape, probe_accuracy, shipped_state, spread_labels)
from engine.representations.contrastive import (AUGMENTATIONS, PROBE_LABELS,
                                                ContrastiveTrainer, check_augmentations,
                                                simclr_features)
from engine.representations.fewlabels import split
from engine.representations.maps import check_tsne, knn_accuracy, tsne_map
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
NOISES = (0.0, 0.03, 0.05, 0.08, 0.1, 0.15)
EPS = (0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
ALPHAS = (0.5, 1.0, 2.0, 5.0)
LRS = (0.001, 0.003, 0.01)
GAMMAS = (0.0, 0.1, 1.0)
INTERVALS = (5, 10, 20, 50)
PER_CLASS = (1, 2, 3, 5, 10, 20, 50)      # the few-labels curve's points
REPEATS = 3                               # seeded draws of the labelled digits per point
DEC_STEPS = 300                           # the DEC claims: after this many iterations
TRAIN_MAX = 3_000
REPRESENTATIONS = {"pixels": "pixels",          # logistic regression on raw pixels
                   "code": "AE code",          # ... on the autoencoder's code
                   "contrastive": "SimCLR features",   # ... on the shipped SimCLR features
                   "spread": "spreading"}      # label spreading over all digits' pixels
TAUS = (0.05, 0.1, 0.2, 0.5, 1.0)         # NT-Xent temperatures
CL_LRS = (0.001, 0.003, 0.01)
CL_STEPS = 500                            # the contrastive claims: after this many iterations
CL_TRAIN_MAX = 5_000
MAP_REPRESENTATIONS = {"contrastive": "SimCLR features", "code": "AE code",
                       "pixels": "raw pixels"}
PERPLEXITIES = (2, 5, 10, 30, 50, 100)
MAP_POINTS = (20, 100, 300, 600, 1000, 1797)
MAP_K = 5                                 # neighbours of the map's kNN score


# ----------------------------------------------------------------------------- shapes
def shape_args(s: Mapping[str, Any]) -> tuple[str, int, float, int]:
    """(shape, n, noise, k) of the settings; k = 0 asks for the true number of clusters."""
    return str(s["re_shape"]), int(s["re_n"]), float(s["re_noise"]), int(s["re_k"])


@st.cache_data(max_entries=16, show_spinner=False)
def shape_of(shape: str, n: int, noise: float, seed: int = 0
             ) -> tuple[np.ndarray, np.ndarray, int]:
    return make_shape(shape, n, seed, noise)


def clusters_asked(s: Mapping[str, Any]) -> int:
    shape, n, noise, k = shape_args(s)
    return k if k > 0 else shape_of(shape, n, noise)[2]


@st.cache_data(max_entries=32, show_spinner=False)
def _clustered(shape: str, n: int, noise: float, k: int, eps: float, linkage: str,
               seed: int = 0) -> dict[str, Any]:
    x, y, true_k = make_shape(shape, n, seed, noise)
    k = k if k > 0 else true_k
    problem = check_clusterable(len(x), k)
    out: dict[str, Any] = {"x": x, "y": y, "k": k, "problem": problem, "methods": {}}
    if problem:
        return out
    for method in METHODS:
        try:
            labels, seconds = cluster(x, method, k, seed, eps, linkage)
        except (ValueError, np.linalg.LinAlgError) as e:
            out["methods"][method] = {"error": str(e)}
            continue
        out["methods"][method] = {"labels": labels, "seconds": seconds,
                                  "ari": adjusted_rand(y, labels),
                                  "found": int(len(np.unique(labels[labels >= 0])))}
    return out


def clustered(s: Mapping[str, Any]) -> dict[str, Any]:
    """The settings' data (x, y, k) and per method its labels, ARI, seconds and number of
    clusters found (or "error"); "problem": a sentence when no method can run."""
    return _clustered(*shape_args(s), float(s["re_eps"]), str(s["re_linkage"]))


@lesson_measure
def ari_of(s: Mapping[str, Any], method: str = "kmeans") -> float:
    """Adjusted Rand index of `method` against the true clusters on the settings' data."""
    result = clustered(s)["methods"].get(method, {})
    return float(result.get("ari", float("nan")))


def ari_gap(s: Mapping[str, Any], better: str = "spectral", worse: str = "kmeans") -> float:
    return ari_of(s, better) - ari_of(s, worse)


def slowest_seconds(s: Mapping[str, Any]) -> float:
    """The longest fit among the methods on the settings' data."""
    return max(r.get("seconds", 0.0) for r in clustered(s)["methods"].values())


# ----------------------------------------------------------------------------- DEC
def dec_args(s: Mapping[str, Any]) -> tuple[int, float, float, float, int]:
    """(k, alpha, lr, gamma, update interval) of the settings s."""
    return (int(s["re_dec_k"]), float(s["re_alpha"]), float(s["re_lr"]), float(s["re_gamma"]),
            int(s["re_interval"]))


def build_trainer(k: int, alpha: float, lr: float, gamma: float, interval: int, seed: int,
                  device: str) -> DECTrainer:
    """The live trainer, from plain values only (it may be built in a worker process)."""
    return DECTrainer(shipped_state(), k=k, alpha=alpha, lr=lr, gamma=gamma,
                      update_interval=interval, seed=seed, device=device)


@st.cache_data(max_entries=8, show_spinner=False)
def kmeans_pixels_accuracy(k: int, seed: int = 0) -> float:
    """Cluster accuracy of k-means (10 restarts) on the raw pixels of the digits."""
    x, y = digits_pixels()
    return cluster_accuracy(y, KMeans(int(k), n_init=10, random_state=int(seed)).fit_predict(x))


@st.cache_data(max_entries=16, show_spinner=False)
def _dec_after(k: int, alpha: float, lr: float, gamma: float, interval: int, steps: int,
               seed: int) -> dict[str, float]:
    trainer = build_trainer(k, alpha, lr, gamma, interval, seed, "cpu")
    trainer.step(steps)
    snap = trainer.snapshot()
    return {"dec": snap.accuracy, "kmeans_code": trainer.kmeans_accuracy,
            "top_purity": top_purity_of(snap.top, snap.labels)}


def top_purity_of(top: np.ndarray, labels: np.ndarray) -> float:
    """Share of the shown top members (top (k, m), -1: none) whose digit is the most common
    digit of their cluster's row."""
    agree = shown = 0
    for row in top:
        digits = labels[row[row >= 0]]
        if len(digits):
            agree += int(np.bincount(digits).max())
            shown += len(digits)
    return agree / shown if shown else float("nan")


@lesson_measure(trains=True)
def dec_accuracy(s: Mapping[str, Any], steps: int = DEC_STEPS, seed: int = 0) -> float:
    """Cluster accuracy of DEC on the digits after `steps` iterations (Hungarian matching)."""
    return _dec_after(*dec_args(s), int(steps), int(seed))["dec"]


@lesson_measure(trains=True)
def top_purity(s: Mapping[str, Any], steps: int = DEC_STEPS, seed: int = 0) -> float:
    """After `steps` DEC iterations, the share of the top members drawn per cluster (largest
    q_ij) that show their row's most common digit."""
    return _dec_after(*dec_args(s), int(steps), int(seed))["top_purity"]


@lesson_measure
def kmeans_code_accuracy(s: Mapping[str, Any], seed: int = 0) -> float:
    """Cluster accuracy of k-means on the autoencoder's code (DEC's starting point)."""
    return _dec_after(*dec_args(s), 0, int(seed))["kmeans_code"]


@lesson_measure(trains=True)
def dec_gain(s: Mapping[str, Any], steps: int = DEC_STEPS) -> float:
    """DEC's accuracy after `steps` iterations minus k-means' on the code it started from."""
    return dec_accuracy(s, steps) - kmeans_code_accuracy(s)


def kmeans_pixels(s: Mapping[str, Any]) -> float:
    return kmeans_pixels_accuracy(int(s["re_dec_k"]))


# ----------------------------------------------------------------------------- few labels
@st.cache_data(max_entries=64, show_spinner=False)
def few_label_accuracy(representation: str, per_class: int, seed: int = 0) -> float:
    """Held-out accuracy of the digits with `per_class` labelled training digits per class:
    a logistic regression on raw pixels or on the autoencoder's code (mean of REPEATS
    draws), or label spreading over all digits' pixels (labelled and unlabelled alike)."""
    x, y = digits_pixels()
    if representation == "pixels":
        return probe_accuracy(x, y, per_class, REPEATS, seed)
    if representation == "code":
        return probe_accuracy(digit_codes(), y, per_class, REPEATS, seed)
    if representation == "contrastive":
        return probe_accuracy(simclr_features(), y, per_class, REPEATS, seed)
    if representation == "spread":
        from engine.representations.fewlabels import draw_labelled
        train, test = split(len(y), y)
        accs = []
        for r in range(REPEATS):
            chosen = draw_labelled(y, train, per_class, seed * 1000 + r)
            labelled = np.zeros(len(y), dtype=bool)
            labelled[chosen] = True
            predicted, _ = spread_labels(x, labelled, y, 100, alpha=0.2, neighbours=10)
            accs.append(float((predicted[test] == y[test]).mean()))
        return float(np.mean(accs))
    raise ValueError(f"unknown representation {representation!r}")


@lesson_measure
def few_accuracy(s: Mapping[str, Any], representation: str = "pixels",
                 per_class: int | None = None) -> float:
    """few_label_accuracy at the settings' labels per class (or `per_class`)."""
    n = int(s["re_per_class"]) if per_class is None else int(per_class)
    return few_label_accuracy(representation, n)


def spread_gain(s: Mapping[str, Any]) -> float:
    """Label spreading's accuracy minus the pixel classifier's, at the settings' labels."""
    return few_accuracy(s, "spread") - few_accuracy(s, "pixels")


def code_gain(s: Mapping[str, Any]) -> float:
    """The autoencoder code's probe accuracy minus the raw pixels', at the settings' labels."""
    return few_accuracy(s, "code") - few_accuracy(s, "pixels")


def spread_args(s: Mapping[str, Any]) -> tuple[str, int, int]:
    return str(s["re_spread_shape"]), int(s["re_labelled"]), int(s["re_spread_steps"])


@st.cache_data(max_entries=32, show_spinner=False)
def spread_of(shape: str, labelled: int, steps: int, n: int = 300, seed: int = 0
              ) -> dict[str, Any]:
    """Label spreading on a 2-D toy set of n points with `labelled` points per class (the
    first ones of a seeded order), stopped after `steps` iterations; "problem": a sentence
    when there is nothing to spread."""
    x, y, _ = make_shape(shape, n, seed, 0.05)
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        mask[rng.permutation(np.flatnonzero(y == c))[:max(int(labelled), 0)]] = True
    out: dict[str, Any] = {"x": x, "y": y, "labelled": mask, "problem": None}
    try:
        predicted, confidence = spread_labels(x, mask, y, steps)
    except ValueError as e:
        out["problem"] = str(e)
        return out
    hidden = ~mask
    out.update(predicted=predicted, confidence=confidence,
               reached=float((predicted[hidden] >= 0).mean()),
               accuracy=float((predicted[hidden] == y[hidden]).mean()))
    return out


@lesson_measure
def spread_accuracy(s: Mapping[str, Any]) -> float:
    """Share of the unlabelled 2-D points given their true class by label spreading."""
    return float(spread_of(*spread_args(s)).get("accuracy", float("nan")))


@lesson_measure
def spread_reached(s: Mapping[str, Any]) -> float:
    """Share of the unlabelled 2-D points a label has reached."""
    return float(spread_of(*spread_args(s)).get("reached", float("nan")))


@st.cache_data(max_entries=8, show_spinner=False)
def _pull_by_confidence(k: int, alpha: float, lr: float, gamma: float, interval: int,
                        seed: int) -> dict[str, float]:
    snap = build_trainer(k, alpha, lr, gamma, interval, seed, "cpu").snapshot()
    order = np.argsort(snap.q_j)
    n = len(order)
    return {"confident": float(snap.pull_j[order[-n // 10:]].mean()),
            "doubtful": float(np.abs(snap.pull_j[order[:n // 2]]).mean())}


@lesson_measure
def pull_ratio(s: Mapping[str, Any], seed: int = 0) -> float:
    """At the start of DEC, the mean pull toward the largest cluster's centre of its 10% most
    confident codes (largest q_ij) over the mean |pull| of the least confident half."""
    r = _pull_by_confidence(*dec_args(s), int(seed))
    return r["confident"] / r["doubtful"]


@st.cache_data(max_entries=16, show_spinner=False)
def prototypes_of(per_class: int, seed: int = 0) -> dict[str, Any]:
    """Prototypical classification of the held-out digits in the autoencoder's code: the
    prototypes are the class means of `per_class` labelled training codes per class, each
    held-out digit takes the class of its nearest prototype. Drawn on the two principal axes
    of the code: "points" (test, 2), "protos" (10, 2), "support" (m, 2) with their classes."""
    from engine.representations import prototypes
    from engine.representations.fewlabels import draw_labelled
    from engine.representations.trainer import projection
    _, y = digits_pixels()
    z = digit_codes()
    train, test = split(len(y), y)
    support = draw_labelled(y, train, per_class, seed)
    classes, protos, nearest = prototypes(z, y, support)
    mean, basis = projection(z)
    return {"points": (z[test] - mean) @ basis, "y": y[test], "nearest": nearest[test],
            "protos": (protos - mean) @ basis, "classes": classes,
            "support": (z[support] - mean) @ basis, "support_y": y[support],
            "accuracy": float((nearest[test] == y[test]).mean())}


@lesson_measure
def prototype_accuracy(s: Mapping[str, Any]) -> float:
    """Held-out accuracy of the nearest prototype in the autoencoder's code, at the settings'
    labelled digits per class."""
    return float(prototypes_of(int(s["re_per_class"]))["accuracy"])


def contrastive_gain(s: Mapping[str, Any]) -> float:
    """The shipped SimCLR features' probe accuracy minus the raw pixels', at the settings'
    labels per class."""
    return few_accuracy(s, "contrastive") - few_accuracy(s, "pixels")


# ----------------------------------------------------------------------------- contrastive
def augmentations_of(s: Mapping[str, Any]) -> tuple[str, ...]:
    """The settings' augmentations, in AUGMENTATIONS' order."""
    chosen = set(s["re_aug"] or ())
    return tuple(k for k in AUGMENTATIONS if k in chosen)


def contrastive_args(s: Mapping[str, Any]) -> tuple[tuple[str, ...], float, float]:
    """(augmentations, tau, lr) of the settings s."""
    return augmentations_of(s), float(s["re_tau"]), float(s["re_cl_lr"])


def contrastive_problem(s: Mapping[str, Any]) -> str | None:
    return check_augmentations(augmentations_of(s))


def build_contrastive(kinds: tuple[str, ...], tau: float, lr: float, seed: int,
                      device: str) -> ContrastiveTrainer:
    """The live trainer, from plain values only (it may be built in a worker process)."""
    return ContrastiveTrainer(kinds, tau=tau, lr=lr, seed=seed, device=device)


@st.cache_data(max_entries=16, show_spinner=False)
def _contrastive_after(kinds: tuple[str, ...], tau: float, lr: float, steps: int,
                       seed: int) -> float:
    trainer = build_contrastive(kinds, tau, lr, seed, "cpu")
    trainer.step(steps)
    return trainer.probe()


@lesson_measure(trains=True)
def contrastive_probe(s: Mapping[str, Any], steps: int = CL_STEPS, seed: int = 0) -> float:
    """The linear probe's held-out accuracy (PROBE_LABELS labels per class) on the features of
    an encoder trained from scratch by SimCLR for `steps` iterations."""
    return _contrastive_after(*contrastive_args(s), int(steps), int(seed))


def probe_baseline(representation: str) -> float:
    """The same probe (PROBE_LABELS labels per class, same draws) on raw pixels or the
    autoencoder's code."""
    return _probe_baseline(representation)


@st.cache_data(max_entries=4, show_spinner=False)
def _probe_baseline(representation: str) -> float:
    from engine.representations.contrastive import PROBE_REPEATS
    x, y = digits_pixels()
    features = digit_codes() if representation == "code" else x
    return probe_accuracy(features, y, PROBE_LABELS, PROBE_REPEATS, 0)


@lesson_measure(trains=True)
def contrastive_over_code(s: Mapping[str, Any], steps: int = CL_STEPS) -> float:
    """contrastive_probe after `steps` iterations minus the same probe on the AE code."""
    return contrastive_probe(s, steps) - probe_baseline("code")


@lesson_measure(trains=True)
def contrastive_over_pixels(s: Mapping[str, Any], steps: int = CL_STEPS) -> float:
    """contrastive_probe after `steps` iterations minus the same probe on raw pixels."""
    return contrastive_probe(s, steps) - probe_baseline("pixels")


@lesson_measure
def code_probe(s: Mapping[str, Any]) -> float:
    """The probe (PROBE_LABELS labels per class) on the autoencoder's code."""
    return probe_baseline("code")


@lesson_measure
def pixels_probe(s: Mapping[str, Any]) -> float:
    """The probe (PROBE_LABELS labels per class) on raw pixels."""
    return probe_baseline("pixels")


# ----------------------------------------------------------------------------- t-SNE maps
def map_args(s: Mapping[str, Any]) -> tuple[int, float]:
    """(digits in the map, perplexity) of the settings s."""
    return int(s["re_map_n"]), float(s["re_perplexity"])


def map_subset(n: int, seed: int = 0) -> np.ndarray:
    """The indices of the n digits mapped: a seeded draw, sorted."""
    total = len(digits_pixels()[1])
    n = max(0, min(int(n), total))
    return np.sort(np.random.default_rng(seed).permutation(total)[:n])


def map_features(representation: str) -> np.ndarray:
    x, _ = digits_pixels()
    return {"contrastive": simclr_features, "code": digit_codes,
            "pixels": lambda: x}[representation]()


@st.cache_data(max_entries=24, show_spinner=False)
def tsne_of(representation: str, n: int, perplexity: float, seed: int = 0) -> dict[str, Any]:
    """The t-SNE map of n digits' features (a seeded subset) and its leave-one-out kNN
    accuracy (MAP_K neighbours); "problem": a sentence when t-SNE cannot run."""
    idx = map_subset(n)
    y = digits_pixels()[1][idx]
    problem = check_tsne(len(idx), perplexity)
    if problem:
        return {"problem": problem}
    points = tsne_map(map_features(representation)[idx], perplexity, seed)
    return {"problem": None, "points": points, "y": y,
            "knn": knn_accuracy(points, y, min(MAP_K, len(idx) - 1))}


@lesson_measure
def map_knn(s: Mapping[str, Any], representation: str = "contrastive") -> float:
    """Leave-one-out kNN accuracy in the t-SNE map of `representation`."""
    r = tsne_of(representation, *map_args(s))
    return float(r["knn"]) if not r["problem"] else float("nan")


def map_knn_gain(s: Mapping[str, Any], better: str = "contrastive",
                 worse: str = "code") -> float:
    return map_knn(s, better) - map_knn(s, worse)
