"""Graph neural networks: message passing along a graph's edges with a GCN layer's normalised
adjacency, over-smoothing with depth, semi-supervised node classification on Zachary's karate
club (trained live, beside an MLP that ignores the edges), permutation equivariance, and a
learned physics simulator (an interaction network trained live on balls joined by springs),
and a 4x4 Sudoku solved by recurrent message passing (a shipped network).
Settings -> engine/graphs/ -> topics/graphs/figures.py.

The constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py. The live view's `draw(view, tick)` builds its
frame with `live_parts(train_frame_parts, view, **inputs)`: pure, plain values in, parts out."""
from __future__ import annotations

import functools
import math

import numpy as np
import streamlit as st

from engine.graphs import FEATURES
from live.controls import live_training
from live.parts import Figure
from live.push import live_parts, place
from topics.graphs import figures as figs
from topics.graphs.compute import (GRAPH_NAMES, HIDDEN, KARATE_PER_CLASS, LRS, MAX_LAYERS,
                                   DEFAULT_PUZZLE, MAX_TEST_BALLS, PROBS, ROLL_STEPS, SIM_BALLS, SIM_LRS,
                                   TRAIN_STEPS, accuracy_after, build_sim_trainer,
                                   build_trainer, graph_args, graph_of, passing_of, permuted_of,
                                   SUDOKU_ITERATIONS, held_out_solved, puzzle_beliefs,
                                   rollouts_of, sim_args, sudoku_problem, sudoku_solver,
                                   trainer_args)
from topics.graphs.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("gr_graph", "karate", "Graph", kind="selectbox", options=tuple(GRAPH_NAMES),
            format_func=GRAPH_NAMES.get),
    Control("gr_n", 20, "Nodes (grid, ring, random)", lo=1, hi=60, step=1),
    Control("gr_p", 0.15, "Edge probability p (random)", kind="select_slider",
            options=PROBS),
    Control("gr_node", 0, "Node i", lo=0, hi=59, step=1, url=False),
    Control("gr_layers", 1, "Layers k", lo=0, hi=MAX_LAYERS, step=1),
    Control("gr_show", "graph", "Features drawn", kind="segmented",
            options=("graph", "scatter"),
            format_func={"graph": "on the graph", "scatter": "as points"}.get),
    Control("gr_per_class", 1, "Labelled nodes per faction", lo=0, hi=KARATE_PER_CLASS,
            step=1),
    Control("gr_feat", "one-hot", "Node features", kind="segmented", options=FEATURES),
    Control("gr_hidden", 16, "Hidden units", kind="select_slider", options=HIDDEN),
    Control("gr_lr", 0.01, "Learning rate (Adam)", kind="select_slider", options=LRS),
    Control("gr_perm", 1, "Permutation seed", lo=0, hi=99, step=1),
    Control("gr_balls", 5, "Balls trained on", kind="select_slider", options=SIM_BALLS),
    Control("gr_test_balls", 10, "Balls of the other system", lo=2, hi=MAX_TEST_BALLS,
            step=1),
    Control("gr_sim_lr", 1e-3, "Learning rate (Adam)", kind="select_slider",
            options=SIM_LRS),
    Control("gr_sudoku", DEFAULT_PUZZLE, "Puzzle (rows split by /, '.' empty)", kind="text"),
    Control("gr_sd_iter", SUDOKU_ITERATIONS, "Iterations t", lo=1, hi=SUDOKU_ITERATIONS,
            step=1),
])


def _graph_controls() -> None:
    STATE.widget("gr_graph")
    if STATE.values()["gr_graph"] != "karate":
        STATE.widget("gr_n")
    if STATE.values()["gr_graph"] == "random":
        STATE.widget("gr_p")


def _graph_warnings(g) -> bool:
    """Plain words for a graph message passing cannot say much about; False: nothing to draw."""
    if g.n < 2:
        st.info("A graph of one node has no edges: there is no message to pass. "
                "Choose at least 2 nodes.")
        return False
    lonely = np.flatnonzero(g.degrees == 0)
    if len(lonely):
        st.warning(f"{len(lonely)} node{'s have' if len(lonely) > 1 else ' has'} no "
                   "neighbour: such a node only hears itself (Â_ii = 1) and keeps its feature, "
                   "so the spread cannot fall to 0.")
    return True


