"""Gradient descent and its relatives on 2-D landscapes: quadratics, Rosenbrock, a saddle,
two minima. Pure NumPy/PyTorch, float64 throughout (log-error plots stay straight to 1e-15).

Quadratic: f(x) = 1/2 (x - x*)^T A (x - x*),  A = R(angle) diag(l1, l2) R(angle)^T.
In eigen-coordinates z = V^T (x - x*) every direction evolves on its own; GD gives
z_i <- (1 - lr l_i) z_i, so GD converges iff 0 < lr < 2 / l_max, with rate
gd_rate = max_i |1 - lr l_i|, best lr = 2 / (l_min + l_max), rate (k - 1)/(k + 1), k = l_max/l_min.

Optimizers (registry OPTIMIZERS). g = grad f(x) + grad_noise * xi, xi ~ N(0, I) seeded.
Seven of them are one update with different coefficients (the "moment" family):

    m <- b1 m + c1 g                 first moment (momentum buffer)
    s <- b2 s + c2 g^2               second moment (per coordinate)
    s_hat <- max(ams * s_hat, s)     AMSGrad keeps the running max (ams = 1), others s_hat = s
    p1 <- r1 p1,  p2 <- r2 p2        bias-correction powers (p = beta^k for Adam, 0 otherwise)
    x <- x - lr (ng g + nm m / (1 - p1)) / (sqrt(s_hat / (1 - p2)) + eps)

    method    b1    c1      b2    c2      r1   r2   ng  nm    eps
    gd        0     1       0     0       0    0    1   0     1  (denominator = 1)
    momentum  beta  1       0     0       0    0    0   1     1  (heavy ball, torch SGD)
    nesterov  beta  1       0     0       0    0    1   beta  1  (torch SGD nesterov=True)
    adagrad   0     1       1     1       0    0    0   1     eps
    rmsprop   0     1       alpha 1-alpha 0    0    0   1     eps
    adam      b1    1-b1    b2    1-b2    b1   b2   0   1     eps
    amsgrad   as adam, ams = 1

Every rule matches torch.optim (SGD, Adagrad, RMSprop, Adam(amsgrad)) step for step, with
eps added after the square root as PyTorch does. Defaults follow the papers, not PyTorch where
they differ: RMSProp alpha = 0.9 (Hinton's lecture; PyTorch uses 0.99), eps = 1e-8.
The other two: Newton x <- x - lr H(x)^{-1} g, and Rprop (PyTorch's rule: per-coordinate step
size x1.2 when the gradient sign repeats, x0.5 when it flips, clipped to [1e-6, 50]; a flipped
coordinate does not move that step).

Divergence is a result: the run stops at the first step where |x| > 1e6 or f(x) is not
finite, and `diverged_at` says which.

Backends: device=None runs on NumPy (fastest for a handful of 2-D runs: a step is a few
microseconds); a torch device name ("cpu", "cuda", "mps") runs the same code on torch tensors
(big batches such as the rate map). Noise comes from one seeded NumPy stream, shared by every
run of a call (common random numbers: a fair race), so both backends see the same noise.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import torch

from engine.device import numpy_rng, resolve_device

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


# --------------------------------------------------------------------------------------
# Optimizers: registry of update rules
# --------------------------------------------------------------------------------------

def _moment(b1=0.0, c1=1.0, b2=0.0, c2=0.0, r1=0.0, r2=0.0, ng=0.0, nm=1.0, eps=1.0, ams=0.0):
    return dict(b1=b1, c1=c1, b2=b2, c2=c2, r1=r1, r2=r2, ng=ng, nm=nm, eps=eps, ams=ams)


@dataclass(frozen=True)
class Optimizer:
    name: str
    family: str                        # "moment" | "newton" | "rprop": which kernel runs it
    defaults: Mapping[str, float]      # hyperparameters and their default values (lr included)
    coefficients: Callable[..., dict]  # hyperparameters (without lr) -> kernel coefficients
    label: str = ""
    formula: str = ""                  # LaTeX of the update


OPTIMIZERS: dict[str, Optimizer] = {o.name: o for o in (
    Optimizer("gd", "moment", {"lr": 0.1}, lambda: _moment(ng=1.0, nm=0.0),
              "GD", r"x \leftarrow x - \eta g"),
    Optimizer("momentum", "moment", {"lr": 0.1, "beta": 0.9},
              lambda beta: _moment(b1=beta), "Momentum",
              r"v \leftarrow \beta v + g,\; x \leftarrow x - \eta v"),
    Optimizer("nesterov", "moment", {"lr": 0.1, "beta": 0.9},
              lambda beta: _moment(b1=beta, ng=1.0, nm=beta), "Nesterov",
              r"v \leftarrow \beta v + g,\; x \leftarrow x - \eta (g + \beta v)"),
    Optimizer("adagrad", "moment", {"lr": 0.01, "eps": 1e-10},
              lambda eps: _moment(b2=1.0, c2=1.0, eps=eps), "AdaGrad",
              r"s \leftarrow s + g^2,\; x \leftarrow x - \eta\, g / (\sqrt{s} + \epsilon)"),
    Optimizer("rmsprop", "moment", {"lr": 0.001, "alpha": 0.9, "eps": 1e-8},
              lambda alpha, eps: _moment(b2=alpha, c2=1.0 - alpha, eps=eps), "RMSProp",
              r"s \leftarrow \alpha s + (1-\alpha) g^2,\; x \leftarrow x - \eta\, g / (\sqrt{s} + \epsilon)"),
    Optimizer("adam", "moment", {"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8},
              lambda beta1, beta2, eps: _moment(b1=beta1, c1=1.0 - beta1, b2=beta2,
                                                c2=1.0 - beta2, r1=beta1, r2=beta2, eps=eps),
              "Adam", r"x \leftarrow x - \eta\, \hat m / (\sqrt{\hat v} + \epsilon)"),
    Optimizer("amsgrad", "moment", {"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8},
              lambda beta1, beta2, eps: _moment(b1=beta1, c1=1.0 - beta1, b2=beta2,
                                                c2=1.0 - beta2, r1=beta1, r2=beta2, eps=eps,
                                                ams=1.0),
              "AMSGrad", r"\hat v \leftarrow \max(\hat v, v)"),
    Optimizer("newton", "newton", {"lr": 1.0}, lambda: {}, "Newton",
              r"x \leftarrow x - \eta H^{-1} g"),
    Optimizer("rprop", "rprop", {"lr": 0.01, "eta_minus": 0.5, "eta_plus": 1.2,
                                 "step_min": 1e-6, "step_max": 50.0},
              lambda eta_minus, eta_plus, step_min, step_max: dict(
                  eta_minus=eta_minus, eta_plus=eta_plus, step_min=step_min,
                  step_max=step_max), "Rprop",
              r"\Delta \leftarrow \Delta \cdot (1.2 \text{ or } 0.5),\; x \leftarrow x - \Delta\,\mathrm{sign}(g)"),
)}


def resolve_hyper(method: str, lr: float | None = None, **hyper) -> dict[str, float]:
    """The full hyperparameter dict of `method`: its defaults overridden by lr / hyper.
    Unknown names raise ValueError (a typo must not silently do nothing)."""
    if method not in OPTIMIZERS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(OPTIMIZERS)}")
    opt = OPTIMIZERS[method]
    unknown = set(hyper) - set(opt.defaults)
    if unknown:
        raise ValueError(f"{method} has no hyperparameter {', '.join(sorted(unknown))} "
                         f"(it has {', '.join(opt.defaults)})")
    out = dict(opt.defaults)
    out.update({k: v for k, v in hyper.items() if v is not None})
    if lr is not None:
        out["lr"] = lr
    return out


# --------------------------------------------------------------------------------------
# Kernels: one batched loop per family, in "coordinates first" layout: x (2, B), coefficient
# rows (1, B), noise (steps, 2, 1), so every array operation runs over the long batch axis
# (NumPy is ~5x slower on a (B, 2) array broadcast against (B, 1)). _run_kernel converts.
# They return record(x_k) stacked over k = 0..steps (default: the points, (steps + 1, B, 2)).
# --------------------------------------------------------------------------------------

def _gradient_fn(problem: Landscape, x_like):
    """grad for x in (2, B) layout, as a fast closure for the loop. Quadratics:
    A (x - x*) = A[:, 0] x_1 + A[:, 1] x_2 - A x* (elementwise: faster than a matmul)."""
    if not problem.is_quadratic:
        return lambda x: problem.grad(x.T).T
    a, xs = _like(problem.A, x_like), _like(problem.x_star, x_like)
    a0, a1, shift = a[:, :1], a[:, 1:], (a @ xs)[:, None]
    if x_like.shape[-1] <= 64:                    # few runs: fewer calls win
        return lambda x: a @ x - shift
    return lambda x: a0 * x[0] + a1 * x[1] - shift


def _points(x):
    return x.T


def _run_loop(x0, steps, noise, update, record=_points, check_every: int = 64):
    """x_{k+1} = update(x_k, noise_k, k + 1); returns record(x_k) for k = 0..steps stacked
    (default: the points, (steps + 1, B, 2)). Stops early (rest NaN) once every run is beyond
    DIVERGENCE_RADIUS or non-finite."""
    xp = _xp(x0)
    first = record(x0)
    if xp is np:
        out = np.zeros((steps + 1, *first.shape), dtype=first.dtype)
    else:
        out = torch.zeros((steps + 1, *first.shape), dtype=first.dtype, device=first.device)
    out[0] = first
    x = x0
    with np.errstate(all="ignore"):
        for k in range(steps):
            x = update(x, None if noise is None else noise[k], k + 1)
            out[k + 1] = record(x)
            if (k + 1) % check_every == 0 and _all_bad(x):
                out[k + 2:] = float("nan")
                break
    return out


def _all_bad(x) -> bool:
    xp = _xp(x)
    ok = xp.isfinite(x).all(0) & ((x * x).sum(0) <= DIVERGENCE_RADIUS ** 2)
    return not bool(ok.any())


def _all_equal(v, value: float) -> bool:
    return bool((v == value).all())


def _moment_kernel(problem, x0, steps, coef, noise, record=_points):
    """The moment family (module docstring). Terms whose coefficients vanish for every run of
    the batch are skipped (plain GD costs 4 array operations per step, Adam ~20)."""
    xp = _xp(x0)
    grad = _gradient_fn(problem, x0)
    c = coef
    adaptive = not _all_equal(c["c2"], 0)
    use_m = not _all_equal(c["nm"], 0)
    use_g = not _all_equal(c["ng"], 0)
    unit_c1, unit_nm, unit_ng = (_all_equal(c[k], 1) for k in ("c1", "nm", "ng"))
    ams = not _all_equal(c["ams"], 0)
    # bias corrections as tables over k (p = r^k is known in advance), nm folded into the first:
    # scale1[k] = nm / (1 - r1^k), scale2[k] = 1 / (1 - r2^k), k = 1..steps
    k = np.arange(1, steps + 1, dtype=np.float64).reshape(-1, 1, 1)
    r1, r2, nm = (np.asarray(c[n].cpu() if isinstance(c[n], torch.Tensor) else c[n])
                  for n in ("r1", "r2", "nm"))
    bias1 = not (_all_equal(r1, 0) and unit_nm)
    with np.errstate(all="ignore"):
        scale1 = _like(nm / (1.0 - r1 ** k), x0) if bias1 and use_m else None
        scale2 = _like(1.0 / (1.0 - r2 ** k), x0) if adaptive else None
    m = xp.zeros_like(x0)          # first moment
    s = xp.zeros_like(x0)          # second moment
    s_hat = xp.zeros_like(x0)      # AMSGrad's running max (= s for the others)

    def update(x, xi, k):
        nonlocal m, s, s_hat
        g = grad(x)
        if xi is not None:
            g = g + xi
        direction = None
        if use_m:
            m = c["b1"] * m + (g if unit_c1 else c["c1"] * g)
            direction = m * scale1[k - 1] if bias1 else m
        if use_g:
            term = g if unit_ng else c["ng"] * g
            direction = term if direction is None else direction + term
        if adaptive:   # rows without a second moment have s = 0, eps = 1: denominator 1
            s = c["b2"] * s + c["c2"] * (g * g)
            s_hat = xp.maximum(c["ams"] * s_hat, s) if ams else s
            direction = direction / (xp.sqrt(s_hat * scale2[k - 1]) + c["eps"])
        return x - c["lr"] * direction

    return _run_loop(x0, steps, noise, update, record)


def _inverse_2x2(h):
    """Batched closed-form inverse of (..., 2, 2): [[d, -b], [-c, a]] / (ad - bc);
    a singular H gives inf/nan, which the divergence check reports."""
    a, b, c, d = h[..., 0, 0], h[..., 0, 1], h[..., 1, 0], h[..., 1, 1]
    det = a * d - b * c
    xp = _xp(h)
    row0 = xp.stack([d / det, -b / det], -1)
    row1 = xp.stack([-c / det, a / det], -1)
    return xp.stack([row0, row1], -2)


def _newton_kernel(problem, x0, steps, coef, noise, record=_points):
    grad = _gradient_fn(problem, x0)
    lr = coef["lr"]
    if problem.is_quadratic:
        h_inv = _inverse_2x2(_like(problem.A, x0))

        def direction(x, g):
            return h_inv @ g
    else:
        def direction(x, g):
            return (_inverse_2x2(problem.hessian(x.T)) @ g.T[..., None])[..., 0].T

    def update(x, xi, k):
        g = grad(x)
        if xi is not None:
            g = g + xi
        return x - lr * direction(x, g)

    return _run_loop(x0, steps, noise, update, record)


def _rprop_kernel(problem, x0, steps, coef, noise, record=_points):
    xp = _xp(x0)
    grad = _gradient_fn(problem, x0)
    c = coef
    step_size = xp.zeros_like(x0) + c["lr"]
    prev = xp.zeros_like(x0)
    eta_plus, eta_minus = c["eta_plus"], c["eta_minus"]
    one = 1.0 + 0.0 * eta_plus

    def update(x, xi, k):
        nonlocal step_size, prev
        g = grad(x)
        if xi is not None:
            g = g + xi
        prod = g * prev
        flipped = prod < 0
        factor = xp.where(prod > 0, eta_plus, xp.where(flipped, eta_minus, one))
        step_size = xp.clip(step_size * factor, c["step_min"], c["step_max"])
        g = xp.where(flipped, 0.0, g)
        prev = g
        return x - xp.sign(g) * step_size

    return _run_loop(x0, steps, noise, update, record)


KERNELS = {"moment": _moment_kernel, "newton": _newton_kernel, "rprop": _rprop_kernel}


def _run_kernel(family: str, problem: Landscape, x0, steps: int, coef: dict, noise,
                device=None, record=None):
    """x0 (B, 2) numpy, coef name -> (B,) numpy, noise (steps, 2) numpy or None: convert to
    the kernel layout on the backend (NumPy for device=None, else torch on `device`), run."""
    x = np.ascontiguousarray(np.asarray(x0, dtype=np.float64).T)           # (2, B)
    rows = {k: np.asarray(v, dtype=np.float64).reshape(1, -1) for k, v in coef.items()}
    nz = None if noise is None else np.ascontiguousarray(noise[:, :, None])
    if device is not None:
        dev = resolve_device(device)
        x = torch.tensor(x, dtype=DTYPE, device=dev)
        rows = {k: torch.tensor(v, dtype=DTYPE, device=dev) for k, v in rows.items()}
        nz = None if nz is None else torch.tensor(nz, dtype=DTYPE, device=dev)
    kernel = KERNELS[family]
    if record is None:
        return kernel(problem, x, steps, rows, nz)
    return kernel(problem, x, steps, rows, nz, record(x))


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Trajectory:
    """One run. points (n + 1, 2), losses f(points) (n + 1,), grad_norms |grad f| (n + 1,)
    (the noiseless gradient), n = steps, or n = diverged_at - 1 when the run diverged:
    diverged_at is the first step k with |x_k| > 1e6 or f(x_k) not finite (None if never)."""
    method: str
    hyper: dict
    points: np.ndarray
    losses: np.ndarray
    grad_norms: np.ndarray
    diverged_at: int | None
    steps: int


@dataclass(frozen=True)
class BatchTrajectory:
    """B runs at once: points (steps + 1, B, 2), losses / grad_norms (steps + 1, B);
    entries from diverged_at[b] on are NaN; diverged_at[b] = -1 when run b never diverged."""
    method: str
    points: np.ndarray
    losses: np.ndarray
    grad_norms: np.ndarray
    diverged_at: np.ndarray

    def run(self, b: int, hyper: dict | None = None) -> Trajectory:
        d = int(self.diverged_at[b])
        n = self.points.shape[0] if d < 0 else d
        return Trajectory(self.method, dict(hyper or {}), self.points[:n, b].copy(),
                          self.losses[:n, b].copy(), self.grad_norms[:n, b].copy(),
                          None if d < 0 else d, self.points.shape[0] - 1)


def _noise(seed: int, steps: int, grad_noise: float) -> np.ndarray | None:
    """grad_noise * xi_k, xi_k ~ N(0, I_2), k = 1..steps: one seeded stream per call."""
    if not grad_noise:
        return None
    return float(grad_noise) * numpy_rng(seed).standard_normal((steps, 2))


def _finish(problem: Landscape, method: str, points) -> BatchTrajectory:
    """Losses, gradient norms and the divergence step of a batch of runs (vectorized)."""
    if isinstance(points, torch.Tensor):
        points = points.detach().cpu().numpy()
    with np.errstate(all="ignore"):
        losses = np.asarray(problem.value(points), dtype=np.float64)
        gr = np.asarray(problem.grad(points))
        grad_norms = np.sqrt((gr * gr).sum(-1))
        bad = (~np.isfinite(losses)) | (~np.isfinite(points).all(-1)) | \
            ((points * points).sum(-1) > DIVERGENCE_RADIUS ** 2)
    any_bad = bad.any(0)
    first = np.where(any_bad, bad.argmax(0), -1)
    steps_axis = np.arange(points.shape[0])[:, None]
    mask = (first[None, :] >= 0) & (steps_axis >= first[None, :])
    points = np.where(mask[..., None], np.nan, points)
    losses = np.where(mask, np.nan, losses)
    grad_norms = np.where(mask, np.nan, grad_norms)
    return BatchTrajectory(method, points, losses, grad_norms, first.astype(np.int64))


def _check_common(problem, steps, grad_noise):
    if not isinstance(problem, Landscape):
        raise TypeError(f"problem must be a Landscape, got {type(problem).__name__}")
    steps = int(steps)
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if not math.isfinite(float(grad_noise)) or grad_noise < 0:
        raise ValueError(f"grad_noise must be a finite number >= 0, got {grad_noise}")
    return steps


def _prepare(problem: Landscape, method: str, x0, steps: int, lr, seed: int, grad_noise: float,
             device, hyper: dict, record=None):
    """Validate, broadcast to a batch, build the kernel's coefficient columns; run the kernel.
    Returns the raw points (steps + 1, B, 2) as numpy or a torch tensor."""
    steps = _check_common(problem, steps, grad_noise)
    params = resolve_hyper(method, lr, **hyper)
    x0 = np.atleast_2d(np.asarray(x0, dtype=np.float64))
    if x0.shape[-1] != 2 or x0.ndim != 2:
        raise ValueError(f"start points must have shape (2,) or (B, 2), got {x0.shape}")
    sizes = [np.asarray(v).size for v in params.values()] + [x0.shape[0]]
    batch = max(sizes)
    if any(s not in (1, batch) for s in sizes):
        raise ValueError(f"batch sizes do not match: {sizes}")
    x0 = np.array(np.broadcast_to(x0, (batch, 2)), dtype=np.float64)
    opt = OPTIMIZERS[method]
    cols = {k: np.broadcast_to(np.asarray(params[k], dtype=np.float64).reshape(-1), (batch,))
            for k in opt.defaults}
    # the coefficient functions are elementwise: call them on (B,) arrays
    coef = opt.coefficients(**{k: cols[k] for k in opt.defaults if k != "lr"})
    coef["lr"] = cols["lr"]
    coef = {k: np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(-1), (batch,))
            for k, v in coef.items()}
    return _run_kernel(opt.family, problem, x0, steps, coef, _noise(seed, steps, grad_noise),
                       device, record)


def optimize_many(problem: Landscape, method: str, x0, steps: int, lr=None, seed: int = 0,
                  grad_noise: float = 0.0, device: str | torch.device | None = None,
                  **hyper) -> BatchTrajectory:
    """B runs of one method at once. x0: (2,) or (B, 2) start points; lr and every
    hyperparameter may be a scalar or a length-B sequence (a sweep). The gradient noise
    sequence is the same for every run (seeded by `seed`). device=None: NumPy; else torch on
    that device (float64)."""
    points = _prepare(problem, method, x0, steps, lr, seed, grad_noise, device, hyper)
    return _finish(problem, method, points)


def optimize(problem: Landscape, method: str, x0, steps: int, lr: float | None = None,
             seed: int = 0, grad_noise: float = 0.0, device: str | torch.device | None = None,
             **hyper) -> Trajectory:
    """One run of `method` from x0 for `steps` steps (see the module docstring for the
    rules). Unknown methods or hyperparameters raise ValueError."""
    params = resolve_hyper(method, lr, **hyper)
    batch = optimize_many(problem, method, x0, steps, seed=seed, grad_noise=grad_noise,
                          device=device, **params)
    if batch.points.shape[1] != 1:
        raise ValueError("optimize() runs one start point; use optimize_many for a batch")
    return batch.run(0, params)


@dataclass(frozen=True)
class RaceEntry:
    method: str
    lr: float | None = None
    hyper: dict = field(default_factory=dict)


def race(problem: Landscape, entries: Sequence[RaceEntry], x0, steps: int, seed: int = 0,
         grad_noise: float = 0.0, device=None) -> dict[str, Trajectory]:
    """Every entry from the same start with the same gradient noise; entries of one family
    run as one batch. Returns method -> Trajectory, in the order given."""
    steps = _check_common(problem, steps, grad_noise)
    resolved = [(e.method, resolve_hyper(e.method, e.lr, **e.hyper)) for e in entries]
    if len({m for m, _ in resolved}) != len(resolved):
        raise ValueError("each method may appear once in a race")
    out: dict[str, Trajectory] = {}
    by_family: dict[str, list] = {}
    for method, params in resolved:
        by_family.setdefault(OPTIMIZERS[method].family, []).append((method, params))
    noise = _noise(seed, steps, grad_noise)
    start = np.asarray(x0, dtype=np.float64).reshape(1, 2)
    for family, runs in by_family.items():
        coefs = []
        for method, params in runs:
            opt = OPTIMIZERS[method]
            c = opt.coefficients(**{k: v for k, v in params.items() if k != "lr"})
            c["lr"] = params["lr"]
            coefs.append(c)
        keys = coefs[0].keys()
        batch = len(runs)
        coef = {k: np.array([np.asarray(c[k], dtype=np.float64).item() for c in coefs])
                for k in keys}
        points = _run_kernel(family, problem, np.repeat(start, batch, 0), steps, coef, noise,
                             device)
        result = _finish(problem, family, points)
        for b, (method, params) in enumerate(runs):
            tr = result.run(b, params)
            out[method] = Trajectory(method, params, tr.points, tr.losses, tr.grad_norms,
                                     tr.diverged_at, steps)
    return {m: out[m] for m, _ in resolved}


# --------------------------------------------------------------------------------------
# Theory
# --------------------------------------------------------------------------------------

def gd_rate(lr: float, eigenvalues: Sequence[float]) -> float:
    """max_i |1 - lr l_i|: the factor by which GD shrinks the slowest error component per step."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    return float(np.max(np.abs(1.0 - lr * lam)))


