"""Adversarial examples: attack the digits CNN with FGSM and PGD, compare it with the same
network trained on PGD examples (Madry's min-max), and see why a linear score is fragile in
high dimension. Settings -> engine/adversarial.py (attacks, curves, the linear explanation) and
engine/adversarial_training.py (the trainer, the shipped snapshots) -> viz/adversarial_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer.

Every accuracy is measured on the same 359 held-out digits (the 20% test part of the seeded
split, engine.adversarial_training.heldout_digits), never seen in training. Pixels are in
[0, 1]: the scanner's 17 grey levels 0..16 divided by 16, so eps = 0.125 = 2/16 moves each
pixel by at most two grey levels.
"""
from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import adversarial as adv
from engine.adversarial_training import (SNAPSHOTS, AdvTrainConfig, AdversarialTrainer,
                                         heldout_digits, model_from_weights)
from viz import adversarial_figures as figs
from viz import session, warm
from viz.claims import Claim
from viz.live import live_training
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.weights import cached_weights
from viz.widgets import Preset, Step, export_buttons

# ----------------------------------------------------------------------------- constants
N_HELDOUT = 359
GALLERY = 36                                   # held-out digits shown for clicking
CURVE_EPS = (0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2)
LIVE_EPS = (0.0, 0.05, 0.1, 0.125, 0.15, 0.2)
L2_SCALE = 8.0                                 # sqrt(64): L2 length of moving all pixels by eps
LINEAR_DIMS = tuple(sorted({int(round(v)) for v in np.geomspace(1, 100_000, 16)} | {64}))
CLAIM_EPS = 0.125
MODELS = ("standard", "robust")
MODEL_LABELS = {"standard": "Standard", "robust": "Robust"}
ATTACKS = ("fgsm", "pgd", "pgd_l2")
ATTACK_LABELS = {"fgsm": "FGSM", "pgd": "PGD", "pgd_l2": "PGD L2"}
TARGETS = [-1, *range(10)]
TRAIN_ATTACKS = {"pgd": "PGD-7", "fgsm": "FGSM", "none": "clean"}

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


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def model_of(name: str, device: str = "cpu"):
    """The shipped CNN `name`, built from the shared cached weights loader (a few ms)."""
    return model_from_weights(cached_weights(SNAPSHOTS[name], device), device)


def file_version(name: str) -> tuple[str, int]:
    """(path, modification time) of a snapshot: part of every cached result's key, so a rebuilt
    or removed file is read again (and a missing one reported) instead of served stale."""
    path = SNAPSHOTS[name]
    return str(path), path.stat().st_mtime_ns if path.is_file() else -1


@st.cache_data(max_entries=8, show_spinner=False)
def _clean_accuracy(model: str, device: str, version=None) -> float:
    d = heldout_digits()
    return float(adv.robust_accuracy(model_of(model, device), d.images, d.labels, [0.0]).accuracy[0])


def clean_accuracy(s: Mapping[str, Any], model: str | None = None, device: str = "cpu") -> float:
    model = model or s["adv_model"]
    return _clean_accuracy(model, device, file_version(model))


def spec_of(s: Mapping[str, Any], seed: int = 0) -> adv.AttackSpec:
    if s["adv_attack"] == "fgsm":
        return adv.AttackSpec("fgsm")
    l2 = s["adv_attack"] == "pgd_l2"
    return adv.AttackSpec("pgd", steps=int(s["adv_steps"]), norm="l2" if l2 else "linf",
                          alpha_ratio=0.25, seed=int(seed))


def radius_of(s: Mapping[str, Any]) -> float:
    """The ball's radius: eps (L-inf), or 8 eps (L2)."""
    return float(s["adv_eps"]) * (L2_SCALE if s["adv_attack"] == "pgd_l2" else 1.0)


def target_of(s: Mapping[str, Any]) -> int | None:
    return None if int(s["adv_target"]) < 0 else int(s["adv_target"])


@st.cache_data(max_entries=128, show_spinner=False)
def _attack_one(model: str, digit: int, radius: float, spec: adv.AttackSpec, target, device,
                version=None):
    d = heldout_digits()
    return adv.attack_one(model_of(model, device), d.images[digit], int(d.labels[digit]),
                          radius, spec, target)


def attack_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> adv.AttackResult:
    """The selected held-out digit under the selected attack."""
    return _attack_one(s["adv_model"], int(s["adv_digit"]), radius_of(s), spec_of(s, seed),
                       target_of(s), device, file_version(s["adv_model"]))


@st.cache_data(max_entries=128, show_spinner=False)
def _heldout_accuracy(model: str, radius: float, spec: adv.AttackSpec, device: str,
                      version=None) -> float:
    d = heldout_digits()
    return float(adv.robust_accuracy(model_of(model, device), d.images, d.labels, [radius],
                                     spec).accuracy[0])


