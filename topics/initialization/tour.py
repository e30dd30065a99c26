"""The initialization page's presets and tour steps with the claims that check what each one
says (topics/initialization/page.py imports PRESETS and STEPS; the measurements are in
topics/initialization/compute.py)."""
from __future__ import annotations

import math

import numpy as np

from ui.claims import PERCENT, Claim, OnRun
from topics.initialization.compute import (
    TRAIN_STEPS, propagation_of, chi_of, grad_ratio, trained_loss, he_over_small, gap_at, sweep_of, worst,
    act_ratio, end_over_first, spread, last_var, grad_in_over_out, chi_error)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
BASE = {"in_sb": 0.0, "in_norm": "none", "in_depth": 50, "in_width": 256, "in_samples": 512}
RELU_XAVIER = {**BASE, "in_act": "relu", "in_init": "xavier_normal", "in_sw": 1.0}
RELU_HE = {**BASE, "in_act": "relu", "in_init": "kaiming_normal", "in_sw": 1.0}
TANH_SMALL = {**BASE, "in_act": "tanh", "in_init": "normal", "in_sw": 0.5}
TANH_LARGE = {**BASE, "in_act": "tanh", "in_init": "normal", "in_sw": 3.0}
SIGMOID = {**BASE, "in_act": "sigmoid", "in_init": "xavier_normal", "in_sw": 1.0, "in_depth": 20}
BN_RESCUE = {**BASE, "in_act": "relu", "in_init": "normal", "in_sw": 4.0, "in_norm": "batchnorm"}
CHAOS = {**BASE, "in_act": "tanh", "in_init": "normal", "in_sw": 2.5, "in_sb": 0.5}
TRAIN = {"tr_act": "relu", "tr_sw": 0.5, "tr_depth": 20, "tr_width": 64, "tr_lr": 0.05,
         "tr_norm": "none"}
BN_SMALL_BATCH = {"bn_batch": 2, "bn_momentum": 0.1, "bn_batches": 200, "bn_gamma": 1.0,
                  "bn_beta": 0.0}
BN_SWEEP = {**BN_SMALL_BATCH, "bn_batch": 32, "bn_sweep": True}

C_XAVIER = (Claim("per-layer variance ratio, worst seed above 0.5", worst(act_ratio), hi=0.55),
            Claim("per-layer variance ratio, worst seed below 0.5", worst(act_ratio, min),
                  lo=0.45))
C_HE = (Claim("per-layer variance ratio (max over seeds)", worst(act_ratio), hi=1.05),
        Claim("per-layer variance ratio (min over seeds)", worst(act_ratio, min), lo=0.95),
        Claim("Var(h_50)/Var(h_1), largest over seeds", worst(end_over_first), hi=0.5),
        Claim("Var(h_50)/Var(h_1), smallest over seeds", worst(end_over_first, min), lo=0.2),
        Claim("per-layer variance ratio at width 1024 (min over seeds)",
              lambda s: worst(act_ratio, min)({**s, "in_width": 1024}), lo=0.98, hi=1.02),
        Claim("per-layer variance ratio at width 1024 (max over seeds)",
              lambda s: worst(act_ratio)({**s, "in_width": 1024}), lo=0.98, hi=1.02))
C_TANH_SMALL = (Claim("Var(h_50), largest over seeds", worst(last_var), hi=1e-20),
                Claim("per-layer ratio (σ_w² tanh'(0)² = 0.25), max", worst(act_ratio),
                      hi=0.28),
                Claim("per-layer ratio, min", worst(act_ratio, min), lo=0.22))
C_TANH_LARGE = (Claim("share of h_50 within 2% of ±1, smallest over seeds",
                      worst(lambda s, seed: float(propagation_of(s, seed).saturated[-1]), min),
                      lo=0.3, fmt=PERCENT),
                Claim("Var(∂L/∂x) / Var(∂L/∂h_50), smallest over seeds",
                      worst(grad_in_over_out, min), lo=1e6))
C_SIGMOID = (Claim("Var(∂L/∂x) / Var(∂L/∂h_20), largest over seeds", worst(grad_in_over_out),
                   hi=1e-15),
             Claim("Var(h_20)/Var(h_1), smallest over seeds", worst(end_over_first, min),
                   lo=0.2))
