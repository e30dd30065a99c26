"""Gradient descent & the optimizer race: every method from the same start on the same
landscape, with the theory (rates, step factors, the heavy-ball phase diagram) drawn next to
the measured curves. Settings -> engine/optim.py -> viz/gradient_descent_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import optim
from engine import race_measures as M
from viz import gradient_descent_figures as figs
from viz import session
from viz.claims import Claim
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, export_buttons

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


def hkey(method: str, name: str) -> str:
    return f"gd_hp_{method}_{name}"


def log10(x: float) -> float:
    return round(math.log10(x), 4)


STATE = StateTable([
    Control("gd_land", "quadratic", "Landscape", kind="selectbox", options=LANDSCAPE_NAMES,
            format_func=LANDSCAPE_LABELS.get,
            help="Choosing a landscape also sets its start point and η = 1/λmax (λmax of the "
                 "Hessian at its minimum)."),
    Control("gd_kappa", 20, "Condition number κ = λmax/λmin", kind="select_slider",
            options=KAPPAS),
    Control("gd_lmax", 1.0, "Scale λmax", lo=0.1, hi=10.0, step=0.1),
    Control("gd_angle", 30, "Rotation angle (degrees)", lo=0, hi=180, step=1),
    Control("gd_loglr", log10(1.4), "log₁₀ η (GD, momentum, Nesterov)", lo=LOGLR_RANGE[0],
            hi=LOGLR_RANGE[1], step=0.01,
            help="Log scale. η for the three curvature-scaled methods; the adaptive methods "
                 "and Newton have their own step size (per-method hyperparameters)."),
    Control("gd_methods", ["gd", "momentum", "nesterov", "adam"], "Methods in the race",
            kind="multiselect", options=list(optim.OPTIMIZERS), format_func=figs.label),
    Control("gd_steps", 200, "Steps", lo=10, hi=1000, step=10),
    Control("gd_noise", 0.0, "Gradient noise σ (SGD model)", lo=0.0, hi=2.0, step=0.01,
            help="g = ∇f(x) + σ ξ, ξ ~ N(0, I), seeded by the sidebar seed; every method sees "
                 "the same noise."),
    Control("gd_x0", -2.5, "Start x₁", kind="number", lo=START_RANGE[0], hi=START_RANGE[1],
            step=0.1),
    Control("gd_y0", 1.5, "Start x₂", kind="number", lo=START_RANGE[0], hi=START_RANGE[1],
            step=0.1),
    Control("gd_hb_opt", False, "Momentum: use the optimal (η, β) of this quadratic",
            kind="checkbox"),
    Control("gd_iter", 1000, "Show iteration k", lo=0, hi=1000, step=1, url=False,
            help="Scrub through the race: every path is drawn up to step k."),
    *[Control(hkey(m, name), default, text, kind="number", lo=lo, hi=hi, fmt="%.4g")
      for m, specs in HYPER.items() for name, text, lo, hi, default in specs],
])


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


# ---- measurements the claims use (engine/race_measures.py), on the race the page draws
def gap(s, method: str, k: int | None = None) -> float:
    return M.gap(problem_of(s)[0], race_of(s)[method], k)


def steps_to(s, method: str, tol: float = TOL) -> float:
    return M.steps_to(problem_of(s)[0], race_of(s)[method], tol)


def eigen_flip_share(s, method: str, which: int) -> float:
    return M.eigen_flip_share(problem_of(s)[0], race_of(s)[method], which)


def tail_rate(s, method: str) -> float:
    return M.tail_rate(problem_of(s)[0], race_of(s)[method])


def mean_late_step(s, method: str, last: int = 100) -> float:
    return M.mean_late_step(race_of(s)[method].points, last)


def diverged_at(s, method: str) -> float:
    return M.diverged_at(race_of(s)[method])


# ----------------------------------------------------------------------------- presets
START = {"gd_x0": -2.5, "gd_y0": 1.5}
QUAD = {"gd_land": "quadratic", "gd_lmax": 1.0, "gd_noise": 0.0, "gd_hb_opt": False, **START}
ONE_STEP = {**QUAD, "gd_kappa": 1, "gd_angle": 0, "gd_loglr": 0.0, "gd_methods": ["gd"],
            "gd_steps": 20}
ZIGZAG = {**QUAD, "gd_kappa": 50, "gd_angle": 0, "gd_loglr": log10(1.9), "gd_methods": ["gd"],
          "gd_steps": 300}
DIVERGE = {**QUAD, "gd_kappa": 10, "gd_angle": 20, "gd_loglr": log10(2.05),
           "gd_methods": ["gd"], "gd_steps": 300}
MOMENTUM = {**QUAD, "gd_kappa": 50, "gd_angle": 0, "gd_loglr": log10(2 / 1.02),
            "gd_methods": ["gd", "momentum"], "gd_hb_opt": True, "gd_steps": 300}
ADAPTIVE = {**QUAD, "gd_kappa": 100, "gd_angle": 45, "gd_loglr": log10(1.9),
            "gd_methods": ["gd", "adam", "rmsprop"], "gd_steps": 1000,
            hkey("adam", "lr"): 0.1, hkey("rmsprop", "lr"): 0.05}
SADDLE = {"gd_land": "saddle", "gd_loglr": -1.0, "gd_methods": ["gd", "newton"],
          "gd_noise": 0.0, "gd_steps": 300, "gd_x0": 2.0, "gd_y0": 0.0}
SADDLE_NOISE = {**SADDLE, "gd_noise": 0.05}
ROSENBROCK = {"gd_land": "rosenbrock", "gd_loglr": -3.0, "gd_noise": 0.0, "gd_steps": 1000,
              "gd_methods": ["gd", "momentum", "adam", "newton"], "gd_x0": -1.5, "gd_y0": 2.0,
              hkey("momentum", "beta"): 0.9, hkey("adam", "lr"): 0.05,
              hkey("newton", "lr"): 1.0}

C_ONE_STEP = (Claim("GD's f − f* after one step", lambda s: gap(s, "gd", 1), hi=1e-20),)
C_ZIGZAG = (Claim("share of GD steps flipping the steep direction's sign",
                  lambda s: eigen_flip_share(s, "gd", 1), lo=0.95),
            Claim("GD's measured rate (flat-direction factor 1 − 1.9/50 = 0.962)",
                  lambda s: tail_rate(s, "gd"), lo=0.955, hi=0.97))
C_DIVERGE = (Claim("step where GD diverges", lambda s: diverged_at(s, "gd"), lo=100, hi=300),)
C_MOMENTUM = (Claim("steps to f − f* ≤ 1e-8: heavy ball / GD",
                    lambda s: steps_to(s, "momentum") / steps_to(s, "gd"), hi=0.3),
              Claim("heavy ball's measured tail rate (theory (√κ−1)/(√κ+1) = 0.752)",
                    lambda s: tail_rate(s, "momentum"), lo=0.74, hi=0.80),
              Claim("share of heavy-ball steps flipping the steep direction's sign",
                    lambda s: eigen_flip_share(s, "momentum", 1), lo=0.3))
C_ADAPTIVE = (Claim("RMSProp's mean step over the last 100 steps (it keeps hopping)",
                    lambda s: mean_late_step(s, "rmsprop"), lo=0.05),
              Claim("Adam's mean step over the last 100 steps (its step anneals)",
                    lambda s: mean_late_step(s, "adam"), hi=1e-3),
              Claim("final f − f*: Adam / RMSProp", lambda s: gap(s, "adam") / gap(s, "rmsprop"),
                    hi=0.01),
              Claim("final f − f*: GD / Adam", lambda s: gap(s, "gd") / gap(s, "adam"), hi=0.01))
C_SADDLE = (Claim("GD's f − f* at the end (stuck at the saddle)", lambda s: gap(s, "gd"),
                  lo=0.24, hi=0.26),)
C_SADDLE_NOISE = (Claim("GD's f − f* at the end (escaped into a minimum)",
                        lambda s: gap(s, "gd"), hi=0.01),
                  Claim("Newton's f − f* at the end (still at the saddle)",
                        lambda s: gap(s, "newton"), lo=0.2))
C_ROSENBROCK = (Claim("final f − f*: momentum / GD", lambda s: gap(s, "momentum") / gap(s, "gd"),
                      hi=0.5),
                Claim("Newton's final f − f*", lambda s: gap(s, "newton"), hi=1e-10))

PRESETS = {
    "κ = 1, η = 1/λ: one step": Preset(
        ONE_STEP, "Both eigenvalues equal 1 and η = 1/λ: the first step lands exactly on x* "
                  "(the error curve drops to the floor at k = 1).", "race", C_ONE_STEP),
    "κ = 50: the zigzag": Preset(
        ZIGZAG, "η = 1.9 is near 2/λmax: the steep direction flips sign on every step "
                "(factor −0.9) while the flat one creeps (factor 0.962, the measured rate). "
                "The slow direction sets the rate.", "race", C_ZIGZAG),
    "η just above 2/λmax: divergence": Preset(
        DIVERGE, "η = 2.05 > 2/λmax = 2: the steep direction grows by |1 − 2.05| = 1.05 per "
                 "step. The page reports the step where |x| passed 10⁶ and stops drawing "
                 "there.", "race", C_DIVERGE),
    "Optimal momentum: faster, not smoother": Preset(
        MOMENTUM, "GD at its best η has rate (κ−1)/(κ+1) = 0.96; the heavy ball at its optimal "
                  "(η, β) has (√κ−1)/(√κ+1) = 0.75 and reaches 1e-8 in under a third of GD's "
                  "steps. It does not remove the oscillation: its path still swings across the "
                  "valley, but each swing is smaller.", "race", C_MOMENTUM),
    "Adam vs RMSProp, ill-conditioned and rotated": Preset(
        ADAPTIVE, "RMSProp divides by a running RMS of the gradient, so its step stays near η "
                  "and it keeps hopping around x* (mean step over the last 100 of 1,000 steps "
                  "≈ 0.07). Adam's momentum averages the hops away and its step anneals (below "
                  "1e-3): it ends over 100× closer in f. Neither rescaling undoes the 45° "
                  "rotation, and plain GD at a tuned η ends closer than both.", "race",
        C_ADAPTIVE),
    "Saddle: GD stalls": Preset(
        SADDLE, "Started on the line x₂ = 0 the gradient has no x₂ part: GD slides into the "
                "saddle point (0, 0) and stays (f − f* stuck at 0.25). Newton jumps straight to "
                "the saddle.", "race", C_SADDLE),
    "Saddle + gradient noise: escapes": Preset(
        SADDLE_NOISE, "A little gradient noise (σ = 0.05) pushes GD off the ridge; the negative "
                      "curvature then amplifies it and GD falls into a minimum (f − f* < 0.01). "
                      "Newton stays attracted to the saddle.", "race", C_SADDLE_NOISE),
    "Rosenbrock valley": Preset(
        ROSENBROCK, "A curved, narrow valley: GD (η = 0.001, near its stability limit across "
                    "the valley) crawls; momentum builds speed along the floor and ends at less "
                    "than half GD's error; Newton follows the curvature to the minimum.",
        "race", C_ROSENBROCK),
}

STEPS = [
    Step("One step is enough when κ = 1",
         "On a round bowl the gradient points straight at x*. With η = 1/λ the step "
         "x − η λ (x − x*) lands on x* exactly: the error drops to the float64 floor at k = 1.",
         ONE_STEP, "race", C_ONE_STEP),
    Step("Ill-conditioning makes GD zigzag",
         "With κ = λmax/λmin = 50 the error along each eigenvector is multiplied by 1 − ηλ per "
         "step. η must keep |1 − ηλmax| < 1, so the steep direction oscillates and the flat "
         "direction shrinks by only 1 − ηλmin ≈ 0.96: that factor is the rate. The tab "
         "*Step factor* shows both factors.", ZIGZAG, "factor", C_ZIGZAG),
    Step("Too large a step diverges",
         "Past η = 2/λmax the factor |1 − ηλmax| exceeds 1 and the steep component grows "
         "geometrically. The run stops where |x| passes 10⁶ and the page says at which step.",
         DIVERGE, "race", C_DIVERGE),
    Step("Momentum: faster, not smoother",
         "The heavy ball v ← βv + g, x ← x − ηv remembers past gradients. At η = 4/(√L+√μ)², "
         "β = ((√κ−1)/(√κ+1))² its rate improves from (κ−1)/(κ+1) = 0.96 to "
         "(√κ−1)/(√κ+1) = 0.75: it reaches 1e-8 in under a third of GD's steps. The path still "
         "oscillates (the two roots are complex), so 'momentum removes the zigzag' is not what "
         "happens: it shrinks every swing faster. The tab *Momentum phase diagram* maps the "
         "rate over (η, β).", MOMENTUM, "race", C_MOMENTUM),
    Step("Adaptive methods rescale coordinates, not directions",
         "RMSProp divides each coordinate of the step by a running RMS of its gradient: its "
         "step stays near η, so it hops around x* forever. Adam adds momentum and bias "
         "correction; its hops average out and the step anneals. Rotated by 45°, the curvature "
         "mixes both coordinates and neither rescaling undoes it.",
         ADAPTIVE, "race", C_ADAPTIVE),
    Step("Saddles: GD stalls, noise escapes",
         "At a saddle the Hessian has a negative eigenvalue. Exactly on the stable line GD "
         "converges to the saddle; SGD's gradient noise puts a little mass on the unstable "
         "direction, which then grows by |1 − ηλ| = 1.1 per step. Choose the preset "
         "*Saddle + gradient noise* next to add the noise.", SADDLE, "race", C_SADDLE),
    Step("Rosenbrock: a curved valley",
         "Curvature changes along the path: across the valley it is ~1000, along it ~1. "
         "GD's η is capped by the steep direction and crawls along the floor.",
         ROSENBROCK, "race", C_ROSENBROCK),
]


# ----------------------------------------------------------------------------- callbacks
def _on_click_start() -> None:
    """Contour plot click / box -> start point (runs before the script, so it may set widgets)."""
    point = figs.start_from_selection(st.session_state.get("gd_contour"), START_RANGE)
    if point is not None:
        st.session_state["gd_x0"], st.session_state["gd_y0"] = point
        st.rerun(scope="app")      # the contour sits in the scrubber's fragment: a new start
                                   # needs a new race (the whole view), not just that fragment


def _on_landscape_change() -> None:
    """A new landscape gets its own start point and a safe η = 1/λmax (half the stability
    limit of the Hessian at its minimum): a step size tuned for one landscape usually
    diverges on another."""
    s = STATE.values()
    problem = problem_of(s)[0]
    top = float(problem.curvature()[0].max())
    st.session_state["gd_loglr"] = float(np.clip(log10(1.0 / top), *LOGLR_RANGE))
    st.session_state["gd_x0"], st.session_state["gd_y0"] = map(float, problem.default_start)


# ----------------------------------------------------------------------------- views
def landscape_controls() -> dict[str, Any]:
    """Landscape, its spectrum and the step size: the controls every view shares."""
    land = STATE.widget("gd_land", on_change=_on_landscape_change)
    if land == "quadratic":
        STATE.widget("gd_kappa")
        c0, c1 = st.columns(2)
        STATE.widget("gd_lmax", c0)
        STATE.widget("gd_angle", c1)
    STATE.widget("gd_loglr")
    s = STATE.values()
    curv = curvature_of(s)
    lr, edge = 10.0 ** s["gd_loglr"], 2.0 / float(curv.max())
    best = optim.optimal_gd_lr(curv) if curv.min() > 0 else None
    show_figure(figs.lr_ruler_figure(lr, 10 ** LOGLR_RANGE[0], 10 ** LOGLR_RANGE[1], edge,
                                     best), key="gd_ruler")
    where = "at the minimum " if land != "quadratic" else ""
    st.caption(f"η = **{lr:.4g}** · 2/λmax {where}= {edge:.4g} (red: diverges)"
               + (f" · optimal η* = {best:.4g} (green)" if best else ""))
    return s


def race_controls() -> None:
    STATE.widget("gd_methods")
    STATE.widget("gd_steps")
    with st.expander("Start, noise and per-method hyperparameters"):
        c0, c1 = st.columns(2)
        STATE.widget("gd_x0", c0)
        STATE.widget("gd_y0", c1)
        st.caption("Or click the contour plot to start there.")
        STATE.widget("gd_noise")
        curv = curvature_of(STATE.values())
        STATE.widget("gd_hb_opt", disabled=not curv.min() > 0)
        for method in STATE.value("gd_methods"):
            specs = HYPER.get(method, [])
            if specs:
                st.markdown(f"**{figs.label(method)}**")
                cols = st.columns(len(specs))
                for i, (name, *_) in enumerate(specs):
                    STATE.widget(hkey(method, name), cols[i])
        st.caption("RMSProp uses α = 0.9 (Hinton's lecture; PyTorch's default is 0.99). "
                   "ε = 1e-8 (AdaGrad 1e-10), added after the square root as in PyTorch.")


def race_view(panel) -> None:
    with panel.controls:
        landscape_controls()
        race_controls()
    s = STATE.values()
    problem, eig, angle = problem_of(s)
    runs: dict[str, optim.Trajectory] = {}
    with panel.figure:
        if not s["gd_methods"]:
            st.warning("Choose at least one method to race.", icon=":material/warning:")
            return
        with user_errors("run the optimizers"):
            runs = race_of(s, session.seed())
        for tr in runs.values():
            if tr.diverged_at is not None:
                st.warning(f"**{figs.label(tr.method)} diverged at step {tr.diverged_at}**: "
                           f"|x| passed 10⁶; its curves stop there. Lower its step size.",
                           icon=":material/warning:")
        steps = int(s["gd_steps"])
        if st.session_state.get("gd_iter") in (None, st.session_state.get("gd__iter_max")):
            st.session_state["gd_iter"] = steps          # follow the end unless scrubbed
        st.session_state["gd__iter_max"] = steps
        x0, y0 = float(s["gd_x0"]), float(s["gd_y0"])
        view_x = (min(problem.xlim[0], x0 - 0.3), max(problem.xlim[1], x0 + 0.3))
        view_y = (min(problem.ylim[0], y0 - 0.3), max(problem.ylim[1], y0 + 0.3))
        grid = cached_grid(s["gd_land"], eig, angle, view_x, view_y)
        theory = theory_of(s, runs)

        @st.fragment(key="gd_scrub")
        def scrubbed() -> None:
            """The iteration scrubber with the two figures it moves: scrubbing reruns only
            this (not the race, the controls or the table)."""
            k = min(int(st.session_state["gd_iter"]), steps)
            paths = figs.path_figure(grid, problem.f_star, runs, k, (x0, y0), problem.minimizer)
            if not session.classroom():     # short ticks fit the default margins: no automargin
                paths.update_xaxes(automargin=False)    # redraw passes (-2k DOM mutations
                paths.update_yaxes(automargin=False)    # per move); classroom fonts need them
            show_figure(paths, key="gd_contour", on_select=_on_click_start,
                        selection_mode=("points", "box"))
            STATE.widget("gd_iter", hi=steps)
            show_figure(figs.loss_figure(runs, problem.f_star, theory, k), key="gd_loss")

        scrubbed()
    with panel.notes:
        rows = []
        for m, tr in runs.items():
            rows.append({"method": figs.label(m), "step size": tr.hyper["lr"],
                         f"steps to f − f* ≤ {TOL:g}": optim.steps_to_reach(tr, problem.f_star,
                                                                            TOL),
                         "measured rate": tail_rate(s, m) if tr.diverged_at is None else None,
                         "final f − f*": float(tr.losses[-1] - problem.f_star),
                         "diverged at": tr.diverged_at})
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="gd_table", column_config={
            "step size": st.column_config.NumberColumn(format="%.4g"),
            "measured rate": st.column_config.NumberColumn(format="%.4f"),
            "final f − f*": st.column_config.NumberColumn(format="%.3e")})
        explain("Dashed lines: the theoretical per-step rate ρ of GD and of the heavy ball, "
                "drawn through the end of each run so the slopes compare where the run has "
                "left its transient (at the optimal (η, β) the heavy ball's two roots coincide "
                "and its error decays like k·ρᵏ, slower than ρᵏ at first). *Measured rate*: "
                "the contraction of |x − x*| per step over the second half of the run.")
        _export(s, problem, runs)


def factor_view(panel) -> None:
    with panel.controls:
        s = landscape_controls()
        STATE.widget("gd_methods")
    s = STATE.values()
    problem, _, _ = problem_of(s)
    curv = curvature_of(s)
    lr = 10.0 ** s["gd_loglr"]
    note = "" if problem.is_quadratic else " (local quadratic model at the minimum)"
    mom = race_of(s, session.seed()).get("momentum") if s["gd_methods"] else None
    curve = None
    if mom is not None:
        lam = np.linspace(min(0.0, 1.25 * curv.min()), max(1.25 * curv.max(), 2.4 / lr), 300)
        curve = (lam, np.array([optim.heavy_ball_rate(mom.hyper["lr"], mom.hyper["beta"], [v])
                                for v in lam]))
    with panel.figure:
        show_figure(figs.step_factor_figure(lr, curv, mom.hyper["beta"] if mom else None,
                                            curve, note), key="gd_factor")
    with panel.notes:
        explain("Along the eigenvector with eigenvalue λ, one GD step multiplies the error by "
                "1 − ηλ. Every λ must stay inside the band |1 − ηλ| < 1, so the largest "
                "eigenvalue caps η at 2/λmax, and the smallest one then decides the speed. A "
                "negative λ (a saddle) always gives a factor > 1: that direction escapes.")


def eigen_view(panel) -> None:
    with panel.controls:
        landscape_controls()
        STATE.widget("gd_methods")
    s = STATE.values()
    problem = problem_of(s)[0]
    with panel.figure:
        if not s["gd_methods"]:
            st.warning("Choose at least one method.", icon=":material/warning:")
            return
        runs = race_of(s, session.seed())
        errors = {m: optim.eigen_errors(problem, tr.points) for m, tr in runs.items()}
        show_figure(figs.eigen_error_figure(errors, curvature_of(s)), key="gd_eigen")
    with panel.notes:
        explain("Each panel is one eigen-direction (smallest eigenvalue left). Below the "
                "optimal η the steep direction is finished within a few steps and the rest of "
                "the run is spent on the flat one; at η* = 2/(λmin+λmax) both directions "
                "shrink by the same factor (κ−1)/(κ+1) per step (one oscillating, one not); "
                "momentum trades a little oscillation for a much faster flat direction.")


def phase_view(panel) -> None:
    with panel.controls:
        landscape_controls()
        STATE.widget("gd_hb_opt")
    s = STATE.values()
    problem, eig, angle = problem_of(s)
    with panel.figure:
        if not (problem.is_quadratic and min(eig) > 0):
            st.info("The phase diagram is computed for quadratics with positive eigenvalues: "
                    "choose the quadratic landscape.", icon=":material/info:")
            return
        with user_errors("compute the momentum phase diagram"):
            dev = session.device()
            rm = cached_rate_map(tuple(eig), angle, RATE_MAP_STEPS, None if dev == "cpu" else dev)
            entries = {e.method: e for e in entries_of(s)}
            hb = entries.get("momentum")
            lr = 10.0 ** s["gd_loglr"]
            hb_lr = hb.lr if hb is not None else lr
            hb_beta = optim.resolve_hyper("momentum", hb_lr, **hb.hyper)["beta"] \
                if hb is not None else 0.0
            opt_lr, opt_beta = optim.optimal_momentum(eig)
            show_figure(figs.rate_map_figure(rm, hb_lr, hb_beta, (opt_lr, opt_beta)),
                        key="gd_ratemap")
            st.caption(f"Optimal heavy ball: η = {opt_lr:.4g}, β = {opt_beta:.4g}, rate "
                       f"(√κ−1)/(√κ+1) = {optim.optimal_momentum_rate(eig):.4g} vs GD's best "
                       f"(κ−1)/(κ+1) = {optim.optimal_gd_rate(eig):.4g}.")
    with panel.notes:
        explain("Every pixel is a real 300-step heavy-ball run from the current start point "
                "(one batched computation), coloured by its measured rate per step. The dashed "
                "black line is the theoretical stability edge ηλmax = 2(1 + β). β = 0 is plain "
                "GD.")


def _export(s, problem, runs) -> None:
    if not runs:
        return
    frames = [pd.DataFrame({"method": m, "step": np.arange(len(tr.points)),
                            "x1": tr.points[:, 0], "x2": tr.points[:, 1], "f": tr.losses,
                            "f_minus_fstar": tr.losses - problem.f_star,
                            "grad_norm": tr.grad_norms}) for m, tr in runs.items()]
    config = {"settings": {k: s[k] for k in STATE},
              "methods": {m: {**tr.hyper, "diverged_at": tr.diverged_at}
                          for m, tr in runs.items()}}
    with st.expander("Export"):
        export_buttons(pd.concat(frames, ignore_index=True), config, "gradient_descent")
        st.caption("CSV: every trajectory (method, step, x1, x2, f, f − f*, |∇f|). JSON: the "
                   "settings, each method's hyperparameters and divergence step.")


VIEWS = [View("race", "Race", race_view),
         View("factor", "Step factor |1 − ηλ|", factor_view),
         View("eigen", "Error per eigenvector", eigen_view),
         View("phase", "Momentum phase diagram", phase_view)]

if __name__ == "__main__":
    topic_page("gradient_descent", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"x_{k+1} = x_k - \eta\,\nabla f(x_k)")
