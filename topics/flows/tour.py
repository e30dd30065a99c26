"""The flow page's presets and tour steps with the claims that check what each one says
(topics/flows/page.py imports PRESETS and STEPS; the measurements are in
topics/flows/compute.py)."""
from __future__ import annotations

from engine.flows import S_MAX
from topics.flows.compute import (TRAIN_STEPS, coupling_measure, digits_value,
                                  start_integral, trained_measure)
from topics.flows.digits import pixelcnn_minus_flow
from topics.flows.families import fit_measure, params_ratio
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
FAMILIES = {"fl_data": "moons", "fl_simple": 8, "fl_cmp_steps": 300}
DEEP_PLANAR = {**FAMILIES, "fl_simple": 32}
DIGITS = {"fl_temp": 0.5}
HOT = {"fl_temp": 1.0}
FROZEN = {"fl_temp": 0.0}

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

# the bounds the comparison and digits texts state (measured values: the claims and the card)
PLANAR_LO, COUPLING_HI, ODE_HI, RADIAL_HI = 2.1, 1.8, 1.5, 1.9
SPREAD_HI, ROUGH_HI, BITS_LO = 0.8, 0.9, 0.15


def _digits(name: str):
    return lambda s: digits_value(s, name)


PARAMS = Claim("parameters of the coupling flow / of the planar flow", params_ratio, lo=100.0)
PLANAR_HELD = Claim("planar flow (K = 8), held-out NLL after 300 steps",
                    fit_measure("planar", "held_nll"), lo=PLANAR_LO, slow=True)
COUPLING_HELD = Claim("coupling flow, held-out NLL after 300 steps",
                      fit_measure("coupling", "held_nll"), hi=COUPLING_HI, slow=True)
ODE_HELD = Claim("neural ODE, held-out NLL after 300 steps", fit_measure("ode", "held_nll"),
                 hi=ODE_HI, slow=True)
ODE_MASS = Claim("neural ODE, ∫ p on the plot after 300 steps",
                 fit_measure("ode", "integral"), lo=0.97, hi=1.03, slow=True)
DEEP_PLANAR_HELD = Claim("planar flow (K = 32), held-out NLL after 300 steps",
                         fit_measure("planar", "held_nll", fl_simple=32), lo=PLANAR_LO,
                         slow=True)
RADIAL_HELD = Claim("radial flow (K = 32), held-out NLL after 300 steps",
                    fit_measure("radial", "held_nll", fl_simple=32), hi=RADIAL_HI, slow=True)
C_FAMILIES = (PARAMS, PLANAR_HELD, COUPLING_HELD, ODE_HELD, ODE_MASS)
DEEPER_WORSE = Claim("planar held-out NLL, K = 32 minus K = 8, after 300 steps",
                     lambda s: fit_measure("planar", "held_nll", fl_simple=32)(s)
                     - fit_measure("planar", "held_nll", fl_simple=8)(s), lo=0.0, slow=True)
C_DEEP = (DEEP_PLANAR_HELD, DEEPER_WORSE, RADIAL_HELD, COUPLING_HELD)
SPREAD = Claim("spread of the samples at T = 0.5 / at T = 1", _digits("spread_ratio"),
               hi=SPREAD_HI)
ROUGH = Claim("roughness of the samples at T = 0.5 / at T = 1", _digits("roughness_ratio"),
              hi=ROUGH_HI)
BITS = Claim("independent pixels' bits per pixel minus the flow's (test digits)",
             _digits("bits_below_baseline"), lo=BITS_LO)
PIXELCNN = Claim("PixelCNN's test bits per pixel minus the flow's (17 levels, same split)",
                 pixelcnn_minus_flow, hi=-0.1, slow=True)
C_DIGITS = (SPREAD, ROUGH, BITS)

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
    "Planar, radial, ODE vs coupling": Preset(
        FAMILIES, "Press Fit. Eight planar layers have under a hundredth of the coupling flow's "
                  f"parameters and stay blurred (held-out NLL above {PLANAR_LO:g} after 300 "
                  f"steps), where the coupling flow gets below {COUPLING_HI:g} and the neural "
                  f"ODE below {ODE_HI:g}, its density still summing to 1 (0.97 to 1.03).",
        "families", C_FAMILIES),
    "More planar layers do not help in 300 steps": Preset(
        DEEP_PLANAR, f"Press Fit. 32 planar layers stay above {PLANAR_LO:g}, no better than "
                     "8 (deeper stacks of bends are harder to optimise in 300 steps); 32 "
                     f"radial layers get below {RADIAL_HI:g}; the coupling flow below "
                     f"{COUPLING_HI:g}.", "families", C_DEEP),
    "Digits at temperature 0.5": Preset(
        DIGITS, f"Samples at T = 0.5 are smoother and more alike than at T = 1: their spread "
                f"is under {SPREAD_HI:g} of it, their roughness under {ROUGH_HI:g}. The flow's "
                f"test bits per pixel are more than {BITS_LO:g} below independent pixels'.",
        "digits", C_DIGITS),
    "Digits at temperature 1": Preset(
        HOT, "T = 1 samples the model itself: the most varied and the roughest samples.",
        "digits", (SPREAD, ROUGH)),
    "Temperature 0": Preset(
        FROZEN, "At T = 0 every z is 0: one image, f⁻¹(0), and a message instead of a grid.",
        "digits", (Claim("spread across the samples at T = 0 (grey levels)",
                         _digits("frozen_spread"), hi=1e-4),)),
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
    Step("Planar, radial and continuous flows",
         "Planar and radial layers are cheap and have a closed-form log-determinant, but each "
         f"adds one bend: after 300 steps eight planar layers stay above {PLANAR_LO:g} "
         f"nats, the coupling flow gets below {COUPLING_HI:g}. A neural ODE moves the points "
         "along a learned velocity field; its log-determinant is the integral of a trace, and "
         f"it gets below {ODE_HI:g}. Press Fit.", FAMILIES, "families",
         (PARAMS, PLANAR_HELD, COUPLING_HELD, ODE_HELD)),
    Step("Real NVP on digits, and temperature",
         "The same coupling layers on 8 × 8 digits, with checkerboard and half-image masks. "
         f"Sampling at T = 0.5 instead of 1 gives smoother (roughness under {ROUGH_HI:g} of "
         f"T = 1's) but less varied samples (spread under {SPREAD_HI:g}).", DIGITS, "digits",
         (SPREAD, ROUGH)),
    Step("Bits per pixel",
         "The dequantised density bounds the bits of each digit; on the test digits it is "
         f"more than {BITS_LO:g} bits per pixel below independent pixels. Press the button "
         "to train the autoregressive page's PixelCNN on the same split: it is more than 0.1 "
         "bits per pixel better than this small flow.", DIGITS, "digits", (BITS, PIXELCNN)),
]