C_BN = (Claim("max/min of Var(h_l) with batch norm, largest over seeds", worst(spread), hi=1.5),
        Claim("per-layer ratio without batch norm (σ_w²/2 = 8), min over seeds",
              worst(lambda s, seed: act_ratio({**s, "in_norm": "none"}, seed), min), lo=7.0),
        Claim("backward gradient factor with batch norm, min over seeds",
              worst(lambda s, seed: grad_ratio(propagation_of(s, seed)), min), lo=1.2),
        Claim("Var(h₅₀)/Var(h₁) without batch norm, min over seeds",
              worst(lambda s, seed: end_over_first({**s, "in_norm": "none"}, seed), min),
              lo=1e43))
C_CHAOS = (Claim("|measured gradient factor / χ − 1|, worst seed", worst(chi_error), hi=0.05,
                 fmt=PERCENT),
           Claim("χ at (2.5, 0.5)", chi_of, lo=1.3),)


def run_loss(net: int, last: int = 20) -> OnRun:
    """The training claims' loss on the Training tab's live run: net `net`'s mean mini-batch
    loss over its iterations TRAIN_STEPS - last + 1 .. TRAIN_STEPS (the snapshot keeps one
    loss per iteration; NaN for a net that diverged there)."""
    def window(snap) -> float:
        losses = np.asarray(snap.losses[net, TRAIN_STEPS - last:TRAIN_STEPS], float)
        return float(losses.mean()) if len(losses) == last and np.isfinite(losses).all() \
            else math.nan
    return OnRun(TRAIN_STEPS, snapshot=window)


C_TRAIN = (Claim("He net's loss at step 300, largest over seeds",
                 worst(lambda s, seed: trained_loss(s, seed, 2)), hi=1.5, slow=True,
                 run=run_loss(2)),
           Claim("normal σ_w = 0.5 net's loss at step 300, smallest over seeds",
                 worst(lambda s, seed: trained_loss(s, seed, 0), min), lo=2.25, slow=True,
                 run=run_loss(0)),
           Claim("Xavier net's loss at step 300, smallest over seeds",
                 worst(lambda s, seed: trained_loss(s, seed, 1), min), lo=2.0, slow=True,
                 run=run_loss(1)),
           Claim("He's smallest / normal σ_w = 0.5's largest gradient norm at step 0, min "
                 "over seeds", worst(he_over_small, min), lo=1e8))
C_GAP = (Claim("mean |y_train − y_eval| at B = 2, smallest over seeds",
               worst(lambda s, seed: gap_at(s, 2, seed), min), lo=0.5),
         Claim("gap at B = 2 / gap at B = 64, smallest over seeds",
               worst(lambda s, seed: gap_at(s, 2, seed) / gap_at(s, 64, seed), min), lo=4.0))
C_SWEEP = (Claim("largest lr that trains: with BN / without, smallest over seeds",
                 worst(lambda s, seed: float(sweep_of(seed).max_stable_lr[1]
                                             / sweep_of(seed).max_stable_lr[0]), min),
                 lo=10.0, slow=True),)

