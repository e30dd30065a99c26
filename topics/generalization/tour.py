"""The generalization page's presets and tour steps with the claims that check what each one
says (topics/generalization/page.py imports PRESETS and STEPS; the measurements are in
topics/generalization/compute.py)."""
from __future__ import annotations

from engine.generalization import reads
from ui.claims import PERCENT, Claim, OnRun
from topics.generalization.compute import (
    CLAIM_SEED, RANDOM_STEP, NAMED_STEP, gap_at, overfit_measure, val_loss_growth, best_step, random_measure, memorization_slowdown,
    decay_measure, norm_ratio, norm_vs_unregularized, peak_offset, peak_ratio)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
# the same quantities read on the Overfitting tab's live run (it logs every 10 iterations)
RUN_TRAIN = OnRun(NAMED_STEP, ("train_acc",))
RUN_VAL = OnRun(NAMED_STEP, ("val_acc",))
RUN_GAP = OnRun(NAMED_STEP, ("train_acc", "val_acc"), lambda train, val: train - val)
RUN_NORM = OnRun(NAMED_STEP, ("weight_norm",))


def run_pair(step: int, read) -> OnRun:
    """A claim about two runs trained side by side (Random labels, L2 vs AdamW) read on the
    tab's live pair: `read` takes the pair's snapshots ({run: snapshot}) at `step`. The claims
    are measured on seed CLAIM_SEED: a run on another seed is not read."""
    return OnRun(step, snapshot=read, seed=CLAIM_SEED)


def at_run(run: str, name: str, step: int):
    """The value of `name` that run `run` logged at its last evaluation <= step (what the
    claim's measure reads, reads.at)."""
    return lambda snaps: reads.at(snaps[run], name, step)


NO_REG = {"gen_data": "two_moons", "gen_n": 100, "gen_label_noise": 0.2, "gen_dropout": 0.0,
          "gen_l2": 0.0, "gen_wd": 0.0, "gen_width": 128, "gen_depth": 2, "gen_opt": "adam",
          "gen_lr": 3e-3, "gen_patience": 10}
DROPOUT = {**NO_REG, "gen_dropout": 0.5}
L2 = {**NO_REG, "gen_l2": 1e-2}
RANDOM = {"gen_rl_n": 500, "gen_rl_width": 128}
SAME_COEF = {"gen_coef": 0.01}
BIG_COEF = {"gen_coef": 1.0}
DOUBLE = {"gen_dd_n": 100, "gen_dd_noise": 0.5, "gen_dd_ridge": 1e-2}


C_NO_REG = (
    Claim("train accuracy at iteration 1,000", lambda s: overfit_measure(s, "train_acc"),
          lo=0.9, slow=True, run=RUN_TRAIN),
    Claim("validation accuracy at iteration 1,000", lambda s: overfit_measure(s, "val_acc"),
          lo=0.65, hi=0.75, slow=True, run=RUN_VAL),
    Claim("train acc − val acc at iteration 1,000", gap_at, lo=0.15, slow=True,
          run=RUN_GAP))
C_EARLY = (
    Claim("iteration of the lowest validation loss", best_step, hi=100, slow=True),
    Claim("validation loss at 1,000 / its minimum", val_loss_growth, lo=3.0, slow=True))
C_DROPOUT = (
    Claim("train acc − val acc at iteration 1,000, dropout 0.5", gap_at, hi=0.1, slow=True,
          run=RUN_GAP),
    Claim("gap with dropout / gap without",
          lambda s: gap_at(s) / gap_at({**s, "gen_dropout": 0.0}), hi=0.5, slow=True))
C_L2 = (
    Claim("train acc − val acc at iteration 1,000, L2 λ = 0.01", gap_at, hi=0.08, slow=True,
          run=RUN_GAP),
    Claim("‖θ‖ at iteration 1,000, L2 λ = 0.01", lambda s: overfit_measure(s, "weight_norm"),
          hi=8.0, slow=True, run=RUN_NORM))
RL, TL = at_run("random labels", "train_acc", RANDOM_STEP), at_run("true labels", "val_acc",
                                                                    RANDOM_STEP)
