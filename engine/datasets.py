"""Data: seeded 2-D toy generators in a registry, and the data that ships with scikit-learn.

Every 2-D generator has the signature  gen(n, seed=0, noise=..., **params) -> ToyData
and is reachable by name through DATASETS (widget options come from its keys).
Mixtures expose their `centers` (k, 2) and component `std` so pages can count covered
modes or compute exact densities.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.device import numpy_rng


@dataclass(frozen=True)
class ToyData:
    points: np.ndarray                # (n, 2) float32
    labels: np.ndarray                # (n,) int64: mixture component / class / arm
    centers: np.ndarray | None = None  # (k, 2) mixture means, when it is a mixture
    std: float | None = None           # isotropic std of each mixture component
    weights: np.ndarray | None = None  # (k,) mixture weights, when it is a mixture


def gaussian_mixture(centers: np.ndarray, n: int, std: float, seed: int,
             weights: np.ndarray | None = None) -> ToyData:
    """x = centers[c] + std * e, c ~ Categorical(weights), e ~ N(0, I)."""
    rng = numpy_rng(seed)
    k = len(centers)
    w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, float) / np.sum(weights)
    labels = rng.choice(k, size=n, p=w)
    pts = centers[labels] + std * rng.standard_normal((n, 2))
    return ToyData(pts.astype(np.float32), labels.astype(np.int64),
                   centers.astype(np.float32), float(std), w)


def ring(n: int = 1000, seed: int = 0, noise: float = 0.05, k: int = 8,
         radius: float = 2.0) -> ToyData:
    """k Gaussians N(r (cos 2πj/k, sin 2πj/k), noise² I), equal weights."""
    if k < 1:
        raise ValueError("ring needs k >= 1 modes")
    angle = 2 * np.pi * np.arange(k) / k
    centers = radius * np.stack([np.cos(angle), np.sin(angle)], 1)
    return gaussian_mixture(centers, n, noise, seed)


def grid(n: int = 1000, seed: int = 0, noise: float = 0.05, k: int = 5,
         spacing: float = 1.0) -> ToyData:
    """k×k Gaussians on a regular grid centred at 0, spacing apart, equal weights."""
    if k < 1:
        raise ValueError("grid needs k >= 1")
    ticks = (np.arange(k) - (k - 1) / 2) * spacing
    centers = np.stack(np.meshgrid(ticks, ticks), -1).reshape(-1, 2)
    return gaussian_mixture(centers, n, noise, seed)


def two_moons(n: int = 1000, seed: int = 0, noise: float = 0.05) -> ToyData:
    """Two interleaved half circles (as scikit-learn's make_moons), plus N(0, noise²)."""
    rng = numpy_rng(seed)
    labels = rng.integers(0, 2, n)
    t = rng.uniform(0, np.pi, n)
    upper = np.stack([np.cos(t), np.sin(t)], 1)
    lower = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], 1)
    pts = np.where(labels[:, None] == 0, upper, lower) + noise * rng.standard_normal((n, 2))
    return ToyData(pts.astype(np.float32), labels.astype(np.int64))


def spiral(n: int = 1000, seed: int = 0, noise: float = 0.05, arms: int = 2,
           turns: float = 1.5) -> ToyData:
    """`arms` interleaved Archimedean spirals r = t, angle = 2π·turns·t + 2πa/arms,
    t ~ U(0.1, 1) (radius up to 1 then scaled by 2), plus N(0, noise²)."""
    rng = numpy_rng(seed)
    labels = rng.integers(0, arms, n)
    t = rng.uniform(0.1, 1.0, n)
    angle = 2 * np.pi * turns * t + 2 * np.pi * labels / arms
    pts = 2 * t[:, None] * np.stack([np.cos(angle), np.sin(angle)], 1)
    pts += noise * rng.standard_normal((n, 2))
    return ToyData(pts.astype(np.float32), labels.astype(np.int64))


def swiss_roll(n: int = 1000, seed: int = 0, noise: float = 0.05) -> ToyData:
    """2-D Swiss roll: t ~ U(1.5π, 4.5π), x = (t cos t, t sin t) / 5 plus N(0, noise²);
    labels are 4 bins of t (position along the roll)."""
    rng = numpy_rng(seed)
    t = rng.uniform(1.5 * np.pi, 4.5 * np.pi, n)
    pts = np.stack([t * np.cos(t), t * np.sin(t)], 1) / 5 + noise * rng.standard_normal((n, 2))
    labels = np.minimum(((t - 1.5 * np.pi) / (3 * np.pi) * 4).astype(np.int64), 3)
    return ToyData(pts.astype(np.float32), labels)


def circles(n: int = 1000, seed: int = 0, noise: float = 0.05, factor: float = 0.5) -> ToyData:
    """Two concentric circles of radius 1 (label 0) and `factor` (label 1), plus noise."""
    rng = numpy_rng(seed)
    labels = rng.integers(0, 2, n)
    angle = rng.uniform(0, 2 * np.pi, n)
    r = np.where(labels == 0, 1.0, factor)
    pts = r[:, None] * np.stack([np.cos(angle), np.sin(angle)], 1)
    pts += noise * rng.standard_normal((n, 2))
    return ToyData(pts.astype(np.float32), labels.astype(np.int64))


DATASETS: dict[str, Callable[..., ToyData]] = {
    "ring": ring,
    "grid": grid,
    "two_moons": two_moons,
    "spiral": spiral,
    "swiss_roll": swiss_roll,
    "circles": circles,
}


