"""The flow page's comparison tab: planar, radial, coupling and neural-ODE flows fitted the same
way to the same 2-D data, their learned densities side by side, and what each costs."""
from __future__ import annotations

import streamlit as st

from topics.flows import figures as figs
from topics.flows.compute import LIM, base_density, data_of
from topics.flows.families import (COUPLING_HIDDEN, COUPLING_LAYERS, FAMILY_LABELS,
                                   ODE_HIDDEN, ODE_STEPS, fit_of, settings_args)
from ui.page import user_errors
from ui.render import explain, show_figure
from ui.state import StateTable

FITTED = "fl_cmp_fitted"          # session key: the settings fitted in this session


def families_view(panel, state: StateTable) -> None:
    with panel.controls:
        state.widget("fl_data")
        state.widget("fl_simple")
        state.widget("fl_cmp_steps")
        st.caption("Each family gets the same Adam steps, batch and seed.")
    args = settings_args(state.values())
    data, simple, steps = args
    fitted = st.session_state.setdefault(FITTED, set())
    with panel.figure:
        pressed = st.button(f"Fit the four flows ({steps} steps each)", key="fl_cmp_fit",
                            type="primary")
        if not pressed and args not in fitted:
            st.info("Press **Fit** to train a planar, a radial, a coupling and a neural-ODE "
                    "flow on the same points (cached afterwards; the ODE takes longest).",
                    icon=":material/play_arrow:")
            xs, base = base_density(LIM)
            show_figure(figs.families_figure(
                [("before fitting: every flow's base density N(0, I)", xs, base)],
                data_of(data, 0).train, LIM), key="fl_fig_families")
        else:
            with user_errors("fit the flows"):
                results = []
                bar = st.progress(0.0, text="fitting…")
                for i, family in enumerate(FAMILY_LABELS):
                    bar.progress(i / len(FAMILY_LABELS), text=f"fitting the {family} flow…")
                    results.append(fit_of(family, data, simple, steps))
                bar.empty()
                fitted.add(args)
                points = data_of(data, 0).train
                show_figure(figs.families_figure(
                    [(f"{FAMILY_LABELS[r.family]}: NLL {r.held_nll:.2f}", r.density.xs,
                      r.density.density) for r in results], points, LIM), key="fl_fig_families")
                st.dataframe({
                    "flow": [FAMILY_LABELS[r.family] for r in results],
                    "layers": [r.layers if r.family != "ode" else f"{ODE_STEPS} RK4 steps"
                               for r in results],
                    "parameters": [r.params for r in results],
                    "ms per step": [round(1e3 * r.seconds_per_step, 2) for r in results],
                    "held-out NLL": [round(r.held_nll, 3) for r in results],
                    "∫ p on the plot": [round(r.density.integral, 3) for r in results]},
                    hide_index=True, key="fl_cmp_table")
                coupling = next(r for r in results if r.family == "coupling")
                ode = next(r for r in results if r.family == "ode")
                st.caption(f"Measured on this server: one ODE step costs "
                           f"{ode.seconds_per_step / coupling.seconds_per_step:.1f}× a "
                           "coupling step.")
    with panel.notes:
        st.latex(r"\text{planar: } y = x + \hat u\,\tanh(w^\top x + b),\quad "
                 r"\log|\det J| = \log|1 + \hat u^\top w\,(1-\tanh^2)|")
        st.latex(r"\text{ODE: } \frac{dz}{dt} = g(z, t),\quad "
                 r"\log p(x) = \log\mathcal N(z(1)) + \int_0^1 \operatorname{tr}"
                 r"\frac{\partial g}{\partial z}\,dt")
        explain("All four are trained in the density direction x → z, where the likelihood "
                "is exact. A planar layer bends the plane along one line, a radial layer "
                "around one point: each has a handful of parameters and a log-determinant "
                "in closed form, but K of them add only K bends, so the moons stay blurred "
                f"even at K = 32. The coupling flow ({COUPLING_LAYERS} layers of "
                f"{COUPLING_HIDDEN} hidden units) has thousands of parameters and a triangular "
                "Jacobian. The neural ODE moves points along a learned velocity field "
                f"g (an MLP of {ODE_HIDDEN} units taking z and t), integrated by "
                f"{ODE_STEPS} RK4 steps; its log-determinant is the integral of the trace of "
                "∂g/∂z, exact here because the 2 × 2 Jacobian is cheap. In high dimension "
                "that trace is estimated instead (Hutchinson: εᵀ(∂g/∂z)ε with random ±1 "
                "entries ε; the engine's tests check it against the exact trace). Each "
                "step of the ODE runs the field 4 times per RK4 step, which is what the "
                "time column shows. Planar and radial layers have no closed-form inverse, "
                "so only densities are drawn.")
