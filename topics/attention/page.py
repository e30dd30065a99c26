"""Attention maps: one softmax step by step, positions, a trained transformer's heads, masks.
Settings -> engine/attention/ -> topics/attention/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, and the footer. The
constants and pure computations that both the views and the claims use are in
topics/attention/compute.py, PRESETS and STEPS with their claims in topics/attention/tour.py."""
from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import streamlit as st

from engine import attention
from topics.attention import figures as figs
from ui import session
from ui import shipped_models
from topics.attention.compute import (
    DK_OPTIONS, D_MODEL, ENTROPY_DIMS, ENTROPY_KEYS, PE_TOKENS, PE_DK, SOURCES, EXAMPLES,
    AUTO, LAYER_CHOICES, HEAD_CHOICES, HEAD_NAMES, perm_of, mechanics_of,
    permutation_error_of, entropy_curves, pe_errors, shipped_path, shipped_tasks,
    shipped_model, shipped_problem, digits_of, shipped_prediction, head_masses, shown_head,
    allowed_of, entries_per_n_sqrt_n, two_hop_coverage, nonzero_counts, NS)
from topics.attention.tour import PRESETS, STEPS
from topics.attention.lm_tour import PRESETS as LM_PRESETS, STEPS as LM_STEPS
from topics.attention.lm_view import CONTROLS as LM_CONTROLS, real_model_view
from live.controls import live_training, read_trainer
from live.push import live_parts, place
from ui.page import Live, View, topic_page, user_errors
from live.parts import Caption, Figure, Markdown, Metrics
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- settings
STATE = StateTable([
    Control("at_n", 5, "Tokens n", lo=2, hi=8, step=1),
    Control("at_dk", 4, "d_k", kind="select_slider", options=DK_OPTIONS,
            help="Dimension of queries and keys (q = x W_q, W_q random)."),
    Control("at_temp", 1.0, "Temperature τ", lo=0.1, hi=5.0, step=0.1),
    Control("at_scale", True, "Divide by √d_k", kind="toggle"),
    Control("at_causal", False, "Causal mask", kind="toggle"),
    Control("at_perm", False, "Permute inputs", kind="toggle",
            help="Feed the same tokens in a shuffled (seeded) order."),
    Control("at_pe_n", 50, "Positions", lo=4, hi=128, step=1),
    Control("at_pe_d", 32, "d_model", lo=4, hi=128, step=2),
    Control("at_pe_mode", "none", "Positions in the permutation test", kind="radio",
            options=["none", "add sinusoidal PE"], extra={"horizontal": True}),
    Control("at_task", "reverse", "Task", kind="selectbox", options=list(attention.TASKS)),
    Control("at_seq", "", "Input digits", kind="text"),
    Control("at_source", SOURCES[0], "Model", kind="radio", options=SOURCES),
    Control("at_head", AUTO, "Enlarge head", kind="selectbox", options=[AUTO, *HEAD_NAMES],
            help="Most informative head: the one whose answer rows put the most weight on "
                 "the input digit they must write (copy: a layer-1 head, reverse: the "
                 "anti-diagonal head, sort and lookup: a layer-2 head)."),
    Control("at_layers", attention.ModelConfig().n_layers, "Layers", kind="select_slider",
            options=LAYER_CHOICES),
    Control("at_heads", attention.ModelConfig().n_heads, "Heads", kind="select_slider",
            options=HEAD_CHOICES),
    Control("at_dmodel", attention.ModelConfig().d_model, "d_model (transformer)", kind="select_slider",
            options=[32, 64, 128]),
    Control("at_lr", 3e-3, "Learning rate", kind="select_slider",
            options=[3e-4, 1e-3, 3e-3, 1e-2, 3e-2]),
    Control("at_mask", "causal", "Pattern", kind="selectbox", options=list(attention.MASKS)),
    Control("at_mask_n", 16, "Sequence length n", lo=4, hi=64, step=1),
    Control("at_window", 4, "Window / stride", lo=1, hi=16, step=1),
    *LM_CONTROLS,                            # the Real model tab (topics/attention/lm_view.py)
])
PRESETS, STEPS = {**PRESETS, **LM_PRESETS}, [*STEPS, *LM_STEPS]




# ----------------------------------------------------------------------------- helpers
def _task_changed() -> None:
    st.session_state["at_seq"] = ""          # empty: the new task's example
    st.session_state["at_head"] = AUTO       # the new task's informative head


