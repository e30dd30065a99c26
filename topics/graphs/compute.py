"""Constants and the cached pure computations of the graphs page: what the views draw and
what the claims measure, from the same engine calls."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st
import torch

from engine.graphs import (GCN, GraphsTrainer, Rollouts, SimulatorTrainer, exact_rollout,
                           learned_rollout, make_graph, network_of, node_features,
                           normalized_adjacency, permutation_error, propagate, simulate,
                           spread_by_depth, spring_energy)
from engine.graphs.gcn import rescaled
from engine.graphs.sudoku import (beliefs, conflicts, load_solver, parse_grid, puzzles,
                                  solutions, solved_share, split_grids)
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
GRAPH_NAMES = {"karate": "Karate club", "grid": "Grid", "ring": "Ring",
               "random": "Random G(n, p)"}
PROBS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3)
MAX_LAYERS = 16
HIDDEN = (4, 8, 16, 32)
LRS = (0.003, 0.01, 0.03, 0.1)
TRAIN_STEPS = 200        # the GCN's claims and the edge-blind MLP's accuracy: after this many
KARATE_PER_CLASS = 17    # members of each faction


# ----------------------------------------------------------------------------- graphs
def graph_args(s: Mapping[str, Any]) -> tuple[str, int, float]:
    return str(s["gr_graph"]), int(s["gr_n"]), float(s["gr_p"])


@st.cache_data(max_entries=16, show_spinner=False)
def graph_of(kind: str, n: int, p: float, seed: int = 0):
    """The graph drawn (engine.graphs.make_graph), seeded."""
    return make_graph(kind, n, p, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def passing_of(kind: str, n: int, p: float, seed: int = 0) -> dict[str, np.ndarray]:
    """The message passing of the settings: a_hat (n, n), the features h (L + 1, n, 2) after
    0..MAX_LAYERS layers, their degree-rescaled z (L + 1, n, 2) and the spread of z by depth
    relative to layer 0 (L + 1,)."""
    g = graph_of(kind, n, p, seed)
    a = torch.as_tensor(g.adjacency, dtype=torch.float64)                 # (n, n)
    a_hat = normalized_adjacency(a)                                       # (n, n)
    h0 = node_features(g.n, 2, seed)                                      # (n, 2)
    h = propagate(a_hat, torch.as_tensor(h0), MAX_LAYERS)                 # (L + 1, n, 2)
    return {"a_hat": a_hat.numpy(), "h": h.numpy(), "z": rescaled(h, a).numpy(),
            "spread": spread_by_depth(g.adjacency, h0, MAX_LAYERS)}


@lesson_measure
def spread_after(s: Mapping[str, Any], layers: int = 8) -> float:
    """Spread of the degree-rescaled features after `layers` layers over layer 0's."""
    return float(passing_of(*graph_args(s))["spread"][int(layers)])


def row_sum(s: Mapping[str, Any], node: int | None = None) -> float:
    """sum_j a_hat[i, j] of node i (the settings' selected node by default)."""
    a_hat = passing_of(*graph_args(s))["a_hat"]
    i = int(s["gr_node"]) if node is None else int(node)
    return float(a_hat[min(i, len(a_hat) - 1)].sum())


def row_sum_gap(s: Mapping[str, Any]) -> float:
    """max_i |sum_j a_hat[i, j] - 1| over all nodes."""
    return float(np.abs(passing_of(*graph_args(s))["a_hat"].sum(1) - 1).max())


def eigen_gap(s: Mapping[str, Any]) -> float:
    """max_i |(a_hat sqrt(deg))_i - sqrt(deg_i)|: sqrt(deg), deg_i = 1 + sum_j A_ij, is an
    eigenvector of a_hat with eigenvalue 1 (0 up to float rounding)."""
    g = graph_of(*graph_args(s))
    root = np.sqrt(g.degrees + 1)                                         # (n,)
    return float(np.abs(passing_of(*graph_args(s))["a_hat"] @ root - root).max())


# ----------------------------------------------------------------------------- training
def trainer_args(s: Mapping[str, Any]) -> tuple[int, int, float, str]:
    """(per_class, hidden, lr, features) of the settings s."""
    return (int(s["gr_per_class"]), int(s["gr_hidden"]), float(s["gr_lr"]),
            str(s["gr_feat"]))


