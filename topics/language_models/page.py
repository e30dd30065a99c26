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
from engine.language_models.reads import build_trainer
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
from topics.language_models.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

DEFAULT_PROMPT = "The return statement leaves the current function call with "

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


VIEWS = [View("next", "Next token", next_view),
         View("train", "Train on your text", train_view,
              live=Live("lm_train", train_max=2_000)),
         View("inside", "Inside the model", inside_view)]

if __name__ == "__main__":
    topic_page("language_models", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"p(x_{t+1}\mid x_{\le t}) = \mathrm{softmax}\big(z_t / T\big),\qquad "
                       r"\mathcal L = -\tfrac1n\sum_t \log p(x_{t+1}\mid x_{\le t})")
