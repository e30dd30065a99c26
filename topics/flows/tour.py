"""The flow page's presets and tour steps with the claims that check what each one says
(topics/flows/page.py imports PRESETS and STEPS; the measurements are in
topics/flows/compute.py)."""
from __future__ import annotations

from engine.flows import S_MAX
from topics.flows.compute import (TRAIN_STEPS, coupling_measure, start_integral,
                                  trained_measure)
from ui.claims import Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
KEEP1 = "keep x₁, transform x₂"
KEEP2 = "keep x₂, transform x₁"
LAYER = {"fl_keep": KEEP1, "fl_a": 0.0, "fl_b": 0.5, "fl_c": 0.8, "fl_w": 1.5}
STRETCH = {**LAYER, "fl_a": 1.0, "fl_b": 0.0, "fl_c": 0.0}
SHEAR = {**LAYER, "fl_keep": KEEP2, "fl_a": 0.0, "fl_b": 0.0, "fl_c": 1.5}
EXTREME = {**LAYER, "fl_a": 5.0, "fl_b": 5.0}
TRAIN = {"fl_data": "moons", "fl_layers": 8, "fl_hidden": 64, "fl_lr": 2e-3}
ONE = {**TRAIN, "fl_layers": 1}
CHECKER = {**TRAIN, "fl_data": "checkerboard"}

# ----------------------------------------------------------------------------- claims
INVERSE = Claim("largest |f⁻¹(f(x)) − x| on the grid (float32)",
                coupling_measure("inverse_error"), hi=1e-5)
AUTOGRAD = Claim("largest |layer's log-det − log|det J|| with J from autograd",
                 coupling_measure("autograd_gap"), hi=1e-5)
IMAGE_MASS = Claim("∫ p_Y over [−10, 10]² (the image's density)",
                   coupling_measure("image_integral"), lo=0.98, hi=1.02)
C_LAYER = (INVERSE, AUTOGRAD, IMAGE_MASS,
           Claim("log-det range over the grid (min to max)", coupling_measure("logdet_range"),
                 lo=2.0))
C_STRETCH = (Claim("log-det, smallest over the grid", coupling_measure("logdet_min"),
                   lo=0.97, hi=0.99),
             Claim("log-det, largest over the grid", coupling_measure("logdet_max"),
                   lo=0.97, hi=0.99),
             IMAGE_MASS)
C_SHEAR = (Claim("largest |log-det| over the grid", coupling_measure("logdet_abs"), hi=0.0),
           INVERSE, IMAGE_MASS)
C_EXTREME = (Claim("largest raw log-scale |a + b·x₁| on the grid", coupling_measure("raw_max"),
                   lo=10.0),
             Claim(f"largest log-det after the bound (|s| < {S_MAX:g})",
                   coupling_measure("logdet_max"), hi=S_MAX),
             INVERSE)
START_MASS = Claim("∫ p over the plot at step 0", start_integral, lo=0.98, hi=1.02)
EIGHT_HELD = Claim(f"held-out NLL after {TRAIN_STEPS} steps, 8 layers",
                   trained_measure("held_nll", fl_layers=8), hi=1.3, slow=True)
ONE_HELD = Claim(f"held-out NLL after {TRAIN_STEPS} steps, 1 layer",
                 trained_measure("held_nll", fl_layers=1), lo=1.6, slow=True)
TRAINED_MASS = Claim(f"∫ p over the plot after {TRAIN_STEPS} steps",
                     trained_measure("integral"), lo=0.98, hi=1.02, slow=True)
TRAINED_INVERSE = Claim(f"largest |f⁻¹(f(x)) − x| on held-out points after {TRAIN_STEPS} "
                        "steps",
                        trained_measure("inverse_error"), hi=1e-4, slow=True)
