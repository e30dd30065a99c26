"""Constants and the cached pure computations of the language models page: the shipped GPT's
next-token distribution for a prompt shaped by temperature, top-k and top-p, a seeded
continuation, the shipped model's held-out cross-entropy against the baselines, the texts the
Train tab offers, and the trained runs the slow claims measure. Shared by the views and the
claims."""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import streamlit as st
import torch

from engine import language_models as lmx
from engine.language_models.corpus import shipped_text, split_text
from engine.language_models.generate import context_ids
from engine.language_models.pretrained import SHIPPED, model_from
from engine.language_models.reads import build_trainer
from engine.language_models.trainer import windows
from ui.lesson_measures import lesson_measure
from ui.weights import cached_weights

# ----------------------------------------------------------------------------- constants
TOP = 20                 # bars drawn: the most probable tokens at T = 1
N_MAX = 400              # most characters one Generate press writes
TEXT_MIN, TEXT_MAX = 1_000, 200_000     # a pasted text's size limits, in characters
UNKNOWN_MAX = 0.2        # a text with more unknown characters than this share is refused
HELD_WINDOWS = 48        # held-out windows of 128 characters the shipped model is scored on
LRS = (1e-3, 3e-3, 1e-2)
BATCH = 16
TRAIN_STEPS = 200        # what the live-training claims measure after
PASTE = "Paste or upload a text"
LOOP_MIN = 4             # a greedy loop: a unit of >= 4 characters repeated >= 3 times


def _zen() -> str:
    import codecs
    import this          # noqa: F401 - the module's text, rot13-encoded in this.s
    return codecs.decode(this.s, "rot13")


@st.cache_data(max_entries=4, show_spinner=False)
def corpus_text(name: str) -> str:
    """A text the Train tab offers, by name (all ship with Python)."""
    if name == "Python reference (pydoc topics)":
        return shipped_text()
    if name == "Python source: textwrap.py":
        return inspect.getsource(textwrap)
    if name == "The Zen of Python (too short)":
        return _zen()
    raise KeyError(name)


CORPORA = ("Python reference (pydoc topics)", "Python source: textwrap.py",
           "The Zen of Python (too short)", PASTE)
DEFAULT_PASTE = ("Twinkle, twinkle, little star,\nHow I wonder what you are!\n"
                 "Up above the world so high,\nLike a diamond in the sky.\n") * 20


def check_text(text: str, capped: bool = True) -> tuple[str | None, str]:
    """(an error in words or None, a note): a text the trainer can take, within the limits
    (the size cap applies to a pasted or uploaded text, `capped`)."""
    if "\x00" in text:
        return "This looks like a binary file, not text: upload a plain .txt file.", ""
    n = len(text.strip())
    if n < TEXT_MIN:
        return (f"The text has {n:,} characters: at least {TEXT_MIN:,} are needed to train "
                "on (90% train, 10% held out). Paste a longer text."), ""
    if capped and len(text) > TEXT_MAX:
        return (f"The text has {len(text):,} characters, over the cap of {TEXT_MAX:,}: paste "
                "a shorter part."), ""
    enc = lmx.encode(text)
    if enc.unknown > UNKNOWN_MAX * len(enc.ids):
        return (f"{enc.unknown:,} of {len(enc.ids):,} characters are outside the model's "
                "vocabulary (printable ASCII and newline): use a text in plain English or "
                "code."), ""
    note = (f"{enc.unknown:,} characters outside the vocabulary ({enc.unknown_chars!r}) are "
            "read as ¿." if enc.unknown else "")
    return None, note


# ----------------------------------------------------------------------------- the model
@st.cache_resource(show_spinner="Loading the shipped model…", max_entries=2)
def _shipped(mtime: int) -> lmx.GPT:
    return model_from(cached_weights(SHIPPED))


def shipped_model() -> lmx.GPT:
    return _shipped(SHIPPED.stat().st_mtime_ns if SHIPPED.is_file() else -1)


@dataclass(frozen=True)
class Prompt:
    ids: np.ndarray          # what the model reads: the last 128 ids, or the start symbol
    notes: tuple[str, ...]   # what was done to the typed prompt, in words


