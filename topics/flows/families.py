"""The flow page's comparison of flow families on the same 2-D data (planar, radial, coupling,
neural ODE): each fitted the same number of Adam steps from the same seed, cached across
sessions by its inputs; the measures its claims read. Shared by the view and the claims."""
from __future__ import annotations

from typing import Any, Callable, Mapping

import streamlit as st

from engine.flows.compare import FitResult, build_flow, fit_flow, parameter_count
from topics.flows.compute import LIM, data_of

FAMILY_LABELS = {"planar": "planar", "radial": "radial", "coupling": "coupling (Real NVP)",
                 "ode": "neural ODE (RK4)"}
SIMPLE_LAYERS = (2, 8, 32)         # planar / radial layers K
CMP_STEPS = (150, 300, 600)        # Adam steps each family gets
COUPLING_LAYERS, COUPLING_HIDDEN = 8, 64
ODE_HIDDEN, ODE_STEPS = 32, 4      # the ODE field's hidden units, RK4 steps from t = 0 to 1
CMP_LR = 5e-3
CMP_RES = 60                       # density cells per axis in the comparison


def family_args(family: str, simple_layers: int) -> tuple[int, int]:
    """(layers, hidden) a family is built with on the comparison tab."""
    if family in ("planar", "radial"):
        return int(simple_layers), 0
    if family == "coupling":
        return COUPLING_LAYERS, COUPLING_HIDDEN
    return 0, ODE_HIDDEN


@st.cache_data(max_entries=48, show_spinner=False)
def fit_of(family: str, data: str, simple_layers: int, steps: int, seed: int = 0) -> FitResult:
    """One family fitted `steps` Adam steps to the data set (seeded, CPU)."""
    layers, hidden = family_args(family, simple_layers)
    d = data_of(data, seed)
    return fit_flow(family, layers, d.train, d.held_out, int(steps), hidden=hidden or 64,
                    lr=CMP_LR, seed=int(seed), lim=LIM, res=CMP_RES, ode_steps=ODE_STEPS)


def params_of(family: str, simple_layers: int) -> int:
    """The family's parameter count on the comparison tab (no training)."""
    layers, hidden = family_args(family, simple_layers)
    return parameter_count(build_flow(family, layers, hidden or 64, ODE_STEPS))


def settings_args(s: Mapping[str, Any]) -> tuple[str, int, int]:
    return str(s["fl_data"]), int(s["fl_simple"]), int(s["fl_cmp_steps"])


def fit_measure(family: str, name: str, **changes) -> Callable[[Mapping[str, Any]], float]:
    """A (slow) claim's measure: a field of fit_of(family) on the settings with `changes`."""
    def measure(s):
        data, simple, steps = settings_args({**s, **changes})
        return float(getattr(fit_of(family, data, simple, steps), name))
    return measure


def params_ratio(s: Mapping[str, Any]) -> float:
    """Parameters of the coupling flow over those of the planar flow on the settings."""
    return params_of("coupling", int(s["fl_simple"])) / params_of("planar", int(s["fl_simple"]))


def ode_evaluations(s: Mapping[str, Any]) -> float:
    """Evaluations of the ODE's field per forward pass: 4 per RK4 step."""
    return float(4 * ODE_STEPS)
