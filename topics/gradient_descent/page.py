"""Gradient descent & the optimizer race: every method from the same start on the same
landscape, with the theory (rates, step factors, the heavy-ball phase diagram) drawn next to
the measured curves. Settings -> engine/optim/ -> topics/gradient_descent/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, and the footer. The
constants and pure computations that both the views and the claims use are in
topics/gradient_descent/compute.py, PRESETS and STEPS with their claims in
topics/gradient_descent/tour.py."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine import optim
from topics.gradient_descent import figures as figs
from ui import session
from ui.page import View, topic_page, user_errors
from topics.gradient_descent.compute import (
    HYPER, KAPPAS, LANDSCAPE_LABELS, LANDSCAPE_NAMES, LOGLR_RANGE, RATE_MAP_STEPS, START_RANGE,
    SCHEDULE_LABELS, SHARED_LR, TAYLOR_LEVELS, TOL, cached_grid, cached_rate_map, curvature_of,
    eigen_axes_of, entries_of,
    hkey, log10, problem_of, race_of, schedule_of, tail_rate, taylor_of, theory_of)
from engine.optim import schedules
from topics.gradient_descent.tour import PRESETS, STEPS
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- state
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
    Control("gd_eigaxes", False, "Show the Hessian's eigenvector axes", kind="checkbox",
            help="Lines through the minimum along the eigenvectors of the Hessian there: the "
                 "axes of the contour ellipses, the coordinates in which a quadratic splits "
                 "into one parabola per eigenvalue."),
    Control("gd_taylor", False, "Show the quadratic model at the start", kind="checkbox",
            help="Level curves of the second-order Taylor expansion of f at the start point, "
                 "f(w₀) + gᵀ(w − w₀) + ½(w − w₀)ᵀH(w − w₀) (where H is positive definite); "
                 "its minimum is where Newton's first step lands."),
    Control("gd_sched", "transformer", "Schedule", kind="radio", options=list(SCHEDULE_LABELS),
            format_func=SCHEDULE_LABELS.get),
    Control("gd_sched_n", 20000, "Steps (or epochs) shown", kind="select_slider",
            options=[100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]),
    Control("gd_sched_d", 512, "Model width d", kind="select_slider",
            options=[128, 256, 512, 1024]),
    Control("gd_sched_warmup", 4000, "Warm-up steps w", kind="select_slider",
            options=[10, 100, 500, 1000, 2000, 4000, 8000]),
    Control("gd_sched_period", 50, "Period T₀", kind="select_slider",
            options=[10, 20, 30, 50, 100, 200, 1000]),
    Control("gd_sched_mult", 1, "Period multiplier T_mult", kind="select_slider",
            options=[1, 2, 3]),
])


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
def _fixed_margins(fig):
    """No axis automargin outside classroom mode: the short ticks fit the template's margins,
    and automargin costs Plotly extra measuring and redraw passes on every redraw (-2k DOM
    mutations per slider move on the contour alone). Classroom fonts need the margins to grow."""
    if not session.classroom():
        fig.update_xaxes(automargin=False)
        fig.update_yaxes(automargin=False)
    return fig


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
    st.markdown(figs.lr_ruler_svg(lr, 10 ** LOGLR_RANGE[0], 10 ** LOGLR_RANGE[1], edge, best,
                                  session.classroom()), unsafe_allow_html=True)
    where = "at the minimum " if land != "quadratic" else ""
    st.caption(f"η = **{lr:.4g}** · 2/λmax {where}= {edge:.4g} (red: diverges)"
               + (f" · optimal η* = {best:.4g} (green)" if best else ""))
    return s


def race_controls() -> None:
    STATE.widget("gd_methods")
    STATE.widget("gd_steps")
    STATE.widget("gd_eigaxes")
    STATE.widget("gd_taylor")
    with st.expander("Start, noise and per-method hyperparameters", key="gd_more",
                     on_change="rerun") as more:
        c0, c1 = st.columns(2)
        STATE.widget("gd_x0", c0)
        STATE.widget("gd_y0", c1)
        st.caption("Or click the contour plot to start there.")
        if more.open:       # lazy: ~10 widgets a first paint and every rerun would redraw
            _more_controls()


def _more_controls() -> None:
    """Noise and per-method hyperparameters: drawn only while their expander is open (their
    values live in the URL and the session meanwhile, like the widgets of a closed tab)."""
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


def race_setup(s) -> str:
    """What the race runs on, as the path figure's subtitle: the spectrum and rotation of a
    quadratic, the shared step size and any gradient noise."""
    parts = [f"κ = {s['gd_kappa']:g}, rotated {s['gd_angle']:g}°"] \
        if s["gd_land"] == "quadratic" else [LANDSCAPE_LABELS[s["gd_land"]]]
    lr = 10.0 ** s["gd_loglr"]
    sharing = [figs.label(e.method) for e in entries_of(s)
               if e.method in SHARED_LR and e.lr == lr]        # not the optimal heavy ball
    if sharing:
        parts.append(f"η = {lr:.4g} ({', '.join(sharing)})")
    if s["gd_noise"] > 0:
        parts.append(f"gradient noise σ = {s['gd_noise']:g}")
    return " · ".join(parts)


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
            paths = figs.path_figure(grid, problem.f_star, runs, k, (x0, y0), problem.minimizer,
                                     setup=race_setup(s),
                                     axes=eigen_axes_of(s) if s["gd_eigaxes"] else None,
                                     model=taylor_of(s).level_ellipses(TAYLOR_LEVELS)
                                     if s["gd_taylor"] else ())
            # the projector shows both figures side by side on its first screen (the texts
            # point to the error curve), the scrubber under them; a laptop stacks them, the
            # scrubber between
            present = session.classroom()
            loss = figs.loss_figure(runs, problem.f_star, theory, k)
            paths_col, loss_col = st.columns(2) if present else (st.container(), None)
            if present:                  # half a screen wide: shorter title, legends below
                below = dict(orientation="h", x=0, y=-0.2, yanchor="top")
                # the setup's landscape over the paths, its step sizes over the error curve
                landscape, *steps_used = race_setup(s).split(" · ")
                paths.update_layout(title=dict(text=f"Paths (iteration {k})",
                                               subtitle=dict(text=landscape)), legend=below)
                loss.update_layout(title=dict(text="Error f(x_k) − f*",
                                              subtitle=dict(text=" · ".join(steps_used))),
                                   legend=below)
            with paths_col:
                show_figure(_fixed_margins(paths), key="gd_contour",
                            on_select=_on_click_start, selection_mode=("points", "box"))
                if not present:
                    STATE.widget("gd_iter", hi=steps)
            with loss_col or st.container():
                show_figure(_fixed_margins(loss), key="gd_loss")
            if present:
                STATE.widget("gd_iter", hi=steps)

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
        # a static HTML table: st.dataframe's grid is a lazily loaded JS chunk drawn on a
        # canvas, a large share of this page's first paint for 4-6 rows
        st.table(pd.DataFrame(rows).style.format(
            {"step size": "{:.4g}", f"steps to f − f* ≤ {TOL:g}": "{:.0f}",
             "measured rate": "{:.4f}", "final f − f*": "{:.3e}", "diverged at": "{:.0f}"},
            na_rep="–"), hide_index=True)
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


def schedule_view(panel) -> None:
    """η_t of a learning-rate schedule (engine/optim/schedules.py, each checked against the
    PyTorch scheduler it mirrors)."""
    with panel.controls:
        name = STATE.widget("gd_sched")
        STATE.widget("gd_sched_n")
        if name == "transformer":
            STATE.widget("gd_sched_d")
            STATE.widget("gd_sched_warmup")
        else:
            STATE.widget("gd_loglr")
            if name != "constant":
                STATE.widget("gd_sched_period")
            if name == "sgdr":
                STATE.widget("gd_sched_mult")
    s = STATE.values()
    lrs = schedule_of(s)
    ups = schedules.restarts(lrs)
    with panel.figure:
        show_figure(figs.schedule_figure(lrs, SCHEDULE_LABELS[name], ups), key="gd_sched_fig")
        st.caption(f"Largest η = {lrs.max():.4g} at t = {int(lrs.argmax())}; last η = "
                   f"{lrs[-1]:.4g}" + (f"; warm restarts at t = {', '.join(map(str, ups))}"
                                       if ups.size else "") + ".")
    with panel.notes:
        explain("A schedule changes η during training. The transformer's warms up linearly "
                "for w steps (large early steps on a fresh Adam state are unstable), then "
                "decays like 1/√t, scaled by d^(−1/2). SGDR anneals η along a half cosine and "
                "restarts it at its maximum at the end of every cycle, each cycle T_mult times "
                "longer. Step decay divides η by 10 every T₀ steps.")


VIEWS = [View("race", "Race", race_view),
         View("factor", "Step factor |1 − ηλ|", factor_view),
         View("eigen", "Error per eigenvector", eigen_view),
         View("phase", "Momentum phase diagram", phase_view),
         View("schedule", "Schedules", schedule_view)]

if __name__ == "__main__":
    topic_page("gradient_descent", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"x_{k+1} = x_k - \eta\,\nabla f(x_k)")
