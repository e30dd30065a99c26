"""ReLU linear regions: the exact polygons on which a small ReLU MLP is affine, live while it
trains; depth vs width at a fixed neuron budget against the bounds; the 1-D sawtooth.
Settings -> engine/regions.py -> viz/relu_regions_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import regions as R
from engine import regions_measures as M
from viz import relu_regions_figures as F
from viz import session
from viz.claims import Claim
from viz.live import live_training, read_trainer
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, export_buttons

# ----------------------------------------------------------------------------- constants
OUTPUTS = ["heatmap", "3-D surface"]
LRS = [0.001, 0.003, 0.01, 0.03, 0.1]
BUDGETS = [12, 24, 36, 48]
SLOW_UNITS = 100         # above this many hidden units the exact partition takes seconds
BUDGET_SEEDS = 3         # seeds per architecture in the depth-vs-width study
TRAIN_STEPS = 600        # the step the training claim names
COUNT_EVERY = 25

STATE = StateTable([
    Control("rr_depth", 3, "Depth (hidden layers)", lo=1, hi=R.MAX_LAYERS, step=1),
    Control("rr_width", 8, "Width (units per layer)", lo=1, hi=R.MAX_WIDTH, step=1),
    Control("rr_widths", "", "Per-layer widths (optional)", kind="text",
            help="Overrides depth and width when filled in, e.g. 16, 8, 4.",
            extra={"placeholder": "e.g. 16, 8, 4"}),
    Control("rr_init", "kaiming", "Initialisation", kind="selectbox", options=list(R.INITS),
            help="kaiming: W ~ N(0, 2/fan_in); xavier: N(0, 2/(fan_in+fan_out)); lecun: "
                 "N(0, 1/fan_in). Biases ~ N(0, 1/fan_in)."),
    Control("rr_scale", 1.0, "Init scale", lo=0.25, hi=3.0, step=0.25,
            help="Multiplies every initial weight and bias."),
    Control("rr_box", 2.0, "Box half-size", lo=0.5, hi=8.0, step=0.5,
            help="Regions are computed in [-s, s]²."),
    Control("rr_task", "bump (regression)", "Task (training)", kind="selectbox",
            options=list(R.TASKS),
            help="; ".join(f"{k}: {t.description}" for k, t in R.TASKS.items())),
    Control("rr_lr", 0.01, "Learning rate (Adam)", kind="select_slider", options=LRS),
    Control("rr_out", OUTPUTS[0], "Output", kind="segmented", options=OUTPUTS),
    Control("rr_layers", True, "Colour edges by layer", kind="toggle",
            help="Each edge lies on the zero set of one hidden unit; colour it by that unit's "
                 "layer."),
    Control("rr_budget", 24, "Neuron budget", kind="select_slider", options=BUDGETS),
    Control("rr_saw", 5, "Sawtooth depth", lo=1, hi=10, step=1),
])


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
        return R.parse_widths(text), None
    except ValueError as exc:
        return widths, str(exc)


def box_of(s: Mapping[str, Any]) -> tuple[float, float, float, float]:
    h = float(s["rr_box"])
    return (-h, h, -h, h)


def net_of(s: Mapping[str, Any], seed: int = 0, input_dim: int = 2):
    return R.make_mlp(widths_of(s)[0], input_dim=input_dim, seed=seed, init=s["rr_init"],
                      init_scale=float(s["rr_scale"]))


@st.cache_data(max_entries=32, show_spinner=False)
def _cached_partition(widths, init, scale, box, seed):
    return R.partition(R.make_mlp(widths, seed=seed, init=init, init_scale=scale), box)


def partition_of(s: Mapping[str, Any], seed: int = 0) -> R.Partition:
    """The exact partition of the untrained network (what the page shows at step 0)."""
    return _cached_partition(widths_of(s)[0], s["rr_init"], float(s["rr_scale"]), box_of(s),
                             int(seed))


@st.cache_data(max_entries=32, show_spinner=False)
def _cached_layers(widths, init, scale, seed, input_dim):
    return R.mlp_layers(R.make_mlp(widths, input_dim=input_dim, seed=seed, init=init,
                                   init_scale=scale))


def layers_of(s: Mapping[str, Any], seed: int = 0, input_dim: int = 2):
    """The untrained network's (W, b) float64 layers (plain numpy, cached by its inputs)."""
    return _cached_layers(widths_of(s)[0], s["rr_init"], float(s["rr_scale"]), int(seed),
                          int(input_dim))


