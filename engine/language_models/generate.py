"""Reading a GPT (or a CharRNN, the same interface): the next-token logits after a prompt, and a sampled continuation.

A prompt longer than the context keeps its last `context` characters; an empty prompt reads
the start symbol (a newline). Sampling draws u ~ U[0, 1) from numpy's PCG64 seeded by `seed`
and picks the token by inverse CDF of the shaped distribution (sampling.shape), so the same
seed and settings give the same text, and T = 0 (or top-k = 1) is greedy decoding."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.language_models.gpt import GPT
from engine.language_models.rnn import CharRNN
from engine.language_models.sampling import draw, shape
from engine.language_models.vocab import START, decode


def context_ids(model: GPT | CharRNN, ids: np.ndarray) -> np.ndarray:
    """The ids the model reads: the last `context` ones, or the start symbol if none."""
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) == 0:
        return np.array([START], dtype=np.int64)
    return ids[-model.cfg.context:]


@torch.no_grad()
def next_logits(model: GPT | CharRNN, ids: np.ndarray) -> np.ndarray:
    """(V,) float64 logits of the token after ids (the last position's output)."""
    x = torch.as_tensor(context_ids(model, ids))[None]                  # (1, t)
    return model(x)[0, -1].double().numpy()


@dataclass(frozen=True)
class Generated:
    ids: np.ndarray          # (n,) the generated token ids
    probs: np.ndarray        # (n,) each one's probability under the shaped distribution
    text: str


@torch.no_grad()
def generate(model: GPT | CharRNN, ids: np.ndarray, n: int, temperature: float, top_k: int = 0,
             top_p: float = 1.0, seed: int = 0) -> Generated:
    """n tokens after ids, each drawn from shape(logits, T, k, p) with seeded uniforms."""
    rng = np.random.default_rng(int(seed))
    seq = list(np.asarray(ids, dtype=np.int64))
    out, probs = [], []
    for _ in range(max(int(n), 0)):
        q = shape(next_logits(model, np.asarray(seq)), temperature, top_k, top_p).final
        tok = draw(q, float(rng.random()))
        out.append(tok)
        probs.append(q[tok])
        seq.append(tok)
    arr = np.asarray(out, dtype=np.int64)
    return Generated(arr, np.asarray(probs, dtype=np.float64), decode(arr))


def repeated_tail(text: str, min_len: int = 4, min_repeats: int = 3) -> str | None:
    """The shortest string of at least min_len characters that the end of `text` repeats
    min_repeats times in a row (a greedy decoding loop), or None."""
    for size in range(min_len, len(text) // min_repeats + 1):
        unit = text[-size:]
        if text.endswith(unit * min_repeats):
            k = unit.find(" ")
            return unit[k:] + unit[:k] if k > 0 else unit     # shown from a word's start
    return None
