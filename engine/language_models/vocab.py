"""The character vocabulary every model of the page shares: newline, the 95 printable ASCII
characters and one unknown symbol. Typographic quotes and dashes are folded to ASCII first;
any other character maps to UNK (counted, so the page can say so once)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UNK_CHAR = "\u00bf"                     # how the unknown symbol is drawn: ¿
CHARS = "\n" + "".join(chr(c) for c in range(32, 127))
VOCAB = tuple(CHARS) + (UNK_CHAR,)       # index -> character
V = len(VOCAB)                           # 97
UNK = V - 1
START = 0                                # an empty prompt starts after a newline
INDEX = {c: i for i, c in enumerate(CHARS)}
FOLD = str.maketrans({"\t": "    ", "\r": "", "\u2018": "'", "\u2019": "'", "\u201c": '"',
                      "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u2026": "...",
                      "\u00a0": " "})


@dataclass(frozen=True)
class Encoded:
    ids: np.ndarray          # (n,) int64 token ids in [0, V)
    unknown: int             # how many characters mapped to UNK
    unknown_chars: str       # the distinct ones, in order of first appearance (at most 20)


def fold(text: str) -> str:
    """Typographic punctuation and tabs to ASCII; carriage returns dropped."""
    return text.translate(FOLD)


def encode(text: str) -> Encoded:
    """Characters -> ids, with UNK for characters outside the vocabulary."""
    folded = fold(text)
    ids = np.fromiter((INDEX.get(c, UNK) for c in folded), dtype=np.int64, count=len(folded))
    odd = "".join(dict.fromkeys(c for c in folded if c not in INDEX))
    return Encoded(ids, int((ids == UNK).sum()), odd[:20])


def decode(ids) -> str:
    return "".join(VOCAB[int(i)] for i in ids)


def shown(char: str) -> str:
    """A character as a bar label: newline and space made visible."""
    return {"\n": "\u21b5", " ": "\u2423"}.get(char, char)
