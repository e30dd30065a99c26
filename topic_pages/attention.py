"""Attention maps: one softmax step by step, positions, a trained transformer's heads, masks.
Settings -> engine/attention.py -> viz/attention_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import attention as A
from engine import attention_measures as am
from viz import attention_figures as figs
from viz import session, shipped_models
from viz.claims import Claim
from viz.live import live_training, read_trainer
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, export_buttons

# ----------------------------------------------------------------------------- constants
DK_OPTIONS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
D_MODEL = 8                      # embedding size of the mechanics tokens
ENTROPY_DIMS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
ENTROPY_KEYS = 16
PE_TOKENS, PE_DK = 6, 4          # the permutation test of the positions view
SOURCES = ["shipped weights", "train from scratch"]
EXAMPLES = {"reverse": "3 1 4 1 5 9 2 6", "sort": "7 2 9 4 4 0 5 1",
            "copy": "2 7 1 8 2 8 1 8", "lookup": "1 7 4 2 9 0 3 5 9"}
AUTO = "most informative head"
LAYER_CHOICES, HEAD_CHOICES = [1, 2, 3], [1, 2, 4]
HEAD_NAMES = [f"layer {l} · head {h}" for l in LAYER_CHOICES for h in range(1, max(HEAD_CHOICES) + 1)]

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
    Control("at_task", "reverse", "Task", kind="selectbox", options=list(A.TASKS)),
    Control("at_seq", "", "Input digits", kind="text"),
    Control("at_source", SOURCES[0], "Model", kind="radio", options=SOURCES),
    Control("at_head", AUTO, "Enlarge head", kind="selectbox", options=[AUTO, *HEAD_NAMES],
            help="Most informative head: the one whose answer rows put the most weight on "
                 "the input digit they must write (copy: a layer-1 head, reverse: the "
                 "anti-diagonal head, sort and lookup: a layer-2 head)."),
    Control("at_layers", A.ModelConfig().n_layers, "Layers", kind="select_slider",
            options=LAYER_CHOICES),
    Control("at_heads", A.ModelConfig().n_heads, "Heads", kind="select_slider",
            options=HEAD_CHOICES),
    Control("at_dmodel", A.ModelConfig().d_model, "d_model (transformer)", kind="select_slider",
            options=[32, 64, 128]),
    Control("at_lr", 3e-3, "Learning rate", kind="select_slider",
            options=[3e-4, 1e-3, 3e-3, 1e-2, 3e-2]),
    Control("at_mask", "causal", "Pattern", kind="selectbox", options=list(A.MASKS)),
    Control("at_mask_n", 16, "Sequence length n", lo=4, hi=64, step=1),
    Control("at_window", 4, "Window / stride", lo=1, hi=16, step=1),
])


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def perm_of(s: Mapping[str, Any], seed: int = 0) -> list[int] | None:
    return A.seeded_permutation(int(s["at_n"]), seed) if s["at_perm"] else None


def mechanics_of(s: Mapping[str, Any], seed: int = 0) -> A.Mechanics:
    return A.mechanics(int(s["at_n"]), D_MODEL, int(s["at_dk"]), float(s["at_temp"]),
                       bool(s["at_scale"]), bool(s["at_causal"]), seed, perm=perm_of(s, seed))


def permutation_error_of(s: Mapping[str, Any], seed: int = 0) -> float:
    """max |out(Px) − P·out(x)| of the mechanics view (identity permutation when off)."""
    perm = perm_of(s, seed) or A.seeded_permutation(int(s["at_n"]), seed)
    return A.permutation_error(int(s["at_n"]), D_MODEL, int(s["at_dk"]), perm, seed,
                               causal=bool(s["at_causal"]), temperature=float(s["at_temp"]),
                               scale=bool(s["at_scale"]))


def above_diagonal(s: Mapping[str, Any]) -> float:
    """Largest weight a query puts on a later key."""
    return float(np.triu(mechanics_of(s).weights, 1).max())


def row_sum_error(s: Mapping[str, Any]) -> float:
    return float(np.abs(mechanics_of(s).weights.sum(1) - 1).max())


@st.cache_data(max_entries=16, show_spinner=False)
def entropy_curves(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean softmax entropy over 16 keys vs d_k, (scaled, unscaled)."""
    return (A.softmax_entropy_vs_dim(ENTROPY_DIMS, True, seed, n_keys=ENTROPY_KEYS, n_rows=512),
            A.softmax_entropy_vs_dim(ENTROPY_DIMS, False, seed, n_keys=ENTROPY_KEYS, n_rows=512))


