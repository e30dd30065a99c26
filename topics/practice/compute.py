"""Constants and the cached pure computations of the Training in practice page: what the
views draw and what the claims measure, from the same engine calls."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.practice import distill, search, svgd, uncertainty
from engine.practice.pruning import LotteryTrainer, RoundRecord
from engine.practice.reads import build_trainer
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
N_POINTS, NOISE = 60, 0.1            # the regression data: 60 points, noise σ 0.1
METHODS = ("deep ensemble", "MC dropout")
DROPS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
BANDWIDTHS = ("median", 0.01, 0.1, 1.0, 10.0)
SVGD_ITERS, SVGD_STEP = 500, 0.5
TARGET = svgd.Mixture()
RATES = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
REWINDS = (0, 10, 20)
ROUND_STEPS = (50, 100)
HIDDEN = 64
LOTTERY_ROUNDS = 10                  # what the pruning claims measure
TRAIN_MAX = 1_200
TOL = 0.05                           # "reached the important axis's optimum": |u − u*| <= TOL
SEEDS = 20                           # searches the medians are taken over


# ----------------------------------------------------------------------------- uncertainty
@st.cache_data(max_entries=32, show_spinner=False)
def band_of(method: str, members: int, drop: float, seed: int = 0) -> uncertainty.Band:
    """The Uncertainty tab's band: a deep ensemble of `members` nets, or MC dropout at `drop`."""
    x, y = uncertainty.gap_data(N_POINTS, NOISE, seed)
    if method == "deep ensemble":
        return uncertainty.ensemble_band(x, y, int(members), seed=seed)
    return uncertainty.mc_dropout_band(x, y, float(drop), seed=seed)


def band_from(s: Mapping[str, Any], method: str | None = None) -> uncertainty.Band:
    return band_of(method or s["pr_method"], int(s["pr_members"]), float(s["pr_drop"]))


@lesson_measure
def band_ratio(s: Mapping[str, Any], method: str = "") -> float:
    """Mean σ in the gap / mean σ inside the data (the Uncertainty tab's band)."""
    return band_from(s, method or None).width_ratio


def band_value(name: str, method: str | None = None):
    """A claim's measure: a field of the band on the settings."""
    return lambda s: float(getattr(band_from(s, method), name))


# ----------------------------------------------------------------------------- SVGD
def bandwidth_of(value: Any) -> float | str:
    return "median" if value == "median" else float(value)


@st.cache_data(max_entries=16, show_spinner=False)
def svgd_of(particles: int, bandwidth: Any, seed: int = 0) -> svgd.SvgdRun:
    return svgd.run_svgd(TARGET, int(particles), SVGD_ITERS, SVGD_STEP,
                         bandwidth_of(bandwidth), seed=seed)


def svgd_measure(name: str):
    """A claim's measure on the last SVGD frame: 'right' (share right of 0), 'mean', 'std'."""
    def measure(s):
        x = svgd_of(int(s["pr_particles"]), s["pr_bandwidth"]).frames[-1]
        return {"right": svgd.mode_share(x), "mean": float(x.mean()),
                "std": float(x.std())}[name]
    return measure


@lesson_measure
def svgd_value(s: Mapping[str, Any], name: str = "right") -> float:
    """The last SVGD frame's share right of 0 ('right'), mean or std."""
    return svgd_measure(name)(s)


# ----------------------------------------------------------------------------- search
@dataclass(frozen=True)
class SearchResult:
    budget: int
    message: str                       # why the budget was changed ('' when not)
    runs: dict[str, search.Search]     # method -> the search on this seed
    median_trials: dict[str, float]    # method -> median over SEEDS of trials to reach TOL


@st.cache_data(max_entries=16, show_spinner=False)
def search_of(budget: int, seed: int, bayes: bool) -> SearchResult:
    """Grid, random (and Bayesian optimisation) with the same budget; the medians over SEEDS
    searches (Bayesian optimisation: over 5, it refits a GP every trial)."""
    methods = ("grid", "random", "bayesian") if bayes else ("grid", "random")
    used, message = search.capped_budget(int(budget), "bayesian" if bayes else "random")
    if message and bayes:
        message = (f"A budget of {int(budget):,} trials is capped at {used} for all three "
                   "searches: Bayesian optimisation refits a Gaussian process every trial. "
                   f"Untick it for up to {search.MAX_BUDGET} trials.")
    runs = {m: search.run_search(m, used, seed) for m in methods}
    med = {m: search.median_trials(m, used, TOL, seeds=5 if m == "bayesian" else SEEDS)
           for m in methods}
    return SearchResult(used, message, runs, med)