PRESETS = {
    "ReLU + Xavier: variance halves per layer": Preset(
        RELU_XAVIER, "Xavier gives Var(W) = 2/(n+n) = 1/n here; ReLU keeps only half of the "
                     "second moment, so Var(h_l) falls by ≈ 0.5 per layer (measured 0.45-0.55 "
                     "on two seeds): 10⁻¹⁵ after 50 layers. The gradients shrink the same way "
                     "towards the input.", "signal", C_XAVIER),
    "ReLU + He: a per-layer ratio near 1": Preset(
        RELU_HE, "He doubles Var(W) to 2/n and cancels ReLU's halving: each layer's ratio is "
                 "within 0.95 to 1.05 (seeds 0 and 1). The small shortfalls still add up over "
                 "50 layers of width 256: Var(h_50)/Var(h_1) falls to between 0.2 and 0.5, a "
                 "gentle slope on the log plot. At width 1024 the per-layer ratio is within "
                 "0.98 to 1.02.", "signal", C_HE),
    "tanh σ_w = 0.5: signal dies": Preset(
        TANH_SMALL, "Near 0, tanh is the identity, so each layer multiplies the variance by "
                    "σ_w² = 0.25 (measured 0.22-0.28): below 10⁻²⁰ at layer 50. The histogram "
                    "collapses into the middle bin.", "signal", C_TANH_SMALL),
    "tanh σ_w = 3: saturates at ±1": Preset(
        TANH_LARGE, "Large weights push most pre-activations far out: over 30% of h_50 sits "
                    "within 2% of ±1 (the histogram's edge bins), and the gradient grows by a "
                    "factor over 10⁶ on its way back to the input (χ > 1).", "signal",
        C_TANH_LARGE),
    "sigmoid: gradients vanish": Preset(
        SIGMOID, "σ'(z) ≤ 1/4, so every layer shrinks the gradient variance by σ_w² E[σ'(z)²] "
                 "≪ 1: after 20 layers Var(∂L/∂x) is below 10⁻¹⁵ of its value at the top. "
                 "The forward signal does not die: Var(h_20) keeps over a fifth of Var(h_1).", "signal",
        C_SIGMOID),
    "BN rescues normal(σ_w = 4)": Preset(
        BN_RESCUE, "Without batch norm ReLU with σ_w = 4 multiplies the variance by σ_w²/2 = 8 "
                   "per layer (measured > 7): Var(h₅₀)/Var(h₁) passes 10⁴³. With batch norm every "
                   "layer's "
                   "pre-activations are standardised, and Var(h_l) varies by less than 1.5× "
                   "over all 50 layers. The backward pass is not rescued: at initialization "
                   "batch norm makes the gradient variance grow by over 1.2× per layer going "
                   "back (the red line; Yang et al. 2019). (Switch Normalization to 'none' to "
                   "see the forward explosion.)",
        "signal", C_BN),
    "Chaotic tanh: χ predicts the gradients": Preset(
        CHAOS, "At (σ_w, σ_b) = (2.5, 0.5) the mean-field χ is above 1.3: the gradient "
               "variance grows by χ per layer going back. The measured factor in the random "
               "network matches χ within 5% on two seeds.", "chaos", C_CHAOS),
    "Only He trains a 20-layer ReLU net": Preset(
        TRAIN, "Press Play. After 300 SGD steps (lr 0.05) the He net is below loss 1.5 on two "
               "seeds; the normal σ_w = 0.5 net is still at chance (≥ 2.25; chance is ln 10) "
               "and "
               "Xavier barely moved (≥ 2.0). The σ_w = 0.5 net's gradients start over "
               "10⁸ times smaller than He's in every layer (the right panel before the first "
               "step).", "train", C_TRAIN),
    "Eval with batch size 2 differs from train": Preset(
        BN_SMALL_BATCH, "With B = 2 batch norm in train mode maps every feature to ±1 whatever "
                        "the inputs; eval mode uses the running statistics. On the same "
                        "batches the outputs differ by ≥ 0.5 on average, over 4× the gap at "
                        "B = 64.", "bn", C_GAP),
    "BN allows a 10× larger learning rate": Preset(
        BN_SWEEP, "A 10-layer ReLU He net trained 60 SGD steps at each learning rate: with "
                  "batch norm the largest rate that still trains is at least 10× the largest "
                  "without (two seeds).", "bn", C_SWEEP),
}

STEPS = [
    Step("One layer: Var(z) = n · Var(W) · E[h²]",
         "Each pre-activation sums n products. With Var(W) = 1/n (Xavier for equal widths) and "
         "ReLU, which keeps half of the second moment, every layer halves the variance: a "
         "straight line on the log plot, slope 0.5 per layer.", RELU_XAVIER, "signal",
         C_XAVIER),
    Step("He init doubles the weights' variance",
         "Var(W) = 2/n cancels the halving: the per-layer ratio is within 0.95 to 1.05, so the "
         "variance no longer halves. What remains at finite width is a slow drift of the "
         "log-variance that adds up over the depth: by layer 50 the variance has fallen to "
         "between 0.2 and 0.5 of Var(h_1). Wider layers drift less: raise the width and "
         "compare.", RELU_HE, "signal", C_HE[:4]),
    Step("tanh: too small dies, too large saturates",
         "With σ_w = 0.5 the variance falls by 0.25 per layer and the histogram collapses to 0. "
         "Choose the preset *tanh σ_w = 3* next: the values pile up at ±1 and the gradients "
         "explode backwards.", TANH_SMALL, "signal", C_TANH_SMALL),
    Step("The edge of chaos",
         "The mean-field map says where each regime lives: χ = σ_w² E[φ'(z)²] < 1 (blue) "
         "gradients vanish, > 1 (red) they explode. Click the map to load a point; the "
         "measured backward factor matches χ.", CHAOS, "chaos", C_CHAOS),
    Step("Training: only the well-scaled net learns",
         "Press Play: three 20-layer ReLU nets on the same digit batches. Tiny gradients "
         "everywhere (right panel, log scale) leave the normal σ_w = 0.5 net at chance.",
         TRAIN, "train", C_TRAIN),
    Step("Batch norm, and its train/eval mistake",
         "BN standardises each feature with the batch's μ_B and σ²_B and keeps running "
         "averages for eval mode. With B = 2 the two modes disagree strongly: evaluate in "
         "eval mode, and do not train BN on tiny batches.", BN_SMALL_BATCH, "bn", C_GAP),
]