def curve_entropy(dk: int, scaled: bool, seed: int = 0) -> float:
    return float(entropy_curves(seed)[0 if scaled else 1][ENTROPY_DIMS.index(dk)])


def pe_errors(s: Mapping[str, Any], seed: int = 0) -> dict[str, float]:
    """max |out(Px) − P·out(x)| of the positions view's test, without and with PE."""
    perm = A.seeded_permutation(PE_TOKENS, seed)
    return {m: A.permutation_error(PE_TOKENS, D_MODEL, PE_DK, perm, seed,
                                   positions=(m != "none"))
            for m in ("none", "add sinusoidal PE")}


def shipped_path(task: str):
    return shipped_models.path_of(f"attention_{task}.pt")


def shipped_tasks() -> list[str]:
    """Tasks with a shipped snapshot in assets/weights (scripts/pretrain_attention.py)."""
    return [t for t in A.TASKS if shipped_path(t).exists()]


def shipped_model(task: str, device: str = "cpu"):
    """(model, info) of the shipped snapshot, or None (missing or unusable: shipped_problem)."""
    return shipped_models.shipped(f"attention_{task}.pt", A.load_pretrained, device)[0]


def shipped_problem(task: str, device: str = "cpu") -> str | None:
    """Why a shipped file that is there cannot be used (stale, corrupt), else None."""
    return shipped_models.shipped(f"attention_{task}.pt", A.load_pretrained, device)[1]


def digits_of(s: Mapping[str, Any]) -> tuple[list[int], str | None]:
    """(the digits fed to the model, the reason the typed input was rejected or None)."""
    task = A.TASKS[s["at_task"]]
    example = EXAMPLES[s["at_task"]]
    try:
        return A.parse_sequence(s["at_seq"] or example, task), None
    except ValueError as exc:
        return A.parse_sequence(example, task), str(exc)


@st.cache_data(max_entries=32, show_spinner=False)
def shipped_prediction(task_name: str, digits: tuple[int, ...],
                       device: str = "cpu") -> A.Prediction:
    """The shipped snapshot's greedy answer and attention maps for `digits` (cached: the
    trained view and its export draw the same one)."""
    return A.predict(shipped_model(task_name, device)[0], A.TASKS[task_name], list(digits))


def prediction_of(s: Mapping[str, Any]) -> A.Prediction:
    """The greedy answer and attention maps of the shipped snapshot (what the view shows)."""
    return shipped_prediction(s["at_task"], tuple(digits_of(s)[0]))


def head_masses(pred: A.Prediction, task: A.Task) -> np.ndarray:
    """(layers, heads): mean weight the answer rows put on the input positions holding the
    digit they must write."""
    return A.source_mass(pred.attention, pred.inputs, pred.correct, task)


def shown_head(pred: A.Prediction, task: A.Task, choice: str) -> tuple[int, int]:
    """(layer, head), 0-based, of the enlarged head: the chosen one, or for AUTO (and a
    choice this model does not have) the head with the most weight on the source digits."""
    n_layers, n_heads = pred.attention.shape[:2]
    if choice in HEAD_NAMES:
        l, h = (int(p.split()[-1]) - 1 for p in choice.split(" · "))
        if l < n_layers and h < n_heads:
            return l, h
    return tuple(int(i) for i in np.unravel_index(np.argmax(head_masses(pred, task)),
                                                  (n_layers, n_heads)))


def shown_mass(s: Mapping[str, Any]) -> float:
    task = A.TASKS[s["at_task"]]
    pred = prediction_of(s)
    return float(head_masses(pred, task)[shown_head(pred, task, s["at_head"])])