def arrangement_count(s: Mapping[str, Any], seed: int = 0) -> int:
    """1 + lines crossing the box + crossing points inside it (one hidden layer only)."""
    return M.arrangement_count(layers_of(s, seed), box_of(s))


def bent_units(s: Mapping[str, Any], seed: int = 0) -> tuple[int, int]:
    """(layer-1 units whose cut bends, units of later layers whose cut bends)."""
    return M.bent_units(layers_of(s, seed), partition_of(s, seed))


@st.cache_data(max_entries=16, show_spinner="Counting the regions of every architecture exactly…")
def _cached_budget(total: int, box: tuple, init: str, scale: float, seed: int):
    return R.budget_study(total, seeds=tuple(seed + i for i in range(BUDGET_SEEDS)), box=box,
                          init=init, init_scale=scale)


def budget_of(s: Mapping[str, Any], seed: int = 0) -> list[R.BudgetRow]:
    """Exact counts at initialisation for every equal-width split of the neuron budget."""
    return _cached_budget(int(s["rr_budget"]), box_of(s), s["rr_init"], float(s["rr_scale"]),
                          int(seed))


def budget_mean(s, depth: int) -> float:
    """Mean exact count over the seeds of the depth-`depth` split of the budget."""
    return float(next(r.counts.mean() for r in budget_of(s) if len(r.widths) == depth))


def budget_bound(s, depth: int) -> float:
    return float(next(r.bounds["product bound, effective dim (Montúfar 2017)"]
                      for r in budget_of(s) if len(r.widths) == depth))


def sawtooth_of(s: Mapping[str, Any]) -> R.Pieces1D:
    return R.linear_pieces_1d(R.sawtooth_net(int(s["rr_saw"])), (0.0, 1.0))


def sawtooth_pieces(s: Mapping[str, Any]) -> int:
    return len(sawtooth_of(s).kinks()) + 1


def make_trainer(s: Mapping[str, Any], seed: int = 0, device: str | None = None):
    return R.RegionTrainer(widths_of(s)[0], task=s["rr_task"], seed=seed, lr=float(s["rr_lr"]),
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
            Claim("mean exact count 1×24 (3 seeds)", lambda s: budget_mean(s, 1), lo=200, hi=210),
            Claim("mean exact count 6×4 (3 seeds)", lambda s: budget_mean(s, 6), lo=50, hi=60),
            Claim("mean exact count: 1×24 / 6×4", lambda s: budget_mean(s, 1) /
                  budget_mean(s, 6), lo=3))
C_NARROW = (Claim("layer-1 units whose cut bends", lambda s: bent_units(s)[0], lo=0, hi=0),
            Claim("units of layers 2-6 whose cut bends", lambda s: bent_units(s)[1], lo=3))
C_RIDGE = (Claim("share of regions near the bend at step 0, seed 0",
                 lambda s: near_bend(s, 0)[0], lo=0.2, hi=0.25, slow=True),
           Claim("share near the bend at step 600, worst of seeds 0 and 1",
                 lambda s: min(near_bend(s, k)[1] for k in (0, 1)), lo=0.38, slow=True),
           Claim("rise of that share over 600 steps, worst of seeds 0 and 1",
                 lambda s: min(near_bend(s, k)[1] - near_bend(s, k)[0] for k in (0, 1)),
                 lo=0.08, slow=True))
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
               "where the fit needs many planes; flat parts need few. The caption under the "
               "figures tracks the share of regions near the bend (seed 0: 22% at start, 41% "
               "after 600 steps; seed 1: 30% → 42%).", "regions", C_RIDGE),
    "The sawtooth: 2^depth pieces from 2 units per layer": Preset(
        SAW, "Each layer folds [0, 1] onto itself: 6 layers of 2 units give 64 linear pieces; "
             "one hidden layer would need 63 units.", "sawtooth", C_SAW),
}
BUDGET_NAME = "Same 24 neurons: bounds grow with depth, random counts do not"

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
         "bends, and the count plot under the figures change as training goes (share near the "
         "bend, seed 0: 22% at start, 41% after 600 steps).", RIDGE, "regions", C_RIDGE),
]