# ----------------------------------------------------------------------------- views
def passing_view(panel) -> None:
    with panel.controls:
        _graph_controls()
        s = STATE.values()
        g = graph_of(*graph_args(s))
        if g.n >= 2:
            STATE.widget("gr_node", hi=g.n - 1)
        STATE.widget("gr_layers")
        STATE.widget("gr_show")
        usable = _graph_warnings(g)
    if not usable:
        return
    s = STATE.values()
    node, k = min(int(s["gr_node"]), g.n - 1), int(s["gr_layers"])
    mp = passing_of(*graph_args(s))
    z, a_hat = mp["z"], mp["a_hat"]
    with panel.figure:
        left, right = st.columns(2)
        with left:
            if s["gr_show"] == "graph":
                cmax = float(np.abs(z[0, :, 0]).max()) or 1.0
                fig = figs.messages_figure(g.positions, g.edges, z[k, :, 0], cmax, node,
                                           a_hat[node], f"Into node {node}; z₁ at k = {k}")
            else:
                fig = figs.features_figure(z[k], z[0], node, f"z = h / √deg at k = {k}")
            show_figure(fig, key="gr_fig_passing")
        with right:
            show_figure(figs.weights_spread_figure(g.degrees + 1, a_hat[node], node,
                                                   mp["spread"], k), key="gr_fig_spread")
    with panel.notes:
        explain(f"One GCN layer without its weights: H ← Â H with Â = D^-1/2 (A + I) D^-1/2, "
                f"deg_i = 1 + (number of neighbours). Node {node} receives h_j / √(deg_i deg_j) "
                f"from each of its {int(g.degrees[node])} neighbours and from itself (the thick "
                f"edges, as wide as their weight; top right, the weights on the curve "
                f"1/√(deg_i deg_j)); its row of Â sums to {a_hat[node].sum():.3f}. The features "
                "h start as random 2-D vectors; drawn are z = h / √deg (colour: the first "
                "component, blue negative, red positive), which all tend to the same vector as "
                "layers are stacked (√deg is Â's eigenvector with eigenvalue 1): the spread "
                "(bottom right) is the mean distance of the z_i from their mean, relative to "
                "layer 0. Notes 004, chapter 7.")
        row = a_hat[node]
        listed = ", ".join(f"Â[{node},{j}] = {row[j]:.3f}" for j in np.flatnonzero(row > 0))
        explain(f"Row {node} of Â: {listed}.", title=f"Row {node} of Â")


def train_frame_parts(view, read, positions, edges, mlp) -> dict:
    """One live frame of the node-classification tab as parts (pure: the frame route may
    build it): the club coloured by the predicted faction, and the loss curve."""
    snap = view.snapshot()
    acc = ("all labelled" if math.isnan(snap.accuracy)
           else f"{snap.accuracy:.1%} of unlabelled right")
    mlp_text = "" if mlp is None or math.isnan(mlp) else f" · MLP without edges {mlp:.1%}"
    return {"gr_fig_classes": Figure(figs.classes_figure(
                positions, edges, snap.predicted, snap.confidence, snap.labelled, snap.labels,
                f"GCN: {acc}")),
            "gr_fig_loss": Figure(figs.loss_figure(*view.history.as_arrays("loss"))
                                  .update_layout(title=dict(
                                      text=f"Loss{mlp_text}")))}


def train_view(panel) -> None:
    with panel.controls:
        for key in ("gr_per_class", "gr_feat", "gr_hidden", "gr_lr"):
            STATE.widget(key)
    s = STATE.values()
    seed, device = session.seed(), session.device()
    per_class, hidden, lr, feat = trainer_args(s)
    g = graph_of("karate", 34, 0.15)
    with panel.figure:
        if per_class < 1:
            st.warning("No node is labelled: the loss has nothing to fit. Label at least one "
                       "member of each faction.")
            return
        if per_class >= KARATE_PER_CLASS:
            st.info("Every member is labelled: no unlabelled node is left to predict, so the "
                    "accuracy on the unlabelled nodes is not defined. Label fewer.")
        mlp = accuracy_after(s, "mlp", TRAIN_STEPS, seed)
        make = functools.partial(build_trainer, per_class, hidden, lr, feat, seed, device)

        def draw(view, tick) -> None:
            parts = live_parts(train_frame_parts, view, positions=g.positions, edges=g.edges,
                               mlp=mlp)
            left, right = st.columns(2)
            with left:
                place(parts, "gr_fig_classes")
            with right:
                place(parts, "gr_fig_loss")

        with user_errors("train the network"):
            live_training("gr_train", make, draw,
                          config={"per_class": per_class, "hidden": hidden, "lr": lr,
                                  "features": feat, "seed": seed, "device": device},
                          steps_per_frame=5, max_steps_per_frame=100)
    with panel.notes:
        explain(f"A two-layer GCN, logits = Â relu(Â X W₁ + b₁) W₂ + b₂, sees the factions "
                f"of the {per_class} best-connected members of each side (diamonds, in the "
                "colour of their label) and is trained by full-batch Adam on their mean "
                "cross-entropy (the loss). Every other node's colour is its predicted faction "
                "(blue: Mr. Hi's, red: the Officer's), its opacity the confidence. The MLP gets "
                f"the same features and the same {TRAIN_STEPS} iterations but not the edges: "
                "with one-hot features an unlabelled member's input is a vector it never "
                "trained on, so it can only guess. Zachary's karate club; notes 004, "
                "chapter 7.")


