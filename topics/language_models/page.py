"""Language models: a small character-level GPT (shipped trained on Python's reference text)
predicts the next character; temperature, top-k and top-p reshape the distribution it samples
from, and the same model trains live on a text the teacher picks or pastes, against the
unigram and bigram baselines. Settings -> engine/language_models/ ->
topics/language_models/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, the footer. The
constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py."""
from __future__ import annotations

import functools
import hashlib
import html

import numpy as np
import streamlit as st

from engine import language_models as lmx
from engine.attention import language_model as encoder
from engine.language_models.reads import build_race, build_trainer
from engine.language_models.sampling import T_MIN, draw
from engine.weights import WeightsError
from live.controls import live_training
from live.parts import Caption, Figure, Html, Metrics
from live.push import live_parts, place
from topics.language_models import figures as figs
from topics.language_models.compute import (BATCH, CORPORA, DEFAULT_PASTE, LRS, N_MAX, PASTE,
                                            TEXT_MAX, check_text, continuation_of,
                                            corpus_text, inside_of, next_of,
                                            shipped_held_out)
from topics.language_models.embed_compute import (MAPS, NEIGHBOURS, PHRASE_MAX, embed_view_of,
                                                  separation)
from topics.language_models.race_compute import CELLS, params_of
from topics.language_models.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

DEFAULT_PROMPT = "The return statement leaves the current function call with "
DEFAULT_PHRASE = "what a lovely evening"
RACE_MAX = 1_000

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("lm_prompt", DEFAULT_PROMPT, "Prompt", kind="text",
            help="Any text: the model reads its last 128 characters."),
    Control("lm_t", 1.0, "Temperature T", lo=0.0, hi=3.0, step=0.05,
            help="p = softmax(z / T). T = 0 puts all mass on the most probable character."),
    Control("lm_k", 0, "Top-k (0 = off)", lo=0, hi=lmx.V, step=1,
            help="Keep only the k most probable characters."),
    Control("lm_p", 1.0, "Top-p (nucleus)", lo=0.0, hi=1.0, step=0.01,
            help="Keep the fewest most probable characters whose mass reaches p."),
    Control("lm_n", 120, "Characters to generate", lo=0, hi=N_MAX, step=10),
    Control("lm_seed", 0, "Sampling seed", kind="number", lo=0, hi=9999, step=1),
    Control("lm_corpus", CORPORA[0], "Text to train on", kind="selectbox", options=CORPORA),
    Control("lm_lr", 3e-3, "Learning rate (AdamW)", kind="select_slider", options=LRS),
    Control("lm_cell", CELLS[0], "Recurrent cell", kind="radio", options=CELLS,
            extra={"horizontal": True},
            help="Its hidden width is chosen so it has about the GPT's parameter count."),
    Control("lm_phrase", DEFAULT_PHRASE, "Your phrase", kind="text",
            help="A short phrase in English: it is embedded and placed among the others."),
    Control("lm_map", MAPS[0], "Map", kind="radio", options=MAPS, extra={"horizontal": True}),
])
PROMPTS = {"Python source: textwrap.py": ("", "def ")}


# ----------------------------------------------------------------------------- next token
def _append(kind: str) -> None:
    """Button callback: the sampled or greedy next character, or the continuation, appended
    to the prompt (before the prompt box is drawn again)."""
    s = STATE.values()
    if kind == "continuation":
        st.session_state["lm_prompt"] = s["lm_prompt"] + continuation_of(s).text
        return
    q = next_of(s).shaped
    tok = int(q.final.argmax()) if kind == "greedy" else draw(
        q.final, float(np.random.default_rng(int(s["lm_seed"])).random()))
    st.session_state["lm_prompt"] = s["lm_prompt"] + lmx.VOCAB[tok]


