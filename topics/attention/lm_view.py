"""The attention page's Real model tab: a pretrained language model's heads on the typed
sentence (head view, model view, head-type table, head masking). Its controls are declared
here (CONTROLS, spliced into the page's StateTable); computations in
topics/attention/lm_compute.py, figures in topics/attention/lm_figures.py."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine.attention import language_model
from topics.attention import lm_compute
from topics.attention import lm_figures as figs
from ui.render import explain, show_figure
from ui.state import Control
from ui.widgets import export_buttons

CONTROLS = [
    Control("at_lm_text", lm_compute.DEFAULT_TEXT, "Sentence", kind="text",
            help="Any English text; the model reads up to 512 tokens, the views show the "
                 f"first {lm_compute.SHOWN_TOKENS}."),
    Control("at_lm_view", lm_compute.VIEWS[0], "Show", kind="radio", options=lm_compute.VIEWS,
            extra={"horizontal": True}),
    Control("at_lm_layer", 1, "Layer", kind="select_slider", options=list(range(1, lm_compute.LAYERS + 1))),
    Control("at_lm_head", 3, "Head", kind="select_slider", options=list(range(1, lm_compute.HEADS + 1))),
]
TOKEN_KEY = "at_lm_token"          # the focused token: depends on the text, so not in the URL
ALL_TOKENS = "all tokens"
GRID_KEY = "at_fig_lm_model"


def _on_pick() -> None:
    """A click on a small map of the model view enlarges that head."""
    sel = st.session_state.get(GRID_KEY)
    pts = (sel or {}).get("selection", {}).get("points", []) if isinstance(sel, dict) else \
        getattr(getattr(sel, "selection", None), "points", [])
    for p in pts:
        data = p.get("customdata") if isinstance(p, dict) else None
        if data and len(data) == 2:
            st.session_state["at_lm_layer"], st.session_state["at_lm_head"] = map(int, data)
            return


def real_model_view(panel, state) -> None:
    with panel.controls:
        state.widget("at_lm_text", max_chars=20_000)
        mode = state.widget("at_lm_view")
        state.widget("at_lm_layer")
        state.widget("at_lm_head")
    s = state.values()
    try:
        typed = lm_compute.typed_of(s)
    except language_model.WeightsMissing as exc:
        with panel.figure:
            st.error(f"The pretrained model is missing: {exc}", icon=":material/error:")
        return
    maps, (l, h) = typed.maps, lm_compute.selected(s)
    tokens = maps.tokens
    with panel.controls:
        options = [ALL_TOKENS, *lm_compute.labels(tokens)]
        if st.session_state.get(TOKEN_KEY) not in options:
            st.session_state[TOKEN_KEY] = ALL_TOKENS
        focus_label = st.selectbox("Token to isolate", options, key=TOKEN_KEY,
                                   disabled=mode != lm_compute.VIEWS[0])
        _head_metrics(s, l, h)
    focus = None if focus_label == ALL_TOKENS else options.index(focus_label) - 1
    with panel.figure:
        if typed.problem:
            st.error(f"Input not usable: {typed.problem}. Showing “{typed.text}” instead.",
                     icon=":material/error:")
        layers, heads = maps.weights.shape[:2]
        title = (f"{language_model.MODEL_NAME}, {layers} layers × {heads} heads · layer {l + 1} "
                 f"· head {h + 1} ({lm_compute.head_type_of(s)})")
        if mode == lm_compute.VIEWS[0]:
            show_figure(figs.head_view_figure(maps.weights[l, h], tokens, title, focus),
                        key="at_fig_lm_head")
        else:
            show_figure(figs.model_view_figure(
                maps.weights, tokens, (l, h),
                f"All 72 heads · enlarged: L{l + 1} H{h + 1} ({lm_compute.head_type_of(s)})"),
                        key=GRID_KEY, on_select=_on_pick, selection_mode="points")
        st.caption(_figure_caption(s, mode, focus, tokens))
        for note in typed.notes:           # under the figure: it stays on the first screen
            st.info(note, icon=":material/info:")
    with panel.notes:
        _notes(s, typed, l, h)


def _head_metrics(s, l: int, h: int) -> None:
    kind = lm_compute.head_type_of(s)
    st.metric("Head type (8 built-in sentences)", kind)
    shown = kind if kind in lm_compute.SCORE_COLUMNS else "broad"
    st.metric(f"{shown} score: typed text", f"{lm_compute.selected_score(s, shown, typed=True):.3f}")
    st.metric(f"{shown} score: 8 sentences", f"{lm_compute.selected_score(s, shown):.3f}",
                   help=f"Mean over the built-in sentences; the lowest one: "
                        f"{lm_compute.worst_sentence_score(s, shown):.3f}.")


def _figure_caption(s, mode: str, focus: int | None, tokens: list[str]) -> str:
    if mode == lm_compute.VIEWS[0]:
        what = (f"only the row of token {focus} ({tokens[focus]}), weights printed beside the "
                "keys" if focus is not None else
                f"every query's lines (weights under {figs.MIN_LINE} not drawn)")
        return (f"Left: the sentence twice, queries on the left and keys on the right, {what}. "
                "Right: the same head's weights. Every row sums to 1.")
    return (f"{language_model.MODEL_NAME}: each small map is one head (rows: queries, columns: keys), "
            "layer 1 at the top; click one (or use Layer and Head) to enlarge it on the right.")


def _notes(s, typed: lm_compute.Typed, l: int, h: int) -> None:
    counts = lm_compute.type_counts()
    st.markdown("**Head types.** " + " · ".join(f"{k}: **{v}**" for k, v in counts.items())
                + " of 72 heads on the 8 built-in sentences (a type holds ≥ 0.5 of each word's "
                "weight; broad: spread rows, mixed: neither).")
    table = lm_compute.score_table(s)
    st.dataframe(table, hide_index=True, height=240, key="at_lm_table")
    explain("Scores are means over the rows of the word tokens: previous = weight on the "
            "token just before, next = just after, self = on itself, sink = on [CLS] and "
            "[SEP] together, broad = row entropy / log T (1: uniform). The first columns "
            "average the built-in sentences, the (typed) ones are this sentence's.",
            title="How the scores are measured")
    effects = lm_compute.masking_of(s)
    show_figure(figs.masking_figure(effects, (l, h)), key="at_fig_lm_mask")
    top = lm_compute.top_masked(s)
    st.caption("Largest changes: " + ", ".join(f"L{a} H{b} **{v:.3f}**" for a, b, v in top)
               + f"; median over the 72 heads **{float(np.median(effects)):.4f}**; the "
               f"enlarged head **{lm_compute.masked_selected(s):.4f}**. Sentence embedding = mean of "
               "the last layer's token vectors (what all-MiniLM-L6-v2 is trained for); "
               "masking sets the head's output to zero.")
    toy = lm_compute.toy_previous_token()
    prev = lm_compute.best_head("previous")
    st.markdown(f"**Compared with the toy transformers.** The lookup model trained on this page "
                f"needs a previous-token head in layer 1 and learns one (weight **{toy:.2f}** "
                f"on the key before each value); {language_model.MODEL_NAME}, trained on real text, has "
                f"one too: layer {prev[0]} · head {prev[1]}, **{prev[2]:.3f}** on the built-in "
                f"sentences. **{counts['sink']}** of its 72 heads put most of each word's weight "
                "on [CLS]/[SEP] (sink in the head types above).")
    with st.expander("Export the attention maps"):
        w = typed.maps.weights
        L, H, T, _ = w.shape
        lab = lm_compute.labels(typed.maps.tokens)
        index = pd.MultiIndex.from_product([range(1, L + 1), range(1, H + 1), lab],
                                           names=["layer", "head", "query"])
        export_buttons(pd.DataFrame(w.reshape(L * H * T, T), index=index, columns=lab)
                       .reset_index(),
                       {"view": "real model", "model": language_model.MODEL_NAME, "text": typed.text,
                        "tokens": typed.maps.tokens}, "attention-real-model")
