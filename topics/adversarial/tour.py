"""The adversarial page's presets and tour steps with the claims that check what each one says
(topics/adversarial/page.py imports PRESETS and STEPS; the measurements are in
topics/adversarial/compute.py)."""
from __future__ import annotations

from topics.adversarial.compute import (
    attack_of, clean_accuracy, heldout_accuracy, targeted_rate, curve_at, fgsm_minus_pgd,
    linear_of, loglog_slope, fooled, kept, CLAIM_EPS)
from ui.claims import PERCENT, YES_NO, Claim
from ui.widgets import Preset, Step

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
                    heldout_accuracy, hi=0.20, fmt=PERCENT),
              Claim("standard CNN's clean held-out accuracy",
                    clean_accuracy, lo=0.97, fmt=PERCENT),
              Claim("this 0 is read as another class", fooled, lo=1, fmt=YES_NO),
              Claim("standard CNN's held-out accuracy under PGD-10 at ε = 0.1",
                    lambda s: curve_at(s, "standard", "PGD", 0.1), lo=0.35, hi=0.45,
                    fmt=PERCENT),
              Claim("standard CNN's held-out accuracy under FGSM at ε = 0.125",
                    lambda s: curve_at(s, "standard", "FGSM", CLAIM_EPS), lo=0.25, hi=0.35,
                    fmt=PERCENT))
C_PGD_STEP = (C_STANDARD[0], C_STANDARD[4])     # the two numbers the PGD step states
C_ROBUST = (Claim("robust CNN's held-out accuracy under PGD-10 at ε = 0.125",
                  heldout_accuracy, lo=0.70, fmt=PERCENT),
            Claim("robust CNN's clean held-out accuracy",
                  clean_accuracy, lo=0.97, fmt=PERCENT),
            Claim("this 0 stays a 0", kept, lo=1, fmt=YES_NO),
            Claim("standard CNN's held-out accuracy under the same attack",
                  lambda s: curve_at(s, "standard", "PGD", CLAIM_EPS), hi=0.20, fmt=PERCENT))
C_FGSM_ONE = (Claim("the 0 is read as another class after one FGSM step", fooled, lo=1,
                    fmt=YES_NO),
              Claim("standard CNN's clean held-out accuracy",
                    clean_accuracy, lo=0.97, fmt=PERCENT),
              Claim("standard CNN's held-out accuracy under FGSM at ε = 0.1",
                    heldout_accuracy, lo=0.40, hi=0.55, fmt=PERCENT),
              Claim("pixels that move (over half of the 8×8)", lambda s: float(
                  (abs(attack_of(s).perturbation) > 0).sum()), lo=33),
              Claim("largest pixel change ‖δ‖∞ (ε = 0.1; float32 round-off allowed)",
                    lambda s: attack_of(s).linf, hi=0.1 + 1e-6))
C_FGSM_WEAKER = (Claim("min over ε and both CNNs of acc(FGSM) − acc(PGD)", fgsm_minus_pgd,
                       lo=0.0, fmt=PERCENT),
                 Claim("standard CNN at ε = 0.125: acc(FGSM) − acc(PGD)",
                       lambda s: curve_at(s, "standard", "FGSM", CLAIM_EPS)
                       - curve_at(s, "standard", "PGD", CLAIM_EPS), lo=0.05, fmt=PERCENT),
                 Claim("standard CNN at ε = 0.125: acc(FGSM)",
                       lambda s: curve_at(s, "standard", "FGSM", CLAIM_EPS), lo=0.25, hi=0.35,
                       fmt=PERCENT),
                 Claim("standard CNN at ε = 0.125: acc(PGD)",
                       lambda s: curve_at(s, "standard", "PGD", CLAIM_EPS), hi=0.20,
                       fmt=PERCENT))
C_TARGETED = (Claim("the 6 is read as the target 8", fooled, lo=1, fmt=YES_NO),
              Claim("held-out digits of other classes sent to 8 (standard CNN, ε = 0.2)",
                    targeted_rate, lo=0.90, fmt=PERCENT))
C_TARGETED_ROBUST = (Claim("the 6 stays a 6 on the robust CNN", kept, lo=1, fmt=YES_NO),
                     Claim("held-out digits sent to 8 (robust CNN, ε = 0.2)", targeted_rate,
                           hi=0.40, fmt=PERCENT))