def _positive(eigenvalues) -> tuple[float, float]:
    lam = np.asarray(eigenvalues, dtype=np.float64)
    mu, big = float(lam.min()), float(lam.max())
    if mu <= 0:
        raise ValueError("the optimal step sizes need positive eigenvalues (a minimum); "
                         f"got {tuple(lam)}")
    return mu, big


def optimal_gd_lr(eigenvalues: Sequence[float]) -> float:
    """2 / (l_min + l_max): balances the slowest and the fastest direction."""
    mu, big = _positive(eigenvalues)
    return 2.0 / (mu + big)


def optimal_gd_rate(eigenvalues: Sequence[float]) -> float:
    """(k - 1) / (k + 1), k = l_max / l_min."""
    mu, big = _positive(eigenvalues)
    k = big / mu
    return (k - 1) / (k + 1)


def optimal_momentum(eigenvalues: Sequence[float]) -> tuple[float, float]:
    """Heavy ball (v <- beta v + g, x <- x - lr v): lr = 4 / (sqrt(L) + sqrt(mu))^2,
    beta = ((sqrt(k) - 1) / (sqrt(k) + 1))^2, k = L / mu."""
    mu, big = _positive(eigenvalues)
    k = big / mu
    return 4.0 / (math.sqrt(big) + math.sqrt(mu)) ** 2, ((math.sqrt(k) - 1) / (math.sqrt(k) + 1)) ** 2


