"""Texts and the baselines a language model is compared with.

The shipped corpus is Python's own reference text, the standard library's
`pydoc_data.topics` (the help() topics of the language reference; Python Software Foundation
licence), its topics joined in sorted order. Held-out text is the last `held_share` of a text.

Baselines, in nats per character on held-out ids y_1..y_n given training ids x:

    unigram  H = -1/n sum_t log p(y_t),            p(c) = (count(c) + 1) / (N + V)
    bigram   H = -1/n sum_t log p(y_t | y_{t-1}),  p(c | b) = (count(b c) + 1) / (count(b) + V)

(add-one smoothing, so an unseen character costs a finite amount)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.language_models.vocab import V, encode

HELD_SHARE = 0.1


def shipped_text() -> str:
    """The standard library's pydoc topics, joined in sorted order of their names."""
    from pydoc_data.topics import topics
    return "\n".join(topics[k].strip("\n") + "\n" for k in sorted(topics))


@dataclass(frozen=True)
class Split:
    train: np.ndarray        # (n_train,) int64 ids
    held: np.ndarray         # (n_held,) int64 ids
    unknown: int             # characters of the text mapped to UNK
    unknown_chars: str


def split_text(text: str, held_share: float = HELD_SHARE) -> Split:
    """The text's ids, the first 1 - held_share for training, the rest held out."""
    enc = encode(text)
    cut = int(round(len(enc.ids) * (1 - held_share)))
    return Split(enc.ids[:cut], enc.ids[cut:], enc.unknown, enc.unknown_chars)


def unigram_ce(train: np.ndarray, held: np.ndarray) -> float:
    """Cross-entropy (nats/char) of add-one smoothed character frequencies on `held`."""
    counts = np.bincount(train, minlength=V).astype(np.float64) + 1.0     # (V,)
    logp = np.log(counts / counts.sum())
    return float(-logp[held].mean())


def bigram_ce(train: np.ndarray, held: np.ndarray) -> float:
    """Cross-entropy (nats/char) of add-one smoothed p(c | previous c) on held[1:]."""
    pairs = np.zeros((V, V), dtype=np.float64)                             # (prev, next)
    np.add.at(pairs, (train[:-1], train[1:]), 1.0)
    pairs += 1.0
    logp = np.log(pairs / pairs.sum(1, keepdims=True))
    return float(-logp[held[:-1], held[1:]].mean())
