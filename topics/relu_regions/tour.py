"""The ReLU regions page's presets and tour steps with the claims that check what each one says
(topics/relu_regions/page.py imports PRESETS and STEPS; the measurements are in
topics/relu_regions/compute.py)."""
from __future__ import annotations

import math

from ui.claims import PERCENT, Claim
from topics.relu_regions.compute import (
    OUTPUTS, TRAIN_STEPS, arrangement_count, bent_units, budget_bound, budget_mean, near_bend,
    partition_of, sawtooth_pieces)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
CORE = {"rr_depth": 3, "rr_width": 8, "rr_widths": "", "rr_init": "kaiming", "rr_scale": 1.0,
        "rr_box": 2.0, "rr_task": "bump (regression)", "rr_lr": 0.01}
LINES = {**CORE, "rr_depth": 1, "rr_width": 8}
BUDGET = {**CORE, "rr_budget": 24}
NARROW = {**CORE, "rr_depth": 6, "rr_width": 4}
RIDGE = {**CORE, "rr_depth": 2, "rr_width": 16, "rr_task": "ridge (regression)", "rr_lr": 0.01}
SAW = {"rr_saw": 6}

C_LINES = (Claim("regions − (1 + lines crossing the box + crossings inside it)",
                 lambda s: partition_of(s).count - arrangement_count(s), lo=0, hi=0),)
C_BUDGET = (Claim("effective-dim bound: 6×4 / 1×24", lambda s: budget_bound(s, 6) /
                  budget_bound(s, 1), lo=1000),
            Claim("effective-dim bound, 1×24", lambda s: budget_bound(s, 1), lo=301, hi=301),
            Claim("effective-dim bound, 6×4 (millions)", lambda s: budget_bound(s, 6) / 1e6,
                  lo=1.7, hi=1.85, fmt="{:.2f}"),
            Claim("mean exact count 1×24 (3 seeds)", lambda s: budget_mean(s, 1), lo=200, hi=210),
            Claim("mean exact count 6×4 (3 seeds)", lambda s: budget_mean(s, 6), lo=50, hi=60),
            Claim("mean exact count: 1×24 / 6×4", lambda s: budget_mean(s, 1) /
                  budget_mean(s, 6), lo=3))
C_NARROW = (Claim("layer-1 units whose cut bends", lambda s: bent_units(s)[0], lo=0, hi=0),
            Claim("units of layers 2-6 whose cut bends", lambda s: bent_units(s)[1], lo=3))
def near_bend_claim(seed: int, trained: bool, lo: float, hi: float = math.inf) -> Claim:
    """The share of regions near the bend on one seed, at step 0 or after training (the
    caption's number; a 600-step run takes about a second)."""
    when = f"after {TRAIN_STEPS} steps" if trained else "at step 0"
    return Claim(f"regions near the bend, seed {seed}, {when}",
                 lambda s: near_bend(s, seed)[int(trained)], lo=lo, hi=hi, fmt=PERCENT)


C_RIDGE = (near_bend_claim(0, False, 0.2, 0.25), near_bend_claim(0, True, 0.38),
           near_bend_claim(1, False, 0.25, 0.35), near_bend_claim(1, True, 0.38),
           Claim(f"rise of that share over {TRAIN_STEPS} steps, worst of seeds 0 and 1",
                 lambda s: min(near_bend(s, k)[1] - near_bend(s, k)[0] for k in (0, 1)),
                 lo=0.08))
C_SAW = (Claim("linear pieces of the 6-layer sawtooth", sawtooth_pieces, lo=64, hi=64),)

PRESETS = {
    "One hidden layer = a line arrangement": Preset(
        LINES, "8 units = 8 lines. The count is exactly 1 + lines crossing the box + crossing "
               "points inside it.", "regions", C_LINES),
    "Same 24 neurons: bounds grow with depth, random counts do not": Preset(
        BUDGET, "The bounds grow by orders of magnitude with depth (effective-dimension bound: "
                "301 for 1×24, 1.8 million for 6×4), but random networks do the opposite: the "
                "exact count falls from 205 regions (1×24, mean of 3 seeds) to 56 (6×4). Depth "
                "*can* multiply regions (the sawtooth tab), but chance does not find it.",
        "budget", C_BUDGET),
    "Deep and narrow: 6 layers of 4": Preset(
        NARROW, "Layer 1 cuts along straight lines; later layers cut along bent lines: a "
                "unit's boundary is straight only inside each region of the layers before it.",
        "regions", C_NARROW),
    "Training concentrates regions where the target bends": Preset(
        RIDGE, "Press Play: the edges migrate to the bend of the ridge (the line x₁ = x₂/2), "
               "where the fit needs many planes; flat parts need few. The left figure's title "
               "tracks the share of regions near the bend: on seeds 0 and 1 it starts "
               "between 20% and 35% and passes 38% within 600 steps.", "regions", C_RIDGE,
        shows=("rr_fig_regions",)),
    "The sawtooth: 2^depth pieces from 2 units per layer": Preset(
        SAW, "Each layer folds [0, 1] onto itself: 6 layers of 2 units give 64 linear pieces; "
             "one hidden layer would need 63 units.", "sawtooth", C_SAW),
}

STEPS = [
    Step("One layer: lines", "Each hidden unit is zero on a line w·x + b = 0 and the lines "
         "cut the plane like an arrangement of straight cuts; the network is a different plane "
         "on each piece. Count them: 1 + lines crossing the box + crossing points.",
         LINES, "regions", C_LINES),
    Step("Hover a region", "Hover the dot in a region: its on/off pattern (1 = unit active) "
         "and the affine map f = w·x + b the network computes there. The output is shown as "
         "a 3-D surface now: one flat facet per region.", {**LINES, "rr_out": "3-D surface"},
         "regions"),
    Step("Go deeper", "With more layers, later units' zero sets bend at earlier edges: "
         "regions are still convex polygons, but the cuts are no longer global lines. With "
         "edges coloured by layer, layer 1 draws straight lines across the box and every later "
         "layer draws polylines that kink where they meet an earlier cut.",
         {**NARROW, "rr_layers": True, "rr_out": OUTPUTS[0]}, "regions", C_NARROW),
    Step("Depth vs width at 24 neurons", "The bounds explode with depth; the exact counts of "
         "random networks do not follow: at 24 neurons 1×24 has 205 regions, 6×4 only 56 "
         "(mean of 3 seeds). Random nets have few regions per neuron (Hanin & Rolnick 2019).",
         BUDGET, "budget", C_BUDGET),
    Step("Depth can multiply: the sawtooth", "A hand-built network reaches 2^depth pieces "
         "with 2 units per layer (64 from 12 ReLUs at depth 6): in the worst case depth is "
         "exponentially more expressive than width.", SAW, "sawtooth", C_SAW),
    Step("Train", "Fit a ridge: press Play and watch the region edges crowd where the target "
         "bends, and the share of regions near the bend in the left figure's title grow (it "
         "starts between 20% and 35% and passes 38% within 600 steps).", RIDGE,
         "regions", C_RIDGE, shows=("rr_fig_regions",)),
]
