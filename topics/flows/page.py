"""Normalizing flows: one affine coupling layer on a grid (its image, log-determinants and
inverse), then Real NVP trained live on 2-D data by maximum likelihood, with its exact density,
samples and NLL; planar, radial and neural-ODE flows against coupling on the same data
(topics/flows/families_tab.py); Real NVP on the 8 x 8 digits (topics/flows/digits_tab.py).
Settings -> engine/flows/ -> topics/flows/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, the footer. The
constants and pure computations that both the views and the claims use are in
topics/flows/compute.py, PRESETS and STEPS with their claims in topics/flows/tour.py."""
from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from engine import flows
from engine.flows.reads import build_trainer, stages_of
from live.controls import live_training, read_trainer
from live.parts import Caption, Figure, Info, Metrics
from live.push import live_parts, place
from topics.flows import figures as figs
from topics.flows.compute import (BASE, DATA, HIDDEN, IMAGE_LIM, KEEPS, LAYERS, LIM, LRS,
                                  coupling_of, data_of)
from topics.flows.digits_tab import digits_view
from topics.flows.digits import TEMPERATURES
from topics.flows.families import CMP_STEPS, SIMPLE_LAYERS
from topics.flows.families_tab import families_view
from topics.flows.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("fl_keep", "keep x₁, transform x₂", "Partition", kind="radio",
            options=list(KEEPS), help="Which coordinate the layer copies (notes 004, "
                                      "Fig. 11.2-11.3: layers alternate it)."),
    Control("fl_a", 0.0, "Log-scale offset a", lo=-6.0, hi=6.0, step=0.1,
            help="Raw log-scale a + b·x_keep, bounded to s = 4·tanh(raw/4)."),
    Control("fl_b", 0.5, "Log-scale slope b", lo=-6.0, hi=6.0, step=0.1),
    Control("fl_c", 0.8, "Shift amplitude c", lo=-3.0, hi=3.0, step=0.1,
            help="Shift t(x_keep) = c·sin(w·x_keep)."),
    Control("fl_w", 1.5, "Shift frequency w", lo=0.0, hi=4.0, step=0.1),
    Control("fl_data", "moons", "Data", kind="selectbox", options=list(DATA)),
    Control("fl_layers", 8, "Coupling layers", kind="select_slider", options=list(LAYERS)),
    Control("fl_hidden", 64, "Hidden units of s and t", kind="select_slider",
            options=list(HIDDEN)),
    Control("fl_lr", 2e-3, "Learning rate (Adam)", kind="select_slider", options=list(LRS)),
    Control("fl_simple", 8, "Planar / radial layers K", kind="select_slider",
            options=list(SIMPLE_LAYERS), help="Each planar or radial layer has 5 or 4 "
                                              "parameters."),
    Control("fl_cmp_steps", 300, "Adam steps per flow", kind="select_slider",
            options=list(CMP_STEPS)),
    Control("fl_temp", 0.7, "Temperature T", kind="select_slider", options=list(TEMPERATURES),
            help="Samples are f⁻¹(z) with z ~ N(0, T² I)."),
])

CLAMP_NOTE = 0.5 * flows.S_MAX   # above this raw log-scale the tanh bound visibly bends it


# ----------------------------------------------------------------------------- views
def coupling_view(panel) -> None:
    with panel.controls:
        STATE.widget("fl_keep")
        STATE.widget("fl_a")
        STATE.widget("fl_b")
        with st.expander("Shift t"):
            STATE.widget("fl_c")
            STATE.widget("fl_w")
        st.caption("Notes 004, Fig. 11.1: the affine coupling layer.")
    s = STATE.values()
    keep = KEEPS[s["fl_keep"]]
    r = None
    with panel.figure, user_errors("apply the coupling layer"):
        r = coupling_of(s)
        show_figure(figs.coupling_figure(r.lines, r.image, r.back, r.nodes, r.node_image,
                                         r.logdet, keep, BASE), key="fl_fig_coupling")
        m = st.columns(3)
        m[0].metric("Inverse error", f"{r.inverse_error:.2e}",
                    help="max |f⁻¹(f(x)) − x| over the grid, in float32.")
        m[1].metric("log-det vs autograd", f"{r.autograd_gap:.2e}",
                    help="max |s(x_keep) − log|det J|| with J from torch.autograd.")
        m[2].metric("∫ p_Y", f"{r.image_integral:.4f}",
                    help=f"The image's density summed over [−{IMAGE_LIM:g}, {IMAGE_LIM:g}]².")
    with panel.controls:
        if r is not None and r.raw_max > CLAMP_NOTE:
            st.warning(f"The raw log-scale reaches {r.raw_max:.3g}: exp of it would "
                       f"overflow or vanish, so the layer bounds it, s = "
                       f"{flows.S_MAX:g}·tanh(raw/{flows.S_MAX:g}), |s| < {flows.S_MAX:g}.",
                       icon=":material/warning:")
    with panel.notes:
        st.latex(r"y_k = x_k,\quad y_o = x_o\,e^{s(x_k)} + t(x_k),\quad "
                 r"x_o = (y_o - t(y_k))\,e^{-s(y_k)},\quad \log|\det J| = s(x_k)")
        explain("k is the kept coordinate, o the other. Because y_k = x_k, the Jacobian is "
                "triangular and its determinant is the product of its diagonal, exp(s): the "
                "log-determinant costs nothing, however complex s and t are (notes 004, "
                "Sec. 11.2.1). The dotted lines on the left are the image sent back through the "
                "inverse: they lie on the grid. The image's density follows from the change of variables, "
                "p_Y(y) = N(f⁻¹(y); 0, I)·exp(−s), summed here on a 400 × 400 grid. A very "
                "large stretch pushes mass past the summed square, so the sum falls below 1 "
                "there: that is the square's edge, not the density.")


