"""The gradient descent page's computations of the settings dict s
(topics/gradient_descent/page.py): the landscape, the race, the theoretical rates, the cached
rate map and contour grid, and the measurements the claims read (engine/optim/reads.py, on
the race the page draws). Shared by the views and the claims."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine import optim
from engine.optim import reads, schedules
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
LANDSCAPE_NAMES = ["quadratic", *optim.LANDSCAPES]
LANDSCAPE_LABELS = {"quadratic": "Quadratic", "rosenbrock": "Rosenbrock", "saddle": "Saddle",
                    "two_minima": "Two minima"}
KAPPAS = [1, 1.5, 2, 3, 5, 7, 10, 15, 20, 25, 30, 50, 70, 100, 200, 500, 1000]
LOGLR_RANGE = (-4.0, 1.0)
START_RANGE = (-3.0, 3.0)
SHARED_LR = ("gd", "momentum", "nesterov")    # methods that use the main η
TOL = 1e-8
RATE_MAP_STEPS = 300

# per-method hyperparameters: (name, label, min, max, page default)
HYPER = {
    "gd": [],
    "momentum": [("beta", "β (momentum)", 0.0, 0.999, 0.5)],
    "nesterov": [("beta", "β (momentum)", 0.0, 0.999, 0.5)],
    "adagrad": [("lr", "η", 1e-4, 10.0, 0.5)],
    "rmsprop": [("lr", "η", 1e-4, 10.0, 0.05), ("alpha", "α (decay)", 0.0, 0.9999, 0.9)],
    "adam": [("lr", "η", 1e-4, 10.0, 0.1), ("beta1", "β₁", 0.0, 0.999, 0.9),
             ("beta2", "β₂", 0.0, 0.99999, 0.999)],
    "amsgrad": [("lr", "η", 1e-4, 10.0, 0.1), ("beta1", "β₁", 0.0, 0.999, 0.9),
                ("beta2", "β₂", 0.0, 0.99999, 0.999)],
    "newton": [("lr", "step size η", 1e-3, 2.0, 1.0)],
    "rprop": [("lr", "initial step Δ₀", 1e-4, 5.0, 0.1)],
}
assert set(HYPER) == set(optim.OPTIMIZERS)

# the Schedules tab: its schedules (engine/optim/schedules.py) and their labels
SCHEDULE_LABELS = {"transformer": "Warm-up, then 1/√t (transformer)",
                   "sgdr": "Cosine with warm restarts (SGDR)", "step": "Step decay (×0.1)",
                   "constant": "Constant"}
assert set(SCHEDULE_LABELS) == set(schedules.SCHEDULES)


def hkey(method: str, name: str) -> str:
    return f"gd_hp_{method}_{name}"


def log10(x: float) -> float:
    return round(math.log10(x), 4)
# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def problem_of(s: Mapping[str, Any]) -> tuple[optim.Landscape, tuple[float, float], float]:
    """(landscape, eigenvalues used for a quadratic, rotation angle)."""
    if s["gd_land"] == "quadratic":
        eig = (s["gd_lmax"] / float(s["gd_kappa"]), float(s["gd_lmax"]))
        angle = float(s["gd_angle"])
    else:
        eig, angle = (0.05, 1.0), 0.0
    return optim.make_landscape(s["gd_land"], eig, angle), eig, angle


def eigen_axes_of(s: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues ascending, unit eigenvectors as columns) of the Hessian at the minimum:
    the axes of the contour ellipses, the coordinates in which a quadratic separates."""
    problem = problem_of(s)[0]
    lam, vec = np.linalg.eigh(np.asarray(problem.hessian(problem.minimizer), dtype=np.float64))
    return lam, vec


def taylor_of(s: Mapping[str, Any]) -> optim.TaylorModel:
    """The second-order Taylor model of the landscape at the start point."""
    return optim.taylor_model(problem_of(s)[0], (float(s["gd_x0"]), float(s["gd_y0"])))


TAYLOR_LEVELS = (0.25, 1.0, 4.0)   # model level curves drawn: × the drop from the start to q*


