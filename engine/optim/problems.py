"""The 2-D problems the optimizers run on (engine.optim): landscapes f(x) with gradient,
Hessian and minimizer, the registry LANDSCAPES, make_landscape, and f on a grid for contour
plots. Quadratic: f(x) = 1/2 (x - x*)^T A (x - x*),  A = R(angle) diag(l1, l2) R(angle)^T.

The array helpers let the same code run on numpy arrays and torch tensors (the two backends
of engine.optim)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

DIVERGENCE_RADIUS = 1e6
DTYPE = torch.float64


# --------------------------------------------------------------------------------------
# Array helpers: the same code runs on numpy arrays and torch tensors
# --------------------------------------------------------------------------------------

def _xp(x):
    return torch if isinstance(x, torch.Tensor) else np


def _like(value: np.ndarray, x):
    """`value` (numpy) as an array of x's kind (numpy, or a float64 tensor on x's device)."""
    if isinstance(x, torch.Tensor):
        return torch.tensor(np.asarray(value), dtype=x.dtype, device=x.device)
    return value


def _as_array(x) -> np.ndarray | torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    return np.asarray(x, dtype=np.float64)


# --------------------------------------------------------------------------------------
# Landscapes
# --------------------------------------------------------------------------------------

class Landscape:
    """A smooth f: R^2 -> R with value(x), grad(x), hessian(x); x may be a batch (..., 2)
    (numpy array or torch tensor). Attributes: name, minimizer (the global one), f_star,
    xlim / ylim (a view box), default_start."""

    name: str = "landscape"
    minimizer: np.ndarray
    f_star: float
    xlim: tuple[float, float] = (-3.0, 3.0)
    ylim: tuple[float, float] = (-3.0, 3.0)
    default_start: tuple[float, float] = (-2.0, 2.0)

    def value(self, x):
        raise NotImplementedError

    def grad(self, x):
        raise NotImplementedError

    def hessian(self, x):
        raise NotImplementedError

    @property
    def is_quadratic(self) -> bool:
        return False

    def curvature(self) -> tuple[np.ndarray, np.ndarray]:
        """(eigenvalues ascending, eigenvectors as columns) of the Hessian at the minimizer:
        the local quadratic model that sets the usable learning rates."""
        h = np.asarray(self.hessian(np.asarray(self.minimizer, dtype=np.float64)))
        vals, vecs = np.linalg.eigh(h)
        return vals, vecs


def rotation(angle_deg: float) -> np.ndarray:
    """R(angle) = [[cos, -sin], [sin, cos]]."""
    a = math.radians(angle_deg)
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


@dataclass(frozen=True, eq=False)
class Quadratic(Landscape):
    """f(x) = 1/2 (x - x_star)^T A (x - x_star), grad = A (x - x_star), hessian = A.
    A = R(angle_deg) diag(eigenvalues) R(angle_deg)^T; eigenvalues may be negative (saddle).
    f_star = 0 at x_star (for a saddle x_star is the stationary point, not a minimum)."""

    A: np.ndarray
    x_star: np.ndarray
    eigenvalues: tuple[float, float]
    angle_deg: float = 0.0
    name: str = "quadratic"
    xlim: tuple[float, float] = (-3.0, 3.0)
    ylim: tuple[float, float] = (-3.0, 3.0)
    default_start: tuple[float, float] = (-2.5, 1.5)

    @classmethod
    def from_spectrum(cls, eigenvalues: Sequence[float] = (1.0, 10.0), angle_deg: float = 0.0,
                      minimizer: Sequence[float] = (0.0, 0.0)) -> "Quadratic":
        lam = tuple(float(v) for v in eigenvalues)
        if len(lam) != 2 or not all(math.isfinite(v) for v in lam):
            raise ValueError(f"need two finite eigenvalues, got {eigenvalues!r}")
        r = rotation(angle_deg)
        a = r @ np.diag(lam) @ r.T
        return cls(A=0.5 * (a + a.T), x_star=np.asarray(minimizer, dtype=np.float64),
                   eigenvalues=lam, angle_deg=float(angle_deg))

    @property
    def minimizer(self) -> np.ndarray:
        return self.x_star

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def is_quadratic(self) -> bool:
        return True

    @property
    def eigenvectors(self) -> np.ndarray:
        """Columns: the eigenvectors of A for eigenvalues[0], eigenvalues[1] (R's columns)."""
        return rotation(self.angle_deg)

    def value(self, x):
        x = _as_array(x)
        d = x - _like(self.x_star, x)
        return 0.5 * ((d @ _like(self.A, x)) * d).sum(-1)

    def grad(self, x):
        x = _as_array(x)
        return (x - _like(self.x_star, x)) @ _like(self.A, x)   # A symmetric

    def hessian(self, x=None):
        if x is None:
            return self.A.copy()
        x = _as_array(x)
        h = _like(self.A, x)
        return h.expand(*x.shape[:-1], 2, 2) if isinstance(h, torch.Tensor) else \
            np.broadcast_to(h, (*x.shape[:-1], 2, 2))


def _hess(xp, fxx, fxy, fyy):
    row0 = xp.stack([fxx, fxy], -1)
    row1 = xp.stack([fxy, fyy], -1)
    return xp.stack([row0, row1], -2)


class Rosenbrock(Landscape):
    """f = (a - x)^2 + b (y - x^2)^2, a = 1, b = 100: minimum (1, 1), f* = 0, in a curved
    valley whose curvature across (~2b) is ~500x the curvature along it."""

    name = "rosenbrock"
    xlim, ylim = (-2.0, 2.0), (-1.0, 3.0)
    default_start = (-1.5, 2.0)

    def __init__(self, a: float = 1.0, b: float = 100.0):
        self.a, self.b = float(a), float(b)
        self.minimizer = np.array([self.a, self.a ** 2])
        self.f_star = 0.0

    def value(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return (self.a - u) ** 2 + self.b * (v - u * u) ** 2

    def grad(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        r = v - u * u
        return _xp(x).stack([-2 * (self.a - u) - 4 * self.b * u * r, 2 * self.b * r], -1)

    def hessian(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        xp = _xp(x)
        return _hess(xp, 2 - 4 * self.b * v + 12 * self.b * u * u, -4 * self.b * u,
                     2 * self.b + 0 * u)


class QuarticSaddle(Landscape):
    """f = 1/2 x^2 - 1/2 y^2 + 1/4 y^4: a saddle at the origin (Hessian diag(1, -1)) between
    two minima (0, +-1) with f* = -1/4. On the line y = 0 the gradient has no y-part, so GD
    started there converges to the saddle; any noise pushes it off."""

    name = "saddle"
    xlim, ylim = (-2.5, 2.5), (-2.0, 2.0)
    default_start = (2.0, 0.0)

    def __init__(self):
        self.minimizer = np.array([0.0, 1.0])
        self.f_star = -0.25

    def value(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return 0.5 * u * u - 0.5 * v * v + 0.25 * v ** 4

    def grad(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return _xp(x).stack([u, -v + v ** 3], -1)

    def hessian(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return _hess(_xp(x), 1 + 0 * u, 0 * u, -1 + 3 * v * v)


class TwoMinima(Landscape):
    """f = (x^2 - 1)^2 + tilt x + y^2: a deep minimum near x = -1 and a shallower local one
    near x = +1 (tilt = 0.3). f* is the global minimum, found from the roots of
    df/dx = 4x^3 - 4x + tilt = 0."""

    name = "two_minima"
    xlim, ylim = (-2.0, 2.0), (-2.0, 2.0)
    default_start = (0.3, 1.5)

    def __init__(self, tilt: float = 0.3):
        self.tilt = float(tilt)
        roots = np.roots([4.0, 0.0, -4.0, self.tilt])
        roots = roots[np.abs(roots.imag) < 1e-9].real
        f = (roots ** 2 - 1) ** 2 + self.tilt * roots
        best = roots[np.argmin(f)]
        self.minimizer = np.array([best, 0.0])
        self.f_star = float(f.min())

    def value(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return (u * u - 1) ** 2 + self.tilt * u + v * v

    def grad(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return _xp(x).stack([4 * u * (u * u - 1) + self.tilt, 2 * v], -1)

    def hessian(self, x):
        x = _as_array(x)
        u, v = x[..., 0], x[..., 1]
        return _hess(_xp(x), 12 * u * u - 4, 0 * u, 2 + 0 * v)


LANDSCAPES: dict[str, Callable[[], Landscape]] = {
    "rosenbrock": Rosenbrock,
    "saddle": QuarticSaddle,
    "two_minima": TwoMinima,
}


@dataclass(frozen=True)
class Grid:
    gx: np.ndarray       # (nx,)
    gy: np.ndarray       # (ny,)
    values: np.ndarray   # (ny, nx) f on the grid, [iy, ix]


def landscape_grid(problem: Landscape, xlim=None, ylim=None, res: int = 80) -> Grid:
    """f on a res x res grid over the view box (for contour plots), one vectorized call."""
    xlim = problem.xlim if xlim is None else xlim
    ylim = problem.ylim if ylim is None else ylim
    gx, gy = np.linspace(*xlim, res), np.linspace(*ylim, res)
    xx, yy = np.meshgrid(gx, gy)
    return Grid(gx, gy, np.asarray(problem.value(np.stack([xx, yy], -1))))


def make_landscape(name: str, eigenvalues=(0.05, 1.0), angle_deg: float = 0.0) -> Landscape:
    """"quadratic" (from eigenvalues and angle) or a LANDSCAPES entry."""
    if name == "quadratic":
        return Quadratic.from_spectrum(eigenvalues, angle_deg)
    if name not in LANDSCAPES:
        raise ValueError(f"unknown landscape {name!r}; choose from quadratic, "
                         f"{', '.join(LANDSCAPES)}")
    return LANDSCAPES[name]()
