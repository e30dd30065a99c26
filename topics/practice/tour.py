"""Presets and the guided tour of the Training in practice page. Every fact a text states is a
Claim: measured by the function the page draws from, with the bound the text states
(ui/claims.py); a text states bounds, the card prints the measured value beside them."""
from __future__ import annotations

from topics.practice.compute import (TARGET, TOL, band_value, distill_gain,
                                     lottery_measure, search_measure, svgd_measure)
from ui.claims import PERCENT, Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
ENSEMBLE = {"pr_method": "deep ensemble", "pr_members": 5, "pr_drop": 0.1}
DROPOUT = {"pr_method": "MC dropout", "pr_members": 5, "pr_drop": 0.1}
SVGD = {"pr_particles": 50, "pr_bandwidth": "median", "pr_svgd_iter": 500}
NARROW = {**SVGD, "pr_bandwidth": 0.01}
SEARCH = {"pr_budget": 16, "pr_search_seed": 0, "pr_bayes": True}
LOTTERY = {"pr_rate": 0.3, "pr_rewind": 0, "pr_round_steps": 100}
REWIND = {**LOTTERY, "pr_rewind": 20}
DISTILL = {"pr_labels": 100, "pr_T": 4.0, "pr_digit": 0}
COLD = {**DISTILL, "pr_T": 1.0}

# ----------------------------------------------------------------------------- claims
ENSEMBLE_RATIO = Claim("deep ensemble: mean σ in the gap / inside the data",
                       band_value("width_ratio", "deep ensemble"), lo=2.0)
DROPOUT_RATIO = Claim("MC dropout: mean σ in the gap / inside the data",
                      band_value("width_ratio", "MC dropout"), hi=1.3)
SVGD_RIGHT = Claim("share of particles right of 0 at iteration 500 (target 67%)",
                   svgd_measure("right"), lo=0.55, hi=0.75, fmt=PERCENT)
SVGD_STD = Claim(f"particles' std at iteration 500 (target {TARGET.std:.2f})",
                 svgd_measure("std"), lo=1.9, hi=2.5)
NARROW_RIGHT = Claim("share of particles right of 0 with h = 0.01", svgd_measure("right"),
                     hi=0.4, fmt=PERCENT)
GRID_MISS = Claim("grid: closest |u − u*| over its 16 trials", search_measure("u_error", "grid"),
                  lo=0.1)
GRID_NEVER = Claim(f"grid: median trials to |u − u*| ≤ {TOL} (17 = never within 16)",
                   search_measure("median", "grid"), lo=17)
RANDOM_FAST = Claim(f"random: median trials to |u − u*| ≤ {TOL} over 20 seeds",
                    search_measure("median", "random"), hi=10)
RANDOM_BEST = Claim("random: best score after 16 trials", search_measure("best", "random"),
                    lo=0.8)
GRID_BEST = Claim("grid: best score after 16 trials", search_measure("best", "grid"), hi=0.3)
KEPT = Claim("weights kept in the compared round", lottery_measure("kept", 0.12),
             lo=0.11, hi=0.13, fmt=PERCENT, slow=True)
TICKET_GAP = Claim("dense − ticket accuracy, 12% kept",
                   lottery_measure("gap_ticket", 0.12), hi=0.08, fmt=PERCENT, slow=True)
RANDOM_GAP = Claim("dense − random mask, 12% kept",
                   lottery_measure("gap_random", 0.12), lo=0.25, fmt=PERCENT, slow=True)
REINIT_GAP = Claim("dense − re-initialised, 12% kept",
                   lottery_measure("gap_reinit", 0.12), lo=0.15, fmt=PERCENT, slow=True)
TICKET_GAP_24 = Claim("dense − ticket accuracy, 24% kept",
                      lottery_measure("gap_ticket", 0.24), hi=0.03, fmt=PERCENT, slow=True)
REWIND_GAP = Claim("rewound to 20: dense − ticket, 12% kept",
                   lottery_measure("gap_ticket", 0.12), hi=0.08, fmt=PERCENT, slow=True)

DISTILL_GAIN = Claim("soft-target − hard-label student's test accuracy, T = 4",
                     distill_gain, lo=0.02, fmt=PERCENT, slow=True)
COLD_GAIN = Claim("soft-target − hard-label student's test accuracy, T = 1",
                  distill_gain, hi=0.02, fmt=PERCENT, slow=True)

C_ENSEMBLE = (ENSEMBLE_RATIO,)
C_DROPOUT = (DROPOUT_RATIO, ENSEMBLE_RATIO)
C_SVGD = (SVGD_RIGHT, SVGD_STD)
C_NARROW = (NARROW_RIGHT,)
C_SEARCH = (GRID_MISS, GRID_NEVER, RANDOM_FAST, GRID_BEST, RANDOM_BEST)
C_LOTTERY = (KEPT, TICKET_GAP, REINIT_GAP, RANDOM_GAP)