def next_view(panel) -> None:
    with panel.controls:
        STATE.widget("lm_prompt")
        STATE.widget("lm_t")
        STATE.widget("lm_p")
        STATE.widget("lm_k")
        b = st.columns(2)
        b[0].button("+ sampled", key="lm_add_sampled", on_click=_append, args=("sampled",),
                    help="Append one character drawn from the bars.")
        b[1].button("+ greedy", key="lm_add_greedy", on_click=_append, args=("greedy",),
                    help="Append the most probable character.")
        with st.expander("Generate"):
            STATE.widget("lm_n")
            STATE.widget("lm_seed")
            st.button("Append the continuation", key="lm_add_text", on_click=_append,
                      args=("continuation",))
        st.caption("Notes 004, Fig. 10.17: a prompt and what a language model writes after it.")
    s = STATE.values()
    with panel.figure, user_errors("read the shipped model"):
        try:
            nt = next_of(s)
        except WeightsError as e:
            st.error(f"The shipped model cannot be read: {e}")
            return
        sh = nt.shaped
        t = float(s["lm_t"])
        title = (f"next character: entropy {sh.entropy_final:.2f} bits "
                 f"(T = 1: {sh.entropy_raw:.2f}), {sh.kept} kept, mass kept {sh.kept_mass:.0%}")
        show_figure(figs.next_token_figure(nt.labels, sh.raw[nt.top], sh.final[nt.top],
                                           sh.keep[nt.top], title), key="lm_fig_next")
        for note in nt.notes:
            st.info(note, icon=":material/info:")
        if t < T_MIN:
            st.caption("T = 0: greedy decoding, the most probable character every time (no "
                       "division by zero: the limit of softmax(z/T) as T → 0).")
        c = continuation_of(s)
        if int(s["lm_n"]) == 0:
            st.caption("Characters to generate is 0: nothing is generated.")
        else:
            st.markdown(figs.coloured_text(s["lm_prompt"], c.text, c.probs),
                        unsafe_allow_html=True)
            if c.loop is not None:
                st.warning(f"Repetition loop: the text ends repeating {c.loop!r} — greedy "
                           "or low-temperature decoding keeps choosing the same likely "
                           "characters, and the loop feeds itself.", icon=":material/loop:")
    with panel.notes:
        st.latex(r"p_i = \frac{e^{z_i/T}}{\sum_j e^{z_j/T}},\qquad "
                 r"q_i = \frac{p_i\,[i \in S_{k,p}]}{\sum_{j\in S_{k,p}} p_j},\qquad "
                 r"H(q) = -\sum_i q_i \log_2 q_i")
        explain("The model's last layer gives one score z_i per character. Temperature divides "
                "them before the softmax: T < 1 sharpens the distribution (lower entropy), "
                "T > 1 flattens it. Top-k keeps the k most probable characters, top-p the "
                "fewest whose mass reaches p; the rest are cut (grey) and the kept ones are "
                "renormalised to sum to 1. The orange marks are the model's own probabilities "
                "at T = 1. The continuation below draws each character from q with a seeded "
                "generator: the same seed and settings give the same text; its background "
                "goes from red (an unlikely draw) to green (a likely one). The model is a "
                f"{lmx.n_parameters(lmx.GPT()):,}-parameter GPT (3 layers, 4 heads, width 64, "
                "context 128) trained on Python's help() reference text.")


