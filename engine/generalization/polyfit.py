"""Polynomial regression on a 1-D toy set, in closed form (no training): the textbook picture
of overfitting.

Data: n training inputs evenly spaced on [0, 1], labels y = sin(2πx) + noise·e, e ~ N(0, 1);
validation points at uniform random x with labels drawn the same way. A polynomial of degree M
is fit by least squares, w = argmin ‖V w − y‖², where V holds the Legendre polynomials
P_0 … P_M of 2x − 1 (the same polynomials as the monomials x^0 … x^M, far better conditioned).
With M + 1 ≥ n it interpolates the noisy labels: zero training error, wild in between.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial import legendre


def true_function(x: np.ndarray) -> np.ndarray:
    return np.sin(2 * np.pi * np.asarray(x, dtype=np.float64))


@dataclass(frozen=True)
class ToyRegression:
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    noise: float


def toy_regression(n_train: int, noise: float, seed: int, n_val: int = 50) -> ToyRegression:
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, int(n_train))
    y = true_function(x) + noise * rng.standard_normal(x.size)
    xv = np.sort(rng.uniform(0.0, 1.0, int(n_val)))
    yv = true_function(xv) + noise * rng.standard_normal(xv.size)
    return ToyRegression(x, y, xv, yv, float(noise))


def fit(x: np.ndarray, y: np.ndarray, degree: int) -> np.ndarray:
    """Legendre coefficients of the least-squares polynomial of `degree` (minimum norm when
    the degree exceeds n − 1)."""
    v = legendre.legvander(2 * np.asarray(x, dtype=np.float64) - 1, int(degree))
    return np.linalg.lstsq(v, y, rcond=None)[0]


def predict(coef: np.ndarray, x: np.ndarray) -> np.ndarray:
    return legendre.legval(2 * np.asarray(x, dtype=np.float64) - 1, coef)


@dataclass(frozen=True)
class DegreeSweep:
    degrees: np.ndarray      # 0 … max_degree
    train_mse: np.ndarray
    val_mse: np.ndarray


def degree_sweep(data: ToyRegression, max_degree: int) -> DegreeSweep:
    """Training and validation mean squared error of the fit of every degree 0 … max_degree."""
    degrees = np.arange(int(max_degree) + 1)
    coefs = [fit(data.x_train, data.y_train, d) for d in degrees]
    mse = lambda c, x, y: float(np.mean((predict(c, x) - y) ** 2))  # noqa: E731
    return DegreeSweep(degrees, np.array([mse(c, data.x_train, data.y_train) for c in coefs]),
                       np.array([mse(c, data.x_val, data.y_val) for c in coefs]))