def _sample_input(task_name: str) -> None:
    count = st.session_state.get("at_sample_count", 0) + 1
    st.session_state["at_sample_count"] = count
    g = attention.make_generator(session.seed() * 1000 + count)
    digits = attention.TASKS[task_name].sample(1, g)[0].tolist()
    st.session_state["at_seq"] = " ".join(map(str, digits))


# ----------------------------------------------------------------------------- views
MECH_FRAGMENT = "at_mech"          # the head's controls and its figure rerun on their own


def _dk_changed() -> None:
    """d_k also moves the marker of the entropy curve below (outside the head's fragment)."""
    st.rerun(scope="app")


def mechanics_view(panel) -> None:
    # The head's controls, figure, metrics and export rerun on their own (a fragment): a
    # move of n, τ or a toggle does not redraw the entropy curve, which depends on d_k only
    # (a d_k move reruns the page: _dk_changed).
    seed = session.seed()
    with panel.notes:
        entropy_box = st.container()
        explain(f"Entropy curve: {ENTROPY_KEYS} keys, q and k with unit-variance components, "
                "512 rows per point. q·k has variance d_k, so without the 1/√d_k the logits "
                "spread out as d_k grows and the softmax collapses towards one key; with it "
                "they keep variance 1.")

    def head() -> None:
        _head(panel, seed)

    st.fragment(head, key=MECH_FRAGMENT)()
    with entropy_box:                      # after the widgets: d_k as the URL or user set it
        scaled_h, unscaled_h = entropy_curves(seed)
        show_figure(figs.entropy_figure(ENTROPY_DIMS, scaled_h, unscaled_h,
                                     math.log(ENTROPY_KEYS), int(STATE.value("at_dk"))),
                    key="at_fig_entropy")


def _head(panel, seed: int) -> None:
    """The controls of one head, its four matrices (one figure), the metrics and export."""
    with panel.controls:
        STATE.widget("at_n")
        STATE.widget("at_dk", on_change=_dk_changed)
        STATE.widget("at_temp")
        STATE.widget("at_scale")
        STATE.widget("at_causal")
        STATE.widget("at_perm")
    s = STATE.values()
    m = mechanics_of(s, seed)
    n, dk, temp = int(s["at_n"]), int(s["at_dk"]), float(s["at_temp"])
    div = f"√{dk}·{temp:g}" if s["at_scale"] else f"{temp:g}"
    with panel.figure:
        show_figure(figs.mechanics_figure(
            m.scores, m.logits, m.weights, m.out, m.tokens,
            ["1. scores q·kᵀ", f"2. scaled scores / {div}" + (" + mask" if s["at_causal"]
                                                               else ""),
             "3. softmax over keys (rows sum to 1)", "4. output = weights · v"],
            show_out_values=dk <= 8), key="at_fig_mech")
        st.caption(f"Rows are queries, columns keys (4.: output dimensions). "
                   f"{n} tokens with random {D_MODEL}-dim embeddings x (seed {seed}); "
                   f"q = xW_q, k = xW_k, v = xW_v with d_k = {dk}; divisor = {div} = "
                   f"{m.divisor:.3g}.")
    with panel.controls:
        st.metric("Mean row entropy", f"{m.mean_entropy:.3f} nats",
                  help=f"Uniform over n keys: log n = {math.log(n):.3f}; one-hot: 0.")
        st.metric("Largest weight", f"{m.weights.max():.3f}")
        if s["at_perm"]:
            err = permutation_error_of(s, seed)
            st.metric("max |out(Px) − P·out(x)|", f"{err:.1e}")
            if s["at_causal"]:
                st.warning("With the causal mask the output is **not** permutation-"
                           "equivariant: the mask depends on positions, not on tokens.",
                           icon=":material/info:")
            else:
                st.success(f"Order fed in: {' '.join(m.tokens)}. The output rows are the "
                           f"original rows in the same shuffled order (difference {err:.1e}, "
                           "float round-off).")
    with panel.notes:
        with st.expander("Export"):
            export_buttons(figs.weights_frame(m.weights, m.tokens),
                           {"view": "mechanics", "n": n, "d_k": dk, "temperature": temp,
                            "scale": s["at_scale"], "causal": s["at_causal"],
                            "permutation": perm_of(s, seed)}, "attention-mechanics")