@lesson_measure
def taylor_gap(s, radius: float) -> float:
    """max |f − q| on the circle of `radius` around the start (q: the Taylor model there)."""
    return optim.taylor_gap(problem_of(s)[0], (float(s["gd_x0"]), float(s["gd_y0"])), radius)


@lesson_measure
def taylor_newton_gap(s) -> float:
    """|Newton's first iterate − the Taylor model's minimum| (Newton in the race, step 1)."""
    w_star = taylor_of(s).minimizer
    if w_star is None:
        return float("inf")
    return float(np.linalg.norm(race_of(s)["newton"].points[1] - w_star))


@lesson_measure
def hessian_eigenvalue(s, which: int = 0) -> float:
    """Eigenvalue `which` (0: the smallest) of the Hessian at the minimum."""
    return float(eigen_axes_of(s)[0][which])


@lesson_measure
def eigen_axis_angle(s, which: int = 0) -> float:
    """Direction of eigenvector `which` (0: the smallest eigenvalue's) in degrees, in [0, 180)."""
    v = eigen_axes_of(s)[1][:, which]
    return float(np.degrees(np.arctan2(v[1], v[0])) % 180.0)


def curvature_of(s: Mapping[str, Any]) -> np.ndarray:
    return problem_of(s)[0].curvature()[0]


def entries_of(s: Mapping[str, Any]) -> list[optim.RaceEntry]:
    """One RaceEntry per chosen method, with its hyperparameters from the settings."""
    curv = curvature_of(s)
    lr = 10.0 ** s["gd_loglr"]
    entries = []
    for method in s["gd_methods"]:
        hp = {name: float(s[hkey(method, name)]) for name, *_ in HYPER[method]}
        step_size = hp.pop("lr", lr if method in SHARED_LR else None)
        if method == "momentum" and s["gd_hb_opt"] and curv.min() > 0:
            step_size, hp["beta"] = optim.optimal_momentum(curv)
        entries.append(optim.RaceEntry(method, step_size, hp))
    return entries


@st.cache_data(max_entries=64, show_spinner=False)
def _cached_race(land, eig, angle, entries, x0, steps, seed, noise):
    problem = optim.make_landscape(land, eig, angle)
    return optim.race(problem, [optim.RaceEntry(m, lr, dict(hp)) for m, lr, hp in entries],
                      x0, steps, seed=seed, grad_noise=noise)


def race_of(s: Mapping[str, Any], seed: int = 0) -> dict[str, optim.Trajectory]:
    """Every chosen method from the same start (cached across sessions by its inputs)."""
    _, eig, angle = problem_of(s)
    entries = tuple((e.method, e.lr, tuple(sorted(e.hyper.items()))) for e in entries_of(s))
    return _cached_race(s["gd_land"], eig, angle, entries, (float(s["gd_x0"]),
                        float(s["gd_y0"])), int(s["gd_steps"]), int(seed), float(s["gd_noise"]))


def theory_of(s: Mapping[str, Any], runs) -> dict[str, tuple[float, str]]:
    """Theoretical per-step rates of GD and the heavy ball on a quadratic."""
    problem, eig, _ = problem_of(s)
    out = {}
    if not problem.is_quadratic:
        return out
    if "gd" in runs:
        rho = optim.gd_rate(runs["gd"].hyper["lr"], eig)
        out["gd"] = (rho, f"theory GD: ρ = {rho:.3g}")
    if "momentum" in runs:
        hp = runs["momentum"].hyper
        rho = optim.heavy_ball_rate(hp["lr"], hp["beta"], eig)
        out["momentum"] = (rho, f"theory heavy ball: ρ = {rho:.3g}")
    return out


@st.cache_data(max_entries=16, show_spinner=False)
def cached_rate_map(eigenvalues: tuple, angle: float, steps: int, device: str | None):
    q = optim.Quadratic.from_spectrum(eigenvalues, angle)
    lmax = max(eigenvalues)
    lrs = np.geomspace(0.05 / lmax, 4.2 / lmax, 60)
    betas = np.linspace(0.0, 0.99, 60)
    return optim.rate_map(q, lrs, betas, steps=steps, device=device)


