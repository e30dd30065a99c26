"""Presets and the guided tour of the network page, after the playground's classic lessons.
Every fact a text states is a Claim: measured by the function the page draws from, with the
bound the text states (ui/claims.py); a text states bounds, the card prints the measured value
beside them. Trained claims run the page's own trainer (seed 0, CPU) for the stated steps."""
from __future__ import annotations

from topics.network.compute import (dead_share, diverged_at, noise_loss_ratio, run_of,
                                    steps_to_accuracy, test_accuracy_after, train_loss_fall,
                                    weight_norm_ratio)
from ui.claims import PERCENT, Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
BASE = {"ne_widths": "", "ne_noise": 0.0, "ne_share": 0.5, "ne_batch": 10, "ne_reg": "none", "ne_rate": 0.0,
        "ne_knock": [], "ne_test": False, "ne_discrete": False}
XY = ["x1", "x2"]
XOR_LINEAR = {**BASE, "ne_data": "xor", "ne_features": XY, "ne_layers": 0, "ne_units": 4,
              "ne_act": "tanh", "ne_lr": 0.03}
XOR_PRODUCT = {**XOR_LINEAR, "ne_features": ["x1", "x2", "x1x2"]}
XOR_HIDDEN = {**XOR_LINEAR, "ne_layers": 1, "ne_units": 8, "ne_act": "relu"}
SPIRAL_SHALLOW = {**BASE, "ne_data": "spiral", "ne_features": XY, "ne_layers": 1,
                  "ne_units": 8, "ne_act": "relu", "ne_lr": 0.1}
SPIRAL_DEEP = {**SPIRAL_SHALLOW, "ne_layers": 4}
SPIRAL_TANH = {**SPIRAL_SHALLOW, "ne_layers": 2, "ne_act": "tanh"}
SPIRAL_SIN = {**SPIRAL_TANH, "ne_features": ["x1", "x2", "sin x1", "sin x2"]}
ALL = ["x1", "x2", "x1²", "x2²", "x1x2", "sin x1", "sin x2"]
L2 = {**BASE, "ne_data": "circle", "ne_features": ALL, "ne_layers": 2, "ne_units": 8,
      "ne_act": "tanh", "ne_lr": 0.03, "ne_reg": "L2", "ne_rate": 0.03}
NOISY = {**BASE, "ne_data": "gauss", "ne_features": XY, "ne_layers": 2, "ne_units": 4,
         "ne_act": "tanh", "ne_lr": 0.03, "ne_noise": 0.5, "ne_test": True}
DIVERGE = {**BASE, "ne_data": "circle", "ne_features": ALL, "ne_layers": 2, "ne_units": 4,
           "ne_act": "linear", "ne_lr": 1.0}
WIDEST = {**BASE, "ne_data": "spiral", "ne_features": XY, "ne_layers": 6, "ne_units": 8,
          "ne_act": "relu", "ne_lr": 0.03, "ne_test": True}
DEAD = {**BASE, "ne_data": "circle", "ne_features": XY, "ne_layers": 2, "ne_units": 8,
        "ne_act": "relu", "ne_lr": 10.0}

# ----------------------------------------------------------------------------- claims
C_XOR_LINEAR = (Claim("XOR, x1 and x2, no hidden layer: test accuracy after 1,000 steps",
                      lambda s: test_accuracy_after(s, 1000), lo=0.3, hi=0.7, fmt=PERCENT),)
C_XOR_PRODUCT = (Claim("XOR with the x1x2 feature, no hidden layer: test accuracy after "
                       "1,000 steps", lambda s: test_accuracy_after(s, 1000), lo=0.95,
                       fmt=PERCENT),)
C_XOR_HIDDEN = (Claim("XOR, x1 and x2, one hidden layer of 8 ReLUs: test accuracy after "
                      "1,000 steps", lambda s: test_accuracy_after(s, 1000), lo=0.9,
                      fmt=PERCENT),)
C_SPIRAL_SHALLOW = (Claim("spiral, one hidden layer: test accuracy after 5,000 steps",
                          lambda s: test_accuracy_after(s, 5000), hi=0.65, fmt=PERCENT,
                          slow=True),)
C_SPIRAL_DEEP = (Claim("spiral, four hidden layers: test accuracy after 5,000 steps",
                       lambda s: test_accuracy_after(s, 5000), lo=0.75, fmt=PERCENT,
                       slow=True),
                 Claim("spiral, one hidden layer of 8: test accuracy after 5,000 steps",
                       lambda s: float(run_of(s, 5000, hidden=(8,))["test_accuracy"]),
                       hi=0.65, fmt=PERCENT, slow=True))
C_SPIRAL_SIN = (Claim("steps until 90% test accuracy with sin x1, sin x2",
                      lambda s: steps_to_accuracy(s, 0.9, 2000), hi=1000),
                Claim("test accuracy after 1,000 steps with x1, x2 only",
                      lambda s: float(run_of(s, 1000, features=("x1", "x2"))["test_accuracy"]),
                      hi=0.7, fmt=PERCENT))
C_L2 = (Claim("weight norm with L2 (rate 0.03) / without, after 1,000 steps",
              weight_norm_ratio, hi=0.7),
        Claim("test accuracy with L2 after 1,000 steps",
              lambda s: test_accuracy_after(s, 1000), lo=0.95, fmt=PERCENT))