def permute_view(panel) -> None:
    with panel.controls:
        _graph_controls()
        STATE.widget("gr_perm")
    s = STATE.values()
    g = graph_of(*graph_args(s))
    with panel.figure:
        if g.n < 2:
            st.info("A graph of one node has only one order: choose at least 2 nodes.")
            return
        r = permuted_of(*graph_args(s), int(s["gr_perm"]))
        left, right = st.columns(2)
        with left:
            show_figure(figs.equivariance_figure(
                r["out"], r["out_p"], f"Max error {r['error']:.1e}"),
                key="gr_fig_perm")
        with right:
            show_figure(figs.adjacency_figure(r["a_perm"], "P A Pᵀ"),
                        key="gr_fig_adj")
    with panel.notes:
        explain("A random GCN (2 → 16 → 2, untrained) run twice: on the graph as numbered, and "
                "with its nodes renumbered by a random permutation P (features P X, adjacency "
                "P A Pᵀ, right). Since P Â Pᵀ is the permuted graph's Â and a GCN applies the "
                "same weights to every node, f(P X, P A Pᵀ) = P f(X, A): the points lie on the "
                "diagonal up to float rounding.")


def sim_frame_parts(view, read, balls, other) -> dict:
    """One live frame of the learned-physics tab as parts (pure): the learned rollouts beside
    the exact ones on the trained size and on the other size, and their errors over time."""
    mine, theirs = rollouts_of(view.snapshot(), balls, other)
    loss = view.history.last("loss")
    loss_text = "" if math.isnan(loss) else f" · loss {loss:.2g}"
    return {"gr_fig_roll": Figure(figs.rollout_figure(
                mine.springs, mine.truth, mine.learned,
                f"{balls} balls (trained on): error {mine.error[-1]:.3f}")),
            "gr_fig_roll_other": Figure(figs.rollout_figure(
                theirs.springs, theirs.truth, theirs.learned,
                f"{other} balls (never seen): error {theirs.error[-1]:.3f}")),
            "gr_fig_roll_error": Figure(figs.rollout_error_figure(
                {f"{balls} balls": mine.error, f"{other} balls": theirs.error},
                f"Rollout error, iteration {view.steps}{loss_text}"))}


def sim_view(panel) -> None:
    with panel.controls:
        for key in ("gr_balls", "gr_test_balls", "gr_sim_lr"):
            STATE.widget(key)
    s = STATE.values()
    balls, lr, other = sim_args(s)
    other = min(max(other, 2), MAX_TEST_BALLS)
    seed, device = session.seed(), session.device()
    make = functools.partial(build_sim_trainer, balls, lr, seed, device)
    with panel.figure:
        def draw(view, tick) -> None:
            parts = live_parts(sim_frame_parts, view, balls=balls, other=other)
            left, right = st.columns(2)
            with left:
                place(parts, "gr_fig_roll")
            with right:
                place(parts, "gr_fig_roll_other")
            place(parts, "gr_fig_roll_error")

        with user_errors("train the simulator"):
            live_training("gr_sim", make, draw,
                          config={"balls": balls, "lr": lr, "seed": seed, "device": device},
                          steps_per_frame=10, max_steps_per_frame=200)
    with panel.notes:
        explain(f"Balls of unit mass joined by springs (stiffness 5, rest length 1), simulated "
                "exactly by velocity Verlet, a symplectic integrator that keeps the energy "
                "within O(dt²) of its start. An interaction network learns their "
                "accelerations: an edge model turns each spring's relative position "
                "(x_j − x_i, |x_j − x_i|) into an effect, the effects into a ball are summed, "
                "and a node model turns the sum into the ball's acceleration. It is trained by "
                f"Adam on states of 24 seeded systems of {balls} balls; the learned "
                f"accelerations then drive the same integrator for {ROLL_STEPS} steps from a "
                "start it never trained on (blue), beside the exact paths (grey, dashed). "
                "Since it only sees springs and sums over neighbours, the same network runs on "
                "a system of any size (right). Notes 004, chapter 7 (interaction networks).")