# ----------------------------------------------------------------------------- train
def train_frame_parts(view, read, setup: str, steps_max: int) -> dict:
    """One live frame (pure: the frame route may build it): the cross-entropy curves against
    the baselines, the numbers, and samples at fixed prompts."""
    snap = view.snapshot()
    out = {"lm_metrics": Metrics([
               ("Held-out", f"{snap.held_ce:.3f}", "The model's cross-entropy on held-out "
                                                   "text, nats per character."),
               ("Bigram", f"{snap.bigram_ce:.3f}", "p(c | previous c), add-one smoothed."),
               ("Unigram", f"{snap.unigram_ce:.3f}", "Character frequencies only.")]),
           "lm_caption": Caption(setup)}
    out["lm_fig_loss"] = Figure(figs.loss_figure(
        {"train batch": view.history.as_arrays("train"),
         "held-out": view.history.as_arrays("held_out")}, snap.unigram_ce, snap.bigram_ce,
        max(view.steps, steps_max // 10), start=snap.held_ce if view.steps == 0 else None))
    if view.steps == 0:
        out["lm_caption"] = Caption(f"{setup} Press Play (or Step) to train: the dot is the "
                                    "untrained model's held-out cross-entropy.")
    rows = "".join(f"<p><b>{html.escape(repr(p) if p else '(start)')}</b> → "
                   f"<code>{html.escape(t)}</code></p>"
                   for p, t in zip(snap.prompts, snap.samples))
    out["lm_samples"] = Html(f"<div><i>Samples at iteration {snap.step:,} (T = 0.8):</i>"
                             f"{rows}</div>", markdown=True)
    if view.diverged_at is not None:
        out["lm_caption"] = Caption(f"{setup} Training diverged at iteration "
                                    f"{view.diverged_at}: press Reset, or lower the learning "
                                    "rate.")
    return out


def _train_text(corpus: str) -> str | None:
    """The chosen text, or None after saying in words why it cannot be trained on."""
    if corpus != PASTE:
        text = corpus_text(corpus)
    else:
        up = st.file_uploader("Upload a .txt file", type=["txt", "md", "py"],
                              key="lm_upload")
        if up is not None:
            raw = up.getvalue()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                st.warning("That file is not UTF-8 text (a binary file?): upload plain text.")
                return None
        else:
            text = st.text_area("Your text", DEFAULT_PASTE, height=160, key="lm_paste",
                                max_chars=TEXT_MAX + 1)
    error, note = check_text(text, capped=corpus == PASTE)
    if error:
        st.warning(error, icon=":material/warning:")
        return None
    if note:
        st.caption(note)
    return text


def train_view(panel) -> None:
    with panel.controls:
        STATE.widget("lm_corpus")
        STATE.widget("lm_lr")
        s = STATE.values()
        text = _train_text(str(s["lm_corpus"]))
        st.caption("001 L3817: a character model's samples go from noise to words to style.")
    if text is None:
        with panel.figure:
            st.info("Pick another text, or paste at least 1,000 characters.")
        return
    seed, device = session.seed(), session.device()
    prompts = PROMPTS.get(str(s["lm_corpus"]), ("", "The "))
    make = functools.partial(build_trainer, text, float(s["lm_lr"]), BATCH, seed, device,
                             prompts)
    digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
    setup = (f"{len(text):,} characters ({s['lm_corpus']}), 90% train / 10% held out; a fresh "
             f"GPT of {lmx.n_parameters(lmx.GPT()):,} parameters, AdamW at {s['lm_lr']:g}, "
             f"batches of {BATCH} windows of 128 characters, seed {seed}.")

    def _draw(view, tick) -> None:
        parts = live_parts(train_frame_parts, view, setup=setup, steps_max=2_000)
        for slot in ("lm_fig_loss", "lm_metrics", "lm_samples", "lm_caption"):
            place(parts, slot)

    with panel.figure, user_errors("train the model"):
        live_training("lm_train", make, _draw,
                      config={"text": digest, "lr": s["lm_lr"], "seed": seed,
                              "device": device},
                      steps_per_frame=5, max_steps_per_frame=50)
    with panel.notes:
        st.latex(r"\mathcal L = -\frac{1}{BL}\sum_{b,t}\log p_\theta(x_{b,t+1}\mid "
                 r"x_{b,1..t})")
        explain("Each iteration draws 16 windows of 129 characters at random offsets of the "
                "training 90% and takes one AdamW step on the mean cross-entropy of every next "
                "character. The held-out curve scores fixed windows of the last 10%. The "
                "dashed lines are what counting gives on the same held-out text: character "
                "frequencies (unigram) and the frequency of each character after the previous "
                "one (bigram). A model below the bigram line has learned to use more than one "
                "character of context.")
        with st.expander("The shipped model on its held-out text"):
            h = shipped_held_out()
            st.write(f"The shipped GPT scores {h.model_ce:.3f} nats per character on "
                     f"{h.chars:,} held-out characters of the Python reference text; the "
                     f"bigram baseline {h.bigram_ce:.3f}, the unigram {h.unigram_ce:.3f}.")


# ----------------------------------------------------------------------------- inside
def inside_view(panel) -> None:
    with panel.controls:
        STATE.widget("lm_prompt")
        st.caption("Each row of the lens reads the residual stream after that layer through "
                   "the model's final LayerNorm and unembedding.")
    s = STATE.values()
    with panel.figure, user_errors("read the model's layers"):
        r = inside_of(s)
        show_figure(figs.inside_figure(r.lens, r.lens_labels, r.attention, r.chars),
                    key="lm_fig_inside")
        for note in r.notes:
            st.info(note, icon=":material/info:")
    with panel.notes:
        st.latex(r"\mathrm{lens}_l = \mathrm{softmax}\big(\mathrm{LN}(h_l)\,W_E^\top\big),"
                 r"\qquad h_l = h_{l-1} + \mathrm{Attn}_l + \mathrm{MLP}_l")
        explain("The logit lens asks what the model would predict if it stopped after layer "
                "l. The embeddings alone (row 0) share their weights with the output layer, so "
                "they mostly predict the character just read again; each block then moves the "
                "prediction toward the final one, and the last row is the model's output "
                "exactly. Below, each block's heads show how much of the last position's "
                "attention goes to each of the last 40 characters: some heads look at the "
                "previous character or two, others further back, at the start of the word.")


# ----------------------------------------------------------------------------- race
def race_frame_parts(view, read, setup: str, steps_max: int) -> dict:
    """One live frame (pure): both models' held-out cross-entropy curves, their numbers and
    step times, and a sample from each."""
    snap = view.snapshot()
    cell = snap.cell.upper()
    ms = lambda v: "–" if v != v else f"{v:.0f} ms"  # noqa: E731 - nan before any step
    out = {"lm_race_metrics": Metrics([
               ("Transformer held-out", f"{snap.gpt_ce:.3f}",
                f"The GPT ({snap.gpt_params:,} parameters), nats per character."),
               (f"{cell} held-out", f"{snap.rnn_ce:.3f}",
                f"The {cell} ({snap.rnn_params:,} parameters), nats per character."),
               ("Transformer step", ms(snap.gpt_ms), "Median time of its last training "
                                                     "steps: forward, backward, update."),
               (f"{cell} step", ms(snap.rnn_ms), "The same for the recurrent model.")]),
           "lm_race_caption": Caption(setup)}
    out["lm_race_fig"] = Figure(figs.race_figure(
        {"transformer (GPT)": view.history.as_arrays("held_out"),
         cell: view.history.as_arrays("rnn_held_out")}, snap.bigram_ce,
        max(view.steps, steps_max // 5),
        now=(snap.gpt_ce, snap.rnn_ce)))
    if view.steps == 0:
        out["lm_race_caption"] = Caption(f"{setup} Press Play (or Step) to train both: the curves are "
                                         "logged every 20 iterations.")
    rows = "".join(f"<p><b>{name}</b> → <code>{html.escape(t)}</code></p>"
                   for name, t in (("transformer", snap.gpt_sample), (cell, snap.rnn_sample)))
    out["lm_race_samples"] = Html(f"<div><i>After {snap.prompt!r} at iteration "
                                  f"{snap.step:,} (T = 0.8):</i>{rows}</div>", markdown=True)
    if view.diverged_at is not None:
        out["lm_race_caption"] = Caption(f"{setup} Training diverged at iteration "
                                         f"{view.diverged_at}: press Reset, or lower the "
                                         "learning rate.")
    return out


def race_view(panel) -> None:
    with panel.controls:
        STATE.widget("lm_corpus")
        STATE.widget("lm_cell")
        STATE.widget("lm_lr")
        s = STATE.values()
        text = _train_text(str(s["lm_corpus"]))
        st.caption("001 L3817: Shakespeare-like text from a character RNN; here an RNN and a "
                   "transformer of the same size learn the same text.")
    if text is None:
        with panel.figure:
            st.info("Pick another text, or paste at least 1,000 characters.")
        return
    seed, device = session.seed(), session.device()
    cell = str(s["lm_cell"])
    make = functools.partial(build_race, text, float(s["lm_lr"]), BATCH, seed, device,
                             cell.lower())
    digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
    gpt_n, rnn_n = params_of(cell)
    setup = (f"{len(text):,} characters ({s['lm_corpus']}), 90% train / 10% held out; a GPT "
             f"of {gpt_n:,} parameters and a one-layer {cell} of {rnn_n:,}, each an AdamW "
             f"step at {s['lm_lr']:g} on the same {BATCH} windows of 128 characters, seed "
             f"{seed}.")

    def _draw(view, tick) -> None:
        parts = live_parts(race_frame_parts, view, setup=setup, steps_max=RACE_MAX)
        for slot in ("lm_race_fig", "lm_race_metrics", "lm_race_samples", "lm_race_caption"):
            place(parts, slot)

    with panel.figure, user_errors("train the two models"):
        live_training("lm_race", make, _draw,
                      config={"text": digest, "lr": s["lm_lr"], "seed": seed, "cell": cell,
                              "device": device},
                      steps_per_frame=5, max_steps_per_frame=40)
    with panel.notes:
        st.latex(r"h_t = \mathrm{cell}(E x_t,\ h_{t-1}),\quad p(x_{t+1}\mid x_{\le t}) = "
                 r"\mathrm{softmax}(W h_t)\qquad\text{vs}\qquad "
                 r"p(x_{t+1}\mid x_{\le t}) = \mathrm{softmax}(z_t(x_1..x_t))")
        explain("Both models read the same windows of 128 characters and take one AdamW step "
                "each per iteration. The recurrent model carries everything it has read in "
                "one hidden vector that it updates character by character: its context is "
                "the whole window, squeezed into that vector, and its steps run one after "
                "the other. The transformer looks back at every earlier character of the "
                "window at once through attention, with learned position embeddings it must "
                "first learn to use. On a short budget the recurrent model usually learns "
                "faster; the times per step depend on the machine (on a CPU the LSTM's fused "
                "kernel is the cheaper one here).")


# ----------------------------------------------------------------------------- embeddings
def embed_view(panel) -> None:
    with panel.controls:
        STATE.widget("lm_phrase", max_chars=2_000)
        STATE.widget("lm_map")
        st.caption("001 L3792: word embeddings laid out in 2-D, grouped by sentiment.")
    s = STATE.values()
    with panel.figure, user_errors("embed the phrases"):
        try:
            ev = embed_view_of(s)
            sep = separation()
        except encoder.WeightsMissing as exc:
            st.error(f"The pretrained encoder is missing: {exc}", icon=":material/error:")
            return
        if ev.problem:
            st.warning(ev.problem, icon=":material/warning:")
        elif not ev.typed:
            st.info("Type a phrase to place it among the others.", icon=":material/info:")
        for note in ev.notes:
            st.info(note, icon=":material/info:")
        if s["lm_map"] == "PCA":
            axes = (f"PC 1 ({ev.explained[0]:.0%} of the variance)",
                    f"PC 2 ({ev.explained[1]:.0%})")
        else:
            axes = ("t-SNE 1", "t-SNE 2")
        title = f"{len(ev.texts)} phrases by {s['lm_map']}; 384-d probe {sep.probe:.0%}"
        show_figure(figs.embedding_figure(ev.xy, ev.labels, ev.texts, ev.typed_xy, ev.typed,
                                          title, axes), key="lm_fig_embed")
        st.dataframe({"measure": ["logistic probe, 384-d, 4-fold CV accuracy",
                                  "the same probe with shuffled labels",
                                  "the probe on the two PCA coordinates",
                                  "silhouette of the labels (cosine, 384-d)",
                                  "variance kept by the two PCA axes"],
                      "value": [f"{sep.probe:.1%}", f"{sep.shuffled:.1%}",
                                f"{sep.pca_probe:.1%}", f"{sep.silhouette:.3f}",
                                f"{sep.pca_share:.1%}"]}, hide_index=True)
        if ev.neighbours:
            st.markdown(f"**The {NEIGHBOURS} phrases closest to {ev.typed!r}** (cosine "
                        "similarity in 384-d):")
            st.dataframe({"phrase": [n[0] for n in ev.neighbours],
                          "sentiment": [n[1] for n in ev.neighbours],
                          "cosine": [round(n[2], 3) for n in ev.neighbours]},
                         hide_index=True)
    with panel.notes:
        st.latex(r"e(\text{phrase}) = \frac{\bar h}{\lVert \bar h\rVert},\quad "
                 r"\bar h = \tfrac1T\textstyle\sum_t h_t,\qquad "
                 r"\cos(e_i, e_j) = e_i^\top e_j")
        explain("Each phrase goes through the attention page's pretrained encoder "
                "(all-MiniLM-L6-v2); the mean of its last layer's token vectors, scaled to "
                "length 1, is its embedding. PCA keeps the two directions of largest variance "
                "(a linear view; your phrase is placed without moving the others); t-SNE "
                "places points so that close neighbours stay close (a nonlinear view computed "
                "again with your phrase). Colour is the sentiment the phrases were written "
                "with, which the encoder never sees. The encoder was trained to match "
                "sentences by meaning, so phrases about the same thing (a film, a room, a "
                "concert) pull together whatever their sentiment; a linear probe still reads "
                f"the sentiment from all 384 dimensions. Typed phrases are cut at "
                f"{PHRASE_MAX} characters.")


VIEWS = [View("next", "Next token", next_view),
         View("train", "Train on your text", train_view,
              live=Live("lm_train", train_max=2_000)),
         View("race", "Char-RNN vs transformer", race_view,
              live=Live("lm_race", train_max=RACE_MAX)),
         View("inside", "Inside the model", inside_view),
         View("embed", "Embeddings", embed_view)]

if __name__ == "__main__":
    topic_page("language_models", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"p(x_{t+1}\mid x_{\le t}) = \mathrm{softmax}\big(z_t / T\big),\qquad "
                       r"\mathcal L = -\tfrac1n\sum_t \log p(x_{t+1}\mid x_{\le t})")