@st.cache_data(max_entries=16, show_spinner=False)
def cached_grid(land: str, eigenvalues: tuple, angle: float, xlim: tuple, ylim: tuple):
    return optim.landscape_grid(optim.make_landscape(land, eigenvalues, angle), xlim, ylim, 90)


# ---- measurements the claims use (engine/optim/reads.py), on the race the page draws
@lesson_measure
def gap(s, method: str, k: int | None = None) -> float:
    return reads.gap(problem_of(s)[0], race_of(s)[method], k)


@lesson_measure
def steps_to(s, method: str, tol: float = TOL) -> float:
    return reads.steps_to(problem_of(s)[0], race_of(s)[method], tol)


@lesson_measure
def eigen_flip_share(s, method: str, which: int) -> float:
    return reads.eigen_flip_share(problem_of(s)[0], race_of(s)[method], which)


@lesson_measure
def tail_rate(s, method: str) -> float:
    return reads.tail_rate(problem_of(s)[0], race_of(s)[method])


@lesson_measure
def mean_late_step(s, method: str, last: int = 100) -> float:
    return reads.mean_late_step(race_of(s)[method].points, last)


@lesson_measure
def diverged_at(s, method: str) -> float:
    return reads.diverged_at(race_of(s)[method])


@lesson_measure
def swing_growth(s, method: str, which: int = 1) -> float:
    return reads.swing_growth(problem_of(s)[0], race_of(s)[method], which)


@lesson_measure
def steep_factor(s) -> float:
    """GD's factor 1 − ηλmax along the steepest eigenvector (below −1: it diverges)."""
    return float(1.0 - 10.0 ** s["gd_loglr"] * curvature_of(s).max())


@lesson_measure
def effective_step(s) -> float:
    """The heavy ball's η/(1 − β) (its step along a constant gradient, once its velocity has
    built up), with the η and β the race gives it."""
    entry = next(e for e in entries_of(s) if e.method == "momentum")
    return float(entry.lr / (1.0 - entry.hyper["beta"]))


@lesson_measure
def gd_at_effective_step(s, what: str) -> float:
    """Plain GD alone, on the same problem and start, with η = the heavy ball's effective step
    η/(1 − β): its steep-direction sign-flip share (what = "flip") or its tail rate ("rate").
    The heavy ball's path is compared with the GD that takes steps of that size."""
    plain = {**s, "gd_methods": ["gd"], "gd_loglr": math.log10(effective_step(s))}
    return eigen_flip_share(plain, "gd", 1) if what == "flip" else tail_rate(plain, "gd")


def peak_gap(s, method: str) -> float:
    """Largest f − f* on the path (a step that leaves the valley shows as a spike)."""
    return float(np.max(race_of(s)[method].losses) - problem_of(s)[0].f_star)


# ---- the Schedules tab: η_t over steps t = 0 … n − 1 (the transformer's own scale d^(−1/2);
# the others start from the page's η)
def schedule_of(s: Mapping[str, Any]) -> np.ndarray:
    return schedules.schedule(s["gd_sched"], int(s["gd_sched_n"]), 10.0 ** s["gd_loglr"],
                              d_model=int(s["gd_sched_d"]), warmup=int(s["gd_sched_warmup"]),
                              period=int(s["gd_sched_period"]), mult=int(s["gd_sched_mult"]))


@lesson_measure
def schedule_peak_step(s) -> float:
    """The step t where η_t is largest (the first, on a tie)."""
    return float(np.argmax(schedule_of(s)))


@lesson_measure
def schedule_value(s, step: int = -1, relative: bool = False) -> float:
    """η at `step` (−1: the last step), or that η over the schedule's largest."""
    lrs = schedule_of(s)
    return float(lrs[step] / (lrs.max() if relative else 1.0))


@lesson_measure
def schedule_restarts(s) -> float:
    """How many times η jumps back up (warm restarts)."""
    return float(schedules.restarts(schedule_of(s)).size)


@lesson_measure
def schedule_restart(s, which: int = 0) -> float:
    """The step of restart number `which` (0: the first)."""
    return float(schedules.restarts(schedule_of(s))[which])