C_TRAIN = (START_MASS, EIGHT_HELD, TRAINED_MASS, TRAINED_INVERSE)
C_ONE = (START_MASS, ONE_HELD, EIGHT_HELD)
C_CHECKER = (START_MASS, Claim(f"held-out NLL after {TRAIN_STEPS} steps, 8 layers",
                               trained_measure("held_nll"), hi=2.4, slow=True),
             Claim(f"held-out NLL after {TRAIN_STEPS} steps, 1 layer",
                   trained_measure("held_nll", fl_layers=1), lo=2.6, slow=True))

PRESETS = {
    "One coupling layer": Preset(
        LAYER, "x₁ is copied, x₂ is scaled by exp(s(x₁)) and shifted by t(x₁): the grid's "
               "vertical lines stay straight, the horizontal ones bend. The colour is the "
               "log-determinant s(x₁), which changes along x₁; autograd's Jacobian agrees "
               "to below 1e-5, and the inverse gives the grid back to below 1e-5.",
        "coupling", C_LAYER),
    "Constant stretch": Preset(
        STRETCH, "A constant raw log-scale a = 1 stretches x₂ by the same factor everywhere: "
                 "every point has the same log-determinant, a little under 1 because of the "
                 "tanh bound. The image's density still integrates to 1 (0.98 to 1.02).",
        "coupling", C_STRETCH),
    "Shift only: a shear that keeps area": Preset(
        SHEAR, "With s = 0 the layer only shifts x₁ by t(x₂): the grid bends, yet every "
               "log-determinant is 0, so no area grows or shrinks.", "coupling", C_SHEAR),
    "Extreme scale: the log-scale is bounded": Preset(
        EXTREME, "a = 5 and b = 5 ask for exp(17.5); the bound s = 4·tanh(raw/4) keeps every "
                 "log-det under 4, so nothing overflows and the inverse still holds.",
        "coupling", C_EXTREME),
    "Real NVP on the moons": Preset(
        TRAIN, f"Press Play. At step 0 the flow is the identity and the density is N(0, I). "
               f"Eight coupling layers pull the grid into the moons; after {TRAIN_STEPS} steps "
               "the held-out NLL is below 1.3 nats and the density still integrates to 1 "
               "on the plot.", "train", C_TRAIN),
    "One layer cannot fit the moons": Preset(
        ONE, "One coupling layer copies x₁, so x₁ stays Gaussian: the held-out NLL stays "
             "above 1.6 nats, where eight layers get below 1.3.", "train", C_ONE),
    "Checkerboard": Preset(
        CHECKER, "Eight layers learn the checkerboard's squares (held-out NLL below 2.4), "
                 "one layer cannot (above 2.6).", "train", C_CHECKER),
}

STEPS = [
    Step("One coupling layer",
         "y₁ = x₁, y₂ = x₂·exp(s(x₁)) + t(x₁). The left panel is the base grid, the right "
         "its image; the inverse x₂ = (y₂ − t(y₁))·exp(−s(y₁)) gives the grid back to below "
         "1e-5.", LAYER, "coupling", (INVERSE,)),
    Step("The log-determinant is the log-scale",
         "The Jacobian is triangular, so log|det J| = s(x₁): no Jacobian of s or t is needed. "
         "Autograd's full Jacobian agrees to below 1e-5 at every node.", LAYER, "coupling",
         (AUTOGRAD,)),
    Step("A density that integrates to 1",
         "The change of variables p_Y(y) = N(f⁻¹(y))·exp(−s) moves the Gaussian through the "
         "layer; summed over the plane it still gives 1 (0.98 to 1.02).", STRETCH,
         "coupling", (IMAGE_MASS,)),
    Step("Alternate and stack",
         "Layers alternate which coordinate they keep, so both get "
         f"transformed. Press Play: eight layers reach a held-out NLL below 1.3 after "
         f"{TRAIN_STEPS} steps.", TRAIN, "train", (START_MASS, EIGHT_HELD)),
    Step("One layer is not enough",
         "With a single layer x₁ is copied to z₁ ~ N(0, 1): the model's x₁ is Gaussian and "
         "the held-out NLL stays above 1.6.", ONE, "train", (ONE_HELD,)),
]