def shown_layer(s: Mapping[str, Any]) -> int:
    task = A.TASKS[s["at_task"]]
    pred = prediction_of(s)
    return shown_head(pred, task, s["at_head"])[0] + 1


def example_accuracy(s: Mapping[str, Any]) -> float:
    return float(prediction_of(s).is_correct.mean())


def copy_layer1_mass(s: Mapping[str, Any]) -> float:
    return am.copy_layer1_mass(prediction_of(s))


def lookup_heads(s: Mapping[str, Any]) -> tuple[float, float]:
    return am.lookup_heads(prediction_of(s))


def allowed_of(s: Mapping[str, Any]) -> np.ndarray:
    return np.isfinite(A.MASKS[s["at_mask"]](int(s["at_mask_n"]), int(s["at_window"])).numpy())


def entries_per_n_sqrt_n(s: Mapping[str, Any]) -> float:
    return am.entries_per_n_sqrt_n(allowed_of(s))


def two_hop_coverage(s: Mapping[str, Any]) -> float:
    return am.two_hop_coverage(allowed_of(s))


@st.cache_data(max_entries=8, show_spinner=False)
def nonzero_counts(ns: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {name: A.mask_nonzeros(name, ns) for name in A.MASKS}


NS = tuple(int(v) for v in 2 ** np.arange(2, 10))


def sparse_constant_at(n: int) -> float:
    """Entries of local + strided at window = stride = ⌈√n⌉, divided by n√n."""
    return float(nonzero_counts(NS)["local + strided"][NS.index(n)] / n ** 1.5)


# ----------------------------------------------------------------------------- presets
MECH = {"at_n": 5, "at_dk": 4, "at_scale": True, "at_temp": 1.0, "at_causal": False,
        "at_perm": False}
SCALED = MECH
UNSCALED = {**MECH, "at_dk": 64, "at_scale": False}
COLD = {**MECH, "at_temp": 0.2}
CAUSAL = {**MECH, "at_causal": True}
PERMUTE = {**MECH, "at_perm": True}
POSITIONS = {"at_pe_mode": "add sinusoidal PE"}


def trained(task: str) -> dict[str, Any]:
    return {"at_task": task, "at_seq": EXAMPLES[task], "at_source": SOURCES[0], "at_head": AUTO}


SPARSE = {"at_mask": "local + strided", "at_mask_n": 36, "at_window": 6}

C_SCALED = (Claim("max |row sum − 1|", row_sum_error, hi=1e-6),
            Claim("mean row entropy (nats; uniform log 5 = 1.61)",
                  lambda s: mechanics_of(s).mean_entropy, lo=0.9, hi=1.2))
C_UNSCALED = (Claim("mean row entropy, unscaled d_k = 64 (nats)",
                    lambda s: mechanics_of(s).mean_entropy, lo=0.3, hi=0.6),
              Claim("largest weight", lambda s: float(mechanics_of(s).weights.max()), lo=0.999),
              Claim("entropy curve, 16 keys, d_k = 256 unscaled (nats)",
                    lambda s: curve_entropy(256, False), hi=0.3),
              Claim("entropy curve, 16 keys, d_k = 256 scaled (nats)",
                    lambda s: curve_entropy(256, True), lo=2.2))
C_COLD = (Claim("mean row entropy at τ = 0.2 (nats)", lambda s: mechanics_of(s).mean_entropy,
                hi=0.4),
          Claim("entropy at τ = 0.2 / at τ = 1", lambda s: mechanics_of(s).mean_entropy /
                mechanics_of({**s, "at_temp": 1.0}).mean_entropy, hi=0.5))
C_CAUSAL = (Claim("largest weight on a later key", above_diagonal, lo=0, hi=0),)
C_PERMUTE = (Claim("max |out(Px) − P·out(x)|", permutation_error_of, hi=1e-5),)
C_POSITIONS = (Claim("max |out(Px) − P·out(x)| without positions",
                     lambda s: pe_errors(s)["none"], hi=1e-5),
               Claim("max |out(Px) − P·out(x)| with sinusoidal PE",
                     lambda s: pe_errors(s)["add sinusoidal PE"], lo=0.5))
C_REVERSE = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
             Claim("layer of the enlarged head", shown_layer, lo=1, hi=1),
             Claim("enlarged head's weight on the mirror position", shown_mass, lo=0.95))