def _cell(i: int) -> str:
    return f"(row {i // 4 + 1}, column {i % 4 + 1})"


def _puzzle_message(b: dict) -> str | None:
    """Plain words for a puzzle without a unique solution; None when it has one."""
    if not b["grid"].any():
        return ("The grid is empty: every one of the 288 4x4 Sudokus fits it, so there is "
                "nothing to deduce. Give at least one digit.")
    if b["conflicts"]:
        i, j = b["conflicts"][0]
        return (f"Cells {_cell(i)} and {_cell(j)} both hold {int(b['grid'][i])} although they "
                "share a row, a column or a box: this puzzle has no solution. Change one.")
    if not b["solutions"]:
        return ("No digit repeats, but no way of filling the empty cells works: this puzzle "
                "has no solution. Remove a given digit.")
    return None


def sudoku_view(panel) -> None:
    with panel.controls:
        STATE.widget("gr_sudoku")
        STATE.widget("gr_sd_iter")
    s = STATE.values()
    t = int(s["gr_sd_iter"])
    with panel.figure:
        try:
            b = puzzle_beliefs(str(s["gr_sudoku"]))
        except ValueError as err:
            st.warning(f"This puzzle cannot be read: {err}. Type 4 rows of 4 cells, for "
                       f"example {DEFAULT_PUZZLE}.")
            return
        message = _puzzle_message(b)
        if message:
            st.warning(message)
            return
        if b["digits"] is None:
            problem = sudoku_problem() or "its file is not there"
            st.warning(f"The shipped Sudoku network is not usable: {problem}. Rebuild it with "
                       "`python -m scripts.pretrain graphs`.")
            return
        several = len(b["solutions"]) > 1
        if several:
            st.info("This puzzle has more than one solution: no cell is marked wrong, and the "
                    "network may settle on any of them.")
        solution = None if several else b["solutions"][0]
        digits, confidence = b["digits"][t - 1], b["confidence"][t - 1]
        wrong = 0 if solution is None else int((digits != solution).sum())
        empty = b["grid"] == 0
        mean_conf = b["confidence"][:, empty].mean(1)                       # (T,)
        left, right = st.columns(2)
        with left:
            verdict = "" if solution is None else f": {16 - wrong}/16 right"
            show_figure(figs.sudoku_figure(b["grid"], digits, confidence, solution,
                                           f"t = {t}{verdict}"),
                        key="gr_fig_sudoku")
        with right:
            show_figure(figs.iterations_figure(held_out_solved(), mean_conf, t),
                        key="gr_fig_sudoku_its")
    with panel.notes:
        _, meta = sudoku_solver()
        explain("Each of the 16 cells is a node joined to the 7 cells that share its row, "
                "column or 2x2 box. A recurrent relational network passes messages along these "
                "edges: each iteration every cell sends a learned message to its neighbours, "
                "adds up what it receives, and updates its state with a GRU; a linear readout "
                "gives its belief over the digits 1-4 (the digit drawn, its probability the "
                "colour). Given digits are bold; ✗ marks a cell that differs from the solution. "
                f"The network was trained for {meta.get('steps', '?')} steps on puzzles of 240 "
                "of the 288 grids with the loss of every one of 8 iterations; the curve counts "
                "the held-out puzzles (from the other 48 grids) it solves after each "
                "iteration. Notes 004, chapter 7 (recurrent relational networks).")


VIEWS = [View("passing", "Message passing", passing_view),
         View("train", "Node classification", train_view,
              live=Live("gr_train", train_max=1_000)),
         View("permute", "Permutation", permute_view),
         View("simulate", "Learned physics", sim_view, live=Live("gr_sim", train_max=3_000)),
         View("sudoku", "Sudoku", sudoku_view)]

if __name__ == "__main__":
    topic_page("graphs", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"H^{(k+1)}=\sigma\big(\hat A H^{(k)} W^{(k)}\big),\quad "
                       r"\hat A=D^{-1/2}(A+I)D^{-1/2}")