def train_frame_parts(view, read, points: np.ndarray, lim: float, setup: str) -> dict:
    """One live frame (live/parts.py; pure, so the frame route can build it too): the learned
    density with the data, the samples with the warped grid, the NLL curves, the numbers."""
    snap = view.snapshot()
    d = snap.density
    out = {"fl_fig_density": Figure(figs.density_figure(d.xs, d.density, points, lim,
                                                         d.integral)),
           "fl_fig_samples": Figure(figs.samples_figure(snap.samples, snap.warped, points,
                                                        lim)),
           "fl_metrics": Metrics([
               ("Train NLL", f"{snap.train_nll:.3f}", "−mean log p over the training points"),
               ("Held-out NLL", f"{snap.held_nll:.3f}", "−mean log p over 500 held-out "
                                                         "points"),
               ("∫ p on the plot", f"{d.integral:.4f}", "Sum of p·h² over the density grid.")]),
           "fl_caption": Caption(setup)}
    if view.steps > 0:
        out["fl_fig_nll"] = Figure(figs.nll_figure(
            {"train": view.history.as_arrays("train"),
             "held-out": view.history.as_arrays("held_out")}))
    else:
        out["fl_fig_nll"] = Info("Press **Play** (or **Step**) to train: the train and "
                                 "held-out NLL are plotted here.", icon=":material/play_arrow:")
    if view.diverged_at is not None:
        out["fl_caption"] = Caption(f"{setup} Training diverged at iteration "
                                    f"{view.diverged_at}: press Reset, or lower the learning "
                                    "rate.")
    return out


def train_view(panel) -> None:
    with panel.controls:
        STATE.widget("fl_data")
        STATE.widget("fl_layers")
        with st.expander("Network and learning rate"):
            STATE.widget("fl_hidden")
            STATE.widget("fl_lr")
        st.caption("Notes 004, Fig. 11.3: layers alternate the kept coordinate.")
    s = STATE.values()
    seed, device = session.seed(), session.device()
    points = data_of(s["fl_data"], seed).train
    make = functools.partial(build_trainer, s["fl_data"], int(s["fl_layers"]),
                             int(s["fl_hidden"]), float(s["fl_lr"]), seed, device, LIM)
    setup = (f"{s['fl_data']}: {len(points)} training points, {s['fl_layers']} coupling "
             f"layers of {s['fl_hidden']} hidden units, Adam at {s['fl_lr']:g}, seed {seed}.")

    def _draw(view, tick) -> None:
        parts = live_parts(train_frame_parts, view, points=points, lim=LIM, setup=setup)
        a, b = st.columns(2)
        with a:
            place(parts, "fl_fig_density")
        with b:
            place(parts, "fl_fig_samples")
        for slot in ("fl_metrics", "fl_caption", "fl_fig_nll"):
            place(parts, slot)

    with panel.figure, user_errors("train the flow"):
        live_training("fl_train", make, _draw,
                      config={"data": s["fl_data"], "layers": s["fl_layers"],
                              "hidden": s["fl_hidden"], "lr": s["fl_lr"], "seed": seed,
                              "device": device},
                      steps_per_frame=25, max_steps_per_frame=200)
    with panel.notes:
        st.latex(r"\log p(x) = \log\mathcal N(f(x); 0, I) + \sum_{k=1}^{K} "
                 r"\log\left|\det \frac{\partial f_k}{\partial h_{k-1}}\right|")
        explain("Each iteration draws a batch of 256 training points and takes one Adam step "
                "on −mean log p(x) (notes 004, Eq. 11.6). Layer k keeps coordinate k mod 2; "
                "s and t are MLPs 1 → H → H → 2 whose last layer starts at zero, so the flow "
                "starts as the identity and the density as N(0, I). The density is exact: "
                "exp(log p) on a 100 × 100 grid, and its sum over the plot is measured, not "
                "normalised. Samples are z ~ N(0, I) sent back through f⁻¹; the blue lines are "
                "the base space's grid z = const sent back the same way.")
        with st.expander("Layer by layer: the training points after each coupling layer"):
            stages_view()


def stages_view() -> None:
    """The flow's points h_k after each layer, read off the live trainer when asked for."""
    if not st.button("Draw the current flow's layers", key="fl_stages"):
        st.caption("Each layer moves one coordinate only (notes 004, Fig. 11.3); the last "
                   "panel is z, which training makes look like N(0, I).")
        return
    with user_errors("read the flow's layers"):
        stages = read_trainer("fl_train", stages_of)
        if stages is None:
            st.info("No flow yet: open this tab's training first.")
            return
        st.caption(f"Iteration {stages.steps:,}; colour: each point's x₁ in the data.")
        show_figure(figs.stages_figure(stages.points, stages.keeps, LIM), key="fl_fig_stages")


VIEWS = [View("coupling", "One coupling layer", coupling_view),
         View("train", "Real NVP on 2-D data", train_view,
              live=Live("fl_train", train_max=3_000)),
         View("families", "Planar, radial, ODE vs coupling",
              lambda panel: families_view(panel, STATE)),
         View("digits", "Real NVP on digits", lambda panel: digits_view(panel, STATE))]

if __name__ == "__main__":
    topic_page("flows", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\log p(x) = \log\mathcal N(f(x);0,I) + \sum_k s_k,\qquad "
                       r"y_o = x_o\,e^{s(x_k)} + t(x_k)")