def search_from(s: Mapping[str, Any]) -> SearchResult:
    return search_of(int(s["pr_budget"]), int(s["pr_search_seed"]), bool(s["pr_bayes"]))


def search_measure(name: str, method: str):
    """A claim's measure: 'median' (median trials to come within TOL of u*; inf: never
    within the budget), 'best' (best score after the budget), 'u_error' (closest |u − u*|)."""
    def measure(s):
        r = search_from(s)
        if name == "median":
            v = r.median_trials[method]
            return v if math.isfinite(v) else float(r.budget + 1)
        run = r.runs[method]
        return float(run.best_so_far[-1] if name == "best" else run.u_error[-1])
    return measure


@lesson_measure
def search_value(s: Mapping[str, Any], name: str = "best", method: str = "random") -> float:
    """search_measure(name, method)(s)."""
    return search_measure(name, method)(s)


# ----------------------------------------------------------------------------- pruning
def pruning_args(s: Mapping[str, Any]) -> tuple[float, int, int]:
    return float(s["pr_rate"]), int(s["pr_round_steps"]), int(s["pr_rewind"])


def make_trainer(rate: float, round_steps: int, rewind: int, seed: int,
                 device: str) -> LotteryTrainer:
    return build_trainer(rate, round_steps, rewind, HIDDEN, seed, device)


@st.cache_data(max_entries=8, show_spinner=False)
def lottery_of(rate: float, round_steps: int, rewind: int,
               rounds: int = LOTTERY_ROUNDS, seed: int = 0) -> list[RoundRecord]:
    """The round records of a fresh trainer after `rounds` rounds (what the live tab reaches
    with the same seed after the same iterations)."""
    tr = make_trainer(rate, round_steps, rewind, seed, "cpu")
    tr.step(rounds * tr.round_steps)
    return tr.records


def nearest_round(records: list[RoundRecord], kept: float) -> RoundRecord:
    return min(records, key=lambda r: abs(math.log(r.kept) - math.log(kept)))


def lottery_measure(name: str, kept: float = 0.17):
    """A (slow) claim's measure, at the round whose fraction kept is nearest `kept`:
    'gap_<arm>' = dense accuracy − arm's accuracy; 'kept' = that round's fraction kept."""
    def measure(s):
        recs = lottery_of(*pruning_args(s))
        r = nearest_round(recs, kept)
        if name == "kept":
            return r.kept
        arm = name.split("_", 1)[1]
        return recs[0].accuracy["ticket"] - r.accuracy[arm]
    return measure


@lesson_measure(trains=True)
def lottery_value(s: Mapping[str, Any], name: str = "gap_ticket", kept: float = 0.17) -> float:
    """lottery_measure(name, kept)(s): a pruning sweep of LOTTERY_ROUNDS rounds (slow)."""
    return lottery_measure(name, float(kept))(s)


def curves(records: list[RoundRecord]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """arm -> (fraction kept, test accuracy at the round's end) over the rounds."""
    kept = np.array([r.kept for r in records])
    return {a: (kept, np.array([r.accuracy[a] for r in records]))
            for a in ("ticket", "reinit", "random")}


# ----------------------------------------------------------------------------- distillation
LABELS = (20, 50, 100, 200)
TEMPERATURES = (1.0, 2.0, 4.0, 8.0)


@st.cache_data(max_entries=16, show_spinner=False)
def distill_of(labels: int, T: float) -> distill.Distillation:
    return distill.distill(int(labels), float(T), temperatures=TEMPERATURES)


def distill_from(s: Mapping[str, Any]) -> distill.Distillation:
    return distill_of(int(s["pr_labels"]), float(s["pr_T"]))


@st.cache_data(max_entries=32, show_spinner=False)
def targets_of(digit: int) -> tuple[np.ndarray, int, np.ndarray]:
    """The test digit shown, its label and the teacher's soft targets at TEMPERATURES."""
    return distill.example_targets(int(digit), TEMPERATURES)


@lesson_measure(trains=True)
def distill_gain(s: Mapping[str, Any]) -> float:
    """Final test accuracy of the soft-target student − the hard-label student's (slow)."""
    d = distill_from(s)
    return float(d.soft[-1] - d.hard[-1])