def positions_view(panel) -> None:
    with panel.controls:
        STATE.widget("at_pe_n")
        STATE.widget("at_pe_d")
        STATE.widget("at_pe_mode")
    s = STATE.values()
    seed = session.seed()
    n, d = int(s["at_pe_n"]), int(s["at_pe_d"])
    pe = attention.sinusoidal_encoding(n, d)
    sim = attention.position_similarity(pe).numpy()
    positions = s["at_pe_mode"] != "none"
    perm = attention.seeded_permutation(PE_TOKENS, seed)
    base = attention.mechanics(PE_TOKENS, D_MODEL, PE_DK, seed=seed, positions=positions)
    moved = attention.mechanics(PE_TOKENS, D_MODEL, PE_DK, seed=seed, positions=positions, perm=perm)
    errs = pe_errors(s, seed)
    with panel.figure:
        st.markdown("**Does order matter now?** The same 6 tokens, in the original and in a "
                    "shuffled order" + (", each plus the sinusoidal vector of its new position."
                                        if positions else ", without positions."))
        cols = st.columns(2)
        with cols[0]:
            show_figure(figs.matrix_heatmap(base.weights, base.tokens, base.tokens,
                                         "weights, original order", weights=True),
                        key="at_fig_pe_a")
        with cols[1]:
            show_figure(figs.matrix_heatmap(moved.weights, moved.tokens, moved.tokens,
                                         "weights, permuted order", weights=True),
                        key="at_fig_pe_b")
        k = st.columns(2)
        k[0].metric("no positions: max |out(Px) − P·out(x)|", f"{errs['none']:.1e}")
        k[1].metric("with PE: max |out(Px) − P·out(x)|", f"{errs['add sinusoidal PE']:.2f}")
        st.caption("Without positions the permuted weight matrix is the original with rows "
                   "and columns shuffled; with PE added, the tokens get new position vectors "
                   "and the weights change.")
        show_figure(figs.encoding_heatmap(pe.numpy()), key="at_fig_pe")
        show_figure(figs.similarity_figure(sim, np.arange(n), sim[0]), key="at_fig_sim")
    with panel.notes:
        explain("Each pair of dimensions (2i, 2i+1) is a rotation at frequency 1/10000^(2i/d), "
                "so PE[p]·PE[q] = Σᵢ cos((p−q)·ωᵢ): the similarity depends only on the "
                "offset, which lets attention find 'the token k places back' with a fixed "
                "linear map.")
        with st.expander("Export"):
            export_buttons(pd.DataFrame(pe.numpy(), columns=[f"dim{i}" for i in range(d)])
                           .rename_axis("position").reset_index(),
                           {"view": "positional encoding", "positions": n, "d_model": d,
                            "mode": s["at_pe_mode"]}, "attention-positions")


def prediction_parts(pred: attention.Prediction, task: attention.Task, choice: str, key: str) -> dict:
    """The answer, all maps and the enlarged head, the weight of every head on the source
    digits and what to look for, as parts (live/parts.py; pure: the live frame's parts use
    them too)."""
    marks = " ".join(f":green[**{p}**]" if ok else f":red[**~~{p}~~**]"
                     for p, ok in zip(pred.predicted, pred.is_correct))
    maps = pred.attention
    mass = head_masses(pred, task)
    sel = shown_head(pred, task, choice)
    name = f"layer {sel[0] + 1} · head {sel[1] + 1}"
    return {
        f"{key}_answer": Markdown(
            f"Input `{' '.join(map(str, pred.inputs))}` → model: {marks} &nbsp; (correct: "
            f"`{' '.join(map(str, pred.correct))}`, {pred.is_correct.mean():.0%} of tokens "
            "right)"),
        f"{key}_grid": Figure(figs.attention_grid(maps, pred.labels, task.prompt_len - 1, sel)),
        f"{key}_head": Figure(figs.matrix_heatmap(
            maps[sel], pred.labels, pred.labels, name + (" (best)" if choice == AUTO else ""),
            weights=True, show_values=len(pred.labels) <= 10)),
        f"{key}_mass": Markdown(
            "**Weight on the source digit** (mean weight the answer queries put on the input "
            "positions holding the digit they must write): " +
            " · ".join(f"L{l + 1} H{h + 1} **{mass[l, h]:.2f}**"
                       for l in range(mass.shape[0]) for h in range(mass.shape[1]))),
        f"{key}_note": Caption(
            "Rows are queries (the token at that position, predicting the next one); columns "
            "are keys. Rows below the dotted red line produce the answer. What to look for in "
            f"{task.name}: {task.pattern}.")}


def place_prediction(parts, key: str) -> None:
    """The answer; the maps (3/5) beside the enlarged head (2/5); the weights and the note."""
    place(parts, f"{key}_answer")
    cols = st.columns([3, 2])
    with cols[0]:
        place(parts, f"{key}_grid")
    with cols[1]:
        place(parts, f"{key}_head")
    place(parts, f"{key}_mass")
    place(parts, f"{key}_note")