# ----------------------------------------------------------------------------- presets
PRESETS = {
    "Deep ensemble: wider where there is no data": Preset(
        ENSEMBLE, "Five networks that differ only in their initialisation agree where the "
                  "data are and part ways in the gap: the band's mean width there is at "
                  "least 2× its width inside the data.", "uncertainty", C_ENSEMBLE),
    "MC dropout: a band of even width": Preset(
        DROPOUT, "Dropout kept on at prediction gives a band, but its spread is about the "
                 "same inside the data and in the gap (less than 1.3×), where the ensemble's "
                 "is at least 2× wider.", "uncertainty", C_DROPOUT),
    "SVGD: particles cover both modes": Preset(
        SVGD, "Fifty particles start around −10. With the median bandwidth they split "
              "between the two modes: between 55% and 75% end right of 0 (the target puts "
              f"67% there), with a spread of 1.9 to 2.5 (target {TARGET.std:.2f}).", "svgd",
        C_SVGD),
    "SVGD: a tiny bandwidth switches the repulsion off": Preset(
        NARROW, "With h = 0.01 the particles no longer see each other: each climbs the "
                "density on its own and most stay in the left mode they reach first (under "
                "40% right of 0).", "svgd", C_NARROW),
    "Grid vs random search, 16 trials": Preset(
        SEARCH, f"The grid tries only 4 values of the important u and misses its peak by "
                f"more than 0.1: within 16 trials it never comes within {TOL} of u*, and its "
                f"best score stays under 0.3. Random search tries 16 values of u and gets "
                f"there in a median of at most 10 trials over 20 seeds, with a best score "
                f"above 0.8.", "search", C_SEARCH),
    "Lottery ticket: 30% pruned per round": Preset(
        LOTTERY, "Press Play and let it run through ten rounds. At about 12% of the weights "
                 "the rewound ticket's test accuracy is within 8% of the dense net's, while "
                 "the same mask with new weights loses more than 15% and a random mask more "
                 "than 25%.", "pruning", C_LOTTERY),
    "Lottery ticket rewound to iteration 20": Preset(
        REWIND, "Rewinding the survivors to their values at iteration 20 of the dense run, "
                "not to the initialisation: at about 12% of the weights the ticket is again "
                "within 8 points of the dense net.", "pruning", (KEPT, REWIND_GAP)),
    "Distillation at T = 4, 100 labelled digits": Preset(
        DISTILL, "A student that sees 100 labelled digits learns more from the teacher's "
                 "softened probabilities than from the labels: at least 2% more test "
                 "accuracy.", "distill", (DISTILL_GAIN,)),
    "Distillation at T = 1: little to gain": Preset(
        COLD, "At T = 1 the teacher's probabilities are nearly one-hot, almost the labels "
              "again: the soft-target student gains less than 2 points.", "distill",
        (COLD_GAIN,)),
}

STEPS = [
    Step("An ensemble knows where it has no data",
         "Five networks from five initialisations fit the same points. Inside the data they "
         "agree; in the gap the band is at least 2× as wide.", ENSEMBLE, "uncertainty",
         C_ENSEMBLE),
    Step("MC dropout is a cheaper, flatter band",
         "One network, dropout kept on, 100 passes: the band exists but is about as wide "
         "inside the data as in the gap (less than 1.3×).", DROPOUT, "uncertainty",
         (DROPOUT_RATIO,)),
    Step("SVGD: particles that repel each other",
         "Each particle climbs log p, smoothed over its neighbours, and is pushed away from "
         "them. Move Show iteration: they travel from −10 and split between the modes, "
         "55% to 75% on the right (target 67%).", SVGD, "svgd", (SVGD_RIGHT,)),
    Step("Random search beats a grid on the axis that matters",
         f"Sixteen trials: the grid tries 4 values of u and never gets within {TOL} of its "
         "peak; random search gets there in a median of at most 10 trials.", SEARCH,
         "search", (GRID_NEVER, RANDOM_FAST)),
    Step("Pruning finds a winning ticket",
         "Press Play. Each round prunes 30% of what is left and rewinds. At about 12% of the "
         "weights the ticket's test accuracy is within 8% of the dense net's; a random mask "
         "of the same size loses more than 25%.", LOTTERY, "pruning",
         (TICKET_GAP, RANDOM_GAP)),
    Step("At a quarter of the weights nothing is lost",
         "At about 24% of the weights the ticket is within 3 points of the dense net.",
         LOTTERY, "pruning", (TICKET_GAP_24,)),
    Step("A teacher's soft targets carry more than labels",
         "The teacher's probabilities at T = 4 say which wrong digits look alike. A student "
         "trained on them from 100 labelled digits beats one trained on the labels by at "
         "least 2 points.", DISTILL, "distill", (DISTILL_GAIN,)),
]