def make_dataset(name: str, n: int = 1000, seed: int = 0, **params) -> ToyData:
    """DATASETS[name](n, seed, **params) with a clear error for an unknown name."""
    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; choose one of {sorted(DATASETS)}")
    if n < 1:
        raise ValueError("n must be >= 1")
    return DATASETS[name](n=int(n), seed=int(seed), **params)


# --------------------------------------------------------------------------------------
# User points: one validator for every page that takes a CSV of 2-D points.
# --------------------------------------------------------------------------------------

MIN_USER_POINTS = 10
MAX_ABS_VALUE = 1e6        # larger coordinates would swamp float32 training (and any plot)


def parse_points_csv(data: bytes | str, max_rows: int = 50_000, label_column: bool = False,
                     num_classes: int = 10, min_rows: int = MIN_USER_POINTS) -> ToyData:
    """User points from CSV text or bytes: columns x, y (and with `label_column` an optional
    third column of integer classes 0..num_classes−1), separated by ',', ';' or tabs; one
    header row is optional (a first row with a non-number in it). Returns ToyData with
    float32 points (n, 2) and int64 labels (zeros without a label column).

    Raises ValueError with a message a user can act on: empty file, a non-number (with its
    row and column), rows of different lengths, the wrong number of columns, fewer than
    `min_rows` or more than `max_rows` rows, NaN or infinite values, |value| > MAX_ABS_VALUE,
    class labels that are not integers in range."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
    rows = [line.replace(";", ",").replace("\t", ",").split(",")
            for line in text.lstrip("\ufeff").splitlines() if line.strip()]
    if not rows:
        raise ValueError("the file is empty")
    first = 1
    try:
        [float(v) for v in rows[0]]
        first = 0
    except ValueError:
        pass                                              # a header row: skip it
    rows = rows[first:]
    widths = (2, 3) if label_column else (2,)
    expected = ("2 columns (x, y) or 3 (x, y, class)" if label_column
                else "2 columns (x, y)")
    if len(rows) < min_rows:
        raise ValueError(f"need at least {min_rows} rows of x,y values, got {len(rows)}")
    if len(rows) > max_rows:
        raise ValueError(f"at most {max_rows:,} rows are allowed, got {len(rows):,}")
    width = len(rows[0])
    if width not in widths:
        raise ValueError(f"each row needs {expected}; the first has {width} "
                         f"column{'s' if width != 1 else ''}")
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"row {i + 1 + first} has {len(r)} columns; expected {width}")
    try:
        table = np.array([[float(v) for v in r] for r in rows], dtype=np.float64)
    except ValueError:
        i, j, v = next((i, j, v) for i, r in enumerate(rows) for j, v in enumerate(r)
                       if not _is_number(v))
        raise ValueError(f"row {i + 1 + first}, column {j + 1}: {v.strip()!r} is not a "
                         f"number") from None
    bad = ~np.isfinite(table)
    if bad.any():
        i = int(np.argwhere(bad)[0, 0])
        raise ValueError(f"row {i + 1 + first} holds NaN or infinite values")
    big = np.abs(table[:, :2]) > MAX_ABS_VALUE
    if big.any():
        i = int(np.argwhere(big)[0, 0])
        raise ValueError(f"row {i + 1 + first}: coordinates must lie within ±{MAX_ABS_VALUE:g}")
    labels = np.zeros(len(table), np.int64)
    if width == 3:
        lab = table[:, 2]
        if (lab != np.round(lab)).any() or lab.min() < 0 or lab.max() > num_classes - 1:
            raise ValueError(f"the class column must hold integers 0..{num_classes - 1}")
        labels = lab.astype(np.int64)
    return ToyData(table[:, :2].astype(np.float32), labels)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------------------
# Data bundled with scikit-learn (no downloads).
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Digits:
    images: np.ndarray   # (n, 8, 8) float32 in [0, 1]
    labels: np.ndarray   # (n,) int64 in 0..9


def load_digits() -> Digits:
    """scikit-learn's bundled 8x8 digits (1797 images), pixel values 0..16 scaled to [0, 1]."""
    from sklearn.datasets import load_digits as _load
    bunch = _load()
    return Digits((bunch.images / 16.0).astype(np.float32), bunch.target.astype(np.int64))


def digits_split(test_fraction: float = 0.2, seed: int = 0) -> tuple[Digits, Digits]:
    """A seeded train/test split of the digits (a permutation, then a cut)."""
    d = load_digits()
    perm = numpy_rng(seed).permutation(len(d.labels))
    n_test = int(round(test_fraction * len(perm)))
    te, tr = perm[:n_test], perm[n_test:]
    return Digits(d.images[tr], d.labels[tr]), Digits(d.images[te], d.labels[te])


SAMPLE_PHOTOS = ("china", "flower")


def sample_photo(name: str = "china", grayscale: bool = False) -> np.ndarray:
    """One of scikit-learn's two bundled photos (427x640 RGB) as float32 in [0, 1]:
    (H, W, 3), or (H, W) with grayscale=True (ITU-R 601 luma 0.299 R + 0.587 G + 0.114 B)."""
    if name not in SAMPLE_PHOTOS:
        raise KeyError(f"unknown photo {name!r}; choose one of {SAMPLE_PHOTOS}")
    from sklearn.datasets import load_sample_image
    img = load_sample_image(f"{name}.jpg").astype(np.float32) / 255.0
    if grayscale:
        img = img @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return img