def show_prediction(pred: attention.Prediction, task: attention.Task, choice: str, key: str) -> None:
    """The answer, the weight of every head on the source digits, all maps and the enlarged
    head (the shipped model's: drawn by Streamlit, no live frame)."""
    place_prediction(prediction_parts(pred, task, choice, key), key)


def trained_view(panel) -> None:
    with panel.controls:
        task_name = STATE.widget("at_task", on_change=_task_changed)
        task = attention.TASKS[task_name]
        STATE.widget("at_seq", placeholder=f"{EXAMPLES[task_name]} (empty: this example)",
                     help=f"{task.description} Type {task.input_len} digits 0-9.")
        st.button("Sample an input", key="at_sample", on_click=_sample_input,
                  args=(task_name,), icon=":material/casino:", width="stretch")
        source = STATE.widget("at_source")
        choice = STATE.widget("at_head")
        if source == SOURCES[1]:
            with st.expander("Architecture and learning rate", expanded=True):
                STATE.widget("at_layers")
                STATE.widget("at_heads")
                STATE.widget("at_dmodel")
                STATE.widget("at_lr")
    s = STATE.values()
    seed, device = session.seed(), session.device()
    digits, problem = digits_of(s)
    shown = None
    with panel.figure:
        if problem:
            st.error(f"Input not usable: {problem}. Showing the example "
                     f"`{EXAMPLES[task_name]}` instead.", icon=":material/error:")
        loaded = shipped_model(task_name, device)
        problem = shipped_problem(task_name, device) if loaded is None else None
        if source == SOURCES[0] and problem:
            shipped_models.warn(problem, "Training one from scratch instead (rebuild: "
                                "`python -m scripts.pretrain attention`).")
            source = SOURCES[1]
        elif source == SOURCES[0] and loaded is None:
            st.info(f"No shipped weights for “{task_name}” (shipped: "
                    f"{', '.join(shipped_tasks()) or 'none'}). Train one from scratch.",
                    icon=":material/info:")
            source = SOURCES[1]
        if source == SOURCES[0]:
            shown, info = loaded
            cfg = info["config"]
            # the maps first (the projector's first screen), what model drew them under
            show_prediction(shipped_prediction(task_name, tuple(digits), device), task, choice,
                            "at_fig_shipped")
            st.markdown(f"**Model shown: shipped snapshot** `{shipped_path(task_name).name}` "
                        "(trained offline, not in this session).")
            st.caption(f"Shipped model: {cfg['n_layers']} layers × {cfg['n_heads']} heads, "
                       f"d_model {cfg['d_model']}, trained {info['steps']:,} iterations; greedy "
                       f"token accuracy on fresh inputs "
                       f"{info.get('token_accuracy', float('nan')):.3f}.")
        else:
            shown = _live_model(s, task_name, task, digits, choice, seed, device)
        st.caption(f"Task: {task.description}")
    with panel.notes:
        # outside the live fragment: rebuilt on a full rerun of the view, not per tick
        pred = None if shown is None else (
            shipped_prediction(task_name, tuple(digits), device) if source == SOURCES[0]
            else live_prediction(task_name, digits))
        if pred is not None:
            layers, heads = pred.attention.shape[:2]
            frames = [figs.weights_frame(pred.attention[l, h], pred.labels, layer=l + 1, head=h + 1)
                      for l in range(layers) for h in range(heads)]
            with st.expander("Export the attention maps"):
                export_buttons(pd.concat(frames, ignore_index=True),
                               {"view": "trained transformer", "task": task_name,
                                "model": source, "input": pred.inputs,
                                "predicted": pred.predicted}, "attention-trained")


def _live_model(s, task_name, task, digits, choice, seed, device):
    config = {"task": task_name, "layers": s["at_layers"], "heads": s["at_heads"],
              "d_model": s["at_dmodel"], "lr": s["at_lr"], "seed": seed, "device": device}

    def make():
        return attention.TransformerTrainer(task_name, attention.ModelConfig(int(s["at_layers"]),
                                                             int(s["at_heads"]),
                                                             int(s["at_dmodel"])),
                                    lr=float(s["at_lr"]), batch=128, seed=seed, device=device)

    def draw(view, tick):
        parts = live_parts(live_parts_of, view, task_name=task_name, digits=tuple(digits),
                           choice=choice)
        place(parts, "at_live_model")
        if "at_fig_live_grid" in parts:
            place_prediction(parts, "at_fig_live")
        if view.steps:
            k = st.columns([2, 3])              # the two metrics take the width they had
            with k[0]:
                place(parts, "at_live_metrics")
            with k[1]:
                place(parts, "at_fig_curves")
        else:
            place(parts, "at_live_untrained")

    with user_errors("train the transformer"):
        return live_training("at_train", make, draw, config, steps_per_frame=20,
                             max_steps_per_frame=200)
    return None