def build_trainer(per_class: int, hidden: int, lr: float, features: str, seed: int,
                  device: str, model: str = "gcn") -> GraphsTrainer:
    """The live trainer, from plain values only (it may be built in a worker process)."""
    return GraphsTrainer(per_class=per_class, hidden=hidden, lr=lr, features=features,
                         seed=seed, device=device, model=model)


@st.cache_data(max_entries=32, show_spinner=False)
def _accuracy_after(per_class: int, hidden: int, lr: float, features: str, steps: int,
                    seed: int, model: str) -> float:
    trainer = build_trainer(per_class, hidden, lr, features, seed, "cpu", model)
    trainer.step(steps)
    return trainer.snapshot().accuracy


@lesson_measure
def accuracy_after(s: Mapping[str, Any], model: str = "gcn", steps: int = TRAIN_STEPS,
                   seed: int = 0) -> float:
    """Accuracy on the unlabelled karate-club members of a fresh GCN (or edge-blind MLP)
    trained `steps` iterations on the settings s."""
    return _accuracy_after(*trainer_args(s), int(steps), int(seed), model)


def gcn_margin(s: Mapping[str, Any]) -> float:
    """GCN accuracy minus the edge-blind MLP's, both after TRAIN_STEPS iterations."""
    return accuracy_after(s, "gcn") - accuracy_after(s, "mlp")


# ----------------------------------------------------------------------------- permutation
@st.cache_data(max_entries=16, show_spinner=False)
def permuted_of(kind: str, n: int, p: float, perm_seed: int, seed: int = 0) -> dict:
    """A seeded random GCN (2 -> 16 -> 2) on the settings' graph and 2-D features, before and
    after a seeded permutation P of the nodes: outputs P f(X, A) and f(P X, P A P^T) (n, 2),
    the permuted adjacency (n, n), the max error and how many predictions change."""
    g = graph_of(kind, n, p, seed)
    a = torch.as_tensor(g.adjacency, dtype=torch.float32)                 # (n, n)
    x = torch.as_tensor(node_features(g.n, 2, seed), dtype=torch.float32)  # (n, 2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GCN(2, 16, 2)
    perm = torch.randperm(g.n, generator=torch.Generator().manual_seed(int(perm_seed)))
    with torch.no_grad():
        out = model(x, normalized_adjacency(a))[perm]                     # (n, 2)
        out_p = model(x[perm], normalized_adjacency(a[perm][:, perm]))    # (n, 2)
    return {"perm": perm.numpy(), "out": out.numpy(), "out_p": out_p.numpy(),
            "a_perm": a[perm][:, perm].numpy(),
            "error": permutation_error(model, x, a, perm_seed),
            "changed": int((out.argmax(-1) != out_p.argmax(-1)).sum())}


def perm_error(s: Mapping[str, Any]) -> float:
    return float(permuted_of(*graph_args(s), int(s["gr_perm"]))["error"])


def perm_changed(s: Mapping[str, Any]) -> float:
    return float(permuted_of(*graph_args(s), int(s["gr_perm"]))["changed"])


# ----------------------------------------------------------------------------- simulator
SIM_BALLS = (3, 4, 5, 6, 8)
SIM_LRS = (3e-4, 1e-3, 3e-3)
MAX_TEST_BALLS = 20
SIM_TRAIN = 1_000        # the simulator's claims: after this many iterations
ROLL_STEPS = 100         # every rollout drawn: this many steps of DT


def sim_args(s: Mapping[str, Any]) -> tuple[int, float, int]:
    """(balls trained on, lr, balls of the other system) of the settings s."""
    return int(s["gr_balls"]), float(s["gr_sim_lr"]), int(s["gr_test_balls"])


def build_sim_trainer(balls: int, lr: float, seed: int, device: str) -> SimulatorTrainer:
    """The simulator's live trainer, from plain values only."""
    return SimulatorTrainer(balls=balls, lr=lr, seed=seed, device=device)


def rollouts_of(snapshot: dict, balls: int, other: int) -> tuple[Rollouts, Rollouts]:
    """The learned simulator of a SimulatorTrainer snapshot rolled out ROLL_STEPS steps on the
    test system of `balls` balls and on the one of `other` balls."""
    net = network_of(snapshot)
    return learned_rollout(net, balls, ROLL_STEPS), learned_rollout(net, other, ROLL_STEPS)


@st.cache_data(max_entries=8, show_spinner=False)
def _trained_simulator(balls: int, lr: float, steps: int, seed: int) -> dict:
    trainer = build_sim_trainer(balls, lr, seed, "cpu")
    trainer.step(steps)
    return trainer.snapshot()