C_RANDOM = (
    Claim("random labels: train accuracy at iteration 400",
          lambda s: random_measure(s, "random labels", "train_acc"), lo=0.95, slow=True,
          run=run_pair(RANDOM_STEP, RL)),
    Claim("random labels: validation accuracy at iteration 400 (10 classes)",
          lambda s: random_measure(s, "random labels", "val_acc"), hi=0.15, slow=True,
          run=run_pair(RANDOM_STEP, at_run("random labels", "val_acc", RANDOM_STEP))),
    Claim("true labels: validation accuracy at iteration 400",
          lambda s: random_measure(s, "true labels", "val_acc"), lo=0.85, slow=True,
          run=run_pair(RANDOM_STEP, TL)),
    Claim("steps to 95% train accuracy: random / true labels", memorization_slowdown,
          lo=2.0, slow=True, run=run_pair(RANDOM_STEP, lambda snaps: (
              reads.steps_to_train_acc(snaps["random labels"])
              / reads.steps_to_train_acc(snaps["true labels"])))))
C_SAME_COEF = (
    Claim("‖θ‖ AdamW / ‖θ‖ Adam + L2 at iteration 1,000, λ = 0.01", norm_ratio, lo=5.0,
          slow=True, run=run_pair(NAMED_STEP, lambda snaps: (
              at_run("AdamW", "weight_norm", NAMED_STEP)(snaps)
              / at_run("Adam + L2", "weight_norm", NAMED_STEP)(snaps)))),
    Claim("val acc Adam + L2 − val acc AdamW at iteration 1,000",
          lambda s: decay_measure(s, "Adam + L2", "val_acc")
          - decay_measure(s, "AdamW", "val_acc"), lo=0.05, slow=True,
          run=run_pair(NAMED_STEP, lambda snaps: (
              at_run("Adam + L2", "val_acc", NAMED_STEP)(snaps)
              - at_run("AdamW", "val_acc", NAMED_STEP)(snaps)))))
C_BIG_COEF = (
    Claim("Adam + L2, λ = 1: validation accuracy at 1,000 (chance 0.5)",
          lambda s: decay_measure(s, "Adam + L2", "val_acc"), hi=0.6, slow=True,
          run=run_pair(NAMED_STEP, at_run("Adam + L2", "val_acc", NAMED_STEP))),
    Claim("Adam + L2, λ = 1: ‖θ‖ at 1,000",
          lambda s: decay_measure(s, "Adam + L2", "weight_norm"), hi=2.5, slow=True,
          run=run_pair(NAMED_STEP, at_run("Adam + L2", "weight_norm", NAMED_STEP))),
    Claim("AdamW, λ = 1: validation accuracy at 1,000",
          lambda s: decay_measure(s, "AdamW", "val_acc"), lo=0.65, slow=True,
          run=run_pair(NAMED_STEP, at_run("AdamW", "val_acc", NAMED_STEP))),
    Claim("AdamW, λ = 1: ‖θ‖ / unregularized ‖θ‖ at 1,000", norm_vs_unregularized,
          hi=0.7, slow=True))
C_PEAK = (Claim("|argmax_p test error − n| / n, ridge 0", peak_offset, hi=0.1, fmt=PERCENT),
          Claim("test error at p = n / best error with p ≤ n/2, ridge 0",
                lambda s: peak_ratio(s, "plain"), lo=10.0))
C_RIDGE = (Claim("test error at p = n / best error with p ≤ n/2, ridge 0.01",
                 lambda s: peak_ratio(s, "ridge"), hi=1.0),)