def _predict(trainer, task_name: str, digits: tuple[int, ...]) -> attention.Prediction:
    return attention.predict(trainer.model, attention.TASKS[task_name], list(digits))


def live_prediction(task_name: str, digits: list[int]) -> attention.Prediction | None:
    """The live model's greedy answer and attention maps, computed next to the trainer
    (it may live in a worker process): plain arrays come back, never the model."""
    return read_trainer("at_train", functools.partial(_predict, task_name=task_name,
                                                      digits=tuple(digits)))


def live_parts_of(view, read, task_name: str, digits: tuple[int, ...], choice: str) -> dict:
    """One live frame of the transformer trained in this session as parts (live/parts.py;
    pure, so the frame route can build it too): which model is shown, its prediction
    (prediction_parts, computed next to the trainer), then the loss and batch accuracy with
    the training curves (a caption before the first step)."""
    snap = view.snapshot()
    parts = {"at_live_model": Markdown(
        f"**Model shown: trained live** in this session, iteration {view.steps:,}"
        + (" (random initial weights)" if not view.steps else "") + ".")}
    pred = read(functools.partial(_predict, task_name=task_name, digits=digits))
    if pred is not None:
        parts.update(prediction_parts(pred, attention.TASKS[task_name], choice, "at_fig_live"))
    if view.steps:
        steps, loss = view.history.as_arrays("loss")
        acc_steps, acc = view.history.as_arrays("accuracy")
        parts["at_live_metrics"] = Metrics([("loss", f"{snap.loss:.3f}"),
                                            ("batch accuracy", f"{snap.accuracy:.1%}")])
        parts["at_fig_curves"] = Figure(figs.training_curves(steps, loss, acc_steps, acc))
    else:
        parts["at_live_untrained"] = Caption("Untrained: press Play (or Step) and watch the "
                                             "maps form.")
    return parts


def masks_view(panel) -> None:
    with panel.controls:
        STATE.widget("at_mask")
        n = STATE.widget("at_mask_n")
        STATE.widget("at_window", help=f"√n ≈ {math.sqrt(n):.1f} gives the O(n√n) cost.")
    s = STATE.values()
    allowed = allowed_of(s)
    n = int(s["at_mask_n"])
    counts = nonzero_counts(NS)
    with panel.figure:
        cols = st.columns(2)
        with cols[0]:
            show_figure(figs.mask_figure(allowed, f"{s['at_mask']}: {int(allowed.sum())} of "
                                               f"{n * n} pairs"), key="at_fig_mask")
        with cols[1]:
            show_figure(figs.nonzeros_figure(NS, counts), key="at_fig_counts")
        st.caption(f"{int(allowed.sum())} pairs = {entries_per_n_sqrt_n(s):.2f} n√n; "
                   f"reachable in ≤ 2 hops: {two_hop_coverage(s):.0%} of the causal pairs.")
    with panel.notes:
        explain("Masks are added to the scores: 0 keeps a pair, −∞ removes it (softmax weight "
                "exactly 0). Full attention computes n² pairs, causal n(n+1)/2; a causal local "
                "window w about n·w and a causal stride s about n²/(2s). With w = s = ⌈√n⌉ the "
                "local + strided pattern of the Sparse Transformer costs about n√n + n√n/2 = "
                "1.5 n√n (measured 1.46 n√n at n = 512; the right plot uses w = s = ⌈√n⌉).")
        with st.expander("Export"):
            export_buttons(pd.DataFrame({"n": NS, **counts}),
                           {"view": "masks", "pattern": s["at_mask"], "n": n,
                            "window": int(s["at_window"])}, "attention-masks")


VIEWS = [View("mechanics", "Mechanics", mechanics_view),
         View("positions", "Positional encoding", positions_view),
         View("trained", "Trained transformer", trained_view,
              live=Live("at_train", train_max=3_000)),
         View("masks", "Masks", masks_view),
         View("real", "Real model", functools.partial(real_model_view, state=STATE))]

if __name__ == "__main__":
    topic_page("attention", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}"
                       r"{\sqrt{d_k}\,\tau}+M\right)V")