@lesson_measure(trains=True)
def rollout_error(s: Mapping[str, Any], system: str = "trained", steps: int = SIM_TRAIN,
                  seed: int = 0) -> float:
    """Mean distance between the learned and the exact balls after ROLL_STEPS steps, for a
    fresh simulator trained `steps` iterations: on the trained size or the other."""
    balls, lr, other = sim_args(s)
    mine, theirs = rollouts_of(_trained_simulator(balls, lr, int(steps), int(seed)), balls,
                               other)
    return float(mine.error[-1] if system == "trained" else theirs.error[-1])


def size_ratio(s: Mapping[str, Any]) -> float:
    """The other size's rollout error over the trained size's, both after SIM_TRAIN."""
    return rollout_error(s, "other") / rollout_error(s, "trained")


def energy_drift(s: Mapping[str, Any]) -> float:
    """max_t |E_t - E_0| / E_0 of the exact rollout of the trained size (velocity Verlet)."""
    springs, truth, x0, v0 = exact_rollout(int(s["gr_balls"]), ROLL_STEPS)
    _, v = simulate(springs, x0, v0, ROLL_STEPS)
    e = spring_energy(torch.tensor(truth), torch.as_tensor(v),
                      torch.tensor(springs)).numpy()                     # (T + 1,)
    return float(np.abs(e - e[0]).max() / e[0])


# ----------------------------------------------------------------------------- sudoku
SUDOKU_FILE = "graphs_sudoku.pt"
SUDOKU_ITERATIONS = 16   # iterations drawn (the network trained with 8)
HELD_OUT_PUZZLES = 200
DEFAULT_PUZZLE = "2.../3.../..4./..3."     # 4 givens, one solution, a held-out grid


def sudoku_solver():
    """(network, meta) of the shipped file, or (None, None) when it is not there; a problem
    with the file: sudoku_problem()."""
    from ui import shipped_models
    return shipped_models.shipped(SUDOKU_FILE, load_solver)[0] or (None, None)


def sudoku_problem() -> str | None:
    from ui import shipped_models
    return shipped_models.shipped(SUDOKU_FILE, load_solver)[1]


@st.cache_data(max_entries=4, show_spinner=False)
def held_out_puzzles(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(puzzles, solutions) (HELD_OUT_PUZZLES, 16) of the grids the network never saw."""
    _, held = split_grids(seed)
    return puzzles(held, HELD_OUT_PUZZLES, seed + 7)


@st.cache_data(max_entries=4, show_spinner=False)
def held_out_solved(seed: int = 0) -> np.ndarray:
    """(SUDOKU_ITERATIONS,) the share of held-out puzzles solved after 1, 2, ... iterations
    (NaN without the shipped network)."""
    model, _ = sudoku_solver()
    if model is None:
        return np.full(SUDOKU_ITERATIONS, np.nan)
    return solved_share(model, *held_out_puzzles(seed), SUDOKU_ITERATIONS)


@lesson_measure
def solved_after(s: Mapping[str, Any], iterations: int = SUDOKU_ITERATIONS) -> float:
    """Share of the held-out puzzles every cell of which is right after `iterations`."""
    return float(held_out_solved()[int(iterations) - 1])


@st.cache_data(max_entries=16, show_spinner=False)
def puzzle_beliefs(text: str) -> dict:
    """The puzzle typed (parse_grid; ValueError for bad text) and the network's beliefs after
    each iteration: digits and confidence (SUDOKU_ITERATIONS, 16), the solutions (up to 2),
    the conflicting pairs. No network: digits/confidence None."""
    grid = parse_grid(text)
    model, _ = sudoku_solver()
    digits = confidence = None
    if model is not None:
        digits, confidence = beliefs(model, grid, SUDOKU_ITERATIONS)
    return {"grid": grid, "digits": digits, "confidence": confidence,
            "solutions": solutions(grid, 2), "conflicts": conflicts(grid)}


def puzzle_right(s: Mapping[str, Any], iterations: int = SUDOKU_ITERATIONS) -> float:
    """Cells of the typed puzzle the network gets right after `iterations` (of 16), against
    its first solution (NaN: no solution or no network)."""
    b = puzzle_beliefs(str(s["gr_sudoku"]))
    if b["digits"] is None or not b["solutions"]:
        return float("nan")
    return float((b["digits"][int(iterations) - 1] == b["solutions"][0]).sum())

