"""Presets and the guided tour of the graphs page. Every fact a text states is a Claim:
measured by the function the page draws from, with the bound the text states (ui/claims.py);
a text states bounds, the card prints the measured value beside them."""
from __future__ import annotations

from topics.graphs.compute import (ROLL_STEPS, SIM_TRAIN, TRAIN_STEPS, accuracy_after,
                                   eigen_gap, energy_drift, gcn_margin, perm_changed,
                                   perm_error, puzzle_right, rollout_error,
                                   row_sum, row_sum_gap, size_ratio, solved_after,
                                   spread_after)
from ui.claims import PERCENT, Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
KARATE = {"gr_graph": "karate", "gr_node": 0, "gr_layers": 1, "gr_show": "graph"}
KARATE_DEEP = {**KARATE, "gr_layers": 8}
RING = {"gr_graph": "ring", "gr_n": 20, "gr_node": 0, "gr_layers": 8, "gr_show": "scatter"}
SPARSE = {"gr_graph": "random", "gr_n": 20, "gr_p": 0.05, "gr_node": 0, "gr_layers": 16,
          "gr_show": "scatter"}
TRAIN = {"gr_per_class": 1, "gr_feat": "one-hot", "gr_hidden": 16, "gr_lr": 0.01}
TRAIN_RANDOM = {**TRAIN, "gr_feat": "random"}
PERMUTE = {"gr_graph": "karate", "gr_perm": 1}
SIM = {"gr_balls": 5, "gr_test_balls": 10, "gr_sim_lr": 1e-3}
SIM_FEW = {**SIM, "gr_test_balls": 3}
SUDOKU_FIRST = {"gr_sudoku": "2.../3.../..4./..3.", "gr_sd_iter": 1}
SUDOKU_LAST = {**SUDOKU_FIRST, "gr_sd_iter": 16}

# ----------------------------------------------------------------------------- claims
SIM_ERROR_HI = 0.3       # mean distance of learned from exact balls (springs' rest length: 1)
SIM_RATIO_HI = 3.0
SIM_ENERGY_HI = 5e-3
SD_FIRST_HI = 12         # cells right (of 16) after one iteration
SD_SOLVED_FIRST_HI = 0.5
SD_SOLVED_LO = 0.95

C_ROW = (Claim("sum of node 0's row of Â (its neighbours have fewer links)", row_sum,
               lo=1.5),
         Claim("max |Â √deg − √deg| (√deg: eigenvalue 1)", eigen_gap, hi=1e-12))
C_DEEP = (Claim("spread after 8 layers / layer 0", spread_after, hi=0.15),)
C_RING = (Claim("spread after 8 layers / layer 0, ring of 20", spread_after, lo=0.2),
          Claim("max over nodes |row sum of Â − 1|", row_sum_gap, hi=1e-12))
C_SPARSE = (Claim("spread after 16 layers / layer 0, with lonely nodes",
                  lambda s: spread_after(s, 16), lo=0.2),)
C_GCN = (Claim(f"GCN accuracy on the unlabelled, {TRAIN_STEPS} iterations",
               lambda s: accuracy_after(s, "gcn"), lo=0.9, slow=True, fmt=PERCENT),
         Claim("GCN minus MLP without edges, same iterations", gcn_margin, lo=0.3,
               slow=True, fmt=PERCENT))
C_MLP = (Claim(f"MLP without edges: accuracy on the unlabelled, {TRAIN_STEPS} iterations",
               lambda s: accuracy_after(s, "mlp"), hi=0.7, fmt=PERCENT),)
C_PERM = (Claim("max |f(PX, PAPᵀ) − P f(X, A)|", perm_error, hi=1e-5),
          Claim("predictions changed by the permutation", perm_changed, hi=0))

C_ENERGY = (Claim(f"exact system: max |E_t − E_0| / E_0 over {ROLL_STEPS} steps", energy_drift,
                  hi=SIM_ENERGY_HI),)
C_SIM = (Claim(f"rollout error after {ROLL_STEPS} steps, 5 balls, {SIM_TRAIN} iterations",
               rollout_error, hi=SIM_ERROR_HI, slow=True),
         Claim("10 balls' rollout error / 5 balls'", size_ratio, hi=SIM_RATIO_HI, slow=True))
C_FEW = (Claim(f"rollout error after {ROLL_STEPS} steps, 3 balls never seen, {SIM_TRAIN} "
               "iterations", lambda s: rollout_error(s, "other"), hi=SIM_ERROR_HI, slow=True),)

C_SD_FIRST = (Claim("cells of this puzzle right after 1 iteration", lambda s: puzzle_right(s, 1),
                    hi=SD_FIRST_HI),
              Claim("held-out puzzles solved after 1 iteration", lambda s: solved_after(s, 1),
                    hi=SD_SOLVED_FIRST_HI, fmt=PERCENT))
C_SD_LAST = (Claim("cells of this puzzle right after 16 iterations", puzzle_right, lo=16),
             Claim("held-out puzzles solved after 16 iterations", solved_after,
                   lo=SD_SOLVED_LO, fmt=PERCENT))