def heldout_accuracy(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> float:
    """Accuracy of the selected CNN on the 359 held-out digits under the selected attack."""
    return _heldout_accuracy(s["adv_model"], radius_of(s), spec_of(s, seed), device,
                             file_version(s["adv_model"]))


@st.cache_data(max_entries=64, show_spinner=False)
def _targeted_rate(model: str, radius: float, spec: adv.AttackSpec, target: int, device: str,
                   version=None):
    d = heldout_digits()
    return float(adv.targeted_success(model_of(model, device), d.images, d.labels, target,
                                      [radius], spec).success_rate[0])


def targeted_rate(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> float:
    """Share of the held-out digits of other classes that the targeted attack sends to the
    target class."""
    return _targeted_rate(s["adv_model"], radius_of(s), spec_of(s, seed), target_of(s), device,
                          file_version(s["adv_model"]))


@st.cache_data(max_entries=16, show_spinner=False)
def _curves(steps: int, seed: int, device: str, versions=None) -> dict:
    d = heldout_digits()
    out = {}
    for model in MODELS:
        net = model_of(model, device)
        out[(model, "FGSM")] = adv.robust_accuracy(net, d.images, d.labels, CURVE_EPS,
                                                   adv.AttackSpec("fgsm"))
        out[(model, "PGD")] = adv.robust_accuracy(net, d.images, d.labels, CURVE_EPS,
                                                  adv.AttackSpec("pgd", steps=steps, seed=seed))
    return out


def curves_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> dict:
    """{(model, "FGSM" | "PGD"): RobustnessCurve} over CURVE_EPS, both shipped CNNs."""
    return _curves(int(s["adv_steps"]), int(seed), device, tuple(map(file_version, MODELS)))


def curve_at(s, model: str, attack: str, eps: float) -> float:
    c = curves_of(s)[(model, attack)]
    return float(c.accuracy[int(np.argmin(np.abs(c.eps - eps)))])


def fgsm_minus_pgd(s) -> float:
    """min over both CNNs and every eps of acc(FGSM) - acc(PGD): >= 0 when FGSM is never the
    stronger attack."""
    c = curves_of(s)
    return float(min((c[(m, "FGSM")].accuracy - c[(m, "PGD")].accuracy).min() for m in MODELS))


@st.cache_data(max_entries=1, show_spinner=False)
def gallery_digits() -> tuple[np.ndarray, np.ndarray]:
    """The first GALLERY held-out digits and their labels (reading the split takes ~20 ms)."""
    d = heldout_digits()
    return d.images[:GALLERY], d.labels[:GALLERY]


def linear_of(s: Mapping[str, Any]) -> adv.LinearEffect:
    return _linear(float(s["adv_lin_eps"]))


@st.cache_data(max_entries=32, show_spinner=False)
def _linear(eps: float) -> adv.LinearEffect:
    return adv.linear_model_effect(LINEAR_DIMS, eps, seed=0)


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# ---- measurements the claims use (also shown on the page)
def fooled(s) -> float:
    """1 when the attack succeeds on the selected digit (wrong class / the target), else 0."""
    return float(attack_of(s).success)


def kept(s) -> float:
    r = attack_of(s)
    return float(r.pred_after == r.label)


# ----------------------------------------------------------------------------- presets
DIGIT_ZERO = 12          # a 0 the standard CNN reads as 9 at eps 0.125; the robust one keeps
DIGIT_SIX = 0            # a 6 that a targeted attack turns into an 8
BASE = {"adv_attack": "pgd", "adv_steps": 10, "adv_target": -1}
STANDARD_PGD = {**BASE, "adv_model": "standard", "adv_eps": CLAIM_EPS, "adv_digit": DIGIT_ZERO}
ROBUST_PGD = {**STANDARD_PGD, "adv_model": "robust"}
FGSM_ONE = {**BASE, "adv_model": "standard", "adv_attack": "fgsm", "adv_eps": 0.1,
            "adv_digit": DIGIT_ZERO}
CURVES = {**BASE, "adv_eps": CLAIM_EPS}
TARGETED = {**BASE, "adv_model": "standard", "adv_eps": 0.2, "adv_target": 8,
            "adv_digit": DIGIT_SIX}
TARGETED_ROBUST = {**TARGETED, "adv_model": "robust"}
LINEAR = {"adv_lin_eps": 0.01}

C_STANDARD = (Claim("standard CNN's held-out accuracy under PGD-10 at ε = 0.125",
                    heldout_accuracy, hi=0.20),
              Claim("standard CNN's clean held-out accuracy",
                    clean_accuracy, lo=0.97),
              Claim("this 0 is read as another class", fooled, lo=1),
              Claim("standard CNN's held-out accuracy under PGD-10 at ε = 0.1",
                    lambda s: curve_at(s, "standard", "PGD", 0.1), lo=0.35, hi=0.45))
C_ROBUST = (Claim("robust CNN's held-out accuracy under PGD-10 at ε = 0.125",
                  heldout_accuracy, lo=0.70),
            Claim("robust CNN's clean held-out accuracy",
                  clean_accuracy, lo=0.97),
            Claim("this 0 stays a 0", kept, lo=1))
C_FGSM_ONE = (Claim("the 0 is read as another class after one FGSM step", fooled, lo=1),
              Claim("standard CNN's held-out accuracy under FGSM at ε = 0.1",
                    heldout_accuracy, lo=0.40, hi=0.55))
C_FGSM_WEAKER = (Claim("min over ε and both CNNs of acc(FGSM) − acc(PGD)", fgsm_minus_pgd,
                       lo=0.0),
                 Claim("standard CNN at ε = 0.125: acc(FGSM) − acc(PGD)",
                       lambda s: curve_at(s, "standard", "FGSM", CLAIM_EPS)
                       - curve_at(s, "standard", "PGD", CLAIM_EPS), lo=0.05))
C_TARGETED = (Claim("the 6 is read as the target 8", fooled, lo=1),
              Claim("held-out digits of other classes sent to 8 (standard CNN, ε = 0.2)",
                    targeted_rate, lo=0.90))
C_TARGETED_ROBUST = (Claim("the 6 stays a 6 on the robust CNN", kept, lo=1),
                     Claim("held-out digits sent to 8 (robust CNN, ε = 0.2)", targeted_rate,
                           hi=0.40))
C_LINEAR = (Claim("log-log slope of the worst case ε‖w‖₁ vs d",
                  lambda s: loglog_slope(linear_of(s).dims, linear_of(s).worst_change),
                  lo=0.97, hi=1.03),
            Claim("log-log slope of a random-sign perturbation vs d",
                  lambda s: loglog_slope(linear_of(s).dims[4:], linear_of(s).random_change[4:]),
                  lo=0.4, hi=0.6),
            Claim("worst case / spread of wᵀx at d = 100,000",
                  lambda s: linear_of(s).worst_change[-1] / linear_of(s).score_std[-1], lo=5))

PRESETS = {
    "ε = 0.125: PGD breaks the standard CNN (< 20%)": Preset(
        STANDARD_PGD, "Two grey levels per pixel (ε = 0.125 = 2/16) and 10 PGD steps: the "
                      "standard CNN, 98.6% right on clean held-out digits, keeps 17.8% of them "
                      "(the claim: below 20%). This 0 becomes a 9. At ε = 0.1 it still keeps "
                      "40.7%: on these coarse 8×8 digits the headline needs two grey levels.",
        "attack", C_STANDARD),
    "The robust CNN keeps ≥ 70% at the same ε": Preset(
        ROBUST_PGD, "The same network trained on PGD examples at ε = 0.15 keeps 76.0% of the "
                    "held-out digits under the same attack (the claim: at least 70%) and 98.3% "
                    "on clean ones. This 0 stays a 0.", "attack", C_ROBUST),
    "FGSM is weaker than PGD": Preset(
        CURVES, "At every ε and for both networks, accuracy under FGSM (dotted) is at least "
                "accuracy under PGD (solid): one big step finds fewer adversarial examples than "
                "ten projected small ones (standard CNN at ε = 0.125: 30.4% vs 17.8%).",
        "curves", C_FGSM_WEAKER),
    "A targeted attack reaches its class": Preset(
        TARGETED, "Targeted PGD descends the loss of class 8 instead of climbing the true "
                  "class's: at ε = 0.2 this 6 is read as an 8, and so are 95.9% of the held-out "
                  "digits of other classes (the claim: at least 90%).", "attack", C_TARGETED),
    "Targeted attack on the robust CNN": Preset(
        TARGETED_ROBUST, "The same targeted attack on the adversarially trained CNN: the 6 "
                         "stays a 6, and only 25% of the held-out digits reach class 8 (the "
                         "claim: at most 40%).", "attack", C_TARGETED_ROBUST),
    "Linear models: the effect grows with d": Preset(
        LINEAR, "For a linear score wᵀx, moving every input by ε = 0.01 in the direction "
                "sign(w) changes the score by ε‖w‖₁, which grows like d (slope 1 on the log-log "
                "plot); a random perturbation of the same size grows like √d, as does the "
                "score's own spread. At d = 100,000 the worst case is over 5× that spread.",
        "linear", C_LINEAR),
}

STEPS = [
    Step("One signed gradient step",
         "FGSM moves every pixel by ε in the direction that raises the loss: "
         "x + ε·sign(∇ₓL). At ε = 0.1 this 0 becomes a 9, and the standard CNN's held-out "
         "accuracy falls from 98.6% to 48%. The middle panel is the perturbation, rescaled so "
         "you can see it; in the attacked image it is hard to spot.",
         FGSM_ONE, "attack", C_FGSM_ONE),
    Step("PGD: many small projected steps",
         "PGD repeats smaller steps (α = ε/4) and projects back into the ε-ball after each. "
         "At ε = 0.125 (two grey levels) it leaves the standard CNN 17.8% of the held-out "
         "digits; FGSM at the same ε leaves 30.4%.", STANDARD_PGD, "attack", C_STANDARD),
    Step("Targeted: choose the wrong answer",
         "A targeted attack descends the loss of a chosen class. With ε = 0.2 this 6 is read "
         "as an 8, like 95.9% of the held-out digits of other classes.",
         TARGETED, "attack", C_TARGETED),
    Step("Adversarial training",
         "Training on PGD examples solves min over θ of the worst loss in the ε-ball (Madry et "
         "al.). The same CNN trained this way at ε = 0.15 keeps 76.0% under the attack that "
         "left the standard one 17.8%, with 98.3% clean accuracy.",
         ROBUST_PGD, "attack", C_ROBUST),
    Step("Accuracy against ε",
         "The curves measure both networks over ε. FGSM (dotted) never beats PGD (solid). "
         "Press Play under the figure to train a CNN robustly yourself and watch its curve "
         "rise.", CURVES, "curves", C_FGSM_WEAKER),
    Step("Why: linear models in high dimension",
         "Goodfellow et al.'s explanation: a score wᵀx moves by ε‖w‖₁ ≈ ε·d·E|wᵢ| when every "
         "input moves by ε against it. Each pixel changes a little, but d pixels add up.",
         LINEAR, "linear", C_LINEAR),
]


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
            r = attack_of(s, seed, device)
            show_figure(figs.attack_figure(r, s["adv_model"], name),
                        key="adv_attack_fig")
            c = st.columns(3)
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
                st.spinner("Attacking the 359 held-out digits at 8 values of ε, both networks…"):
            curves = curves_of(s, seed, device)
        cfg = _train_config(s, seed)

        def make_trainer():
            return AdversarialTrainer(AdvTrainConfig(**{**cfg, "attack_steps": 7}),
                                      eval_eps=LIVE_EPS, device=device)

        def draw(trainer, tick) -> None:
            snap = trainer.snapshot()
            label = f"trained live (ε = {cfg['train_eps']:.2f}, step {snap.step})" \
                if snap.step else None
            show_figure(figs.curves_figure(curves, CLAIM_EPS, snap.curve if snap.step else None,
                                           label or ""), key="adv_curves")
            if snap.diverged_at is not None:
                st.warning(f"The live run diverged at step {snap.diverged_at}.",
                           icon=":material/warning:")
            elif snap.step:
                st.caption(f"Live CNN after {snap.step} of {AdvTrainConfig().total_steps} steps: "
                           f"clean {snap.clean_accuracy:.1%}, PGD-10 at ε = 0.125 "
                           f"{snap.curve.accuracy[LIVE_EPS.index(0.125)]:.1%}.")

        live_training("adv_live", make_trainer, draw, {**cfg, "device": device},
                      steps_per_frame=23, max_steps_per_frame=92,
                      max_total_steps=AdvTrainConfig().total_steps)
    with panel.notes:
        explain("Each point attacks all 359 held-out digits. Red: the standard CNN; blue: the "
                "same CNN adversarially trained (PGD-7 at ε = 0.15, 920 steps, shipped in "
                "assets/weights); dotted FGSM, solid PGD. **Play** trains a fresh CNN on the "
                "training examples the controls choose (920 minibatches of 64, i.e. 40 epochs; "
                "about half a minute to a few minutes on one CPU core) and draws its PGD curve in "
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
    computed in the background once per server process (viz/warm.py); the curves last."""
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
         View("curves", "Robustness curves", curves_view, fragment=False),
         View("linear", "Why linear models break", linear_view)]

if __name__ == "__main__":
    seed, device = session.seed(), session.device()
    warm.start("adversarial", (seed, device), lambda: _preset_jobs(seed, device))
    topic_page("adversarial", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"x_{\mathrm{adv}} = \Pi_{\|\delta\|_\infty \le \varepsilon}"
                       r"\big(x + \alpha\,\mathrm{sign}\,\nabla_x L(f(x), y)\big)")