C_COPY = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
          Claim("layer of the enlarged head", shown_layer, lo=1, hi=1),
          Claim("weaker layer-1 head's weight on input position j", copy_layer1_mass, lo=0.95))
C_SORT = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
          Claim("layer of the enlarged head", shown_layer, lo=2, hi=2),
          Claim("enlarged head's weight on the digit to write next", shown_mass, lo=0.6))
C_LOOKUP = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
            Claim("layer of the enlarged head", shown_layer, lo=2, hi=2),
            Claim("layer 1: value rows' weight on the key before them",
                  lambda s: lookup_heads(s)[0], lo=0.9),
            Claim("layer 2: echoed key's weight on the matching value",
                  lambda s: lookup_heads(s)[1], lo=0.9))
C_SPARSE = (Claim("allowed pairs / (n√n) at n = 36, window = stride = 6",
                  entries_per_n_sqrt_n, lo=1.3, hi=1.4),
            Claim("allowed pairs / (n√n) at n = 512 (window = stride = 23)",
                  lambda s: sparse_constant_at(512), lo=1.45, hi=1.5),
            Claim("share of earlier positions reachable in ≤ 2 hops", two_hop_coverage, lo=1.0))

PRESETS = {
    "Scaled attention, d_k = 4": Preset(
        SCALED, "Weights are spread over several tokens (mean row entropy 1.03 nats; uniform "
                "would be log 5 = 1.61); each row sums to 1.", "mechanics", C_SCALED),
    "No scaling at d_k = 64: the softmax sharpens": Preset(
        UNSCALED, "Scores grow like √d_k, so rows get much sharper (mean entropy 0.45 nats, "
                  "one weight ≥ 0.999). The entropy curve below (16 keys) shows where this "
                  "goes: unscaled, the entropy falls to 0.2 nats at d_k = 256; scaled, it "
                  "stays near 2.4.", "mechanics", C_UNSCALED),
    "Cold temperature τ = 0.2": Preset(
        COLD, "Dividing by a small τ sharpens every row towards its largest score (mean "
              "entropy 0.34 nats, a third of τ = 1's).", "mechanics", C_COLD),
    "Causal mask": Preset(
        CAUSAL, "Keys after the query get −∞, hence weight exactly 0.", "mechanics", C_CAUSAL),
    "Permute the tokens: outputs permute too": Preset(
        PERMUTE, "Without positions, attention(P x) = P attention(x): the output rows move "
                 "with the tokens (difference ~1e-7, float round-off).", "mechanics",
        C_PERMUTE),
    "Positions break the symmetry": Preset(
        POSITIONS, "With sinusoidal PE added, permuting the tokens gives them new position "
                   "vectors, so the output is no longer the permuted original: "
                   "max |out(Px) − P·out(x)| is 0.94, against 1e-7 without positions.",
        "positions", C_POSITIONS),
    "Reverse: the anti-diagonal head": Preset(
        trained("reverse"), "Below the dotted line each answer query looks at the "
                            "mirror-image input position: an anti-diagonal (layer 1 · head 1 "
                            "puts 0.99 of its weight there).", "trained", C_REVERSE),
    "Copy: a shifted diagonal": Preset(
        trained("copy"), "Answer query j looks at input position j: a diagonal line 8 places "
                         "left of the main one (both layer-1 heads: ≥ 0.98).", "trained",
        C_COPY),
    "Sort: attend to the next digit to write": Preset(
        trained("sort"), "The enlarged head (layer 2) puts 0.64 of the answer rows' weight on "
                         "the input positions holding the digit each row must write next (the "
                         "next-larger or equal digit).", "trained", C_SORT),
    "Lookup: previous-token and induction heads": Preset(
        trained("lookup"), "Layer 1: each value attends to its key just before it (0.94). "
                           "Layer 2 (enlarged): the echoed query key attends to the value "
                           "whose key matches it (0.93), and copies that value.", "trained",
        C_LOOKUP),
    "Sparse patterns: about 1.5 n√n": Preset(
        SPARSE, "Causal window and stride √n = 6 at n = 36: 291 of 1,296 pairs, 1.35 n√n "
                "(the window gives about n√n, the stride about n√n/2: 1.46 n√n at n = 512), "
                "and every earlier position is reachable in two hops.", "masks", C_SPARSE),
}

