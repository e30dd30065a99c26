"""BERT's uncased WordPiece tokenizer over a vocabulary file (one token a line, the line
number is its id), as all-MiniLM-L6-v2's tokenizer.json describes it: no library.

A text becomes ids in four steps:

    1. special tokens typed as text ("[CLS]", "[SEP]", ...) are cut out and kept as they are;
    2. normalize: drop NUL, U+FFFD and control/format characters (Unicode category C*, but
       tab, newline and return are whitespace), turn whitespace into " ", put spaces around
       CJK ideographs, strip accents (NFD, then drop the nonspacing marks Mn), lowercase each character;
    3. pre-tokenize: split on whitespace, and make every punctuation character (ASCII
       punctuation, or Unicode category P*) a word of its own;
    4. WordPiece: each word, longest vocabulary prefix first, then "##"-prefixed pieces of
       the rest; a word with a part that no piece matches, or over 100 characters, is [UNK].

`encode` adds [CLS] ... [SEP] and cuts the pieces to max_length (the special tokens counted).
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
CONTINUE = "##"
MAX_WORD_CHARS = 100
# CJK Unified Ideographs and their extensions, and the compatibility ideographs
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL) + ")")


def _is_whitespace(c: str) -> bool:
    return c in " \t\n\r" or c.isspace() or unicodedata.category(c) == "Zs"


def _is_control(c: str) -> bool:
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def _is_cjk(c: str) -> bool:
    cp = ord(c)
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _is_punctuation(c: str) -> bool:
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def normalize(text: str) -> str:
    """Step 2: cleaned, CJK ideographs spaced, accents stripped, lowercased."""
    out = []
    for c in text:
        if c in ("\x00", "\ufffd") or _is_control(c):
            continue
        if _is_whitespace(c):
            out.append(" ")
        elif _is_cjk(c):
            out.append(f" {c} ")
        else:
            out.append(c)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    # character by character: no context rule (a final capital sigma lowercases to σ, not ς)
    return "".join(c.lower() for c in decomposed if unicodedata.category(c) != "Mn")


def pre_tokenize(text: str) -> list[str]:
    """Step 3: the words of normalized text (punctuation characters are words)."""
    words: list[str] = []
    current: list[str] = []
    for c in text:
        if _is_whitespace(c) or _is_punctuation(c):
            if current:
                words.append("".join(current))
                current = []
            if not _is_whitespace(c):
                words.append(c)
        else:
            current.append(c)
    if current:
        words.append("".join(current))
    return words


class WordPiece:
    """The tokenizer of one vocabulary (ids are line numbers of the vocabulary file)."""

    def __init__(self, vocab: list[str]):
        self.vocab = {token: i for i, token in enumerate(vocab)}
        self.tokens = list(vocab)
        missing = [s for s in SPECIAL if s not in self.vocab]
        if missing:
            raise ValueError(f"the vocabulary lacks {', '.join(missing)}")
        self.unk, self.cls, self.sep = (self.vocab[s] for s in ("[UNK]", "[CLS]", "[SEP]"))

    @classmethod
    def from_file(cls, path: Path) -> WordPiece:
        return cls(path.read_text(encoding="utf-8").splitlines())

    def word_ids(self, word: str) -> list[int]:
        """Step 4 for one word: longest-match-first pieces, or [UNK]."""
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else CONTINUE + word[start:end]
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [self.unk]
            start = end
        return ids

    def text_ids(self, text: str) -> list[int]:
        """The ids of `text`, without [CLS]/[SEP] (steps 1-4)."""
        ids: list[int] = []
        for part in _SPECIAL_SPLIT.split(text):
            if part in self.vocab and part in SPECIAL:
                ids.append(self.vocab[part])
            elif part:
                for word in pre_tokenize(normalize(part)):
                    ids.extend(self.word_ids(word))
        return ids

    def encode(self, text: str, max_length: int | None = None) -> list[int]:
        """[CLS] + the ids of `text` + [SEP], the text's ids cut to max_length - 2."""
        ids = self.text_ids(text)
        if max_length is not None:
            ids = ids[:max(max_length - 2, 0)]
        return [self.cls, *ids, self.sep]

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [self.tokens[i] for i in ids]
