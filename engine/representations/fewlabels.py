"""Learning from few labels (notes 004, chapter 13).

    probe_accuracy(features, y, per_class, repeats, seed): a logistic-regression classifier
        (scikit-learn, L2, C = 1 on standardised features) fitted to `per_class` labelled
        digits of each class drawn from the training split, its accuracy on the held-out
        split, averaged over `repeats` seeded draws. Features learned without labels (the
        autoencoder's code) against raw pixels (Fig. 13.2's comparison).
    spread_labels(x, labelled, y, steps, alpha, neighbours): label spreading (Zhou et al.;
        scikit-learn's LabelSpreading, knn kernel) stopped after `steps` iterations of
        F <- alpha S F + (1 - alpha) Y, S = D^-1/2 W D^-1/2 the normalised k-nearest-neighbour
        graph (Fig. 13.4).
    prototypes(z, y, support): class means of the support embeddings and each query's nearest
        prototype (Fig. 13.20)."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading

TEST_FRACTION = 0.3
SPLIT_SEED = 0


def split(n: int, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(train indices, test indices) of a stratified seeded split."""
    idx = np.arange(n)
    train, test = train_test_split(idx, test_size=TEST_FRACTION, random_state=SPLIT_SEED,
                                   stratify=y)
    return np.sort(train), np.sort(test)


def draw_labelled(y: np.ndarray, pool: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    """`per_class` indices of each class from `pool`, seeded (fewer if a class has fewer)."""
    rng = np.random.default_rng(int(seed))
    chosen = [rng.permutation(pool[y[pool] == c])[:int(per_class)] for c in np.unique(y)]
    return np.concatenate(chosen)


def probe_accuracy(features: np.ndarray, y: np.ndarray, per_class: int, repeats: int = 5,
                   seed: int = 0) -> float:
    """Mean held-out accuracy of the module docstring's probe."""
    if int(per_class) < 1:
        raise ValueError("no labelled example: a classifier needs at least one per class")
    train, test = split(len(y), y)
    accs = []
    for r in range(int(repeats)):
        chosen = draw_labelled(y, train, per_class, seed * 1000 + r)
        scaler = StandardScaler().fit(features[train])
        clf = LogisticRegression(C=1.0, max_iter=500)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(scaler.transform(features[chosen]), y[chosen])
        accs.append(float((clf.predict(scaler.transform(features[test])) == y[test]).mean()))
    return float(np.mean(accs))


def spread_labels(x: np.ndarray, labelled: np.ndarray, y: np.ndarray, steps: int,
                  alpha: float = 0.9, neighbours: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(predicted (n,), confidence (n,)) after `steps` iterations of label spreading, from
    the labels y of the points where `labelled` (n,) is True (confidence 0: not reached)."""
    labelled = np.asarray(labelled, dtype=bool)
    if not labelled.any():
        raise ValueError("no point is labelled: there is nothing to spread")
    if labelled.all():
        raise ValueError("every point is labelled: there is nowhere to spread to")
    target = np.where(labelled, y, -1)
    model = LabelSpreading(kernel="knn", n_neighbors=min(int(neighbours), len(x) - 1),
                           alpha=float(alpha), max_iter=max(1, int(steps)), tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # stopped before convergence on purpose
        model.fit(x, target)
    dist = np.nan_to_num(model.label_distributions_)    # (n, classes)
    reached = dist.sum(1) > 0
    predicted = np.where(reached, model.classes_[dist.argmax(1)], -1)
    return predicted.astype(np.int64), np.where(reached, dist.max(1), 0.0)


def prototypes(z: np.ndarray, y: np.ndarray, support: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(classes (c,), prototypes (c, d): the mean of each class's support embeddings,
    nearest (n,): the class of each point's nearest prototype, Euclidean)."""
    classes = np.unique(y[support])
    protos = np.stack([z[support][y[support] == c].mean(0) for c in classes])   # (c, d)
    d2 = ((z[:, None, :] - protos[None]) ** 2).sum(-1)                           # (n, c)
    return classes, protos, classes[d2.argmin(1)]