def optimal_momentum_rate(eigenvalues: Sequence[float]) -> float:
    """(sqrt(k) - 1) / (sqrt(k) + 1): the heavy ball's rate at optimal_momentum."""
    mu, big = _positive(eigenvalues)
    k = big / mu
    return (math.sqrt(k) - 1) / (math.sqrt(k) + 1)


def heavy_ball_rate(lr, beta, eigenvalues: Sequence[float]):
    """Spectral radius of the heavy ball on a quadratic: per eigenvalue l the error obeys
    z_{k+1} = (1 + beta - lr l) z_k - beta z_{k-1}, whose roots solve
    mu^2 - (1 + beta - lr l) mu + beta = 0; the rate is the largest |mu| over both l.
    lr and beta may be arrays (broadcast); beta = 0 gives gd_rate."""
    lr = np.asarray(lr, dtype=np.float64)[..., None]
    beta = np.asarray(beta, dtype=np.float64)[..., None]
    lam = np.asarray(eigenvalues, dtype=np.float64)
    t = 1.0 + beta - lr * lam
    disc = (t * t - 4.0 * beta).astype(np.complex128)
    root = np.sqrt(disc)
    r = np.maximum(np.abs((t + root) / 2), np.abs((t - root) / 2)).max(-1)
    return float(r) if r.ndim == 0 else r