# ----------------------------------------------------------------------------- views
def architecture_controls() -> tuple[int, ...]:
    """Depth, width and (in an expander) the per-layer widths, init and box: what defines
    the network. Returns the widths used (a rejected text says why)."""
    STATE.widget("rr_depth")
    STATE.widget("rr_width")
    with st.expander("Per-layer widths, initialisation, box"):
        STATE.widget("rr_widths")
        STATE.widget("rr_init")
        STATE.widget("rr_scale")
        STATE.widget("rr_box")
        st.caption("The seed is the sidebar's (it also sets the network's initial weights).")
    widths, problem = widths_of(STATE.values())
    if problem:
        st.warning(f"Per-layer widths ignored: {problem}. Using {len(widths)} × {widths[0]}.",
                   icon=":material/warning:")
    return widths


def _config(s, widths, seed) -> dict:
    return {"widths": list(widths), "init": s["rr_init"], "init_scale": float(s["rr_scale"]),
            "box": list(box_of(s)), "task": s["rr_task"], "lr": float(s["rr_lr"]),
            "seed": seed, "device": session.device()}


def _region_table(part: R.Partition) -> pd.DataFrame:
    return pd.DataFrame({
        "id": np.arange(part.count), "area": part.area,
        "centroid_x1": part.centroid[:, 0], "centroid_x2": part.centroid[:, 1],
        "pattern": [F.pattern_string(p, part.widths) for p in part.patterns],
        "w1": part.out_w[:, 0, 0], "w2": part.out_w[:, 0, 1], "b": part.out_b[:, 0]})


