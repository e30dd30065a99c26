"""The update rules of engine.optim: the registry OPTIMIZERS (each rule's hyperparameters,
defaults and its row of the coefficient table in engine/optim/__init__.py), resolve_hyper, and
the batched kernels that run them (one loop per family: moment, newton, rprop)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import torch

from engine.device import resolve_device
from engine.optim.problems import DIVERGENCE_RADIUS, DTYPE, Landscape, _like, _xp

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