C_NOISE = (Claim("test loss at 50% noise / without noise, after 1,000 steps",
                 noise_loss_ratio, lo=5),
           Claim("training loss at step 1,000 / at step 100", train_loss_fall, hi=0.5))
C_DIVERGE = (Claim("iteration at which the loss left the float range", diverged_at,
                   hi=20),)
C_DEAD = (Claim("share of hidden ReLUs silent on every training point after 300 steps",
                dead_share, lo=0.4, fmt=PERCENT),
          Claim("training loss after 300 steps (a coin toss: 0.693)",
                lambda s: float(run_of(s, 300)["train_loss"]), lo=0.6))

# ----------------------------------------------------------------------------- presets
PRESETS = {
    "XOR: one line is not enough": Preset(
        XOR_LINEAR, "No hidden layer: a linear model, its boundary one straight line. Press "
                    "Play: after 1,000 steps the test accuracy is still between 30% and 70%, "
                    "near a coin toss.", "network", C_XOR_LINEAR),
    "XOR: the x1x2 feature": Preset(
        XOR_PRODUCT, "Add the feature x1x2, whose sign is the XOR label: the same linear "
                     "model gets at least 95% of the test points right within 1,000 steps.",
        "network", C_XOR_PRODUCT),
    "XOR: one hidden layer": Preset(
        XOR_HIDDEN, "Back to x1 and x2, now with one hidden layer of 8 ReLUs: the network "
                    "builds the bent boundary itself, at least 90% test accuracy within 1,000 "
                    "steps.", "network", C_XOR_HIDDEN),
    "Spiral: depth": Preset(
        SPIRAL_DEEP, "Four hidden layers of 8 ReLUs on x1, x2 only: at least 75% test "
                     "accuracy after 5,000 steps, where one such layer stays at most 65%.",
        "network", C_SPIRAL_DEEP),
    "Spiral: sin features": Preset(
        SPIRAL_SIN, "Give the network sin x1 and sin x2: 90% test accuracy within 1,000 "
                    "steps, where x1, x2 alone stay at most 70% after 1,000 steps.",
        "network", C_SPIRAL_SIN),
    "L2 shrinks the weights": Preset(
        L2, "L2 at rate 0.03 pulls every weight towards 0: after 1,000 steps the weights' "
            "norm is at most 0.7 of the unregularised run's, and the circle is still solved "
            "(at least 95% test accuracy). Watch the lines thin.", "network", C_L2),
    "Noise: test loss rises": Preset(
        NOISY, "Two Gaussians at 50% noise overlap: after 1,000 steps the test loss is at "
               "least 5 times the noise-free one, while the training loss has fallen to at "
               "most half its value at step 100.", "network", C_NOISE),
    "Too large a step diverges": Preset(
        DIVERGE, "Linear units on all seven features at learning rate 1: the loss leaves "
                 "the floating-point range within 20 iterations, and the page says so.",
        "network", C_DIVERGE),
    "Dead ReLUs": Preset(
        DEAD, "ReLUs at the largest learning rate: a few huge steps push every unit's input below 0 "
              "on every point. After 300 steps at least 40% of the hidden units output 0 "
              "everywhere, and training stalls: the loss stays at least 0.6, near a coin "
              "toss's 0.693.", "network", C_DEAD),
    "The largest network: six layers of eight": Preset(
        WIDEST, "The cap: six hidden layers of eight ReLUs, every neuron drawn as its map. "
                "Deeper layers fold the plane more: compare their maps with the first "
                "layer's straight edges.", "network"),
}

STEPS = [
    Step("The data",
         "TensorFlow Playground's four datasets: pick one. Half the points train, the other "
         "half test.", {**XOR_LINEAR}, "data"),
    Step("A linear model cannot do XOR",
         "No hidden layer: the output is σ(w1 x1 + w2 x2 + b), one straight boundary. Press "
         "Play: after 1,000 steps the test accuracy stays between 30% and 70%.",
         XOR_LINEAR, "network", C_XOR_LINEAR),
    Step("A feature can",
         "x1x2 is positive exactly where the XOR label is: with it the linear model reaches "
         "at least 95% within 1,000 steps.", XOR_PRODUCT, "network", C_XOR_PRODUCT),
    Step("So can a hidden layer",
         "Without x1x2 but with 8 hidden ReLUs: each neuron's map is a half-plane, the output "
         "combines them, and the test accuracy is at least 90% within 1,000 steps.",
         XOR_HIDDEN, "network", C_XOR_HIDDEN),
    Step("The spiral needs more",
         "With sin x1 and sin x2 two tanh layers reach 90% test accuracy within 1,000 steps; "
         "with x1, x2 alone they stay at most 70% after 1,000 steps.",
         SPIRAL_SIN, "network", C_SPIRAL_SIN),
    Step("Regularisation",
         "L2 adds half its rate times Σw² to the loss: the weights' norm ends at most 0.7 of "
         "the unregularised run's after 1,000 steps.", L2, "network", C_L2[:1]),
    Step("Noise and the test loss",
         "At 50% noise the test loss after 1,000 steps is at least 5 times the noise-free "
         "one; tick Show test data to see why.", NOISY, "network", C_NOISE[:1]),
]