def regions_view(panel) -> None:
    with panel.controls:
        widths = architecture_controls()
        STATE.widget("rr_task")
        STATE.widget("rr_lr")
        STATE.widget("rr_out")
        STATE.widget("rr_layers")
    s = STATE.values()
    seed = session.seed()
    box = box_of(s)
    arch = " → ".join(["2", *map(str, widths), "1"])
    by_layer, surface = bool(s["rr_layers"]), s["rr_out"] == "3-D surface"

    def draw(view, tick) -> None:
        """One live frame from plain data: the TrainerView's snapshot and history, plus the
        model's (W, b) layers fetched next to the trainer (edge colours, the heatmap)."""
        snap = view.snapshot()
        part = snap.partition
        layers = read_trainer("rr_train", M.trainer_layers)
        cols = st.columns(2)
        with cols[0]:
            edges = R.edge_layers(layers, part) if by_layer and layers else None
            show_figure(F.regions_figure(part, snap.points, snap.targets, edges=edges,
                                         title=f"{part.count} linear regions in the box"),
                        key="rr_fig_regions")
        with cols[1]:
            if surface or not layers:
                show_figure(F.surface_figure(part), key="rr_fig_surface")
            else:
                xs, ys, f = M.output_grid(layers, box, res=80)
                show_figure(F.heatmap_figure(xs, ys, f, part), key="rr_fig_heat")
        m = st.columns(5)
        m[0].metric("Regions", f"{part.count:,}", help="Exact activation regions in the box.")
        m[1].metric("Bound", f"{R.product_bound(widths, 2, effective=True):,}",
                    help="Product bound with effective dimension (Montúfar et al. 2017): "
                         "prod_l sum_{i<=min(d_0..d_l-1)} C(d_l, i).")
        m[2].metric("Distinct maps", f"{R.distinct_maps(part):,}",
                    help="Different affine maps: neighbouring regions can share one plane.")
        m[3].metric("Loss", f"{snap.loss:.4g}")
        m[4].metric("ReLUs", f"{sum(widths)}", help=f"Architecture {arch}.")
        st.caption(f"Architecture {arch}, {s['rr_init']} init × {s['rr_scale']:g}, "
                   f"box [{box[0]:g}, {box[1]:g}]², task {s['rr_task']}.")
        _, near = view.history.as_arrays("near_bend")
        if len(near):
            st.caption(f"**{near[-1]:.0%}** of the regions lie within {R.RegionTrainer.NEAR} "
                       f"of the line where the target bends (at step 0: {near[0]:.0%}).")
        cs, cv = view.history.as_arrays("regions")
        ls, lv = view.history.as_arrays("loss")
        if view.steps > 0:
            show_figure(F.count_history_figure(cs, cv, ls, lv), key="rr_fig_hist")
        else:
            st.info("Press **Play** (or **Step**) to train: the exact region count is recorded "
                    f"every {COUNT_EVERY} steps and plotted here.", icon=":material/play_arrow:")

    trainer = None
    with panel.figure:
        if sum(widths) > SLOW_UNITS:
            st.warning(f"{sum(widths)} hidden units: the exact partition can have 10⁴ regions "
                       "and take seconds per redraw. Use a smaller network for smooth live "
                       "training.", icon=":material/hourglass:")
        with user_errors("compute the linear regions"):
            trainer = live_training("rr_train", lambda: make_trainer(s, seed, session.device()),
                                    draw, config=_config(s, widths, seed),
                                    steps_per_frame=COUNT_EVERY, max_steps_per_frame=500)
    with panel.notes:
        st.latex(r"\text{on a region: } h_l = M_l x + c_l,\quad M_l = D_l W_l M_{l-1},\quad "
                 r"c_l = D_l (W_l c_{l-1} + b_l)")
        explain("D_l = diag(on/off pattern of layer l) is fixed on a region, so every unit's "
                "zero set is a straight line there. **How it is computed.** Start with the box "
                "as one polygon. For each hidden unit, layer by layer, the unit's pre-activation "
                "is affine on every current region, so its zero set is a straight line there; "
                "every region the line crosses is cut in two, the pieces inherit the on/off "
                "bit. All regions are cut at once (numpy over padded polygons). Counts are "
                "*activation regions*: two neighbours may happen to share the same plane, so "
                "the number of distinct linear pieces can be a little smaller.")
        if trainer is not None:
            # outside the live fragment: built on a full rerun of the view (Pause, a widget),
            # never on a training tick, so a download link stays valid while playing
            with st.expander("Export the regions (state when the view was last redrawn)"):
                step, part = trainer.steps, trainer.snapshot().partition
                export_buttons(_region_table(part), {**_config(s, widths, seed), "step": step,
                                                     "regions": part.count}, "relu_regions")


