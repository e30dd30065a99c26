"""ReLU linear regions: the exact polygons on which a small ReLU MLP is affine, live while it
trains; depth vs width at a fixed neuron budget against the bounds; the 1-D sawtooth.
Settings -> engine/regions/ -> topics/relu_regions/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, and the footer. The
constants and pure computations that both the views and the claims use are in
topics/relu_regions/compute.py, PRESETS and STEPS with their claims in topics/relu_regions/tour.py."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine import regions as reg
from engine.regions import reads
from topics.relu_regions import figures as figs
from ui import session
from live.controls import live_training
from live.push import live_parts, place
from live.parts import Caption, Figure, Info, Metrics
from ui.page import Live, View, topic_page, user_errors
from topics.relu_regions.compute import (
    BUDGETS, BUDGET_SEEDS, COUNT_EVERY, LRS, OUTPUTS,
    SLOW_UNITS, box_of, budget_of, make_trainer, net_of, sawtooth_caption, sawtooth_of,
    sawtooth_subtitle, widths_of)
from topics.relu_regions.tour import PRESETS, STEPS
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("rr_depth", 3, "Depth (hidden layers)", lo=1, hi=reg.MAX_LAYERS, step=1),
    Control("rr_width", 8, "Width (units per layer)", lo=1, hi=reg.MAX_WIDTH, step=1),
    Control("rr_widths", "", "Per-layer widths (optional)", kind="text",
            help="Overrides depth and width when filled in, e.g. 16, 8, 4.",
            extra={"placeholder": "e.g. 16, 8, 4"}),
    Control("rr_init", "kaiming", "Initialisation", kind="selectbox", options=list(reg.INITS),
            help="kaiming: W ~ N(0, 2/fan_in); xavier: N(0, 2/(fan_in+fan_out)); lecun: "
                 "N(0, 1/fan_in). Biases ~ N(0, 1/fan_in)."),
    Control("rr_scale", 1.0, "Init scale", lo=0.25, hi=3.0, step=0.25,
            help="Multiplies every initial weight and bias."),
    Control("rr_box", 2.0, "Box half-size", lo=0.5, hi=8.0, step=0.5,
            help="Regions are computed in [-s, s]²."),
    Control("rr_task", "bump (regression)", "Task (training)", kind="selectbox",
            options=list(reg.TASKS),
            help="; ".join(f"{k}: {t.description}" for k, t in reg.TASKS.items())),
    Control("rr_lr", 0.01, "Learning rate (Adam)", kind="select_slider", options=LRS),
    Control("rr_out", OUTPUTS[0], "Output", kind="segmented", options=OUTPUTS),
    Control("rr_layers", True, "Colour edges by layer", kind="toggle",
            help="Each edge lies on the zero set of one hidden unit; colour it by that unit's "
                 "layer."),
    Control("rr_budget", 24, "Neuron budget", kind="select_slider", options=BUDGETS),
    Control("rr_saw", 5, "Sawtooth depth", lo=1, hi=10, step=1),
])


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


def _region_table(part: reg.Partition) -> pd.DataFrame:
    return pd.DataFrame({
        "id": np.arange(part.count), "area": part.area,
        "centroid_x1": part.centroid[:, 0], "centroid_x2": part.centroid[:, 1],
        "pattern": [figs.pattern_string(p, part.widths) for p in part.patterns],
        "w1": part.out_w[:, 0, 0], "w2": part.out_w[:, 0, 1], "b": part.out_b[:, 0]})


def frame_parts(view, read, widths, box, by_layer: bool, surface: bool, caption: str) -> dict:
    """One live frame from plain data (live/parts.py; pure, so the frame route can build it):
    the TrainerView's snapshot and history, plus the model's (W, b) layers fetched next to
    the trainer (edge colours, the heatmap)."""
    snap = view.snapshot()
    part = snap.partition
    layers = read(reads.trainer_layers)
    edges = reg.edge_layers(layers, part) if by_layer and layers else None
    _, near = view.history.as_arrays("near_bend")
    # the share near the bend (what the tour's words follow) in the title: on the first
    # screen of the projector
    title = (f"{part.count} regions · {near[-1]:.0%} near the bend" if len(near)
             else f"{part.count} linear regions in the box")
    out = {"rr_fig_regions": Figure(figs.regions_figure(
        part, snap.points, snap.targets, edges=edges, title=title))}
    if surface or not layers:
        out["rr_fig_out"] = Figure(figs.surface_figure(part))
    else:
        xs, ys, f = reads.output_grid(layers, box, res=80)
        out["rr_fig_out"] = Figure(figs.heatmap_figure(xs, ys, f, part))
    out["rr_metrics"] = Metrics([
        ("Regions", f"{part.count:,}", "Exact activation regions in the box."),
        ("Bound", f"{reg.product_bound(widths, 2, effective=True):,}",
         "Product bound with effective dimension (Montúfar et al. 2017): "
         "prod_l sum_{i<=min(d_0..d_l-1)} C(d_l, i)."),
        ("Distinct maps", f"{reg.distinct_maps(part):,}",
         "Different affine maps: neighbouring regions can share one plane."),
        ("Loss", f"{snap.loss:.4g}"),
        ("ReLUs", f"{sum(widths)}", f"Architecture {' → '.join(['2', *map(str, widths), '1'])}.")])
    if len(near):                           # one caption element per frame, not two
        caption += (f"  \n**{near[-1]:.0%}** of the regions lie within "
                    f"{reg.RegionTrainer.NEAR} of the line where the target bends "
                    f"(at step 0: {near[0]:.0%}).")
    out["rr_caption"] = Caption(caption)
    cs, cv = view.history.as_arrays("regions")
    ls, lv = view.history.as_arrays("loss")
    if view.steps > 0:
        out["rr_fig_hist"] = Figure(figs.count_history_figure(cs, cv, ls, lv))
    else:
        out["rr_fig_hist"] = Info("Press **Play** (or **Step**) to train: the exact region "
                                  f"count is recorded every {COUNT_EVERY} steps and plotted "
                                  "here.", icon=":material/play_arrow:")
    return out


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
        """Left the regions, right the output; then the numbers and the count history."""
        parts = live_parts(frame_parts, view, widths=tuple(widths), box=tuple(box),
                           by_layer=by_layer, surface=surface,
                           caption=f"Architecture {arch}, {s['rr_init']} init × "
                                   f"{s['rr_scale']:g}, box [{box[0]:g}, {box[1]:g}]², "
                                   f"task {s['rr_task']}.")
        cols = st.columns(2)
        with cols[0]:
            place(parts, "rr_fig_regions")
        with cols[1]:
            place(parts, "rr_fig_out")
        for slot in ("rr_metrics", "rr_caption", "rr_fig_hist"):
            place(parts, slot)

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
            show_figure(figs.budget_figure(rows, int(s["rr_budget"])), key="rr_fig_budget")
    with panel.notes:
        if rows:
            st.latex(r"\#\text{regions} \le \prod_{l=1}^{L} \sum_{i=0}^{d_{l-1}} "
                     r"\binom{d_l}{i}\quad\text{(one layer: } \textstyle\sum_{i=0}^{2}"
                     r"\binom{n}{i}\text{, Zaslavsky)}")
            table = pd.DataFrame([{"architecture": "x".join(map(str, r.widths)),
                                   **{f"count seed {seed + i}": int(v)
                                      for i, v in enumerate(r.counts)},
                                   "mean": float(r.counts.mean()), **r.bounds} for r in rows])
            # a static table: five rows need no data grid (its canvas and script chunk made
            # up about a sixth of a preset change in the browser)
            st.table(table.set_index("architecture").style.format({"mean": "{:.2f}"}))
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
            show_figure(figs.pieces_figure(saw, f"Sawtooth: {len(saw.kinks()) + 1} pieces = "
                                             f"2^{k}", subtitle=sawtooth_subtitle(s)),
                        key="rr_fig_saw")
            st.metric("Linear pieces", f"{len(saw.kinks()) + 1}",
                      help="A single hidden layer needs 2^depth - 1 units for this many.")
            st.caption(f"{sawtooth_caption(k)} Red dots: breakpoints, where the slope "
                       f"changes.")
        with cols[1], user_errors("compute the pieces of the 1-D network"):
            net = net_of(s, seed, input_dim=1)
            pieces = reg.linear_pieces_1d(net, (box[0], box[1]))
            kinks = pieces.kinks()
            arch1 = " → ".join(["1", *map(str, widths), "1"])
            show_figure(figs.pieces_figure(pieces, f"Random net: {len(kinks) + 1} pieces"),
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


def gradient_view(panel) -> None:
    """df/dx of the random 1-D net of the sawtooth tab: how depth shatters the gradient."""
    with panel.controls:
        widths = architecture_controls()
    s = STATE.values()
    box = box_of(s)
    with panel.figure, user_errors("compute the pieces of the 1-D network"):
        pieces = reg.linear_pieces_1d(net_of(s, session.seed(), input_dim=1), (box[0], box[1]))
        arch = " → ".join(["1", *map(str, widths), "1"])
        show_figure(figs.slope_figure(pieces, f"df/dx of a random net {arch}"),
                    key="rr_fig_slope")
        m = st.columns(2)
        m[0].metric("Linear pieces", f"{len(pieces.kinks()) + 1}")
        m[1].metric("Sign changes of df/dx", f"{pieces.slope_sign_changes()}")
    with panel.notes:
        explain("A ReLU network of one input is piecewise linear, so its derivative is a step "
                "function: constant on each piece, jumping at each breakpoint. With one hidden "
                "layer the steps are few and the derivative changes slowly with x; each extra "
                "layer multiplies the breakpoints and the derivative starts to look like "
                "noise, the 'shattered gradients' of deep networks without skip connections "
                "(Balduzzi et al. 2017).")


VIEWS = [View("regions", "2-D regions", regions_view,
              live=Live("rr_train", train_max=3_000)),
         View("budget", "Depth vs width", budget_view),
         View("sawtooth", "1-D & sawtooth", sawtooth_view),
         View("grad", "Gradient df/dx", gradient_view)]

if __name__ == "__main__":
    topic_page("relu_regions", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"h_l = \max(0, W_l h_{l-1} + b_l)\;\Rightarrow\;"
                       r"f(x) = w_r^\top x + b_r \text{ on region } r")