# ----------------------------------------------------------------------------- presets
PRESETS = {
    "Messages into the club's leader": Preset(
        KARATE, "Node 0 hears each of its neighbours, weighted 1/√(deg_0 deg_j). Its row of Â "
                "sums to at least 1.5, not 1: Â is not an average. √deg is the vector Â "
                "keeps, up to an error below 1e-12.", "passing", C_ROW),
    "Over-smoothing: 8 layers": Preset(
        KARATE_DEEP, "After 8 layers the rescaled features have almost merged: their spread is "
                     "below 0.15 of layer 0's.", "passing", C_DEEP),
    "A ring smooths slowly": Preset(
        RING, "On a ring each node has 2 neighbours and every row of Â sums to 1 (error below "
              "1e-12); information travels one hop per layer, so after 8 layers the spread "
              "is still at least 0.2 of layer 0's.", "passing", C_RING),
    "Lonely nodes keep their feature": Preset(
        SPARSE, "A sparse random graph leaves some nodes without a neighbour: they never "
                "hear anyone, and after 16 layers the spread stays at least 0.2 of layer 0's.",
        "passing", C_SPARSE),
    "One label per faction": Preset(
        TRAIN, f"Press Play: with one labelled member per side the GCN gets at least 90% of "
               f"the rest right within {TRAIN_STEPS} iterations, at least 30% more than the "
               "MLP that ignores the edges.", "train", C_GCN + C_MLP),
    "Relabel the nodes": Preset(
        PERMUTE, "Renumbering the nodes renumbers the outputs and nothing else: the error is "
                 "below 1e-5 and no prediction changes.", "permute", C_PERM),
    "Learned springs, twice the balls": Preset(
        SIM, f"Press Play. After {SIM_TRAIN} iterations on systems of 5 balls, the learned "
             f"simulator's balls stay on average less than {SIM_ERROR_HI} (a third of a "
             f"spring) from the exact ones over {ROLL_STEPS} steps, and on 10 balls, which it "
             f"never saw, its error is less than {SIM_RATIO_HI:g} times that.", "simulate",
        C_SIM),
    "Learned springs, fewer balls": Preset(
        SIM_FEW, f"The same network on 3 balls: after {SIM_TRAIN} iterations its error over "
                 f"{ROLL_STEPS} steps is below {SIM_ERROR_HI} too, since it only ever learned "
                 "what one spring does.", "simulate", C_FEW),
    "Sudoku: one iteration": Preset(
        SUDOKU_FIRST, "Four digits given. After one round of messages each cell only knows "
                      f"what its own row, column and box rule out: at most {SD_FIRST_HI} of "
                      "the 16 cells are right, and fewer than half of the held-out puzzles "
                      "are solved.", "sudoku", C_SD_FIRST),
    "Sudoku: sixteen iterations": Preset(
        SUDOKU_LAST, "After 16 rounds every cell of this puzzle is right, and at least "
                     f"{SD_SOLVED_LO:.0%} of the puzzles of grids the network never saw are "
                     "solved.", "sudoku", C_SD_LAST),
}

STEPS = [
    Step("A message per edge",
         "Pick a node: one GCN layer sums the features of its neighbours and its own, each "
         "divided by √(deg_i deg_j). For node 0 of the karate club this row of Â sums to at "
         "least 1.5: a well-connected node with less-connected friends gets louder.",
         KARATE, "passing", C_ROW[:1]),
    Step("Depth smooths",
         "Stack layers (move k): every layer averages over one more hop, and the rescaled "
         "features all drift to one vector. After 8 layers their spread is below 0.15 of "
         "layer 0's: deep GCNs over-smooth.",
         KARATE_DEEP, "passing", C_DEEP),
    Step("Labels spread along edges",
         f"Press Play. Only the diamonds are labelled; the GCN reaches at least 90% on the "
         f"rest within {TRAIN_STEPS} iterations. An MLP on the same one-hot features never "
         "sees the edges and stays below 70%.",
         TRAIN, "train", C_GCN[:1] + C_MLP),
    Step("Random features too",
         "With random features instead of one-hot ones the MLP still has nothing to go on "
         "(below 70%), while the GCN's edges carry the labels.",
         TRAIN_RANDOM, "train", C_MLP),
    Step("Order does not matter",
         "A graph has no first node. Permuting the nodes permutes the GCN's outputs: the "
         "error is below 1e-5 and no prediction changes.",
         PERMUTE, "permute", C_PERM),
    Step("Physics as message passing",
         "The exact simulation keeps its energy: over the rollout it changes by less than "
         f"{SIM_ENERGY_HI:g} of itself. Press Play: an interaction network learns what each "
         "spring does to a ball and adds up the springs' effects. Its rollout (blue) follows "
         f"the exact one (grey) to within {SIM_ERROR_HI} after {SIM_TRAIN} iterations.",
         SIM, "simulate", C_ENERGY + C_SIM[:1]),
    Step("Any number of balls",
         "The network's rule is local, so it runs on a system of any size: on twice the balls "
         f"its rollout error stays within {SIM_RATIO_HI:g} times the trained size's.",
         SIM, "simulate", C_SIM[1:]),
    Step("Sudoku, one message at a time",
         "The cells of a 4x4 Sudoku are nodes joined to the 7 cells they must differ from. A "
         "recurrent relational network sends messages along these edges again and again. "
         f"After one iteration at most {SD_FIRST_HI} cells of this puzzle are right; move t.",
         SUDOKU_FIRST, "sudoku", C_SD_FIRST[:1]),
    Step("Beliefs settle",
         "Each round lets what one cell learned reach the cells two hops away. After 16 "
         "rounds every cell is right, and the network solves at least "
         f"{SD_SOLVED_LO:.0%} of held-out puzzles.",
         SUDOKU_LAST, "sudoku", C_SD_LAST),
]
