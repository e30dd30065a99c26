"""Double descent of random-features regression, in closed form (no training).

Data: x ~ N(0, I_dim), a linear teacher f(x) = beta^T x with beta ~ N(0, I / dim), labels
y = f(x) + noise * e, e ~ N(0, 1). Features: p random ReLUs
    phi(x) = relu(W x) / sqrt(p),   W (p, dim) ~ N(0, 1 / dim)
(width p uses the first p rows of one W, so the curve is over nested models).

Fit on n training points (Phi: n x p) by ridge regression
    a = argmin (1/n) ||Phi a - y||^2 + ridge ||a||^2 = V diag(s / (s^2 + n ridge)) U^T y
from the SVD Phi = U diag(s) V^T; ridge = 0 gives the minimum-norm least-squares solution
a = pinv(Phi) y (singular values below rcond * s_max dropped). Test error is the mean of
(phi(x)^T a - f(x))^2 over fresh test points (the excess risk: the label noise of the test
points is left out). As p passes n the training error reaches 0, the smallest singular
value of Phi goes to 0 at p = n and ||a|| and the test error peak there (Belkin et al. 2019);
a small ridge bounds 1 / s and removes the peak.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.device import make_generator, resolve_device, to_numpy

RCOND = 1e-7            # relative cutoff on singular values (eigenvalues of the Gram: RCOND^2)


@dataclass(frozen=True)
class FeatureProblem:
    phi_train: np.ndarray   # (trials, n_train, max_width) float64
    y_train: np.ndarray     # (trials, n_train) noisy labels
    phi_test: np.ndarray    # (trials, n_test, max_width)
    f_test: np.ndarray      # (trials, n_test) noiseless teacher values


@dataclass(frozen=True)
class DoubleDescentCurve:
    widths: np.ndarray       # (k,) number of random features p
    test_error: np.ndarray   # (k,) mean over trials of mean (phi^T a - f)^2 on test points
    train_error: np.ndarray  # (k,) mean over trials of mean (phi^T a - y)^2 on training points
    coef_norm: np.ndarray    # (k,) mean over trials of ||a||
    n_train: int
    ridge: float
    noise: float


def _problem_tensors(n_train: int, max_width: int, noise: float, dim: int, n_test: int,
                     trials: int, seed: int, device: torch.device):
    g = make_generator(seed, "cpu")
    opts = dict(generator=g, dtype=torch.float64)
    beta = torch.randn(trials, dim, 1, **opts) / dim ** 0.5
    w = torch.randn(trials, dim, max_width, **opts) / dim ** 0.5
    x = torch.randn(trials, n_train + n_test, dim, **opts)
    f = (x @ beta).squeeze(-1)
    y = f[:, :n_train] + noise * torch.randn(trials, n_train, **opts)
    phi = torch.relu(x @ w)          # scaled by 1/sqrt(p) per width
    to = lambda t: t.to(device)      # noqa: E731
    return to(phi[:, :n_train]), to(y), to(phi[:, n_train:]), to(f[:, n_train:])


def random_features_problem(n_train: int = 100, max_width: int = 1000, noise: float = 0.5,
                            dim: int = 10, n_test: int = 1000, trials: int = 1,
                            seed: int = 0) -> FeatureProblem:
    """The unscaled features relu(W x) and labels the curve is computed from (numpy)."""
    t = _problem_tensors(n_train, max_width, noise, dim, n_test, trials, seed, torch.device("cpu"))
    return FeatureProblem(*(to_numpy(a) for a in t))


def random_features_curve(n_train: int = 100, widths=None, noise: float = 0.5,
                          ridge: float = 0.0, seed: int = 0, dim: int = 10, n_test: int = 1000,
                          trials: int = 2, device: str | torch.device | None = "cpu") -> DoubleDescentCurve:
    """Test/train error and ||a|| of the ridge (ridge = 0: min-norm) fit for every width,
    batched over the trials (features stored transposed, (trials, width, points), so the
    first p features of every width are a contiguous slice)."""
    if n_train < 2 or dim < 1 or trials < 1 or n_test < 1:
        raise ValueError("need n_train >= 2, dim >= 1, trials >= 1, n_test >= 1")
    if ridge < 0 or noise < 0:
        raise ValueError("ridge and noise must be >= 0")
    widths = default_widths(n_train) if widths is None else np.asarray(widths, dtype=np.int64)
    if widths.size == 0 or widths.min() < 1:
        raise ValueError("widths must be >= 1")
    dev = resolve_device(device)
    phi, y, phi_te, f_te = _problem_tensors(int(n_train), int(widths.max()), float(noise), int(dim),
                                            int(n_test), int(trials), int(seed), dev)
    phi_t, phi_te_t = phi.transpose(-2, -1).contiguous(), phi_te.transpose(-2, -1).contiguous()
    test, train, norm = (np.empty(len(widths)) for _ in range(3))
    for i, p in enumerate(widths.tolist()):
        a = ridge_solve(phi_t[:, :p].transpose(-2, -1) * p ** -0.5, y, ridge)   # (trials, p, 1)
        a_raw = a.transpose(-2, -1) * p ** -0.5                                   # phi a = relu(Wx) a_raw
        test[i] = float(((a_raw @ phi_te_t[:, :p]).squeeze(-2) - f_te).pow(2).mean())
        train[i] = float(((a_raw @ phi_t[:, :p]).squeeze(-2) - y).pow(2).mean())
        norm[i] = float(a.norm(dim=(-2, -1)).mean())
    return DoubleDescentCurve(widths, test, train, norm, int(n_train), float(ridge), float(noise))


def ridge_solve(phi: torch.Tensor, y: torch.Tensor, ridge: float, rcond: float = RCOND) -> torch.Tensor:
    """a (..., p, 1) = V diag(s / (s^2 + n ridge)) U^T y for Phi (..., n, p) = U diag(s) V^T,
    y (..., n); with ridge = 0, singular values <= rcond * s_max are dropped (= pinv(Phi) y).
    Computed from the eigendecomposition of the smaller Gram matrix (s^2 its eigenvalues):
    p <= n: a = V diag(1 / (s^2 + n ridge)) V^T Phi^T y with Phi^T Phi = V diag(s^2) V^T;
    p > n:  a = Phi^T U diag(1 / (s^2 + n ridge)) U^T y with Phi Phi^T = U diag(s^2) U^T."""
    n, p = phi.shape[-2], phi.shape[-1]
    pt = phi.transpose(-2, -1)
    gram = pt @ phi if p <= n else phi @ pt
    s2, vec = torch.linalg.eigh(gram)
    if ridge > 0:
        inv = 1.0 / (s2 + n * ridge)
    else:
        keep = s2 > (rcond ** 2) * s2.amax(-1, keepdim=True)
        inv = torch.where(keep, 1.0 / torch.where(keep, s2, torch.ones_like(s2)), torch.zeros_like(s2))
    if p <= n:
        rhs = pt @ y[..., None]
        return vec @ ((vec.transpose(-2, -1) @ rhs) * inv[..., None])
    return pt @ (vec @ ((vec.transpose(-2, -1) @ y[..., None]) * inv[..., None]))


def default_widths(n_train: int, count: int = 40, top: float = 10.0) -> np.ndarray:
    """At least `count` distinct integer widths from 1 to top * n_train, log-spaced, with
    n_train itself and its neighbours n_train +- 1 included (the peak sits there)."""
    extra = np.array([n_train - 1, n_train, n_train + 1], dtype=np.int64)
    k = count
    while True:
        grid = np.round(np.geomspace(1, top * n_train, k)).astype(np.int64)
        widths = np.unique(np.concatenate([grid, extra[extra >= 1]]))
        if len(widths) >= count or k > 4 * count:
            return widths
        k += 1


def peak_width(curve: DoubleDescentCurve) -> int:
    """The width with the largest test error."""
    return int(curve.widths[int(np.argmax(curve.test_error))])


def peak_ratio(curve: DoubleDescentCurve) -> float:
    """test error at the width nearest n_train / the best test error with at most n_train / 2
    features: >> 1 when the curve peaks at the interpolation threshold, <= 1 when adding
    features up to p = n did not hurt."""
    w, e, n = curve.widths, curve.test_error, curve.n_train
    at_n = e[int(np.argmin(np.abs(w - n)))]
    below = e[w <= n / 2]
    return float(at_n / (below.min() if below.size else e.min()))