PRESETS = {
    "No regularization overfits the noisy moons": Preset(
        NO_REG, "100 training points, 20% of labels flipped, a 2×128 ReLU net with Adam. Press "
                "**Play** (or *Train to 1,000*): by iteration 1,000 training accuracy is above "
                "0.9 while validation accuracy has fallen back to about 0.7, a gap of at "
                "least 0.15. The boundary bends around the ringed, flipped "
                "points.", "overfit", C_NO_REG),
    "Dropout 0.5 narrows the gap": Preset(
        DROPOUT, "The same run with dropout p = 0.5: at iteration 1,000 train and validation "
                 "accuracy differ by at most 0.1, under half the gap without "
                 "dropout. The boundary still bends around a few flipped points (small pockets "
                 "remain): dropout narrows the gap, it does not make the fit smooth.",
        "overfit", C_DROPOUT),
    "L2 λ = 0.01 closes the gap": Preset(
        L2, "Adding (λ/2)‖θ‖² with λ = 0.01 keeps ‖θ‖ below 8: train and validation "
            "accuracy end within 0.08.",
        "overfit", C_L2),
    "Random labels are memorized": Preset(
        RANDOM, "The same network (8×8 pixels in, two hidden layers of 128 ReLU units, 10 "
                "classes out) on 500 digits with their true labels and with "
                "random labels. By iteration 400 it fits the random labels too (training "
                "accuracy ≥ 0.95), at least twice as slowly as the true ones, while its validation "
                "accuracy stays at chance (≤ 0.15 on 10 classes). With true labels validation "
                "reaches ≥ 0.85.", "random", C_RANDOM),
    "Same λ: Adam + L2 shrinks the weights far more than AdamW": Preset(
        SAME_COEF, "λ = 0.01 as coupled L2 and as AdamW's decay, both with Adam (η = 0.003). At "
                   "iteration 1,000 AdamW's ‖θ‖ is over 5× larger: its decay "
                   "shrinks θ by only ηλ = 3·10⁻⁵ per step, while Adam + L2 converges to the "
                   "minimum of loss + (λ/2)‖θ‖². Adam + L2 also validates at least 0.05 better "
                   "here. The same number is a different regularizer.", "decay", C_SAME_COEF),
    "λ = 1: Adam + L2 collapses, AdamW still learns": Preset(
        BIG_COEF, "At λ = 1 the coupled penalty wins: Adam + L2 drives ‖θ‖ below 2.5 and "
                  "predicts one class (validation accuracy ≤ 0.6, chance 0.5). AdamW's decay "
                  "(ηλ = 0.003 per step) shrinks θ only gently and validates at ≥ 0.65.",
        "decay", C_BIG_COEF),
    "Double descent peaks at p = n": Preset(
        DOUBLE, "Min-norm least squares on p random ReLU features of n = 100 points: the test "
                "error peaks within 10% of p = n (over 10× the best error with p ≤ n/2) and "
                "falls again as p grows.", "double", C_PEAK),
    "Ridge 0.01 removes the peak": Preset(
        DOUBLE, "With ridge 0.01 (the red curve, 'test, ridge 0.01' in the legend) the error "
                "at p = n is no higher than the best error with p ≤ n/2: the peak is gone.",
        "double", C_RIDGE),
}

STEPS = [
    Step("Train and validation curves split",
         "With few, noisy points a large network fits the training labels, flipped ones "
         "included: by iteration 1,000 training accuracy is above 0.9 while validation accuracy "
         "drops back to about 0.7 (gap ≥ 0.15). Press **Play**.", NO_REG, "overfit", C_NO_REG),
    Step("Early stopping",
         "The validation loss is lowest within the first 100 iterations and is over 3× higher "
         "by iteration 1,000 (the model grows confident on the flipped points). Early stopping "
         "keeps the weights of the best validation loss (green line; grey: where patience "
         "runs out). Switch *Boundary of* to compare.", NO_REG, "overfit", C_EARLY),
    Step("Dropout",
         "Each step trains a random thinned network (p = 0.5); no unit can rely on another. At "
         "iteration 1,000 the gap is at most 0.1, under half of the unregularized one.",
         DROPOUT, "overfit", C_DROPOUT),
    Step("Networks memorize random labels",
         "Zhang et al. (2017): the same network fits 500 digits with random labels (training "
         "accuracy ≥ 0.95 by iteration 400, at least twice as slowly as the true labels) while "
         "validation stays at chance. Capacity alone does not explain generalization.",
         RANDOM, "random", C_RANDOM),
    Step("L2 is not weight decay under Adam",
         "Coupled L2 adds λθ to the gradient, which Adam then divides by √v̂; decoupled decay "
         "(AdamW) shrinks θ by ηλ outside Adam. At the same λ = 0.01, Adam + L2 ends with a "
         "weight norm over 5× smaller: the coefficients are not interchangeable (Loshchilov & "
         "Hutter tune them separately).", SAME_COEF, "decay", C_SAME_COEF),
    Step("Double descent",
         "More features than points can generalize well: the min-norm fit's test error peaks "
         "at the interpolation threshold p = n, where the smallest singular value of the "
         "feature matrix goes to 0, and descends again beyond it. A ridge of 0.01 removes the "
         "peak.", DOUBLE, "double", C_PEAK + C_RIDGE),
]