# --------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------

FLOOR = 1e-12   # error ratios below this are rounding noise for float64 (|x*| ~ 1)


def distance_to_minimizer(problem: Landscape, points: np.ndarray) -> np.ndarray:
    """|x_k - x*| for points (..., 2)."""
    return np.linalg.norm(np.asarray(points) - problem.minimizer, axis=-1)


def measured_rate(errors: np.ndarray, floor: float = FLOOR, ceiling: float = 1e12):
    """Per-step contraction of an error sequence e_0..e_n (axis 0; more axes = more runs):
    (E_b / E_a)^(1 / (b - a)) with b the last step whose e_b / e_0 lies in [floor, ceiling]
    (before rounding noise or overflow) and a = b // 2 (past the transient). For a shrinking
    sequence E is its upper envelope E_k = max_{j >= k} e_j (so the oscillation of an
    underdamped heavy ball does not bias the estimate), else E = e. NaN if b < 2."""
    e = np.asarray(errors, dtype=np.float64)
    with np.errstate(all="ignore"):
        ratio = e / e[:1]
        ok = np.isfinite(ratio) & (ratio >= floor) & (ratio <= ceiling)
        envelope = np.flip(np.fmax.accumulate(np.flip(np.where(ok, e, np.nan), 0), 0), 0)
    n = e.shape[0]
    idx = np.arange(n).reshape((n,) + (1,) * (e.ndim - 1))
    b = np.where(ok, idx, 0).max(0)
    a = b // 2
    eb = np.take_along_axis(e, b[None], 0)[0]
    ea = np.take_along_axis(e, a[None], 0)[0]
    shrinking = eb < e[0]
    eb = np.where(shrinking, np.take_along_axis(envelope, b[None], 0)[0], eb)
    ea = np.where(shrinking, np.take_along_axis(envelope, a[None], 0)[0], ea)
    with np.errstate(all="ignore"):
        rate = np.where(b >= 2, (eb / ea) ** (1.0 / np.maximum(b - a, 1)), np.nan)
    return float(rate) if rate.ndim == 0 else rate


