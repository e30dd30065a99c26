"""Attention maps: one softmax step by step, positions, a trained transformer's heads, masks."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from engine import attention as A
from viz import attention_figures as F
from viz import session
from viz.live import live_training
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.topics import ROOT
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

Q = "query-params"
TABS = ["Mechanics", "Positional encoding", "Trained transformer", "Masks"]
DK_OPTIONS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
D_MODEL = 8                      # embedding size of the mechanics tokens
ENTROPY_DIMS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
ENTROPY_KEYS = 16
SOURCES = ["shipped weights", "train from scratch"]
EXAMPLES = {"reverse": "3 1 4 1 5 9 2 6", "sort": "7 2 9 4 4 0 5 1",
            "copy": "2 7 1 8 2 8 1 8", "lookup": "1 7 4 2 9 0 3 5 9"}
WEIGHTS_DIR = ROOT / "assets" / "weights"

PRESETS = {
    "Scaled attention, d_k = 4": Preset(
        {"at_tab": TABS[0], "at_dk": 4, "at_scale": True, "at_temp": 1.0, "at_causal": False,
         "at_perm": False}, "Weights are spread over several tokens; each row sums to 1."),
    "No scaling at d_k = 64: the softmax saturates": Preset(
        {"at_tab": TABS[0], "at_dk": 64, "at_scale": False, "at_temp": 1.0, "at_causal": False,
         "at_perm": False}, "Scores grow like √d_k, so each row is almost one-hot; the entropy "
                            "curve shows why we divide by √d_k."),
    "Cold temperature τ = 0.2": Preset(
        {"at_tab": TABS[0], "at_dk": 4, "at_scale": True, "at_temp": 0.2, "at_causal": False,
         "at_perm": False}, "Dividing by a small τ sharpens every row towards its largest score."),
    "Causal mask": Preset(
        {"at_tab": TABS[0], "at_dk": 4, "at_scale": True, "at_temp": 1.0, "at_causal": True,
         "at_perm": False}, "Keys after the query get −∞, hence weight exactly 0."),
    "Permute the tokens: outputs permute too": Preset(
        {"at_tab": TABS[0], "at_dk": 4, "at_scale": True, "at_temp": 1.0, "at_causal": False,
         "at_perm": True}, "Without positions, attention(P x) = P attention(x): the output "
                           "rows move with the tokens."),
    "Positions break the symmetry": Preset(
        {"at_tab": TABS[1], "at_pe_mode": "add sinusoidal PE"},
        "With PE added the permuted output no longer equals the permuted output."),
    "Reverse: the anti-diagonal head": Preset(
        {"at_tab": TABS[2], "at_task": "reverse", "at_seq": EXAMPLES["reverse"],
         "at_source": SOURCES[0]}, "Below the dotted line each answer query looks at the "
                                   "mirror-image input position: an anti-diagonal."),
    "Copy: a shifted diagonal": Preset(
        {"at_tab": TABS[2], "at_task": "copy", "at_seq": EXAMPLES["copy"],
         "at_source": SOURCES[0]}, "Answer query j looks at input position j: a diagonal "
                                   "line 8 places left of the main one."),
    "Sort: attend to the next-larger digit": Preset(
        {"at_tab": TABS[2], "at_task": "sort", "at_seq": EXAMPLES["sort"],
         "at_source": SOURCES[0]}, "Each answer query puts its weight on the input digit it "
                                   "must write next: the next-larger (or equal) digit."),
    "Lookup: previous-token and induction heads": Preset(
        {"at_tab": TABS[2], "at_task": "lookup", "at_seq": EXAMPLES["lookup"],
         "at_source": SOURCES[0]}, "Layer 1: each value attends to its key just before it. "
                                   "Layer 2: the echoed query key attends to the value whose "
                                   "key matches it, and copies that value."),
    "Sparse patterns: O(n√n)": Preset(
        {"at_tab": TABS[3], "at_mask": "local + strided", "at_mask_n": 36, "at_window": 6},
        "Window and stride √n: every position is reachable in two hops with ~2n√n entries."),
}

STEPS = [
    Step("One head, five tokens", "Each token's query is compared with every key (q·k); the "
         "scores are divided by √d_k, a softmax over the **keys** turns each row into weights "
         "that sum to 1, and the output is the weighted mix of values.",
         PRESETS["Scaled attention, d_k = 4"].settings),
    Step("Why divide by √d_k", "For random unit-variance q and k, q·k has variance d_k. Without "
         "scaling, large d_k makes the softmax one-hot (entropy → 0) and its gradients vanish.",
         PRESETS["No scaling at d_k = 64: the softmax saturates"].settings),
    Step("Attention does not know order", "Shuffle the tokens: the outputs are shuffled the "
         "same way (permutation equivariance). A set, not a sequence.",
         PRESETS["Permute the tokens: outputs permute too"].settings),
    Step("Positions", "Adding sinusoidal position vectors makes the result depend on order; "
         "their dot product depends only on the distance between positions.",
         PRESETS["Positions break the symmetry"].settings),
    Step("A trained transformer copies", "A 2-layer, 2-head model trained to copy 8 digits "
         "has heads whose answer rows form a diagonal: output j reads input j.",
         PRESETS["Copy: a shifted diagonal"].settings),
    Step("... reverses", "A 2-layer, 2-head model trained to reverse 8 digits "
         "has a head whose answer rows form an anti-diagonal: output j copies input 7 − j.",
         PRESETS["Reverse: the anti-diagonal head"].settings),
    Step("... and sorts", "For sorting, the query that writes the next digit attends to where "
         "that digit sits in the input.", PRESETS["Sort: attend to the next-larger digit"].settings),
    Step("... and looks up", "Key-value lookup needs two hops: in layer 1 each value reads "
         "the key before it; in layer 2 the query key finds the value tagged with the same key.",
         PRESETS["Lookup: previous-token and induction heads"].settings),
    Step("Cost and sparse masks", "Full attention costs n²; local + strided patterns "
         "(Sparse Transformer) cost about n√n.", PRESETS["Sparse patterns: O(n√n)"].settings),
]


# ---------------------------------------------------------------------------- cached work
@st.cache_data(max_entries=64)
def entropy_curves(seed: int) -> tuple[np.ndarray, np.ndarray]:
    return (A.softmax_entropy_vs_dim(ENTROPY_DIMS, True, seed, n_keys=ENTROPY_KEYS, n_rows=512),
            A.softmax_entropy_vs_dim(ENTROPY_DIMS, False, seed, n_keys=ENTROPY_KEYS, n_rows=512))


@st.cache_data(max_entries=8)
def nonzero_counts(ns: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {name: A.mask_nonzeros(name, ns) for name in A.MASKS}


def shipped_path(task: str):
    return WEIGHTS_DIR / f"attention_{task}.pt"


def shipped_tasks() -> list[str]:
    """Tasks with a shipped snapshot in assets/weights (written by scripts/pretrain_attention.py)."""
    return [t for t in A.TASKS if shipped_path(t).exists()]


@st.cache_resource(max_entries=8)
def shipped_model(task: str, device: str):
    path = shipped_path(task)
    if not path.exists():
        return None
    return A.load_pretrained(path, device)


def weights_frame(weights: np.ndarray, labels: list[str], **extra) -> pd.DataFrame:
    """Long table: (query, key, tokens, weight) for one map."""
    t = weights.shape[-1]
    qi, ki = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")
    return pd.DataFrame({**{k: v for k, v in extra.items()},
                         "query": qi.ravel(), "query_token": np.asarray(labels)[qi.ravel()],
                         "key": ki.ravel(), "key_token": np.asarray(labels)[ki.ravel()],
                         "weight": weights.ravel()})


# ---------------------------------------------------------------------------- tabs
def mechanics_tab(seed: int) -> None:
    c = st.columns(5, vertical_alignment="bottom")
    n = c[0].slider("Tokens n", 2, 8, 5, key="at_n", bind=Q)
    dk = c[1].select_slider("d_k", DK_OPTIONS, 4, key="at_dk", bind=Q,
                            help="Dimension of queries and keys (q = x W_q, W_q random).")
    temp = c[2].slider("Temperature τ", 0.1, 5.0, 1.0, 0.1, key="at_temp", bind=Q)
    scale = c[3].toggle("Divide by √d_k", True, key="at_scale", bind=Q)
    causal = c[3].toggle("Causal mask", False, key="at_causal", bind=Q)
    permute = c[4].toggle("Permute inputs", False, key="at_perm", bind=Q,
                          help="Feed the same tokens in a shuffled (seeded) order.")
    perm = A.seeded_permutation(n, seed) if permute else None
    m = A.mechanics(n, D_MODEL, dk, temp, scale, causal, seed, perm=perm)
    div = f"√{dk}·{temp:g}" if scale else f"{temp:g}"
    st.caption(f"{n} tokens with random {D_MODEL}-dim embeddings x (seed {seed}); "
               f"q = xW_q, k = xW_k, v = xW_v with d_k = {dk}; divisor = {div} = {m.divisor:.3g}.")
    cols = st.columns(2)
    with cols[0]:
        show_figure(F.matrix_heatmap(m.scores, m.tokens, m.tokens, "1. scores q·kᵀ"),
                    key="at_fig_scores")
        show_figure(F.matrix_heatmap(m.weights, m.tokens, m.tokens,
                                     "3. softmax over keys (rows sum to 1)",
                                     weights=True), key="at_fig_weights")
    with cols[1]:
        show_figure(F.matrix_heatmap(m.logits, m.tokens, m.tokens,
                                     f"2. scaled scores / {div}" + (" + mask" if causal else "")),
                    key="at_fig_logits")
        show_figure(F.matrix_heatmap(m.out, m.tokens, [f"d{i}" for i in range(dk)],
                                     "4. output = weights · v", show_values=dk <= 8,
                                     col_title="output dimension"), key="at_fig_out")
    ent = m.mean_entropy
    k = st.columns(3)
    k[0].metric("Mean row entropy", f"{ent:.3f} nats", help=f"Uniform over n keys: log n = "
                f"{math.log(n):.3f}; one-hot: 0.")
    k[1].metric("Largest weight", f"{m.weights.max():.3f}")
    if permute:
        err = A.permutation_error(n, D_MODEL, dk, perm, seed, causal=causal,
                                  temperature=temp, scale=scale)
        k[2].metric("max |out(Px) − P·out(x)|", f"{err:.1e}")
        if causal:
            st.warning("With the causal mask the output is **not** permutation-equivariant: "
                       "the mask depends on positions, not on tokens.", icon=":material/info:")
        else:
            st.success(f"Order fed in: {' '.join(m.tokens)}. The output rows are the original "
                       f"rows in the same shuffled order (difference {err:.1e}, float round-off).")
    scaled_h, unscaled_h = entropy_curves(seed)
    show_figure(F.entropy_figure(ENTROPY_DIMS, scaled_h, unscaled_h, math.log(ENTROPY_KEYS),
                                 dk), key="at_fig_entropy")
    explain(f"Entropy curve: {ENTROPY_KEYS} keys, q and k with unit-variance components, "
            "512 rows per point. q·k has variance d_k, so without the 1/√d_k the logits spread "
            "out as d_k grows and the softmax collapses to one key; with it they keep variance 1.")
    export_buttons(weights_frame(m.weights, m.tokens),
                   {"tab": "mechanics", "n": n, "d_k": dk, "temperature": temp, "scale": scale,
                    "causal": causal, "permutation": perm}, "attention-mechanics")


def positions_tab(seed: int) -> None:
    c = st.columns(3, vertical_alignment="bottom")
    n = c[0].slider("Positions", 4, 128, 50, key="at_pe_n", bind=Q)
    d = c[1].slider("d_model", 4, 128, 32, 2, key="at_pe_d", bind=Q)
    mode = c[2].radio("Positions in the permutation test", ["none", "add sinusoidal PE"],
                      key="at_pe_mode", bind=Q, horizontal=True)
    pe = A.sinusoidal_encoding(n, d)
    sim = A.position_similarity(pe).numpy()
    p0 = 0
    show_figure(F.encoding_heatmap(pe.numpy()), key="at_fig_pe")
    show_figure(F.similarity_figure(sim, np.arange(n) - p0, sim[p0]), key="at_fig_sim")
    explain("Each pair of dimensions (2i, 2i+1) is a rotation at frequency 1/10000^(2i/d), so "
            "PE[p]·PE[q] = Σᵢ cos((p−q)·ωᵢ): the similarity depends only on the offset, which "
            "lets attention find 'the token k places back' with a fixed linear map.")
    st.subheader("Does order matter now?")
    nt, dk = 6, 4
    perm = A.seeded_permutation(nt, seed)
    positions = mode != "none"
    base = A.mechanics(nt, D_MODEL, dk, seed=seed, positions=positions)
    moved = A.mechanics(nt, D_MODEL, dk, seed=seed, positions=positions, perm=perm)
    cols = st.columns(2)
    with cols[0]:
        show_figure(F.matrix_heatmap(base.weights, base.tokens, base.tokens,
                                     "weights, original order", weights=True), key="at_fig_pe_a")
    with cols[1]:
        show_figure(F.matrix_heatmap(moved.weights, moved.tokens, moved.tokens,
                                     "weights, permuted order", weights=True), key="at_fig_pe_b")
    errs = {m: A.permutation_error(nt, D_MODEL, dk, perm, seed, positions=(m != "none"))
            for m in ("none", "add sinusoidal PE")}
    k = st.columns(2)
    k[0].metric("no positions: max |out(Px) − P·out(x)|", f"{errs['none']:.1e}")
    k[1].metric("with PE: max |out(Px) − P·out(x)|", f"{errs['add sinusoidal PE']:.2f}")
    st.caption("Without positions the permuted weight matrix is the original with rows and "
               "columns shuffled; with PE added, the tokens get new position vectors and the "
               "weights change.")
    export_buttons(pd.DataFrame(pe.numpy(), columns=[f"dim{i}" for i in range(d)])
                   .rename_axis("position").reset_index(),
                   {"tab": "positional encoding", "positions": n, "d_model": d, "mode": mode},
                   "attention-positions")


def _task_changed() -> None:
    st.session_state["at_seq"] = ""          # empty: the new task's example


def _sample_input(task_name: str) -> None:
    count = st.session_state.get("at_sample_count", 0) + 1
    st.session_state["at_sample_count"] = count
    g = A.make_generator(session.seed() * 1000 + count)
    digits = A.TASKS[task_name].sample(1, g)[0].tolist()
    st.session_state["at_seq"] = " ".join(map(str, digits))


def show_prediction(pred: A.Prediction, task: A.Task, key: str) -> None:
    marks = " ".join(f":green[**{p}**]" if ok else f":red[**~~{p}~~**]"
                     for p, ok in zip(pred.predicted, pred.is_correct))
    acc = pred.is_correct.mean()
    st.markdown(f"Input `{' '.join(map(str, pred.inputs))}` → model: {marks} "
                f"&nbsp; (correct: `{' '.join(map(str, pred.correct))}`, "
                f"{acc:.0%} of tokens right)")
    maps = pred.attention
    n_layers, n_heads = maps.shape[:2]
    heads = [(l, h) for l in range(n_layers) for h in range(n_heads)]
    names = [f"layer {l + 1} · head {h + 1}" for l, h in heads]
    if st.session_state.get("at_head") not in names:
        st.session_state.pop("at_head", None)
    mass = A.source_mass(maps, pred.inputs, pred.correct, task).ravel()
    best = int(np.argmax(mass))
    st.markdown("**Weight on the source digit** (mean weight the answer queries put on the "
                "input positions holding the digit they must write):")
    k = st.columns(len(names))
    for i, (l, h) in enumerate(heads):
        k[i].metric(f"L{l + 1} H{h + 1}", f"{mass[i]:.2f}")
    chosen = st.selectbox("Enlarge head", names, index=best, key="at_head")
    sel = heads[names.index(chosen)]
    cols = st.columns([3, 2])
    with cols[0]:
        show_figure(F.attention_grid(maps, pred.labels, task.prompt_len - 1, sel),
                    key=f"{key}_grid")
    with cols[1]:
        show_figure(F.matrix_heatmap(maps[sel], pred.labels, pred.labels, chosen,
                                     weights=True, show_values=len(pred.labels) <= 10),
                    key=f"{key}_head")
    st.caption("Rows are queries (the token at that position, predicting the next one); "
               "columns are keys. Rows below the dotted red line produce the answer. "
               f"What to look for in {task.name}: {task.pattern}.")
    frames = [weights_frame(maps[l, h], pred.labels, layer=l + 1, head=h + 1) for l, h in heads]
    export_buttons(pd.concat(frames, ignore_index=True),
                   {"tab": "trained transformer", "task": task.name,
                    "input": pred.inputs, "predicted": pred.predicted}, "attention-trained")


def trained_tab(seed: int, device: str) -> None:
    c = st.columns([1, 2, 1], vertical_alignment="bottom")
    task_name = c[0].selectbox("Task", list(A.TASKS), key="at_task", bind=Q,
                               on_change=_task_changed)
    task = A.TASKS[task_name]
    c[1].text_input("Input digits", "", key="at_seq", bind=Q,
                    placeholder=f"{EXAMPLES[task_name]} (empty: this example)",
                    help=f"{task.description} Type {task.input_len} digits 0-9.")
    c[2].button("Sample an input", key="at_sample", on_click=_sample_input, args=(task_name,),
                icon=":material/casino:", width="stretch")
    st.caption(task.description)
    try:
        digits = A.parse_sequence(st.session_state.get("at_seq") or EXAMPLES[task_name], task)
    except ValueError as exc:
        st.error(f"Input not usable: {exc}. Showing the example "
                 f"`{EXAMPLES[task_name]}` instead.", icon=":material/error:")
        digits = A.parse_sequence(EXAMPLES[task_name], task)
    source = st.radio("Model", SOURCES, key="at_source", bind=Q, horizontal=True)
    loaded = shipped_model(task_name, device)
    if source == SOURCES[0] and loaded is None:
        st.info(f"No shipped weights for “{task_name}” (shipped: "
                f"{', '.join(shipped_tasks()) or 'none'}). Train one from scratch below.",
                icon=":material/info:")
        source = SOURCES[1]
    if source == SOURCES[0]:
        model, info = loaded
        cfg = info["config"]
        st.markdown(f"**Model shown: shipped snapshot** `{shipped_path(task_name).name}` "
                    "(trained offline, not in this session).")
        st.caption(f"Shipped model: {cfg['n_layers']} layers × {cfg['n_heads']} heads, "
                   f"d_model {cfg['d_model']}, trained {info['steps']:,} iterations; greedy "
                   f"token accuracy on fresh inputs {info.get('token_accuracy', float('nan')):.3f}.")
        show_prediction(A.predict(model, task, digits), task, "at_fig_shipped")
        return
    c = st.columns(4)
    base = A.ModelConfig()      # the shipped snapshots' architecture: same model, trained live
    layers = c[0].select_slider("Layers", [1, 2, 3], base.n_layers, key="at_layers", bind=Q)
    heads = c[1].select_slider("Heads", [1, 2, 4], base.n_heads, key="at_heads", bind=Q)
    d_model = c[2].select_slider("d_model", [32, 64, 128], base.d_model, key="at_dmodel", bind=Q)
    lr = c[3].select_slider("Learning rate", [3e-4, 1e-3, 3e-3, 1e-2, 3e-2], 3e-3,
                            key="at_lr", bind=Q)
    config = {"task": task_name, "layers": layers, "heads": heads, "d_model": d_model,
              "lr": lr, "seed": seed, "device": device}

    def make():
        return A.TransformerTrainer(task_name, A.ModelConfig(layers, heads, d_model), lr=lr,
                                    batch=128, seed=seed, device=device)

    def draw(trainer, tick):
        snap = trainer.snapshot()
        st.markdown(f"**Model shown: trained live** in this session, iteration "
                    f"{trainer.steps:,}" + (" (random initial weights)" if not trainer.steps
                                            else "") + ".")
        if trainer.steps:
            s, loss = trainer.history.as_arrays("loss")
            sa, acc = trainer.history.as_arrays("accuracy")
            k = st.columns([1, 1, 3])
            k[0].metric("loss", f"{snap.loss:.3f}")
            k[1].metric("batch accuracy", f"{snap.accuracy:.1%}")
            with k[2]:
                show_figure(F.training_curves(s, loss, sa, acc), key="at_fig_curves")
        else:
            st.caption("Untrained: press Play (or Step) and watch the maps form.")
        show_prediction(A.predict(trainer.model, task, digits), task, "at_fig_live")

    live_training("at_train", make, draw, config, steps_per_frame=20, max_steps_per_frame=200)


def masks_tab() -> None:
    c = st.columns(3, vertical_alignment="bottom")
    name = c[0].selectbox("Pattern", list(A.MASKS), index=1, key="at_mask", bind=Q)
    n = c[1].slider("Sequence length n", 4, 64, 16, key="at_mask_n", bind=Q)
    w = c[2].slider("Window / stride", 1, 16, 4, key="at_window", bind=Q,
                    help=f"√n ≈ {math.sqrt(n):.1f} gives the O(n√n) cost.")
    allowed = np.isfinite(A.MASKS[name](n, w).numpy())
    cols = st.columns(2)
    with cols[0]:
        show_figure(F.mask_figure(allowed, f"{name}: {int(allowed.sum())} of {n * n} pairs"),
                    key="at_fig_mask")
    ns = tuple(int(v) for v in 2 ** np.arange(2, 10))
    counts = nonzero_counts(ns)
    with cols[1]:
        show_figure(F.nonzeros_figure(ns, counts), key="at_fig_counts")
    explain("Masks are added to the scores: 0 keeps a pair, −∞ removes it (softmax weight "
            "exactly 0). Full attention computes n² pairs, causal n(n+1)/2; a local window w "
            "about n·w and a stride s about n²/(2s). With w = s = ⌈√n⌉ the local + strided "
            "pattern of the Sparse Transformer costs O(n√n) (window/stride on the right: √n).")
    export_buttons(pd.DataFrame({"n": ns, **counts}),
                   {"tab": "masks", "pattern": name, "n": n, "window": w}, "attention-masks")


# ---------------------------------------------------------------------------- page
page_header("Attention maps",
            "Scaled dot-product attention computed step by step on a few tokens, why we "
            "scale and add positions, then the heads of a small transformer really trained "
            "to copy, reverse, sort and look up digits.",
            r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}\,\tau}"
            r"+M\right)V")
top = st.columns([2, 3])
with top[0]:
    preset_picker(PRESETS, key="at_preset")
with top[1]:
    guided_steps(STEPS, key="at_tour")

seed, device = session.seed(), session.device()
tabs = st.tabs(TABS, key="at_tab", bind=Q)
with tabs[0]:
    if tabs[0].open:
        with user_errors("compute the attention steps"):
            mechanics_tab(seed)
with tabs[1]:
    if tabs[1].open:
        with user_errors("draw the positional encoding"):
            positions_tab(seed)
with tabs[2]:
    if tabs[2].open:
        with user_errors("run the trained transformer"):
            trained_tab(seed, device)
with tabs[3]:
    if tabs[3].open:
        with user_errors("draw the masks"):
            masks_tab()
