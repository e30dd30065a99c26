"""Presets and the guided tour of the A network you build page. Every fact a text states is a Claim:
measured by the function the page draws from, with the bound the text states (ui/claims.py);
a text states bounds, the card prints the measured value beside them."""
from __future__ import annotations

from topics.network.compute import accuracy_after
from ui.claims import PERCENT, Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
CLEAN = {"ne_noise": 0.1, "ne_hidden": 16, "ne_lr": 0.01}
TINY = {"ne_noise": 0.1, "ne_hidden": 2, "ne_lr": 0.01}

# ----------------------------------------------------------------------------- claims
C_CLEAN = (Claim("training accuracy after 300 iterations",
                 lambda s: accuracy_after(s, steps=300), lo=0.95, fmt=PERCENT),)
C_TINY = (Claim("training accuracy after 300 iterations, 2 hidden units",
                lambda s: accuracy_after(s, steps=300), hi=0.95, fmt=PERCENT),)

# ----------------------------------------------------------------------------- presets
PRESETS = {
    "Clean moons, 16 hidden units": Preset(
        CLEAN, "Press Play: within 300 iterations the network gets at least 95% of the points "
               "right.", "train", C_CLEAN),
    "Too few units: 2 per layer": Preset(
        TINY, "With 2 units per layer the boundary cannot bend enough: after 300 iterations "
              "the accuracy stays under 95%.", "train", C_TINY),
}

STEPS = [
    Step("The data", "Two moons: no straight line separates the classes.", CLEAN, "data"),
    Step("Train", "Press Play: the predicted classes take the shape of the moons; after 300 "
         "iterations at least 95% of the points are right.", CLEAN, "train", C_CLEAN),
]