def budget_view(panel) -> None:
    with panel.controls:
        STATE.widget("rr_budget")
        STATE.widget("rr_init")
        STATE.widget("rr_scale")
        STATE.widget("rr_box")
        st.caption(f"Each architecture at {BUDGET_SEEDS} seeds from the sidebar's seed, at "
                   "initialisation (no training).")
    s = STATE.values()
    seed = session.seed()
    rows = []
    with panel.figure:
        with user_errors("count the regions of the architectures"):
            rows = budget_of(s, seed)
            show_figure(F.budget_figure(rows, int(s["rr_budget"])), key="rr_fig_budget")
    with panel.notes:
        if rows:
            st.latex(r"\#\text{regions} \le \prod_{l=1}^{L} \sum_{i=0}^{d_{l-1}} "
                     r"\binom{d_l}{i}\quad\text{(one layer: } \textstyle\sum_{i=0}^{2}"
                     r"\binom{n}{i}\text{, Zaslavsky)}")
            table = pd.DataFrame([{"architecture": "x".join(map(str, r.widths)),
                                   **{f"count seed {seed + i}": int(v)
                                      for i, v in enumerate(r.counts)},
                                   "mean": float(r.counts.mean()), **r.bounds} for r in rows])
            st.dataframe(table, hide_index=True, key="rr_budget_table")
            with st.expander("Export"):
                export_buttons(table, {**_config(s, (), seed), "budget": int(s["rr_budget"])},
                               "relu_regions_budget")
        explain("The product bound multiplies one factor per layer, so at a fixed number of "
                "neurons it grows with depth; the effective-dimension version uses that a "
                "region's image in any layer is at most 2-dimensional. Random networks at "
                "initialisation land far below every bound, and their count does not grow "
                "with depth: at a fixed budget the deep narrow nets have fewer regions than "
                "the shallow wide one (Hanin & Rolnick 2019: the count scales with the number "
                "of neurons, not exponentially with depth). Maximal constructions exist (the "
                "sawtooth), but they are not what random initialisation finds.")


def sawtooth_view(panel) -> None:
    with panel.controls:
        STATE.widget("rr_saw")
        st.markdown("**Random 1-D net** (right)")
        widths = architecture_controls()
    s = STATE.values()
    seed = session.seed()
    box = box_of(s)
    k = int(s["rr_saw"])
    with panel.figure:
        cols = st.columns(2)
        with cols[0], user_errors("build the sawtooth network"):
            saw = sawtooth_of(s)
            show_figure(F.pieces_figure(saw, f"Sawtooth: {len(saw.kinks()) + 1} pieces = "
                                             f"2^{k}"),
                        key="rr_fig_saw")
            st.metric("Linear pieces", f"{len(saw.kinks()) + 1}",
                      help="A single hidden layer needs 2^depth - 1 units for this many.")
            st.caption(f"{k} layers × 2 units: only {2 * k} ReLUs; a one-hidden-layer network "
                       f"needs {2 ** k - 1}. Red dots: breakpoints, where the slope changes.")
        with cols[1], user_errors("compute the pieces of the 1-D network"):
            net = net_of(s, seed, input_dim=1)
            pieces = R.linear_pieces_1d(net, (box[0], box[1]))
            kinks = pieces.kinks()
            arch1 = " → ".join(["1", *map(str, widths), "1"])
            show_figure(F.pieces_figure(pieces, f"Random net: {len(kinks) + 1} pieces"),
                        key="rr_fig_1d")
            st.caption(f"Random 1-D net {arch1}: {pieces.count} activation intervals, "
                       f"{len(kinks)} breakpoints where "
                       f"the slope changes. One hidden layer of n units gives at most n + 1 "
                       f"pieces; here {sum(widths)} units in {len(widths)} layer(s).")
    with panel.notes:
        st.latex(r"T(t) = 2\,\mathrm{relu}(t) - 4\,\mathrm{relu}(t - \tfrac12),\qquad "
                 r"f = \underbrace{T\circ\cdots\circ T}_{k} \text{ has } 2^k \text{ pieces on }"
                 r" [0,1]")
        saw = sawtooth_of(s)
        df = pd.DataFrame({"x_left": saw.edges[:-1], "x_right": saw.edges[1:],
                           "slope": saw.slope, "intercept": saw.intercept})
        with st.expander("Export the sawtooth"):
            export_buttons(df, {"sawtooth_depth": k}, "relu_regions_sawtooth")


VIEWS = [View("regions", "2-D regions", regions_view),
         View("budget", "Depth vs width", budget_view),
         View("sawtooth", "1-D & sawtooth", sawtooth_view)]

if __name__ == "__main__":
    topic_page("relu_regions", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"h_l = \max(0, W_l h_{l-1} + b_l)\;\Rightarrow\;"
                       r"f(x) = w_r^\top x + b_r \text{ on region } r")
