"""Adversarial examples: attack the digits CNN with FGSM and PGD, compare it with the same
network trained on PGD examples (Madry's min-max), and see why a linear score is fragile in
high dimension. Settings -> engine/adversarial/__init__.py (attacks, curves, the linear explanation) and
engine/adversarial/training.py (the trainer, the shipped snapshots) -> topics/adversarial/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, one function per view, and the
footer. The constants and pure computations that both the views and the claims use are in
topics/adversarial/compute.py, PRESETS and STEPS with their claims in topics/adversarial/tour.py.

Every accuracy is measured on the same 359 held-out digits (the 20% test part of the seeded
split, engine.adversarial.training.heldout_digits), never seen in training. Pixels are in
[0, 1]: the scanner's 17 grey levels 0..16 divided by 16, so eps = 0.125 = 2/16 moves each
pixel by at most two grey levels.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import streamlit as st

from engine.adversarial.training import AdvTrainConfig, AdversarialTrainer
from topics.adversarial import figures as figs
from ui import screen, session
from ui import warm
from topics.adversarial.compute import (
    clean_accuracy, target_of, attack_of, heldout_accuracy, targeted_rate, curves_of,
    gallery_digits, linear_of, loglog_slope, N_HELDOUT, GALLERY, CURVE_EPS, LIVE_EPS, CLAIM_EPS,
    MODELS, MODEL_LABELS, ATTACKS, ATTACK_LABELS, TARGETS, TRAIN_ATTACKS, GREY_STEPS,
    model_recipe)
from topics.adversarial.tour import PRESETS, STEPS
from live.controls import is_playing, live_training
from live.push import live_parts, place
from ui.page import Live, View, topic_page, user_errors
from live.parts import Caption, Figure
from ui.progress import progress
from ui.render import explain, present_height, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants
LIVE_CURVE_EVERY_S = 3.0   # playing: the live curve is re-measured in the background at most this often

STATE = StateTable([
    Control("adv_model", "standard", "Network", kind="segmented", options=list(MODELS),
            format_func=MODEL_LABELS.get,
            help="Standard: trained on clean digits. Robust: the same CNN adversarially trained "
                 "on PGD-7 examples at ε = 0.15."),
    Control("adv_attack", "pgd", "Attack", kind="segmented", options=list(ATTACKS),
            format_func=ATTACK_LABELS.get,
            help="FGSM: one step of size ε along sign(∇ₓL). PGD: several smaller steps, each "
                 "projected back into the L∞ ε-ball. PGD L2 uses the L2 ball of radius 8ε (the "
                 "L2 length of moving all 64 pixels by ε)."),
    Control("adv_eps", 0.125, "ε (max change per pixel)", lo=0.0, hi=0.3,
            step=0.005, fmt="%.3f",
            help="Pixels are in [0, 1]. 0.0625 = one of the scanner's 16 grey levels; 0.125 = two."),
    Control("adv_target", -1, "Goal", kind="selectbox", options=TARGETS,
            format_func=lambda t: "untargeted: any wrong class" if t < 0 else f"targeted: class {t}"),
    Control("adv_digit", 12, "Held-out digit #", kind="number", lo=0, hi=N_HELDOUT - 1, step=1,
            help="Or click a digit in the strip under the figure."),
    Control("adv_steps", 10, "PGD steps", lo=1, hi=50, step=1,
            help="Step size α = ε/4 (L2: α = 2ε), random start in the ball."),
    Control("adv_train_eps", 0.15, "Training ε", lo=0.0, hi=0.3, step=0.01, fmt="%.2f"),
    Control("adv_train_attack", "pgd", "Training inputs", kind="segmented",
            options=list(TRAIN_ATTACKS), format_func=TRAIN_ATTACKS.get),
    Control("adv_lin_eps", 0.01, "ε of the linear model", lo=0.001, hi=0.1, step=0.001,
            fmt="%.3f"),
])


# ----------------------------------------------------------------------------- callbacks
def _on_pick_digit() -> None:
    """Gallery click -> the digit to attack (runs before the script, so it may set widgets)."""
    i = figs.gallery_index(st.session_state.get("adv_gallery"), GALLERY)
    if i is not None:
        st.session_state["adv_digit"] = i


# ----------------------------------------------------------------------------- views
def attack_controls() -> None:
    STATE.widget("adv_model")
    STATE.widget("adv_attack")
    STATE.widget("adv_eps")
    STATE.widget("adv_target")
    with st.expander("Digit and PGD steps"):
        STATE.widget("adv_digit")
        STATE.widget("adv_steps", disabled=STATE.value("adv_attack") == "fgsm")


def attack_view(panel) -> None:
    with panel.controls:
        attack_controls()
    s = STATE.values()
    seed, device = session.seed(), session.device()
    name = {"fgsm": "FGSM", "pgd": f"PGD-{s['adv_steps']}",
            "pgd_l2": f"L2 PGD-{s['adv_steps']} (radius 8ε)"}[s["adv_attack"]]
    with panel.figure:
        with user_errors("attack the digit"):
            # the first open attacks all held-out digits: a spinner, not a blank column
            with st.spinner(f"Attacking this digit and the {N_HELDOUT} held-out digits…"):
                r = attack_of(s, seed, device)
                heldout_accuracy(s, seed, device)
            # on the projector the figure leaves room for the accuracies under it (the
            # tour's words name them): both on the first screen
            show_figure(figs.attack_figure(r, s["adv_model"], name,
                                           model_recipe(s["adv_model"], device), GREY_STEPS),
                        key="adv_attack_fig",
                        height=present_height(below=screen.METRIC_ROW_PX)
                        if session.classroom() else None)
            c = st.container(key="adv_accuracies").columns(3)
            c[0].metric("Held-out accuracy, attacked",
                        f"{heldout_accuracy(s, seed, device):.1%}",
                        help=f"{N_HELDOUT} held-out digits, this network, this attack and ε.")
            if target_of(s) is not None:
                c[1].metric(f"Held-out digits sent to {target_of(s)}",
                            f"{targeted_rate(s, seed, device):.1%}")
            else:
                c[1].metric("Clean held-out accuracy",
                            f"{clean_accuracy(s, device=device):.1%}")
            c[2].metric("Perturbation ‖δ‖∞ / ‖δ‖₂", f"{r.linf:.3f} / {r.l2:.2f}")
        images, labels = gallery_digits()
        show_figure(figs.gallery_figure(images, labels, int(s["adv_digit"])),
                    key="adv_gallery", on_select=_on_pick_digit, selection_mode=("points",))
    with panel.notes:
        explain("**FGSM** x + ε·sign(∇ₓL(x, y)) and **PGD** (repeat: step α·sign(∇ₓL), project "
                "into the ε-ball around x and the pixel range [0, 1]) raise the loss of the true "
                "class y; a **targeted** attack lowers the loss of the chosen class instead. "
                "Pixels are in [0, 1] (the digits' 16 grey levels / 16), so ε = 0.0625 is one "
                "grey level. *PGD (L2)* limits the total length ‖δ‖₂ ≤ 8ε instead of each "
                "pixel: the same budget spread as the attack likes. The bar colours: green the "
                "true class, red a wrong winner.")


def _train_config(s, seed: int) -> dict:
    return {"train_eps": float(s["adv_train_eps"]), "attack": s["adv_train_attack"],
            "seed": int(seed)}


def curves_frame_parts(view, read, curves, train_eps: float) -> dict:
    """One live frame of the Robustness tab as parts (live/parts.py; pure, so the frame route
    can build it too): the curves with the live CNN's PGD curve, and the caption under them
    (empty before the first step)."""
    snap = view.snapshot()
    label = f"trained live (ε = {train_eps:.2f}, step {snap.curve_step})" if snap.step else None
    note = ""
    if snap.step and snap.diverged_at is None:
        behind = f" (training is at step {snap.step})" if snap.curve_step != snap.step else ""
        note = (f"Live CNN after {snap.curve_step} of {AdvTrainConfig().total_steps} steps"
                f"{behind}: "
                f"clean {snap.clean_accuracy:.1%}, PGD-10 at ε = 0.125 "
                f"{snap.curve.accuracy[LIVE_EPS.index(0.125)]:.1%}.")
    return {"adv_curves": Figure(figs.curves_figure(
                curves, CLAIM_EPS, snap.curve if snap.step else None, label or "")),
            "adv_live_note": Caption(note)}


def curves_view(panel) -> None:
    with panel.controls:
        STATE.widget("adv_steps")
        st.markdown("**Train robustly (live)**")
        STATE.widget("adv_train_eps")
        STATE.widget("adv_train_attack")
    s = STATE.values()
    seed, device = session.seed(), session.device()
    with panel.figure:
        with user_errors("measure the robustness curves"), \
                progress("Attacking the 359 held-out digits (2 networks × FGSM, PGD × ε)",
                         unit="curve points") as bar:
            curves = curves_of(s, seed, device, progress=bar)
        cfg = _train_config(s, seed)

        def make_trainer():
            return AdversarialTrainer(AdvTrainConfig(**{**cfg, "attack_steps": 7}),
                                      eval_eps=LIVE_EPS, device=device,
                                      curve_every_s=LIVE_CURVE_EVERY_S)

        def draw(view, tick) -> None:
            parts = live_parts(curves_frame_parts, view, curves=curves,
                               train_eps=cfg["train_eps"])
            place(parts, "adv_curves")
            snap = view.snapshot()
            if snap.diverged_at is not None:      # a diverged run is paused: never pushed
                st.warning(f"The live run diverged at step {snap.diverged_at}.",
                           icon=":material/warning:")
            elif snap.step or is_playing("adv_live"):   # playing: mounted before step 1
                place(parts, "adv_live_note")

        live_training("adv_live", make_trainer, draw, {**cfg, "device": device},
                      steps_per_frame=23, max_steps_per_frame=92,
                      max_total_steps=AdvTrainConfig().total_steps)
    with panel.notes:
        explain("Each point attacks all 359 held-out digits. Red: the standard CNN; blue: the "
                "same CNN adversarially trained (PGD-7 at ε = 0.15, 920 steps, shipped in "
                "assets/weights); dotted FGSM, solid PGD. **Play** trains a fresh CNN on the "
                "training examples the controls choose (920 minibatches of 64, i.e. 40 epochs, "
                "each minibatch attacked with 7 PGD steps) and draws its PGD curve in "
                "green after every frame; with *clean* it is ordinary training and the green "
                "curve falls like the red one.")
        rows = pd.DataFrame(figs.curve_table(curves))
        with st.expander("Export"):
            export_buttons(rows, {"settings": {k: s[k] for k in STATE},
                                  "curve_eps": list(CURVE_EPS), "heldout_digits": N_HELDOUT},
                           "adversarial_curves")
            st.caption("CSV: accuracy of each network under FGSM and PGD at every ε. JSON: the "
                       "settings.")


def linear_view(panel) -> None:
    with panel.controls:
        STATE.widget("adv_lin_eps")
    s = STATE.values()
    e = linear_of(s)
    with panel.figure:
        show_figure(figs.linear_figure(e), key="adv_linear")
        i64 = int(np.argmin(np.abs(e.dims - 64)))
        c = st.columns(3)
        c[0].metric("slope of the worst case (log-log)", f"{loglog_slope(e.dims, e.worst_change):.2f}")
        c[1].metric("slope of a random η (log-log)",
                    f"{loglog_slope(e.dims[4:], e.random_change[4:]):.2f}")
        c[2].metric(f"worst case at d = {e.dims[i64]}", f"{e.worst_change[i64]:.3g}")
    with panel.notes:
        explain("w ~ N(0, I_d). The perturbation η = ε·sign(w) has ‖η‖∞ = ε, yet changes the "
                "score by wᵀη = ε‖w‖₁ = ε·d·E|wᵢ| = ε·d·√(2/π): linear in d. A random-sign "
                "perturbation of the same size changes it by about ε·√d (its terms cancel), and "
                "the score itself spreads by √(d/12) over random inputs in [0, 1]ᵈ. In high "
                "dimension many tiny aligned changes add up to more than the natural spread: a "
                "network that is close to linear in its input (ReLU) inherits the weakness.")


def _preset_jobs(seed: int, device: str):
    """What the presets and tour steps draw (PGD on the 359 held-out digits: seconds, cold),
    computed in the background once per server process (ui/warm.py); the curves last."""
    items = [*PRESETS.values(), *STEPS]
    for x in items:
        s = STATE.resolve(x.settings)
        if x.view == "attack":
            yield functools.partial(attack_of, s, seed, device)
            yield functools.partial(heldout_accuracy, s, seed, device)
            yield functools.partial(clean_accuracy, s, device=device)
            if target_of(s) is not None:
                yield functools.partial(targeted_rate, s, seed, device)
        elif x.view == "linear":
            yield functools.partial(linear_of, s)
    for x in items:
        if x.view == "curves":
            yield functools.partial(curves_of, STATE.resolve(x.settings), seed, device)


VIEWS = [View("attack", "Attack one digit", attack_view),
         View("curves", "Robustness curves", curves_view, fragment=False,
              live=Live("adv_live", train_max=AdvTrainConfig().total_steps)),
         View("linear", "Why linear models break", linear_view)]

if __name__ == "__main__":
    seed, device = session.seed(), session.device()
    warm.start("adversarial", (seed, device), lambda: _preset_jobs(seed, device))
    topic_page("adversarial", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"x_{\mathrm{adv}} = \Pi_{\|\delta\|_\infty \le \varepsilon}"
                       r"\big(x + \alpha\,\mathrm{sign}\,\nabla_x L(f(x), y)\big)")

