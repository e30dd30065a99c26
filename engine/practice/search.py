"""Hyperparameter search with a fixed budget of trials (notes 004, Sec. 4.7.1, Fig. 4.20;
notes 001, L6877): grid, random and Bayesian optimisation on a score of two hyperparameters
u, v in [0, 1]², one important (u), one not (v):

    score(u, v) = exp(−(u − U_STAR)² / (2 WIDTH²)) + TILT·v·(1 − v)      (higher is better)

Grid: B trials on a ⌊√B⌋ × ⌊√B⌋ lattice (what is left of B goes unused: said), visited row by
row; only ⌊√B⌋ distinct values of u are ever tried. Random: B points uniform on [0, 1]², B
distinct values of u. Bayesian optimisation: N_START random points, then each trial maximises
the expected improvement of a Gaussian process (scikit-learn, Matern ν = 5/2 of length scale
LENGTH, fixed, plus a small white noise; targets normalised) over CANDIDATES random candidates,

    EI(x) = (μ(x) − best − ξ) Φ(z) + σ(x) φ(z),   z = (μ(x) − best − ξ) / σ(x)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

U_STAR, WIDTH, TILT = 0.52, 0.05, 0.08
MAX_BUDGET = 100              # grid and random
MAX_BUDGET_BO = 30            # Bayesian optimisation refits a GP every trial
N_START, CANDIDATES, XI = 4, 1000, 0.01
LENGTH = 0.08                 # the GP kernel's length scale (fixed: no refit of it per trial)
METHODS = ("grid", "random", "bayesian")


def score(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The score of hyperparameters (u, v): a narrow peak in u, a faint bump in v."""
    return np.exp(-(u - U_STAR) ** 2 / (2 * WIDTH ** 2)) + TILT * v * (1 - v)


BEST = 1.0 + TILT / 4         # the score's maximum, at (U_STAR, 0.5)


def capped_budget(budget: int, method: str) -> tuple[int, str]:
    """(the budget used, a message when it was changed): at least 1, at most the method's cap."""
    cap = MAX_BUDGET_BO if method == "bayesian" else MAX_BUDGET
    if budget < 1:
        raise ValueError("A search needs a budget of at least 1 trial.")
    if budget > cap:
        return cap, f"A budget of {budget:,} trials is capped at {cap}."
    return int(budget), ""


def grid_points(budget: int) -> np.ndarray:
    """(r², 2) the r × r lattice, r = ⌊√budget⌋, at cell centres, row by row in u."""
    r = max(int(math.isqrt(int(budget))), 1)
    c = (np.arange(r) + 0.5) / r
    uu, vv = np.meshgrid(c, c, indexing="ij")
    return np.stack([uu.ravel(), vv.ravel()], 1)


def random_points(budget: int, seed: int) -> np.ndarray:
    """(budget, 2) uniform on [0, 1]²."""
    return np.random.default_rng(int(seed)).uniform(size=(int(budget), 2))


def bayesian_points(budget: int, seed: int) -> np.ndarray:
    """(budget, 2): N_START random points, then one expected-improvement maximiser per trial."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    rng = np.random.default_rng(int(seed))
    pts = list(rng.uniform(size=(min(N_START, int(budget)), 2)))
    while len(pts) < budget:
        xs = np.asarray(pts)
        ys = score(xs[:, 0], xs[:, 1])
        kernel = (ConstantKernel(1.0, "fixed") * Matern(LENGTH, "fixed", nu=2.5)
                  + WhiteKernel(1e-6, "fixed"))
        gp = GaussianProcessRegressor(kernel, normalize_y=True, optimizer=None)
        gp.fit(xs, ys)
        cand = rng.uniform(size=(CANDIDATES, 2))
        mu, sd = gp.predict(cand, return_std=True)
        pts.append(cand[int(np.argmax(expected_improvement(mu, sd, float(ys.max()))))])
    return np.asarray(pts)


def expected_improvement(mu: np.ndarray, sd: np.ndarray, best: float,
                         xi: float = XI) -> np.ndarray:
    """EI = (μ − best − ξ) Φ(z) + σ φ(z), z = (μ − best − ξ)/σ (0 where σ = 0)."""
    sd = np.maximum(sd, 1e-12)
    gain = mu - best - xi
    z = gain / sd
    return gain * norm.cdf(z) + sd * norm.pdf(z)


@dataclass(frozen=True)
class Search:
    method: str
    points: np.ndarray       # (B, 2) the trials in order
    scores: np.ndarray       # (B,)
    best_so_far: np.ndarray  # (B,) max score over the first t trials
    u_error: np.ndarray      # (B,) min |u − U_STAR| over the first t trials
    distinct_u: int          # distinct values of u tried


def run_search(method: str, budget: int, seed: int = 0) -> Search:
    """One search of `budget` trials (already capped)."""
    if method == "grid":
        pts = grid_points(budget)
    elif method == "random":
        pts = random_points(budget, seed)
    elif method == "bayesian":
        pts = bayesian_points(budget, seed)
    else:
        raise ValueError(f"Unknown search method {method!r}.")
    s = score(pts[:, 0], pts[:, 1])
    return Search(method, pts, s, np.maximum.accumulate(s),
                  np.minimum.accumulate(np.abs(pts[:, 0] - U_STAR)),
                  len(np.unique(np.round(pts[:, 0], 9))))


def trials_to_reach(search: Search, tol: float) -> float:
    """The first trial (1-based) whose u lies within tol of U_STAR; inf if none."""
    hit = np.nonzero(search.u_error <= tol)[0]
    return float(hit[0] + 1) if len(hit) else math.inf


def median_trials(method: str, budget: int, tol: float, seeds: int = 20) -> float:
    """The median over `seeds` searches of trials_to_reach (inf counts as never)."""
    vals = [trials_to_reach(run_search(method, budget, s), tol) for s in range(seeds)]
    return float(np.median(vals))