STEPS = [
    Step("One head, five tokens", "Each token's query is compared with every key (q·k); the "
         "scores are divided by √d_k, a softmax over the **keys** turns each row into weights "
         "that sum to 1, and the output is the weighted mix of values.", SCALED, "mechanics",
         C_SCALED),
    Step("Why divide by √d_k", "For random unit-variance q and k, q·k has variance d_k. Without "
         "scaling, large d_k makes the softmax close to one-hot (the entropy curve: 0.2 nats "
         "at d_k = 256 against 2.4 scaled) and its gradients vanish.", UNSCALED, "mechanics",
         C_UNSCALED),
    Step("Attention does not know order", "Shuffle the tokens: the outputs are shuffled the "
         "same way (permutation equivariance). A set, not a sequence.", PERMUTE, "mechanics",
         C_PERMUTE),
    Step("Positions", "Adding sinusoidal position vectors makes the result depend on order "
         "(the permuted output differs by 0.94); their dot product depends only on the "
         "distance between positions.", POSITIONS, "positions", C_POSITIONS),
    Step("A trained transformer copies", "A 2-layer, 2-head model trained to copy 8 digits "
         "has layer-1 heads whose answer rows form a diagonal: output j reads input j.",
         trained("copy"), "trained", C_COPY),
    Step("... reverses", "A 2-layer, 2-head model trained to reverse 8 digits "
         "has a head whose answer rows form an anti-diagonal: output j copies input 7 − j.",
         trained("reverse"), "trained", C_REVERSE),
    Step("... and sorts", "For sorting, a layer-2 head lets the query that writes the next "
         "digit attend to where that digit sits in the input.", trained("sort"), "trained",
         C_SORT),
    Step("... and looks up", "Key-value lookup needs two hops: in layer 1 each value reads "
         "the key before it; in layer 2 the query key finds the value tagged with the same key.",
         trained("lookup"), "trained", C_LOOKUP),
    Step("Cost and sparse masks", "Full attention costs n² pairs, causal n(n+1)/2; the causal "
         "local + strided pattern (Sparse Transformer) costs about 1.5 n√n.", SPARSE, "masks",
         C_SPARSE),
]


# ----------------------------------------------------------------------------- helpers
def _task_changed() -> None:
    st.session_state["at_seq"] = ""          # empty: the new task's example
    st.session_state["at_head"] = AUTO       # the new task's informative head


def _sample_input(task_name: str) -> None:
    count = st.session_state.get("at_sample_count", 0) + 1
    st.session_state["at_sample_count"] = count
    g = A.make_generator(session.seed() * 1000 + count)
    digits = A.TASKS[task_name].sample(1, g)[0].tolist()
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
    pe = A.sinusoidal_encoding(n, d)
    sim = A.position_similarity(pe).numpy()
    positions = s["at_pe_mode"] != "none"
    perm = A.seeded_permutation(PE_TOKENS, seed)
    base = A.mechanics(PE_TOKENS, D_MODEL, PE_DK, seed=seed, positions=positions)
    moved = A.mechanics(PE_TOKENS, D_MODEL, PE_DK, seed=seed, positions=positions, perm=perm)
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