@dataclass(frozen=True)
class RateMap:
    """Heavy-ball convergence rate on a grid: measured[i, j] for betas[i], lrs[j] (per-step
    contraction of |x - x*|; > 1 diverges), and theory[i, j] = heavy_ball_rate."""
    lrs: np.ndarray
    betas: np.ndarray
    measured: np.ndarray
    theory: np.ndarray | None
    steps: int


def rate_map(problem: Landscape, lrs: Sequence[float], betas: Sequence[float], steps: int = 300,
             x0=None, device: str | torch.device | None = None) -> RateMap:
    """Run the heavy ball for every (beta, lr) pair as one batch of len(lrs) * len(betas)
    runs and measure each run's rate (measured_rate of |x_k - x*|)."""
    lrs = np.asarray(lrs, dtype=np.float64)
    betas = np.asarray(betas, dtype=np.float64)
    bb, ll = np.meshgrid(betas, lrs, indexing="ij")
    start = problem.default_start if x0 is None else x0

    def distance(x_like):             # record |x_k - x*| per run instead of the points
        xs = _like(problem.minimizer, x_like)[:, None]
        xp = _xp(x_like)

        def rec(x):                   # x (2, B); hypot: no underflow of tiny squares
            d = x - xs
            return xp.hypot(d[0], d[1])
        return rec

    err = _prepare(problem, "momentum", start, steps, ll.ravel(), 0, 0.0, device,
                   {"beta": bb.ravel()}, record=distance)          # (steps + 1, B)
    if isinstance(err, torch.Tensor):
        err = err.cpu().numpy()
    with np.errstate(all="ignore"):
        diverged = ~(np.isfinite(err) & (err <= DIVERGENCE_RADIUS)).all(0)
    rates = measured_rate(err).reshape(bb.shape)
    rates = np.where(diverged.reshape(bb.shape), np.maximum(np.nan_to_num(rates, nan=np.inf), 1.0),
                     rates)
    theory = heavy_ball_rate(ll, bb, problem.eigenvalues) if problem.is_quadratic else None
    return RateMap(lrs, betas, rates, theory, int(steps))


def eigen_errors(problem: Landscape, points: np.ndarray) -> np.ndarray:
    """z = V^T (x - x*): the error along each Hessian eigenvector at the minimizer
    (columns follow curvature() order, smallest eigenvalue first). points (..., 2)."""
    _, vecs = problem.curvature()
    return (np.asarray(points) - problem.minimizer) @ vecs


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


def steps_to_reach(trajectory: Trajectory, f_star: float, tol: float = 1e-8) -> int | None:
    """The first step k with f(x_k) - f* <= tol (None if the run never gets there)."""
    hit = np.flatnonzero(np.asarray(trajectory.losses) - f_star <= tol)
    return int(hit[0]) if hit.size else None