def prompt_of(text: str, context: int = 128) -> Prompt:
    enc = lmx.encode(text)
    notes = []
    if not text:
        notes.append("The prompt is empty: the model reads its start symbol (a newline), so "
                     "the bars are its guess for the first character of a text.")
    if enc.unknown:
        notes.append(f"{enc.unknown} character(s) outside the vocabulary ({enc.unknown_chars!r})"
                     " are read as the unknown symbol ¿.")
    if len(enc.ids) > context:
        notes.append(f"The prompt has {len(enc.ids):,} characters; the model reads the last "
                     f"{context} (its context).")
    model = shipped_model()
    return Prompt(context_ids(model, enc.ids), tuple(notes))


@dataclass(frozen=True)
class NextToken:
    shaped: lmx.Shaped
    top: np.ndarray          # (TOP,) token ids, most probable at T = 1 first
    labels: tuple[str, ...]  # their characters, newline and space made visible
    notes: tuple[str, ...]


@st.cache_data(max_entries=64, show_spinner=False)
def _next(prompt: str, temperature: float, top_k: int, top_p: float) -> NextToken:
    p = prompt_of(prompt)
    logits = lmx.next_logits(shipped_model(), p.ids)
    shaped = lmx.shape(logits, float(temperature), int(top_k), float(top_p))
    top = np.argsort(-shaped.raw, kind="stable")[:TOP]
    return NextToken(shaped, top, tuple(_label(int(i)) for i in top), p.notes)


def _label(i: int) -> str:
    from engine.language_models.vocab import shown
    return shown(lmx.VOCAB[i])


def next_of(s: Mapping[str, Any]) -> NextToken:
    return _next(str(s["lm_prompt"]), float(s["lm_t"]), int(s["lm_k"]), float(s["lm_p"]))


@dataclass(frozen=True)
class Continuation:
    text: str
    probs: np.ndarray        # (n,) each character's probability when it was drawn
    loop: str | None         # the unit a greedy loop repeats, if the text ends in one


@st.cache_data(max_entries=64, show_spinner=False)
def _continue(prompt: str, temperature: float, top_k: int, top_p: float, n: int,
              seed: int) -> Continuation:
    p = prompt_of(prompt)
    g = lmx.generate(shipped_model(), p.ids, int(n), float(temperature), int(top_k),
                     float(top_p), int(seed))
    return Continuation(g.text, g.probs, lmx.repeated_tail(g.text, LOOP_MIN))


def continuation_of(s: Mapping[str, Any], seed: int | None = None) -> Continuation:
    return _continue(str(s["lm_prompt"]), float(s["lm_t"]), int(s["lm_k"]), float(s["lm_p"]),
                     int(s["lm_n"]), int(s["lm_seed"] if seed is None else seed))


# ----------------------------------------------------------------------------- baselines
@dataclass(frozen=True)
class HeldOut:
    model_ce: float          # the shipped GPT's cross-entropy on held-out windows, nats/char
    unigram_ce: float
    bigram_ce: float
    chars: int               # characters scored


@st.cache_data(max_entries=1, show_spinner="Scoring the held-out text…")
def shipped_held_out() -> HeldOut:
    """The shipped model and the baselines on the held-out 10% of the pydoc corpus."""
    split = split_text(shipped_text())
    w = torch.as_tensor(windows(split.held, 128, HELD_WINDOWS))          # (m, 129)
    with torch.no_grad():
        ce = float(shipped_model().loss(w[:, :-1], w[:, 1:]))
    return HeldOut(ce, lmx.unigram_ce(split.train, split.held),
                   lmx.bigram_ce(split.train, split.held), int(w[:, 1:].numel()))


# ----------------------------------------------------------------------------- measures
def shaped_measure(name: str, **changes):
    """A claim's measure: a number of next_of(s) with `changes` to the settings."""
    def measure(s):
        sh = next_of({**s, **changes}).shaped
        if name == "top_prob":
            return float(sh.final.max())
        return float(getattr(sh, name))
    return measure


def entropy_drop(low: float, high: float = 1.0):
    """A claim's measure: H at temperature `high` minus H at `low`, bits."""
    def measure(s):
        return (next_of({**s, "lm_t": high}).shaped.entropy_final
                - next_of({**s, "lm_t": low}).shaped.entropy_final)
    return measure


def same_text_for_seeds(s: Mapping[str, Any]) -> float:
    """1 if two different seeds write the same continuation on the settings s."""
    return float(continuation_of(s, 0).text == continuation_of(s, 1).text)


def greedy_loop(s: Mapping[str, Any]) -> float:
    """1 if the continuation ends in a loop (a unit of >= 4 characters, 3 times)."""
    return float(continuation_of(s).loop is not None)