def show_prediction(pred: A.Prediction, task: A.Task, choice: str, key: str) -> None:
    """The answer, the weight of every head on the source digits, all maps and the enlarged
    head."""
    marks = " ".join(f":green[**{p}**]" if ok else f":red[**~~{p}~~**]"
                     for p, ok in zip(pred.predicted, pred.is_correct))
    st.markdown(f"Input `{' '.join(map(str, pred.inputs))}` → model: {marks} "
                f"&nbsp; (correct: `{' '.join(map(str, pred.correct))}`, "
                f"{pred.is_correct.mean():.0%} of tokens right)")
    maps = pred.attention
    mass = head_masses(pred, task)
    sel = shown_head(pred, task, choice)
    name = f"layer {sel[0] + 1} · head {sel[1] + 1}"
    cols = st.columns([3, 2])
    with cols[0]:
        show_figure(figs.attention_grid(maps, pred.labels, task.prompt_len - 1, sel),
                    key=f"{key}_grid")
    with cols[1]:
        show_figure(figs.matrix_heatmap(maps[sel], pred.labels, pred.labels,
                                     name + (" (best)" if choice == AUTO else ""),
                                     weights=True, show_values=len(pred.labels) <= 10),
                    key=f"{key}_head")
    st.markdown("**Weight on the source digit** (mean weight the answer queries put on the "
                "input positions holding the digit they must write): " +
                " · ".join(f"L{l + 1} H{h + 1} **{mass[l, h]:.2f}**"
                           for l in range(mass.shape[0]) for h in range(mass.shape[1])))
    st.caption("Rows are queries (the token at that position, predicting the next one); "
               "columns are keys. Rows below the dotted red line produce the answer. "
               f"What to look for in {task.name}: {task.pattern}.")


def trained_view(panel) -> None:
    with panel.controls:
        task_name = STATE.widget("at_task", on_change=_task_changed)
        task = A.TASKS[task_name]
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
        st.caption(task.description)
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
            st.markdown(f"**Model shown: shipped snapshot** `{shipped_path(task_name).name}` "
                        "(trained offline, not in this session).")
            st.caption(f"Shipped model: {cfg['n_layers']} layers × {cfg['n_heads']} heads, "
                       f"d_model {cfg['d_model']}, trained {info['steps']:,} iterations; greedy "
                       f"token accuracy on fresh inputs "
                       f"{info.get('token_accuracy', float('nan')):.3f}.")
            show_prediction(shipped_prediction(task_name, tuple(digits), device), task, choice,
                            "at_fig_shipped")
        else:
            shown = _live_model(s, task_name, task, digits, choice, seed, device)
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
        return A.TransformerTrainer(task_name, A.ModelConfig(int(s["at_layers"]),
                                                             int(s["at_heads"]),
                                                             int(s["at_dmodel"])),
                                    lr=float(s["at_lr"]), batch=128, seed=seed, device=device)

    def draw(view, tick):
        snap = view.snapshot()
        st.markdown(f"**Model shown: trained live** in this session, iteration "
                    f"{view.steps:,}" + (" (random initial weights)" if not view.steps
                                         else "") + ".")
        pred = live_prediction(task_name, digits)
        if pred is not None:
            show_prediction(pred, task, choice, "at_fig_live")
        if view.steps:
            steps, loss = view.history.as_arrays("loss")
            acc_steps, acc = view.history.as_arrays("accuracy")
            k = st.columns([1, 1, 3])
            k[0].metric("loss", f"{snap.loss:.3f}")
            k[1].metric("batch accuracy", f"{snap.accuracy:.1%}")
            with k[2]:
                show_figure(figs.training_curves(steps, loss, acc_steps, acc),
                            key="at_fig_curves")
        else:
            st.caption("Untrained: press Play (or Step) and watch the maps form.")

    with user_errors("train the transformer"):
        return live_training("at_train", make, draw, config, steps_per_frame=20,
                             max_steps_per_frame=200)
    return None


def live_prediction(task_name: str, digits: list[int]) -> A.Prediction | None:
    """The live model's greedy answer and attention maps, computed next to the trainer
    (it may live in a worker process): plain arrays come back, never the model."""
    return read_trainer("at_train", lambda tr: A.predict(tr.model, A.TASKS[task_name],
                                                         list(digits)))


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
         View("trained", "Trained transformer", trained_view),
         View("masks", "Masks", masks_view)]

if __name__ == "__main__":
    topic_page("attention", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}"
                       r"{\sqrt{d_k}\,\tau}+M\right)V")
