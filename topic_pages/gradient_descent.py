"""Gradient descent & the optimizer race: every method from the same start on the same
landscape, with the theory (rates, step factors, the heavy-ball phase diagram) drawn next to
the measured curves. Widgets -> engine/optim.py -> viz/gradient_descent_figures.py."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from engine import optim
from viz import gradient_descent_figures as figs
from viz import session
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

LANDSCAPE_NAMES = ["quadratic", *optim.LANDSCAPES]
LANDSCAPE_LABELS = {"quadratic": "Quadratic", "rosenbrock": "Rosenbrock", "saddle": "Saddle",
                    "two_minima": "Two minima"}     # short: the URL stores these labels
KAPPAS = [1, 1.5, 2, 3, 5, 7, 10, 15, 20, 25, 30, 50, 70, 100, 200, 500, 1000]
LOGLR_RANGE = (-4.0, 1.0)
START_RANGE = (-3.0, 3.0)
SHARED_LR = ("gd", "momentum", "nesterov")    # methods that use the main η
TOL = 1e-8

# per-method hyperparameter widgets: (name, label, min, max, page default)
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


START = {"gd_x0": -2.5, "gd_y0": 1.5}
QUAD = {"gd_land": "quadratic", "gd_lmax": 1.0, "gd_noise": 0.0, "gd_hb_opt": False, **START}
PRESETS = {
    "κ = 1, η = 1/λ: one step": Preset(
        {**QUAD, "gd_kappa": 1, "gd_angle": 0, "gd_loglr": 0.0, "gd_methods": ["gd"],
         "gd_steps": 20},
        "Both eigenvalues equal 1 and η = 1/λ: the first step lands exactly on x* (the error "
        "curve drops to the floor at k = 1)."),
    "κ = 50: the zigzag": Preset(
        {**QUAD, "gd_kappa": 50, "gd_angle": 0, "gd_loglr": log10(1.9), "gd_methods": ["gd"],
         "gd_steps": 300},
        "η = 1.9 is near 2/λmax: the steep direction flips sign every step (factor −0.9) while "
        "the flat one creeps (factor 0.962). The slow direction sets the rate."),
    "η just above 2/λmax: divergence": Preset(
        {**QUAD, "gd_kappa": 10, "gd_angle": 20, "gd_loglr": log10(2.05), "gd_methods": ["gd"],
         "gd_steps": 300},
        "η = 2.05 > 2/λmax = 2: the steep direction grows by |1 − 2.05| = 1.05 per step. The "
        "page reports the step where |x| passed 10⁶ and stops drawing there."),
    "Optimal momentum removes the zigzag": Preset(
        {**QUAD, "gd_kappa": 50, "gd_angle": 0, "gd_loglr": log10(2 / 1.02),
         "gd_methods": ["gd", "momentum"], "gd_hb_opt": True, "gd_steps": 300},
        "GD at its best η has rate (κ−1)/(κ+1) = 0.96; the heavy ball at its optimal (η, β) "
        "has (√κ−1)/(√κ+1) = 0.75: the dashed theory lines match the measured slopes."),
    "Adam vs GD, ill-conditioned and rotated": Preset(
        {**QUAD, "gd_kappa": 100, "gd_angle": 45, "gd_loglr": log10(1.9),
         "gd_methods": ["gd", "adam", "rmsprop"], "gd_steps": 500,
         hkey("adam", "lr"): 0.1, hkey("rmsprop", "lr"): 0.05},
        "Adam rescales each coordinate, but at 45° the valley is not aligned with the "
        "coordinates: its per-coordinate scaling cannot undo the rotation, and its fixed step "
        "size leaves it hovering around x* (try angle 0)."),
    "Saddle: GD stalls": Preset(
        {"gd_land": "saddle", "gd_loglr": -1.0, "gd_methods": ["gd", "newton"],
         "gd_noise": 0.0, "gd_steps": 300, "gd_x0": 2.0, "gd_y0": 0.0},
        "Started on the line y = 0 the gradient has no y-part: GD slides into the saddle "
        "point (0, 0) and stays (f − f* stuck at 0.25). Newton jumps straight to the saddle."),
    "Saddle + gradient noise: escapes": Preset(
        {"gd_land": "saddle", "gd_loglr": -1.0, "gd_methods": ["gd", "newton"],
         "gd_noise": 0.05, "gd_steps": 300, "gd_x0": 2.0, "gd_y0": 0.0},
        "A little gradient noise (σ = 0.05) pushes GD off the ridge; the negative curvature "
        "then amplifies it and GD falls into a minimum. Newton stays attracted to the saddle."),
    "Rosenbrock valley": Preset(
        {"gd_land": "rosenbrock", "gd_loglr": -3.0, "gd_noise": 0.0, "gd_steps": 1000,
         "gd_methods": ["gd", "momentum", "adam", "newton"], "gd_x0": -1.5, "gd_y0": 2.0,
         hkey("momentum", "beta"): 0.9, hkey("adam", "lr"): 0.05, hkey("newton", "lr"): 1.0},
        "A curved, narrow valley: GD (η = 0.001, near its stability limit across the valley) "
        "crawls; momentum builds speed along the floor; Newton follows the curvature."),
}
_P = {name: p.settings for name, p in PRESETS.items()}
STEPS = [
    Step("One step is enough when κ = 1",
         "On a round bowl the gradient points straight at x*. With η = 1/λ the step "
         "x − η λ (x − x*) lands on x* exactly: the error drops to the float64 floor at k = 1.",
         _P["κ = 1, η = 1/λ: one step"]),
    Step("Ill-conditioning makes GD zigzag",
         "With κ = λmax/λmin = 50 the error along each eigenvector is multiplied by 1 − ηλ per "
         "step. η must keep |1 − ηλmax| < 1, so the steep direction oscillates and the flat "
         "direction shrinks by only 1 − ηλmin ≈ 0.96: that factor is the rate (third tab).",
         _P["κ = 50: the zigzag"]),
    Step("Too large a step diverges",
         "Past η = 2/λmax the factor |1 − ηλmax| exceeds 1 and the steep component grows "
         "geometrically. The run stops where |x| passes 10⁶ and the page says at which step.",
         _P["η just above 2/λmax: divergence"]),
    Step("Momentum damps the zigzag",
         "The heavy ball v ← βv + g, x ← x − ηv remembers past gradients: the oscillating "
         "components cancel, the consistent ones add up. At η = 4/(√L+√μ)², "
         "β = ((√κ−1)/(√κ+1))² the rate improves from (κ−1)/(κ+1) to (√κ−1)/(√κ+1). The phase "
         "diagram (last tab) shows where in (η, β) this works.",
         _P["Optimal momentum removes the zigzag"]),
    Step("Adaptive methods rescale coordinates, not directions",
         "Adam divides each coordinate of the step by a running RMS of its gradient. That helps "
         "when the valley is aligned with the axes; rotated by 45° the curvature mixes both "
         "coordinates and the trick is blunted. Its step stays ~η, so it does not settle "
         "exactly on x* without decaying η.",
         _P["Adam vs GD, ill-conditioned and rotated"]),
    Step("Saddles: GD stalls, noise escapes",
         "At a saddle the Hessian has a negative eigenvalue. Exactly on the stable line GD "
         "converges to the saddle; SGD's gradient noise puts a little mass on the unstable "
         "direction, which then grows by |1 − ηλ| = 1.1 per step. Choose the next preset to "
         "add the noise.", _P["Saddle: GD stalls"]),
    Step("Rosenbrock: a curved valley",
         "Curvature changes along the path: across the valley it is ~1000, along it ~1. "
         "GD's η is capped by the steep direction and crawls along the floor.",
         _P["Rosenbrock valley"]),
]


def _clamp_state(key: str, lo: float, hi: float) -> None:
    """Keep a session value inside [lo, hi] (a widget with a bad value would raise)."""
    v = st.session_state.get(key)
    if isinstance(v, (int, float)) and not lo <= v <= hi:
        st.session_state[key] = min(max(v, lo), hi)


def _on_click_start() -> None:
    """Contour plot click / box -> start point (runs before the script, so it may set widgets)."""
    point = figs.start_from_selection(st.session_state.get("gd_contour"), START_RANGE)
    if point is not None:
        st.session_state["gd_x0"], st.session_state["gd_y0"] = point


def _on_landscape_change() -> None:
    """A new landscape gets its own start point and a safe η = 1/λmax (half the stability
    limit of the Hessian at its minimum): a GD step size tuned for one landscape usually
    diverges on another."""
    land = st.session_state.get("gd_land", "quadratic")
    lmax = float(st.session_state.get("gd_lmax", 1.0))
    kappa = float(st.session_state.get("gd_kappa", 20))
    problem = optim.make_landscape(land, (lmax / kappa, lmax),
                                   float(st.session_state.get("gd_angle", 30)))
    top = float(problem.curvature()[0].max())
    st.session_state["gd_loglr"] = float(np.clip(log10(1.0 / top), *LOGLR_RANGE))
    st.session_state["gd_x0"], st.session_state["gd_y0"] = map(float, problem.default_start)


@st.cache_data(max_entries=16, show_spinner=False)
def cached_rate_map(eigenvalues: tuple, angle: float, steps: int, device: str | None):
    q = optim.Quadratic.from_spectrum(eigenvalues, angle)
    lmax = max(eigenvalues)
    lrs = np.geomspace(0.05 / lmax, 4.2 / lmax, 60)
    betas = np.linspace(0.0, 0.99, 60)
    return optim.rate_map(q, lrs, betas, steps=steps, device=device)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_grid(land: str, eigenvalues: tuple, angle: float, xlim: tuple, ylim: tuple):
    return optim.landscape_grid(optim.make_landscape(land, eigenvalues, angle), xlim, ylim, 90)


# ------------------------------------------------------------------------------ header
page_header("Gradient descent & the optimizer race",
            "every optimizer starts from the same point on the same landscape; watch GD zigzag, "
            "diverge past η = 2/λmax, and see what momentum, Nesterov and adaptive methods change, "
            "with the theoretical rates drawn next to the measured ones.",
            r"x_{k+1} = x_k - \eta\,\nabla f(x_k),\qquad "
            r"f(x)=\tfrac12 (x-x^*)^\top A (x-x^*):\; z_i \leftarrow (1-\eta\lambda_i)\,z_i")
top = st.columns([2, 1], vertical_alignment="bottom")
with top[0]:
    preset_picker(PRESETS, key="gd_preset")
with top[1].popover("Guided tour (7 steps)", icon=":material/school:", width="stretch"):
    guided_steps(STEPS, key="gd_tour")

controls, main = st.columns([1, 2.4], gap="medium")
with controls:
    land = st.selectbox("Landscape", LANDSCAPE_NAMES, format_func=LANDSCAPE_LABELS.get,
                        key="gd_land", bind="query-params", on_change=_on_landscape_change,
                        help="Choosing a landscape also sets its start point and η = 1/λmax "
                             "(λmax of the Hessian at its minimum).")
    if land == "quadratic":
        kappa = st.select_slider("Condition number κ = λmax/λmin", KAPPAS, value=20,
                                 key="gd_kappa", bind="query-params")
        lmax = st.slider("Scale λmax", 0.1, 10.0, 1.0, 0.1, key="gd_lmax", bind="query-params")
        angle = st.slider("Rotation angle (degrees)", 0, 180, 30, key="gd_angle",
                          bind="query-params")
        eigenvalues = (lmax / float(kappa), lmax)
    else:
        kappa, lmax, angle, eigenvalues = None, None, 0, (0.05, 1.0)
    problem = optim.make_landscape(land, eigenvalues, angle)
    curv, _ = problem.curvature()
    edge = 2.0 / float(curv.max())
    best = optim.optimal_gd_lr(curv) if curv.min() > 0 else None

    loglr = st.slider("log₁₀ η (GD, momentum, Nesterov)", *LOGLR_RANGE, log10(1.4), 0.01,
                      key="gd_loglr", bind="query-params",
                      help="Log scale. η for the three curvature-scaled methods; the adaptive "
                           "methods and Newton have their own step size below.")
    lr = 10.0 ** loglr
    show_figure(figs.lr_ruler_figure(lr, 10 ** LOGLR_RANGE[0], 10 ** LOGLR_RANGE[1], edge, best),
                key="gd_ruler")
    where = "at the minimum " if land != "quadratic" else ""
    st.caption(f"η = **{lr:.4g}** · 2/λmax {where}= {edge:.4g} (red: diverges)"
               + (f" · optimal η* = 2/(λmin+λmax) = {best:.4g} (green)" if best else ""))
    methods = st.multiselect("Methods in the race", list(optim.OPTIMIZERS),
                             default=["gd", "momentum", "nesterov", "adam"],
                             format_func=figs.label, key="gd_methods", bind="query-params")
    steps = st.slider("Steps", 10, 1000, 200, 10, key="gd_steps", bind="query-params")
    noise = st.slider("Gradient noise σ (SGD model)", 0.0, 2.0, 0.0, 0.01, key="gd_noise",
                      bind="query-params", help="g = ∇f(x) + σ ξ, ξ ~ N(0, I), seeded by the "
                                                "sidebar seed; every method sees the same noise.")
    c0, c1 = st.columns(2)
    x0 = c0.number_input("Start x₁", *START_RANGE, START["gd_x0"], 0.1, key="gd_x0",
                         bind="query-params")
    y0 = c1.number_input("Start x₂", *START_RANGE, START["gd_y0"], 0.1, key="gd_y0",
                         bind="query-params")
    st.caption("Or click the contour plot to start there (or choose *Box select* in its "
               "toolbar and drag a small box).")
    hb_opt = False
    with st.expander("Per-method hyperparameters"):
        hb_opt = st.checkbox("Momentum: use the optimal (η, β) of this quadratic", False,
                             key="gd_hb_opt", bind="query-params",
                             disabled=best is None)
        hyper_values: dict[str, dict[str, float]] = {}
        for method in methods:
            specs = HYPER.get(method, [])
            if not specs:
                continue
            st.markdown(f"**{figs.label(method)}**")
            cols = st.columns(len(specs))
            hyper_values[method] = {
                name: cols[i].number_input(text, lo, hi, default, key=hkey(method, name),
                                           format="%.4g", bind="query-params")
                for i, (name, text, lo, hi, default) in enumerate(specs)}
        st.caption("RMSProp uses α = 0.9 (Hinton's lecture; PyTorch's default is 0.99). "
                   "ε = 1e-8 (AdaGrad 1e-10), added after the square root as in PyTorch.")

# ------------------------------------------------------------------------------ compute
entries: list[optim.RaceEntry] = []
for method in methods:
    hp = dict(hyper_values.get(method, {}))
    step_size = hp.pop("lr", lr if method in SHARED_LR else None)
    if method == "momentum" and hb_opt and best is not None:
        step_size, hp["beta"] = optim.optimal_momentum(curv)
    entries.append(optim.RaceEntry(method, step_size, hp))

runs: dict[str, optim.Trajectory] = {}
with user_errors("run the optimizers"):
    if not methods:
        st.warning("Choose at least one method to race.", icon=":material/warning:")
    runs = optim.race(problem, entries, (x0, y0), steps, seed=session.seed(), grad_noise=noise)

with main:
    for tr in runs.values():
        if tr.diverged_at is not None:
            st.warning(f"**{figs.label(tr.method)} diverged at step {tr.diverged_at}**: |x| "
                       f"passed 10⁶ (or f overflowed); its curves stop there. Lower its step "
                       f"size (for GD: η < 2/λmax = {edge:.4g}).", icon=":material/warning:")
    if "gd_iter" not in st.session_state or \
            st.session_state["gd_iter"] == st.session_state.get("gd__iter_max"):
        st.session_state["gd_iter"] = steps          # follow the end unless scrubbed
    _clamp_state("gd_iter", 0, steps)
    st.session_state["gd__iter_max"] = steps
    k = st.slider("Show iteration k", 0, steps, key="gd_iter",
                  help="Scrub through the race: every path is drawn up to step k.")
    view_x = (min(problem.xlim[0], x0 - 0.3), max(problem.xlim[1], x0 + 0.3))
    view_y = (min(problem.ylim[0], y0 - 0.3), max(problem.ylim[1], y0 + 0.3))
    grid = cached_grid(land, eigenvalues, float(angle), view_x, view_y)
    with user_errors("draw the paths"):
        show_figure(figs.path_figure(grid, problem.f_star, runs, k, (x0, y0), problem.minimizer),
                    key="gd_contour", on_select=_on_click_start, selection_mode=("points", "box"))

    theory = {}
    if problem.is_quadratic and runs:
        if "gd" in runs:
            rho = optim.gd_rate(runs["gd"].hyper["lr"], eigenvalues)
            theory["gd"] = (rho, f"theory GD: ρ^2k, ρ = {rho:.4g}")
        if "momentum" in runs:
            hp = runs["momentum"].hyper
            rho = optim.heavy_ball_rate(hp["lr"], hp["beta"], eigenvalues)
            theory["momentum"] = (rho, f"theory heavy ball: ρ = {rho:.4g}")
    if runs:
        show_figure(figs.loss_figure(runs, problem.f_star, theory, k), key="gd_loss")
        rows = []
        for m, tr in runs.items():
            hit = optim.steps_to_reach(tr, problem.f_star, TOL)
            rows.append({"method": figs.label(m), "step size": tr.hyper["lr"],
                         f"steps to f − f* ≤ {TOL:g}": hit,
                         "final f − f*": float(tr.losses[-1] - problem.f_star),
                         "diverged at": tr.diverged_at})
        race_table = pd.DataFrame(rows)
        st.dataframe(race_table, hide_index=True, key="gd_table", column_config={
            "step size": st.column_config.NumberColumn(format="%.4g"),
            "final f − f*": st.column_config.NumberColumn(format="%.3e")})

tabs = st.tabs(["Step factor |1 − ηλ|", "Error per eigenvector", "Momentum phase diagram",
                "Export"])
note = "" if problem.is_quadratic else " (local quadratic model at the minimum)"
mom = runs.get("momentum")
with tabs[0]:
    curve = None
    if mom is not None:
        lam_grid = np.linspace(min(0.0, 1.25 * curv.min()), max(1.25 * curv.max(), 2.4 / lr), 300)
        curve = (lam_grid, np.array([optim.heavy_ball_rate(mom.hyper["lr"], mom.hyper["beta"],
                                                           [v]) for v in lam_grid]))
    show_figure(figs.step_factor_figure(lr, curv, mom.hyper["beta"] if mom else None, curve,
                                        note), key="gd_factor")
    explain("Along the eigenvector with eigenvalue λ, one GD step multiplies the error by "
            "1 − ηλ. Every λ must stay inside the band |1 − ηλ| < 1, so the largest eigenvalue "
            "caps η at 2/λmax, and the smallest one then decides the speed. A negative λ "
            "(a saddle) always gives a factor > 1: that direction escapes.")
with tabs[1]:
    if runs:
        errors = {m: optim.eigen_errors(problem, tr.points[: k + 1]) for m, tr in runs.items()}
        show_figure(figs.eigen_error_figure(errors, curv), key="gd_eigen")
    explain("Each panel is one eigen-direction (smallest eigenvalue left). GD finishes the steep "
            "direction within a few steps (its “milestone”), then spends the rest of the run on "
            "the flat one; momentum trades a little oscillation for a much faster flat direction.")
with tabs[2]:
    if problem.is_quadratic and min(eigenvalues) > 0:
        with user_errors("compute the momentum phase diagram"):
            dev = session.device()
            rm = cached_rate_map(tuple(eigenvalues), float(angle), 300,
                                 None if dev == "cpu" else dev)
            hb = runs.get("momentum")
            opt_lr, opt_beta = optim.optimal_momentum(eigenvalues)
            show_figure(figs.rate_map_figure(rm, hb.hyper["lr"] if hb else lr,
                                             hb.hyper["beta"] if hb else 0.0,
                                             (opt_lr, opt_beta)), key="gd_ratemap")
            st.caption(f"Optimal heavy ball: η = {opt_lr:.4g}, β = {opt_beta:.4g}, rate "
                       f"(√κ−1)/(√κ+1) = {optim.optimal_momentum_rate(eigenvalues):.4g} "
                       f"vs GD's best (κ−1)/(κ+1) = {optim.optimal_gd_rate(eigenvalues):.4g}.")
        explain("Every pixel is a real 300-step heavy-ball run from the current start point "
                "(one batched computation), coloured by its measured rate per step. The dashed "
                "black line is the theoretical stability edge ηλmax = 2(1 + β). β = 0 is plain GD.")
    else:
        st.info("The phase diagram is computed for quadratics with positive eigenvalues: choose "
                "the quadratic landscape.", icon=":material/info:")
with tabs[3]:
    if runs:
        frames = []
        for m, tr in runs.items():
            frames.append(pd.DataFrame({"method": m, "step": np.arange(len(tr.points)),
                                        "x1": tr.points[:, 0], "x2": tr.points[:, 1],
                                        "f": tr.losses, "f_minus_fstar": tr.losses - problem.f_star,
                                        "grad_norm": tr.grad_norms}))
        config = {"landscape": land, "eigenvalues": list(eigenvalues) if land == "quadratic"
                  else None, "angle_deg": angle, "lr": lr, "steps": steps, "grad_noise": noise,
                  "start": [x0, y0],
                  "methods": {m: {**tr.hyper, "diverged_at": tr.diverged_at}
                              for m, tr in runs.items()}}
        export_buttons(pd.concat(frames, ignore_index=True), config, "gradient_descent")
        st.caption("CSV: every trajectory (method, step, x1, x2, f, f − f*, |∇f|). JSON: the "
                   "settings, each method's hyperparameters and divergence step.")
