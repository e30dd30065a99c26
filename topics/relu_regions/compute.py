"""The ReLU regions page's computations of the settings dict s (topics/relu_regions/page.py):
the architecture, the exact partition and its layers, the depth-vs-width study, the sawtooth,
the trainer factory, and the measurements the claims read (each also shown on the page).
Shared by the views and the claims."""
from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from engine import regions as reg
from engine.regions import reads
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
OUTPUTS = ["heatmap", "3-D surface"]
LRS = [0.001, 0.003, 0.01, 0.03, 0.1]
BUDGETS = [12, 24, 36, 48]
SLOW_UNITS = 100         # above this many hidden units the exact partition takes seconds
BUDGET_SEEDS = 3         # seeds per architecture in the depth-vs-width study
TRAIN_STEPS = 600        # the step the training claim names
COUNT_EVERY = 25


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def widths_of(s: Mapping[str, Any]) -> tuple[tuple[int, ...], str | None]:
    """(hidden widths, the reason the per-layer text was rejected or None)."""
    widths = (int(s["rr_width"]),) * int(s["rr_depth"])
    text = str(s["rr_widths"] or "").strip()
    if not text:
        return widths, None
    try:
        return reg.parse_widths(text), None
    except ValueError as exc:
        return widths, str(exc)


def box_of(s: Mapping[str, Any]) -> tuple[float, float, float, float]:
    h = float(s["rr_box"])
    return (-h, h, -h, h)


def net_of(s: Mapping[str, Any], seed: int = 0, input_dim: int = 2):
    return reg.make_mlp(widths_of(s)[0], input_dim=input_dim, seed=seed, init=s["rr_init"],
                      init_scale=float(s["rr_scale"]))


@st.cache_data(max_entries=32, show_spinner=False)
def _cached_partition(widths, init, scale, box, seed):
    return reg.partition(reg.make_mlp(widths, seed=seed, init=init, init_scale=scale), box)


def partition_of(s: Mapping[str, Any], seed: int = 0) -> reg.Partition:
    """The exact partition of the untrained network (what the page shows at step 0)."""
    return _cached_partition(widths_of(s)[0], s["rr_init"], float(s["rr_scale"]), box_of(s),
                             int(seed))


@st.cache_data(max_entries=32, show_spinner=False)
def _cached_layers(widths, init, scale, seed, input_dim):
    return reg.mlp_layers(reg.make_mlp(widths, input_dim=input_dim, seed=seed, init=init,
                                   init_scale=scale))


def layers_of(s: Mapping[str, Any], seed: int = 0, input_dim: int = 2):
    """The untrained network's (W, b) float64 layers (plain numpy, cached by its inputs)."""
    return _cached_layers(widths_of(s)[0], s["rr_init"], float(s["rr_scale"]), int(seed),
                          int(input_dim))


@lesson_measure
def arrangement_count(s: Mapping[str, Any], seed: int = 0) -> int:
    """1 + lines crossing the box + crossing points inside it (one hidden layer only)."""
    return reads.arrangement_count(layers_of(s, seed), box_of(s))


@lesson_measure
def bent_units(s: Mapping[str, Any], seed: int = 0) -> tuple[int, int]:
    """(layer-1 units whose cut bends, units of later layers whose cut bends)."""
    return reads.bent_units(layers_of(s, seed), partition_of(s, seed))


@st.cache_data(max_entries=16, show_spinner="Counting the regions of every architecture exactly…")
def _cached_budget(total: int, box: tuple, init: str, scale: float, seed: int):
    return reg.budget_study(total, seeds=tuple(seed + i for i in range(BUDGET_SEEDS)), box=box,
                          init=init, init_scale=scale)


def budget_of(s: Mapping[str, Any], seed: int = 0) -> list[reg.BudgetRow]:
    """Exact counts at initialisation for every equal-width split of the neuron budget."""
    return _cached_budget(int(s["rr_budget"]), box_of(s), s["rr_init"], float(s["rr_scale"]),
                          int(seed))


@lesson_measure
def budget_mean(s, depth: int) -> float:
    """Mean exact count over the seeds of the depth-`depth` split of the budget."""
    return float(next(r.counts.mean() for r in budget_of(s) if len(r.widths) == depth))


@lesson_measure
def budget_bound(s, depth: int) -> float:
    return float(next(r.bounds["product bound, effective dim (Montúfar 2017)"]
                      for r in budget_of(s) if len(r.widths) == depth))


def sawtooth_of(s: Mapping[str, Any]) -> reg.Pieces1D:
    return reg.linear_pieces_1d(reg.sawtooth_net(int(s["rr_saw"])), (0.0, 1.0))


@lesson_measure
def sawtooth_pieces(s: Mapping[str, Any]) -> int:
    return len(sawtooth_of(s).kinks()) + 1


def sawtooth_relus(s: Mapping[str, Any]) -> int:
    """Hidden ReLU units of the sawtooth network (every Linear but the output feeds a ReLU)."""
    linears = [m for m in reg.sawtooth_net(int(s["rr_saw"])) if hasattr(m, "out_features")]
    return sum(m.out_features for m in linears[:-1])


def sawtooth_subtitle(s: Mapping[str, Any]) -> str:
    """Its ReLUs against one hidden layer's: n units give at most n + 1 pieces."""
    return (f"from {sawtooth_relus(s)} ReLUs; one hidden layer needs "
            f"{sawtooth_pieces(s) - 1} units")


def make_trainer(s: Mapping[str, Any], seed: int = 0, device: str | None = None):
    return reg.RegionTrainer(widths_of(s)[0], task=s["rr_task"], seed=seed, lr=float(s["rr_lr"]),
                           init=s["rr_init"], init_scale=float(s["rr_scale"]), box=box_of(s),
                           device=device, count_every=COUNT_EVERY)


@st.cache_data(max_entries=8, show_spinner=False)
def _cached_near_bend(settings: tuple, seed: int, steps: int) -> tuple[float, float]:
    trainer = make_trainer(dict(settings), seed)
    trainer.step(steps)
    _, near = trainer.history.as_arrays("near_bend")
    return float(near[0]), float(near[-1])


def near_bend(s: Mapping[str, Any], seed: int, steps: int = TRAIN_STEPS) -> tuple[float, float]:
    """Share of regions within RegionTrainer.NEAR of the target's bend, (at step 0, at
    `steps`): the caption under the live figure."""
    return _cached_near_bend(tuple(sorted(s.items())), int(seed), int(steps))


def sawtooth_caption(k: int) -> str:
    """What the sawtooth's ReLU count says against one hidden layer's: 2^k pieces from
    k layers × 2 units = 2k ReLUs, where one hidden layer needs 2^k − 1 units. Depth is
    cheaper only from k = 3 on (6 < 7); below, the shallow net needs fewer units."""
    deep, shallow = 2 * k, 2 ** k - 1
    head = f"{k} layer{'s' if k > 1 else ''} × 2 units = {deep} ReLUs for {2 ** k} pieces; "
    if deep < shallow:
        return head + f"a one-hidden-layer network needs {shallow}."
    return head + (f"a one-hidden-layer network needs only {shallow}: depth pays off from 3 "
                   f"layers on (6 ReLUs against 7).")
