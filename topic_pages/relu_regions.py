"""ReLU linear regions: the exact polygons on which a small ReLU MLP is affine, live while it
trains; depth vs width at a fixed neuron budget against the bounds; the 1-D sawtooth."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine import regions as R
from viz import session
from viz import relu_regions_figures as F
from viz.live import live_training
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

VIEWS = ["2-D regions", "Depth vs width", "1-D & sawtooth"]
OUTPUTS = ["heatmap", "3-D surface"]
LRS = [0.001, 0.003, 0.01, 0.03, 0.1]
BUDGETS = [12, 24, 36, 48]
DEFAULTS = {"rr_view": VIEWS[0], "rr_depth": 3, "rr_width": 8, "rr_widths": "", "rr_scale": 1.0,
            "rr_box": 2.0, "rr_init": "kaiming", "rr_task": "bump (regression)", "rr_lr": 0.01,
            "rr_out": OUTPUTS[0], "rr_layers": True,
            "rr_budget": 24, "rr_saw": 5}
SLOW_UNITS = 100   # above this many hidden units the exact partition takes seconds


CORE = ("rr_view", "rr_depth", "rr_width", "rr_widths", "rr_init", "rr_scale", "rr_box", "rr_task",
        "rr_lr")


def _s(**changes):
    """A preset: the core controls at their defaults, with `changes` on top."""
    return {**{k: DEFAULTS[k] for k in CORE}, **changes}


PRESETS = {
    "One hidden layer = a line arrangement": Preset(
        _s(rr_depth=1, rr_width=8),
        "8 units = 8 lines. Count: 1 + lines crossing the box + crossing points inside it."),
    "Same 24 neurons, deeper: the bounds multiply": Preset(
        _s(rr_view=VIEWS[1], rr_budget=24),
        "The bounds grow by orders of magnitude with depth; random networks stay near the "
        "shallow count. Depth *can* multiply regions (see the sawtooth), but chance does not."),
    "Deep and narrow: 6 layers of 4": Preset(
        _s(rr_depth=6, rr_width=4),
        "Later layers cut along bent lines: a unit's boundary is straight only inside each "
        "region of the layers before it."),
    "Training concentrates regions where the target bends": Preset(
        _s(rr_depth=2, rr_width=16, rr_task="ridge (regression)", rr_lr=0.01),
        "Press Play: the edges migrate to the bend of the ridge (the line x₁ = x₂/2), where "
        "the fit needs many planes; flat parts need few. The caption under the figures tracks "
        "the share of regions near the bend (seed 0: 22% at start, about 40% after 600 steps)."),
    "The sawtooth: 2^depth pieces from 2 units per layer": Preset(
        _s(rr_view=VIEWS[2], rr_saw=6),
        "Each layer folds [0, 1] onto itself: 6 layers of 2 units give 64 linear pieces; "
        "one hidden layer would need 63 units."),
}

STEPS = [
    Step("One layer: lines", "Each hidden unit is zero on a line w·x + b = 0 and the lines "
         "cut the plane like an arrangement of straight cuts; the network is a different plane "
         "on each piece.", PRESETS["One hidden layer = a line arrangement"].settings),
    Step("Hover a region", "Hover the dot in a region: its on/off pattern (1 = unit active) "
         "and the affine map f = w·x + b the network computes there. Switch the output view to "
         "the 3-D surface: one flat facet per region.", {"rr_out": "3-D surface"}),
    Step("Go deeper", "With more layers, later units' zero sets bend at earlier edges: "
         "regions are still convex polygons, but the cuts are no longer global lines. With "
         "edges coloured by layer, layer 1 draws straight lines across the box and every later "
         "layer draws polylines that kink where they meet an earlier cut.",
         PRESETS["Deep and narrow: 6 layers of 4"].settings),
    Step("Depth vs width at 24 neurons", "The product bound explodes with depth; the exact "
         "counts of random networks do not follow (Hanin & Rolnick 2019).",
         PRESETS["Same 24 neurons, deeper: the bounds multiply"].settings),
    Step("Depth can multiply: the sawtooth", "A hand-built network reaches 2^depth pieces "
         "with 2 units per layer: depth is exponentially more expressive in the worst case.",
         PRESETS["The sawtooth: 2^depth pieces from 2 units per layer"].settings),
    Step("Train", "Fit a ridge: press Play and watch the region edges crowd where the target "
         "bends, and the count plot under the figures change as training goes.",
         PRESETS["Training concentrates regions where the target bends"].settings),
]


page_header("ReLU linear regions",
            "a ReLU network cuts the input plane into convex polygons, computed exactly, on each "
            "of which it is a single plane; watch them move while it trains, and see why depth "
            "can multiply them while width only adds.",
            r"f(x) = W_{L+1} h_L + b_{L+1},\quad h_l = \max(0, W_l h_{l-1} + b_l)"
            r"\;\Rightarrow\; f(x) = w_r^\top x + b_r \text{ on region } r")

preset_picker(PRESETS, key="rr_preset")

Q = "query-params"
view = st.segmented_control("View", VIEWS, default=DEFAULTS["rr_view"], key="rr_view", bind=Q,
                            required=True)
view = view if view in VIEWS else VIEWS[0]

with st.container(border=True):
    c = st.columns(5)
    depth = c[0].slider("Depth (hidden layers)", 1, R.MAX_LAYERS, DEFAULTS["rr_depth"],
                        key="rr_depth", bind=Q)
    width = c[1].slider("Width (units per layer)", 1, R.MAX_WIDTH, DEFAULTS["rr_width"],
                        key="rr_width", bind=Q)
    text = c[2].text_input("Per-layer widths (optional)", DEFAULTS["rr_widths"], key="rr_widths",
                           bind=Q, placeholder="e.g. 16, 8, 4",
                           help="Overrides depth and width when filled in.")
    init = c[3].selectbox("Initialisation", list(R.INITS), list(R.INITS).index(DEFAULTS["rr_init"]),
                          key="rr_init", bind=Q,
                          help="kaiming: W ~ N(0, 2/fan_in); xavier: N(0, 2/(fan_in+fan_out)); "
                               "lecun: N(0, 1/fan_in). Biases ~ N(0, 1/fan_in).")
    scale = c[4].slider("Init scale", 0.25, 3.0, DEFAULTS["rr_scale"], step=0.25, key="rr_scale",
                        bind=Q, help="Multiplies every initial weight and bias.")
    c = st.columns([1, 1.2, 1, 1.4])
    half = c[0].slider("Box half-size", 0.5, 8.0, DEFAULTS["rr_box"], step=0.5, key="rr_box",
                       bind=Q, help="Regions are computed in [-s, s]².")
    task = c[1].selectbox("Task (training)", list(R.TASKS),
                          list(R.TASKS).index(DEFAULTS["rr_task"]), key="rr_task", bind=Q,
                          help="; ".join(f"{k}: {t.description}" for k, t in R.TASKS.items()))
    lr = c[2].select_slider("Learning rate (Adam)", LRS, DEFAULTS["rr_lr"], key="rr_lr", bind=Q)
    out_view = c[3].segmented_control("Output", OUTPUTS, default=DEFAULTS["rr_out"], key="rr_out",
                                      bind=Q, required=True) or OUTPUTS[0]
    c = st.columns([1.4, 3], vertical_alignment="center")
    by_layer = c[0].toggle("Colour edges by layer", DEFAULTS["rr_layers"], key="rr_layers",
                           bind=Q, help="Each edge lies on the zero set of one hidden unit; "
                                        "colour it by that unit's layer.")
    c[1].caption("The seed is the sidebar's (it also sets the network's initial weights).")

widths = (int(width),) * int(depth)
if text and text.strip():
    try:
        widths = R.parse_widths(text)
    except ValueError as exc:
        st.warning(f"Per-layer widths ignored: {exc}. Using {depth} × {width}.",
                   icon=":material/warning:")
box = (-float(half), float(half), -float(half), float(half))
seed = session.seed()
arch = " → ".join(["2", *map(str, widths), "1"])
if sum(widths) > SLOW_UNITS:
    st.warning(f"{sum(widths)} hidden units: the exact partition can have 10⁴ regions and take "
               "seconds per redraw. Use a smaller network for smooth live training.",
               icon=":material/hourglass:")


def _region_table(part: R.Partition) -> pd.DataFrame:
    return pd.DataFrame({
        "id": np.arange(part.count), "area": part.area,
        "centroid_x1": part.centroid[:, 0], "centroid_x2": part.centroid[:, 1],
        "pattern": [F.pattern_string(p, part.widths) for p in part.patterns],
        "w1": part.out_w[:, 0, 0], "w2": part.out_w[:, 0, 1], "b": part.out_b[:, 0]})


def _config() -> dict:
    return {"widths": list(widths), "init": init, "init_scale": float(scale), "box": list(box),
            "task": task,
            "lr": float(lr), "seed": seed, "device": session.device(), "view": view}


def view_regions() -> None:
    st.latex(r"\text{on a region: } h_l = M_l x + c_l,\quad M_l = D_l W_l M_{l-1},\quad "
             r"c_l = D_l (W_l c_{l-1} + b_l)")
    st.caption("D_l = diag(on/off pattern of layer l): fixed on a region, so every unit's "
               "zero set is a straight line there.")

    def make():
        return R.RegionTrainer(widths, task=task, seed=seed, lr=float(lr), init=init,
                               init_scale=float(scale),
                               box=box, device=session.device(), count_every=25)

    def draw(trainer: R.RegionTrainer, tick) -> None:
        snap = trainer.snapshot()
        part = snap.partition
        bound = R.product_bound(widths, 2, effective=True)
        m = st.columns(5)
        m[0].metric("Regions", f"{part.count:,}", help="Exact activation regions in the box.")
        m[1].metric("Bound", f"{bound:,}", help="Product bound with effective dimension "
                    "(Montúfar et al. 2017): prod_l sum_{i<=min(d_0..d_l-1)} C(d_l, i).")
        m[2].metric("Distinct maps", f"{R.distinct_maps(part):,}",
                    help="Different affine maps: neighbouring regions can share one plane.")
        m[3].metric("Loss", f"{snap.loss:.4g}")
        m[4].metric("ReLUs", f"{sum(widths)}", help=f"Architecture {arch}.")
        st.caption(f"Architecture {arch}, {init} init × {scale:g}, "
                   f"box [{box[0]:g}, {box[1]:g}]², "
                   f"task {task}.")
        cols = st.columns(2)
        with cols[0]:
            edges = R.edge_layers(trainer.model, part) if by_layer else None
            show_figure(F.regions_figure(part, snap.points, snap.targets, edges=edges,
                                         title=f"{part.count} linear regions in the box"),
                        key="rr_fig_regions")
        with cols[1]:
            if out_view == "3-D surface":
                show_figure(F.surface_figure(part), key="rr_fig_surface")
            else:
                xs, ys, f = R.evaluate_grid(trainer.model, box, res=80, device=trainer.device)
                show_figure(F.heatmap_figure(xs, ys, f, part), key="rr_fig_heat")
        _, near = trainer.history.as_arrays("near_bend")
        if len(near):
            st.caption(f"**{near[-1]:.0%}** of the regions lie within {trainer.NEAR} of the "
                       f"line where the target bends (at step 0: {near[0]:.0%}).")
        cs, cv = trainer.history.as_arrays("regions")
        ls, lv = trainer.history.as_arrays("loss")
        if trainer.steps > 0:
            show_figure(F.count_history_figure(cs, cv, ls, lv), key="rr_fig_hist")
        else:
            st.info("Press **Play** (or **Step**) to train: the exact region count is recorded "
                    "every 25 steps and plotted here.", icon=":material/play_arrow:")
        export_buttons(_region_table(part), {**_config(), "step": snap.step,
                                             "regions": part.count}, "relu_regions")

    with user_errors("compute the linear regions"):
        live_training("rr_train", make, draw, config=_config(), steps_per_frame=25,
                      max_steps_per_frame=500)
    explain("**How it is computed.** Start with the box as one polygon. For each hidden unit, "
            "layer by layer, the unit's pre-activation is affine on every current region, so its "
            "zero set is a straight line there; every region the line crosses is cut in two, "
            "the pieces inherit the on/off bit. All regions are cut at once (numpy over padded "
            "polygons). Counts are *activation regions*: two neighbours may happen to share the "
            "same plane, so the number of distinct linear pieces can be a little smaller.")


@st.cache_data(show_spinner="Counting the regions of every architecture exactly…")
def _budget(total: int, box: tuple, init: str, scale: float, seed: int) -> list[R.BudgetRow]:
    return R.budget_study(total, seeds=(seed, seed + 1, seed + 2), box=box, init=init,
                          init_scale=scale)


def view_budget() -> None:
    total = st.select_slider("Neuron budget", BUDGETS, DEFAULTS["rr_budget"], key="rr_budget",
                             bind=Q)
    st.latex(r"\#\text{regions} \le \prod_{l=1}^{L} \sum_{i=0}^{d_{l-1}} \binom{d_l}{i}"
             r"\quad\text{(one layer: } \textstyle\sum_{i=0}^{2}\binom{n}{i}\text{, Zaslavsky)}")
    with user_errors("count the regions of the architectures"):
        rows = _budget(int(total), box, init, float(scale), seed)
        show_figure(F.budget_figure(rows, int(total)), key="rr_fig_budget")
        table = pd.DataFrame([{"architecture": "x".join(map(str, r.widths)),
                               **{f"count seed {seed + i}": int(v) for i, v in enumerate(r.counts)},
                               "mean": float(r.counts.mean()), **r.bounds} for r in rows])
        st.dataframe(table, hide_index=True)
        export_buttons(table, {**_config(), "budget": int(total)}, "relu_regions_budget")
    explain("The product bound multiplies one factor per layer, so at a fixed number of "
            "neurons it grows with depth; the effective-dimension version uses that a region's "
            "image in any layer is at most 2-dimensional. Random networks at initialisation "
            "land far below every bound, and their count grows with the number of neurons "
            "rather than with depth (Hanin & Rolnick 2019). Maximal constructions exist (the "
            "sawtooth), but they are not what random initialisation or training finds.")


def view_1d() -> None:
    cols = st.columns(2)
    with cols[0]:
        with user_errors("compute the pieces of the 1-D network"):
            net = R.make_mlp(widths, input_dim=1, seed=seed, init=init, init_scale=float(scale))
            pieces = R.linear_pieces_1d(net, (box[0], box[1]))
            kinks = pieces.kinks()
            arch1 = " → ".join(["1", *map(str, widths), "1"])
            show_figure(F.pieces_figure(pieces, f"Random 1-D net {arch1}: "
                                                f"{len(kinks) + 1} linear pieces"),
                        key="rr_fig_1d")
            st.caption(f"{pieces.count} activation intervals, {len(kinks)} breakpoints where "
                       f"the slope changes. One hidden layer of n units gives at most n + 1 "
                       f"pieces; here {sum(widths)} units in {len(widths)} layer(s).")
    with cols[1]:
        k = st.slider("Sawtooth depth", 1, 10, DEFAULTS["rr_saw"], key="rr_saw", bind=Q)
        with user_errors("build the sawtooth network"):
            saw = R.linear_pieces_1d(R.sawtooth_net(int(k)), (0.0, 1.0))
            show_figure(F.pieces_figure(saw, f"Sawtooth, {k} layers × 2 units: "
                                             f"{len(saw.kinks()) + 1} pieces = 2^{k}"),
                        key="rr_fig_saw")
            st.metric("Linear pieces", f"{len(saw.kinks()) + 1}",
                      help="A single hidden layer needs 2^depth - 1 units for this many.")
            st.caption(f"Only {2 * k} ReLUs; a one-hidden-layer network needs {2 ** k - 1}.")
    st.latex(r"T(t) = 2\,\mathrm{relu}(t) - 4\,\mathrm{relu}(t - \tfrac12),\qquad "
             r"f = \underbrace{T\circ\cdots\circ T}_{k} \text{ has } 2^k \text{ pieces on } [0,1]")
    saw = R.linear_pieces_1d(R.sawtooth_net(int(k)), (0.0, 1.0))
    df = pd.DataFrame({"x_left": saw.edges[:-1], "x_right": saw.edges[1:],
                       "slope": saw.slope, "intercept": saw.intercept})
    export_buttons(df, {**_config(), "sawtooth_depth": int(k)}, "relu_regions_sawtooth")


VIEW_FUNCS = {VIEWS[0]: view_regions, VIEWS[1]: view_budget, VIEWS[2]: view_1d}
VIEW_FUNCS[view]()
guided_steps(STEPS, key="rr_steps")