C_LINEAR = (Claim("log-log slope of the worst case ε‖w‖₁ vs d",
                  lambda s: loglog_slope(linear_of(s).dims, linear_of(s).worst_change),
                  lo=0.97, hi=1.03),
            Claim("log-log slope of a random-sign perturbation vs d",
                  lambda s: loglog_slope(linear_of(s).dims[4:], linear_of(s).random_change[4:]),
                  lo=0.4, hi=0.6),
            Claim("worst case / spread of wᵀx at d = 100,000",
                  lambda s: linear_of(s).worst_change[-1] / linear_of(s).score_std[-1], lo=5))

# what the attack tab's texts point to: the figure and the accuracies under it
ATTACK_SHOWS = ("adv_attack_fig", "adv_accuracies")

PRESETS = {
    "ε = 0.125: PGD breaks the standard CNN (< 20%)": Preset(
        STANDARD_PGD, "Two grey levels per pixel (ε = 0.125 = 2/16) and 10 PGD steps: the "
                      "standard CNN, 98.6% right on clean held-out digits, keeps 17.8% of them "
                      "(the claim: below 20%). This 0 becomes a 9. At ε = 0.1 it still keeps "
                      "40.7%: on these coarse 8×8 digits the headline needs two grey levels.",
        "attack", C_STANDARD, shows=ATTACK_SHOWS),
    "The robust CNN keeps ≥ 70% at the same ε": Preset(
        ROBUST_PGD, "The same network trained on PGD examples at ε = 0.15 keeps 76.0% of the "
                    "held-out digits under the same attack (the claim: at least 70%) and 98.3% "
                    "on clean ones. This 0 stays a 0.", "attack", C_ROBUST, shows=ATTACK_SHOWS),
    "FGSM is weaker than PGD": Preset(
        CURVES, "At every ε and for both networks, accuracy under FGSM (dotted) is at least "
                "accuracy under PGD (solid): one big step finds fewer adversarial examples than "
                "ten projected small ones (standard CNN at ε = 0.125: 30.4% vs 17.8%).",
        "curves", C_FGSM_WEAKER),
    "A targeted attack reaches its class": Preset(
        TARGETED, "Targeted PGD descends the loss of class 8 instead of climbing the true "
                  "class's: at ε = 0.2 this 6 is read as an 8, and so are 95.9% of the held-out "
                  "digits of other classes (the claim: at least 90%).", "attack", C_TARGETED,
        shows=ATTACK_SHOWS),
    "Targeted attack on the robust CNN": Preset(
        TARGETED_ROBUST, "The same targeted attack on the adversarially trained CNN: the 6 "
                         "stays a 6, and only 25% of the held-out digits reach class 8 (the "
                         "claim: at most 40%).", "attack", C_TARGETED_ROBUST, shows=ATTACK_SHOWS),
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
         "accuracy falls from 98.6% to 48%. The middle panel is the perturbation on its own "
         "colour scale. On an 8×8 digit the change is plain to see in the attacked image too: "
         "over half of its pixels move, none by more than ε (the metric ‖δ‖∞).",
         FGSM_ONE, "attack", C_FGSM_ONE, shows=ATTACK_SHOWS),
    Step("PGD: many small projected steps",
         "PGD repeats smaller steps (α = ε/4) and projects back into the ε-ball after each. "
         "At ε = 0.125 (two grey levels) it leaves the standard CNN 17.8% of the held-out "
         "digits; FGSM at the same ε leaves 30.4%.", STANDARD_PGD, "attack", C_PGD_STEP,
         shows=ATTACK_SHOWS),
    Step("Targeted: choose the wrong answer",
         "A targeted attack descends the loss of a chosen class. With ε = 0.2 this 6 is read "
         "as an 8, like 95.9% of the held-out digits of other classes.",
         TARGETED, "attack", C_TARGETED, shows=ATTACK_SHOWS),
    Step("Adversarial training",
         "Training on PGD examples solves min over θ of the worst loss in the ε-ball (Madry et "
         "al.). The same CNN trained this way at ε = 0.15 keeps 76.0% under the attack that "
         "left the standard one 17.8%, with 98.3% clean accuracy.",
         ROBUST_PGD, "attack", C_ROBUST, shows=ATTACK_SHOWS),
    Step("Accuracy against ε",
         "The curves measure both networks over ε. FGSM (dotted) never beats PGD (solid). "
         "Press **Play** on this tab to train a CNN robustly yourself and watch its (green) "
         "curve rise.", CURVES, "curves", C_FGSM_WEAKER),
    Step("Why: linear models in high dimension",
         "Goodfellow et al.'s explanation: a score wᵀx moves by ε‖w‖₁ ≈ ε·d·E|wᵢ| when every "
         "input moves by ε against it. Each pixel changes a little, but d pixels add up.",
         LINEAR, "linear", C_LINEAR),
]