def held_measure(name: str):
    def measure(s):
        h = shipped_held_out()
        if name == "margin":
            return h.bigram_ce - h.model_ce
        return float(getattr(h, name))
    return measure


# ----------------------------------------------------------------------------- training
@dataclass(frozen=True)
class TrainedSummary:
    steps: int
    held_ce: float
    unigram_ce: float
    bigram_ce: float
    sample: str


@st.cache_data(max_entries=8, show_spinner=False)
def trained_of(corpus: str, lr: float, steps: int = TRAIN_STEPS, seed: int = 0
               ) -> TrainedSummary:
    """A fresh GPT trained `steps` steps on a corpus (what the slow claims measure; the Train
    tab reaches the same numbers after the same steps with the same seed)."""
    tr = build_trainer(corpus_text(corpus), lr, BATCH, seed, "cpu")
    tr.step(steps)
    snap = tr.snapshot()
    return TrainedSummary(tr.steps, snap.held_ce, snap.unigram_ce, snap.bigram_ce,
                          snap.samples[-1])


def trained_measure(name: str, steps: int = TRAIN_STEPS):
    def measure(s):
        t = trained_of(str(s["lm_corpus"]), float(s["lm_lr"]), steps)
        if name == "bigram_margin":
            return t.bigram_ce - t.held_ce
        if name == "unigram_margin":
            return t.unigram_ce - t.held_ce
        return float(getattr(t, name))
    return measure


# ----------------------------------------------------------------------------- lessons
@lesson_measure
def next_value(s: Mapping[str, Any], name: str = "entropy_final") -> float:
    """A lesson's measurement on the Next token tab: shaped_measure(name)(s)."""
    return shaped_measure(name)(s)


@lesson_measure
def held_value(s: Mapping[str, Any], name: str = "margin") -> float:
    """A lesson's measurement: the shipped model's held-out numbers (held_measure)."""
    return held_measure(name)(s)


@lesson_measure
def loop_value(s: Mapping[str, Any]) -> float:
    """1 if the settings' continuation ends in a repetition loop."""
    return greedy_loop(s)


@lesson_measure(trains=True)
def trained_value(s: Mapping[str, Any], name: str = "bigram_margin",
                  steps: int = TRAIN_STEPS) -> float:
    """A lesson's measurement after training (slow): trained_measure(name, steps)(s)."""
    return trained_measure(name, int(steps))(s)


# ----------------------------------------------------------------------------- inside
LENS_TOP = 12            # lens columns: the output's most probable characters
ATTN_LAST = 40           # attention drawn over the last 40 characters read


@dataclass(frozen=True)
class InsideView:
    chars: tuple[str, ...]       # the last ATTN_LAST characters read, shown
    attention: np.ndarray        # (L, heads, <= ATTN_LAST) from the last position
    lens: np.ndarray             # (L + 1, LENS_TOP) probabilities of the output's top chars
    lens_labels: tuple[str, ...]
    output_gap: float            # max |lens_L - the model's next-token distribution|
    top_at_embedding: float      # the output's top character's probability at layer 0
    embedding_reads_last: float  # 1 if layer 0's top guess is the last character read
    notes: tuple[str, ...]


@st.cache_data(max_entries=32, show_spinner=False)
def _inside(prompt: str) -> InsideView:
    from engine.language_models.inside import inside
    from engine.language_models.vocab import shown
    p = prompt_of(prompt)
    model = shipped_model()
    r = inside(model, p.ids)
    top = np.argsort(-r.lens[-1], kind="stable")[:LENS_TOP]
    out = lmx.softmax(lmx.next_logits(model, p.ids))
    ids = r.ids[-ATTN_LAST:]
    return InsideView(tuple(shown(lmx.VOCAB[int(i)]) for i in ids),
                      r.attention[:, :, -len(ids):], r.lens[:, top],
                      tuple(shown(lmx.VOCAB[int(i)]) for i in top),
                      float(np.abs(r.lens[-1] - out).max()), float(r.lens[0, top[0]]),
                      float(int(r.lens[0].argmax()) == int(r.ids[-1])), p.notes)


def inside_of(s: Mapping[str, Any]) -> InsideView:
    return _inside(str(s["lm_prompt"]))


def inside_measure(name: str):
    def measure(s):
        return float(getattr(inside_of(s), name))
    return measure
