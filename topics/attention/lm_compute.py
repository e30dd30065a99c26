"""The Real model tab's computations of the settings dict s (topics/attention/page.py): the
packaged language model's maps of the typed sentence, the head-type scores on it and on the
built-in sentences, the head-masking effects, and the measurements the claims read (each
also shown on the tab). Pure functions of s: the page draws exactly what the claims measure."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from engine.attention import language_model

DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog."
SHOWN_TOKENS = 40                  # the views draw at most this many tokens (a projector's room)
VIEWS = ["head view", "model view"]
LAYERS, HEADS = 6, 12              # all-MiniLM-L6-v2 (the engine checks the loaded config)
SCORE_COLUMNS = ("previous", "next", "self", "sink", "broad")


@dataclass(frozen=True)
class Typed:
    """The typed text as the tab uses it: its maps (or None), what went wrong, what to say."""
    text: str
    maps: language_model.AttentionMaps | None
    problem: str | None = None        # shown as an error; the maps are then of DEFAULT_TEXT
    notes: tuple[str, ...] = ()       # shown as info (truncation, unknown tokens, ...)


def text_of(s: Mapping[str, Any]) -> str:
    return str(s.get("at_lm_text") or "").strip()


@functools.lru_cache(maxsize=32)
def _maps(text: str) -> language_model.AttentionMaps:
    return language_model.attention_maps(text, max_tokens=SHOWN_TOKENS)


def typed_of(s: Mapping[str, Any]) -> Typed:
    """The maps of the typed sentence (DEFAULT_TEXT when empty or unreadable), with the
    messages bad input gets: never an exception, except a missing model (language_model.WeightsMissing)."""
    text = text_of(s)
    problem = None
    if not text:
        problem, text = "the text box is empty: type a sentence", DEFAULT_TEXT
    try:
        maps = _maps(text)
    except language_model.TextProblem as exc:
        problem, text, maps = str(exc), DEFAULT_TEXT, _maps(DEFAULT_TEXT)
    notes = []
    if maps.truncated:
        notes.append(f"The text has {maps.n_tokens:,} tokens: the views show its first "
                     f"{SHOWN_TOKENS - 2} and [CLS]/[SEP] (the model reads up to "
                     f"{language_model.MAX_TOKENS}).")
    unknown = maps.tokens.count("[UNK]")
    if unknown:
        notes.append(f"{unknown} token(s) are unknown to the model's vocabulary ([UNK]: emoji "
                     "and rare symbols); their rows still sum to 1.")
    words = [t for t in maps.tokens[1:-1] if any(c.isalnum() for c in t)]
    if not words:
        notes.append("No words, only punctuation or symbols: the heads have no grammar to "
                     "follow here, so most weight goes to [CLS]/[SEP].")
    return Typed(text, maps, problem, tuple(notes))


def selected(s: Mapping[str, Any]) -> tuple[int, int]:
    """(layer, head), 0-based, of the enlarged head."""
    return int(s["at_lm_layer"]) - 1, int(s["at_lm_head"]) - 1


def labels(tokens: list[str]) -> list[str]:
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


# ----------------------------------------------------------------------------- head types
def typed_scores(s: Mapping[str, Any]) -> dict[str, np.ndarray]:
    return language_model.head_scores(typed_of(s).maps.weights)


@functools.cache
def builtin_scores() -> dict[str, np.ndarray]:
    """Head-type scores averaged over the engine's built-in sentences (language_model.SENTENCES)."""
    return language_model.mean_scores(language_model.SENTENCES)


def score_table(s: Mapping[str, Any]) -> pd.DataFrame:
    """One row per head: its type and scores on the built-in sentences and on the typed text,
    strongest positional heads first."""
    ours, ref = typed_scores(s), builtin_scores()
    rows = []
    for l in range(ref["previous"].shape[0]):
        for h in range(ref["previous"].shape[1]):
            row = {"head": f"L{l + 1} H{h + 1}", "type": language_model.head_type(ref, l, h)}
            row.update({k: round(float(ref[k][l, h]), 3) for k in SCORE_COLUMNS})
            row.update({f"{k} (typed)": round(float(ours[k][l, h]), 3) for k in SCORE_COLUMNS})
            rows.append(row)
    df = pd.DataFrame(rows)
    strongest = df[["previous", "next", "self", "sink"]].max(axis=1)
    return df.assign(_s=strongest).sort_values("_s", ascending=False).drop(columns="_s") \
             .reset_index(drop=True)


def best_head(kind: str) -> tuple[int, int, float]:
    """(layer, head, score), 1-based, of the head with the largest `kind` score on the
    built-in sentences."""
    v = builtin_scores()[kind]
    l, h = np.unravel_index(int(np.argmax(v)), v.shape)
    return int(l) + 1, int(h) + 1, float(v[l, h])


def type_counts() -> dict[str, int]:
    ref = builtin_scores()
    L, H = ref["previous"].shape
    kinds = [language_model.head_type(ref, l, h) for l in range(L) for h in range(H)]
    return {k: kinds.count(k) for k in ("previous", "next", "self", "sink", "broad", "mixed")}


def head_type_of(s: Mapping[str, Any]) -> str:
    """The enlarged head's type on the built-in sentences."""
    return language_model.head_type(builtin_scores(), *selected(s))


def toy_previous_token() -> float:
    """The shipped toy lookup transformer's layer-1 previous-token weight (its claim on the
    Trained transformer tab), for the comparison under the Real model tab."""
    from topics.attention.compute import EXAMPLES, SOURCES, lookup_heads
    return float(lookup_heads({"at_task": "lookup", "at_seq": EXAMPLES["lookup"],
                               "at_source": SOURCES[0]})[0])


def selected_score(s: Mapping[str, Any], kind: str, typed: bool = False) -> float:
    """The enlarged head's `kind` score (on the typed text, or on the built-in sentences)."""
    l, h = selected(s)
    return float((typed_scores(s) if typed else builtin_scores())[kind][l, h])


def worst_sentence_score(s: Mapping[str, Any], kind: str) -> float:
    """The enlarged head's lowest `kind` score over the built-in sentences."""
    l, h = selected(s)
    return min(float(language_model.head_scores(_maps(t).weights)[kind][l, h]) for t in language_model.SENTENCES)


# ----------------------------------------------------------------------------- masking
@functools.lru_cache(maxsize=16)
def _effects(text: str) -> np.ndarray:
    return language_model.masking_effects(text, max_tokens=SHOWN_TOKENS)


def masking_of(s: Mapping[str, Any]) -> np.ndarray:
    """1 − cos(sentence embedding, embedding with one head masked), (layers, heads)."""
    return _effects(typed_of(s).text)


def top_masked(s: Mapping[str, Any], k: int = 3) -> list[tuple[int, int, float]]:
    e = masking_of(s)
    order = np.argsort(e.ravel())[::-1][:k]
    return [(int(o // e.shape[1]) + 1, int(o % e.shape[1]) + 1, float(e.ravel()[o]))
            for o in order]


def masked_selected(s: Mapping[str, Any]) -> float:
    l, h = selected(s)
    return float(masking_of(s)[l, h])
