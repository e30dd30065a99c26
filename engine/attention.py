"""Attention: scaled dot-product attention, masks, sinusoidal positions, and a tiny
transformer trained on toy tasks whose correct attention pattern is known.

Symbols used in the code (one head):

    scores  = q k^T                                  (.., T_q, T_k)
    logits  = scores / (sqrt(d_k) * temperature) + mask     (scale=True)
            = scores / temperature + mask                   (scale=False)
    weights = softmax(logits, over the keys: last axis)     rows sum to 1
    out     = weights v                              (.., T_q, d_v)

Masks are additive: 0 where a query may look, -inf where it may not (weight exactly 0).
Self-attention without positions is permutation-equivariant: attention(P x) = P attention(x).
Pure torch/numpy: no Streamlit, no plotting.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from engine import weights
from engine.device import make_generator, resolve_device, to_numpy
from engine.training import History

NEG_INF = float("-inf")


# --------------------------------------------------------------------------------------
# Scaled dot-product attention
# --------------------------------------------------------------------------------------

def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              mask: torch.Tensor | None = None, scale: bool = True,
              temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, weights) with weights = softmax(q k^T / (sqrt(d_k) * temperature) + mask)
    over the keys (last axis) and out = weights v. Batched over leading dims.

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v); mask: additive, broadcastable
    to (..., T_q, T_k) (0 keeps, -inf removes; a bool mask is True = keep). With scale=True
    and temperature=1 this equals torch.nn.functional.scaled_dot_product_attention.
    A query row whose keys are all masked gets all-zero weights (not NaN).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1)
    divisor = (math.sqrt(d_k) if scale else 1.0) * float(temperature)
    logits = scores / divisor
    if mask is not None:
        mask = mask.to(logits.device)
        if mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=logits.dtype, device=logits.device) \
                .masked_fill(~mask, NEG_INF)
        logits = logits + mask.to(logits.dtype)
    weights = torch.softmax(logits, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # fully masked rows -> zeros
    return weights @ v, weights


# --------------------------------------------------------------------------------------
# Masks (additive: 0 / -inf), Sparse-Transformer patterns are causal
# --------------------------------------------------------------------------------------

def _additive(allowed: torch.Tensor) -> torch.Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, NEG_INF)


def _offsets(n: int) -> torch.Tensor:
    """offset[i, j] = i - j (query i, key j)."""
    idx = torch.arange(int(n))
    return idx[:, None] - idx[None, :]


def full_mask(n: int, param: int | None = None) -> torch.Tensor:
    """No restriction: every query sees every key (n^2 entries)."""
    return torch.zeros(int(n), int(n))


def causal_mask(n: int, param: int | None = None) -> torch.Tensor:
    """Key j allowed for query i iff j <= i (n(n+1)/2 entries)."""
    return _additive(_offsets(n) >= 0)


def local_mask(n: int, window: int) -> torch.Tensor:
    """Causal sliding window: key j allowed iff 0 <= i - j < window."""
    d = _offsets(n)
    return _additive((d >= 0) & (d < max(1, int(window))))


def strided_mask(n: int, stride: int) -> torch.Tensor:
    """Causal strided pattern (Sparse Transformer): key j allowed iff j <= i and
    (i - j) mod stride == 0."""
    d = _offsets(n)
    return _additive((d >= 0) & (d % max(1, int(stride)) == 0))


def sparse_mask(n: int, stride: int) -> torch.Tensor:
    """Sparse Transformer's factorised pattern: local window `stride` OR strided `stride`
    (two heads together cover every earlier position in two hops); O(n sqrt n) with
    stride ~ sqrt(n)."""
    allowed = torch.isfinite(local_mask(n, stride)) | torch.isfinite(strided_mask(n, stride))
    return _additive(allowed)


MASKS: dict[str, Callable[[int, int], torch.Tensor]] = {
    "full": full_mask, "causal": causal_mask, "local": local_mask, "strided": strided_mask,
    "local + strided": sparse_mask,
}


def default_window(n: int) -> int:
    """sqrt(n) rounded up: the window/stride that makes the sparse patterns O(n sqrt n)."""
    return max(1, math.ceil(math.sqrt(int(n))))


def mask_nonzeros(name: str, ns, param: int | None = None) -> np.ndarray:
    """Number of allowed (query, key) pairs of MASKS[name] for each n in ns; param None ->
    default_window(n)."""
    fn = MASKS[name]
    return np.array([int(torch.isfinite(fn(int(n), param or default_window(int(n)))).sum())
                     for n in ns], dtype=np.int64)


# --------------------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------------------

def sinusoidal_encoding(n_positions: int, d_model: int) -> torch.Tensor:
    """PE (n_positions, d_model): PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))."""
    pos = torch.arange(int(n_positions), dtype=torch.float64)[:, None]
    two_i = torch.arange(0, int(d_model), 2, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, two_i / int(d_model))
    pe = torch.zeros(int(n_positions), int(d_model), dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : int(d_model) // 2])
    return pe.float()


def position_similarity(pe: torch.Tensor) -> torch.Tensor:
    """S = PE PE^T: S[p, q] = sum_i cos((p - q) w_i) for even d (depends only on p - q)."""
    return pe @ pe.T


# --------------------------------------------------------------------------------------
# Why scale: softmax entropy vs d_k
# --------------------------------------------------------------------------------------

def softmax_entropy(weights: torch.Tensor) -> torch.Tensor:
    """H = -sum_j w_j log w_j per row (0 log 0 = 0), in nats."""
    return -(torch.special.xlogy(weights, weights)).sum(-1)


def softmax_entropy_vs_dim(dims, scale: bool = True, seed: int = 0, n_keys: int = 16,
                           n_rows: int = 2048, device: str | torch.device | None = "cpu"
                           ) -> np.ndarray:
    """Mean entropy (nats) of attention rows softmax(q k^T / s) for q, k ~ N(0, I_{d_k})
    (unit variance per component), n_keys keys per row, for each d_k in dims;
    s = sqrt(d_k) if scale else 1. Unscaled scores have variance d_k, so the softmax
    saturates and the entropy falls towards 0; scaled scores have variance 1 and the
    entropy stays flat (below the maximum log n_keys)."""
    dev = resolve_device(device)
    g = make_generator(seed, dev)
    out = []
    for d in dims:
        d = int(d)
        q = torch.randn(n_rows, 1, d, generator=g, device=dev)
        k = torch.randn(n_rows, n_keys, d, generator=g, device=dev)
        _, w = attention(q, k, k, scale=scale)
        out.append(float(softmax_entropy(w).mean()))
    return np.asarray(out)


# --------------------------------------------------------------------------------------
# Mechanics: a few tokens through one head, step by step
# --------------------------------------------------------------------------------------

WORDS = ("the", "cat", "sat", "on", "a", "warm", "mat", "today", "and", "slept",
         "very", "well")


@dataclass(frozen=True)
class Mechanics:
    tokens: list[str]      # (n,) labels in the order fed in
    x: np.ndarray          # (n, d_model) input embeddings (+ positions if added)
    q: np.ndarray          # (n, d_k)  q = x W_q
    k: np.ndarray          # (n, d_k)  k = x W_k
    v: np.ndarray          # (n, d_k)  v = x W_v
    scores: np.ndarray     # (n, n)    q k^T
    logits: np.ndarray     # (n, n)    scores / (sqrt(d_k) T) + mask  (-inf masked)
    weights: np.ndarray    # (n, n)    softmax over keys
    out: np.ndarray        # (n, d_k)  weights v
    divisor: float         # sqrt(d_k) * T, or T when not scaled

    @property
    def mean_entropy(self) -> float:
        """Mean over query rows of H = -sum_j w_j log w_j (nats)."""
        return float(softmax_entropy(torch.as_tensor(self.weights)).mean())


def token_embeddings(n_tokens: int, d_model: int, seed: int = 0) -> torch.Tensor:
    """x (n_tokens, d_model) ~ N(0, 1), seeded."""
    g = make_generator(seed, "cpu")
    return torch.randn(int(n_tokens), int(d_model), generator=g)


def projections(d_model: int, d_k: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """W_q, W_k, W_v (d_model, d_k) ~ N(0, 1/d_model) so q, k, v have unit variance."""
    g = make_generator(int(seed) + 1, "cpu")
    return tuple(torch.randn(int(d_model), int(d_k), generator=g) / math.sqrt(d_model)
                 for _ in range(3))


def mechanics(n_tokens: int = 5, d_model: int = 8, d_k: int = 4, temperature: float = 1.0,
              scale: bool = True, causal: bool = False, seed: int = 0,
              perm: list[int] | None = None, positions: bool = False) -> Mechanics:
    """One head on seeded random tokens: x (optionally reordered by perm, then optionally
    + sinusoidal PE of the new positions), q = x W_q, k = x W_k, v = x W_v,
    (out, weights) = attention(q, k, v, causal mask?, scale, temperature)."""
    x = token_embeddings(n_tokens, d_model, seed)
    labels = [WORDS[i % len(WORDS)] for i in range(int(n_tokens))]
    if perm is not None:
        order = torch.as_tensor(list(perm), dtype=torch.long)
        x, labels = x[order], [labels[i] for i in perm]
    if positions:
        x = x + sinusoidal_encoding(n_tokens, d_model)
    wq, wk, wv = projections(d_model, d_k, seed)
    q, k, v = x @ wq, x @ wk, x @ wv
    mask = causal_mask(n_tokens) if causal else None
    out, w = attention(q, k, v, mask=mask, scale=scale, temperature=temperature)
    divisor = (math.sqrt(d_k) if scale else 1.0) * float(temperature)
    scores = q @ k.T
    logits = scores / divisor + (mask if mask is not None else 0.0)
    return Mechanics(labels, to_numpy(x), to_numpy(q), to_numpy(k), to_numpy(v),
                     to_numpy(scores), to_numpy(logits), to_numpy(w), to_numpy(out), divisor)


def permutation_error(n_tokens: int, d_model: int, d_k: int, perm: list[int], seed: int = 0,
                      positions: bool = False, causal: bool = False,
                      temperature: float = 1.0, scale: bool = True) -> float:
    """max |out(P x) - P out(x)|: ~1e-7 without positions (equivariance), large with."""
    kw = dict(n_tokens=n_tokens, d_model=d_model, d_k=d_k, seed=seed, positions=positions,
              causal=causal, temperature=temperature, scale=scale)
    base = mechanics(**kw)
    permuted = mechanics(perm=perm, **kw)
    return float(np.abs(permuted.out - base.out[list(perm)]).max())


def seeded_permutation(n: int, seed: int) -> list[int]:
    """A permutation of range(n) that is not the identity (for n >= 2), seeded."""
    rng = np.random.default_rng(int(seed))
    for _ in range(100):
        p = rng.permutation(int(n)).tolist()
        if n < 2 or p != list(range(n)):
            return p
    return list(range(1, n)) + [0]


# --------------------------------------------------------------------------------------
# Toy tasks: prompt (P tokens) -> answer (A tokens). Digits 0..9, SEP = 10.
# --------------------------------------------------------------------------------------

N_DIGITS = 10
SEP = N_DIGITS
VOCAB = N_DIGITS + 1
TOKEN_NAMES = [str(i) for i in range(N_DIGITS)] + ["|"]
SEQ_LEN = 8          # digits per reverse/sort/copy input
N_PAIRS = 4          # key-value pairs in lookup


@dataclass(frozen=True)
class Task:
    name: str
    description: str
    input_len: int                          # digits the user types
    answer_len: int
    solve: Callable[[np.ndarray], np.ndarray]           # inputs (B, input_len) -> (B, A)
    sample: Callable[[int, torch.Generator], torch.Tensor]  # (B, input_len) digits
    check_input: Callable[[list[int]], str | None] = lambda xs: None
    # inputs (B, input_len) -> (B, A): the input position whose digit answer token j copies;
    # None where no single position is defined (sort: equal digits tie)
    source: Callable[[np.ndarray], np.ndarray] | None = None
    pattern: str = ""                       # the attention pattern that solves the task

    @property
    def prompt_len(self) -> int:
        return self.input_len + 1

    @property
    def seq_len(self) -> int:
        """Tokens fed to the model: prompt + answer minus the last answer token."""
        return self.prompt_len + self.answer_len - 1


def _uniform_digits(length: int):
    def sample(b: int, g: torch.Generator) -> torch.Tensor:
        return torch.randint(0, N_DIGITS, (b, length), generator=g, device=g.device)
    return sample


def _lookup_sample(b: int, g: torch.Generator) -> torch.Tensor:
    """k0 v0 k1 v1 .. k3 v3 q with distinct keys and q one of them."""
    keys = torch.argsort(torch.rand(b, N_DIGITS, generator=g, device=g.device), dim=1)[:, :N_PAIRS]
    vals = torch.randint(0, N_DIGITS, (b, N_PAIRS), generator=g, device=g.device)
    pick = torch.randint(0, N_PAIRS, (b, 1), generator=g, device=g.device)
    pairs = torch.stack([keys, vals], dim=2).reshape(b, 2 * N_PAIRS)
    return torch.cat([pairs, keys.gather(1, pick)], dim=1)


def _lookup_match(x: np.ndarray) -> np.ndarray:
    """(B,) index i of the pair whose key x[2i] equals the query x[-1]."""
    x = np.asarray(x)
    return np.argmax(x[:, 0:2 * N_PAIRS:2] == x[:, -1:], axis=1)


def _lookup_solve(x: np.ndarray) -> np.ndarray:
    """(B, 2): the matching pair, query key then its value."""
    x = np.asarray(x)
    return np.stack([x[:, -1], x[np.arange(len(x)), 2 * _lookup_match(x) + 1]], axis=1)


def _lookup_sources(x: np.ndarray) -> np.ndarray:
    """(B, 2): the query position (the key is echoed), then the matching value's position."""
    x = np.asarray(x)
    return np.stack([np.full(len(x), x.shape[1] - 1), 2 * _lookup_match(x) + 1], axis=1)


def _lookup_check(xs: list[int]) -> str | None:
    keys = xs[0:2 * N_PAIRS:2]
    if len(set(keys)) != N_PAIRS:
        return "the keys (1st, 3rd, 5th, 7th digit) must be distinct"
    if xs[-1] not in keys:
        return "the last digit (the query) must be one of the keys"
    return None


def _fixed_sources(order: np.ndarray):
    """source(x) = order for every row: answer j copies input position order[j]."""
    return lambda x: np.broadcast_to(order, (len(x), len(order))).copy()


TASKS: dict[str, Task] = {
    "reverse": Task("reverse", "Output the 8 digits in reverse order.", SEQ_LEN, SEQ_LEN,
                    lambda x: np.asarray(x)[:, ::-1].copy(), _uniform_digits(SEQ_LEN),
                    source=_fixed_sources(np.arange(SEQ_LEN)[::-1]),
                    pattern="answer j copies input 7 − j: an anti-diagonal below the line"),
    "sort": Task("sort", "Output the 8 digits sorted ascending.", SEQ_LEN, SEQ_LEN,
                 lambda x: np.sort(np.asarray(x), axis=1), _uniform_digits(SEQ_LEN),
                 pattern="each answer row attends where the next-larger (or equal) digit "
                         "sits in the input"),
    "copy": Task("copy", "Output the 8 digits unchanged.", SEQ_LEN, SEQ_LEN,
                 lambda x: np.asarray(x).copy(), _uniform_digits(SEQ_LEN),
                 source=_fixed_sources(np.arange(SEQ_LEN)),
                 pattern="answer j copies input j: a diagonal line 8 places left of the "
                         "main diagonal"),
    # the answer echoes the query key first: the separator row learns to read the previous
    # token, which gives the previous-token head the value rows need a direct training signal
    # (with the value alone, 2-3 layer models stayed at ~37% accuracy for 1,500-10,500 steps)
    "lookup": Task("lookup", "Input: 4 key-value pairs then a query key; output the matching "
                   "pair: the key, then its value.", 2 * N_PAIRS + 1, 2, _lookup_solve,
                   _lookup_sample, _lookup_check, source=_lookup_sources,
                   pattern="layer 1: every value attends to its key just before it (a "
                           "previous-token head); layer 2: the row holding the echoed key "
                           "attends to the value whose key matches it (an induction head)"),
}
MAX_SEQ_LEN = max(t.seq_len for t in TASKS.values())


def parse_sequence(text: str, task: Task) -> list[int]:
    """Digits from user text ("3 1 4 1 5 9 2 6", "31415926" or "3,1,4,...").
    Raises ValueError with a message naming what is wrong."""
    cleaned = text.replace(",", " ").split()
    if len(cleaned) == 1 and len(cleaned[0]) > 1:
        cleaned = list(cleaned[0])
    bad = [c for c in cleaned if not (c.isdigit() and len(c) == 1)]
    if bad:
        raise ValueError(f"tokens outside the vocabulary (digits 0-9): {', '.join(bad[:5])}")
    if len(cleaned) != task.input_len:
        raise ValueError(f"the {task.name} task needs exactly {task.input_len} digits, "
                         f"got {len(cleaned)}")
    xs = [int(c) for c in cleaned]
    msg = task.check_input(xs)
    if msg:
        raise ValueError(msg)
    return xs


def make_batch(task: Task, batch: int, g: torch.Generator
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(inputs (B, seq_len), targets (B, seq_len), loss mask (B, seq_len) bool).
    Full sequence s = [x, SEP, y]; inputs = s[:-1], targets = s[1:]; the loss counts only
    the positions whose target is an answer token."""
    x = task.sample(batch, g)
    y = torch.as_tensor(task.solve(to_numpy(x)), device=x.device, dtype=torch.long)
    sep = torch.full((batch, 1), SEP, dtype=torch.long, device=x.device)
    s = torch.cat([x, sep, y], dim=1)
    mask = torch.zeros(s.shape[1] - 1, dtype=torch.bool, device=x.device)
    mask[task.prompt_len - 1:] = True
    return s[:, :-1], s[:, 1:], mask.expand(batch, -1)


# --------------------------------------------------------------------------------------
# The tiny transformer (decoder-only, pre-LayerNorm, learned positions)
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelConfig:
    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 64
    vocab: int = VOCAB
    max_len: int = MAX_SEQ_LEN

    def __post_init__(self):
        if not 1 <= self.n_layers <= 3:
            raise ValueError("n_layers must be 1-3")
        if not 1 <= self.n_heads <= 4:
            raise ValueError("n_heads must be 1-4")
        if not 32 <= self.d_model <= 128 or self.d_model % self.n_heads:
            raise ValueError("d_model must be 32-128 and divisible by n_heads")


class Block(nn.Module):
    """x <- x + W_o concat_h attention(LN(x) W_q^h, LN(x) W_k^h, LN(x) W_v^h, causal);
    x <- x + MLP(LN(x))."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, d = x.shape
        qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, self.n_heads, d // self.n_heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)             # each (B, H, T, d_head)
        out, w = attention(q, k, v, mask=mask)
        x = x + self.proj(out.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x)), w


class TinyTransformer(nn.Module):
    """Token + learned position embeddings, n_layers pre-LN blocks with causal
    multi-head attention, final LayerNorm, linear head to the vocabulary."""

    def __init__(self, config: ModelConfig = ModelConfig()):
        super().__init__()
        self.config = config
        self.tok = nn.Embedding(config.vocab, config.d_model)
        self.pos = nn.Embedding(config.max_len, config.d_model)
        self.blocks = nn.ModuleList(Block(config.d_model, config.n_heads)
                                    for _ in range(config.n_layers))
        self.ln = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab)
        self.register_buffer("mask", causal_mask(config.max_len), persistent=False)

    def forward(self, tokens: torch.Tensor, return_attention: bool = True):
        """tokens (B, T) -> logits (B, T, vocab), and attention (B, layers, heads, T, T)
        when return_attention (else None)."""
        t = tokens.shape[1]
        x = self.tok(tokens) + self.pos(torch.arange(t, device=tokens.device))
        mask = self.mask[:t, :t]
        maps = []
        for block in self.blocks:
            x, w = block(x, mask)
            maps.append(w)
        logits = self.head(self.ln(x))
        return logits, (torch.stack(maps, dim=1) if return_attention else None)


def init_model(config: ModelConfig, seed: int = 0,
               device: str | torch.device | None = "cpu") -> TinyTransformer:
    """A seeded model: torch's default init under a fork of the global RNG seeded with seed."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = TinyTransformer(config)
    return model.to(resolve_device(device))


@dataclass(frozen=True)
class Prediction:
    labels: list[str]          # (T,) the tokens fed to the model (prompt + answer[:-1])
    inputs: np.ndarray         # (input_len,) the digits given
    predicted: np.ndarray      # (A,) greedy answer
    correct: np.ndarray        # (A,) the right answer
    attention: np.ndarray      # (layers, heads, T, T) on prompt + predicted[:-1]

    @property
    def is_correct(self) -> np.ndarray:
        return self.predicted == self.correct


@torch.no_grad()
def greedy_answer(model: TinyTransformer, task: Task, inputs: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy decoding of answer_len tokens after prompt = [inputs, SEP].
    Returns (answers (B, A), attention (B, L, H, T, T) of the last pass)."""
    model.eval()
    sep = torch.full((inputs.shape[0], 1), SEP, dtype=torch.long, device=inputs.device)
    seq = torch.cat([inputs, sep], dim=1)
    maps = None
    for i in range(task.answer_len):
        logits, maps = model(seq, return_attention=True)
        nxt = logits[:, -1, :N_DIGITS].argmax(-1, keepdim=True)
        if i < task.answer_len - 1:
            seq = torch.cat([seq, nxt], dim=1)
        else:
            last = nxt
    answers = torch.cat([seq[:, task.prompt_len:], last], dim=1)
    return answers, maps


def predict(model: TinyTransformer, task: Task, digits: list[int]) -> Prediction:
    """The model's greedy answer for one input and its attention maps (L, H, T, T)."""
    dev = next(model.parameters()).device
    x = torch.as_tensor([digits], dtype=torch.long, device=dev)
    answer, maps = greedy_answer(model, task, x)
    fed = list(digits) + [SEP] + to_numpy(answer[0]).tolist()[:-1]
    return Prediction([TOKEN_NAMES[t] for t in fed], np.asarray(digits),
                      to_numpy(answer[0]), task.solve(np.asarray([digits]))[0],
                      to_numpy(maps[0]))


@torch.no_grad()
def evaluate(model: TinyTransformer, task: Task, n: int = 512, seed: int = 12345
             ) -> dict[str, float]:
    """Greedy decoding on n fresh random inputs: token accuracy and whole-sequence accuracy."""
    dev = next(model.parameters()).device
    x = task.sample(n, make_generator(seed, dev))
    answers, _ = greedy_answer(model, task, x)
    right = to_numpy(answers) == task.solve(to_numpy(x))
    return {"token_accuracy": float(right.mean()), "sequence_accuracy": float(right.all(1).mean())}


def answer_rows(task: Task) -> np.ndarray:
    """(A,) query positions that produce the answer: row prompt_len-1+j predicts answer j."""
    return task.prompt_len - 1 + np.arange(task.answer_len)


def position_mass(maps: np.ndarray, positions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """mean over j of maps[..., rows[j], positions[..., j]] per (layer, head): the weight
    query row rows[j] puts on key positions[..., j].
    maps (..., L, H, T, T), positions (..., J) int, rows (J,) -> (..., L, H)."""
    maps, rows = np.asarray(maps), np.asarray(rows)
    positions = np.broadcast_to(positions, maps.shape[:-4] + rows.shape)
    w = maps[..., rows, :]                                      # (..., L, H, J, T)
    idx = positions[..., None, None, :, None]                   # (..., 1, 1, J, 1)
    return np.take_along_axis(w, idx, axis=-1)[..., 0].mean(-1)


def anti_diagonal_mass(maps: np.ndarray, task: Task) -> np.ndarray:
    """For reverse: mean weight that answer query p = prompt_len-1+j puts on key
    input_len-1-j (the digit it must copy), per (layer, head). maps (..., L, H, T, T)."""
    return position_mass(maps, task.input_len - 1 - np.arange(task.answer_len),
                         answer_rows(task))


def expected_source_mass(maps: np.ndarray, inputs: np.ndarray, task: Task) -> np.ndarray:
    """Mean weight the answer rows put on the input position each answer token copies
    (task.source: copy j -> j, reverse j -> 7-j, lookup -> the matching value), per
    (layer, head). maps (..., L, H, T, T), inputs (..., input_len) -> (..., L, H)."""
    if task.source is None:
        raise ValueError(f"the {task.name} task has no single source position per token")
    x = np.asarray(inputs)
    src = task.source(x.reshape(-1, task.input_len)).reshape(x.shape[:-1] + (task.answer_len,))
    return position_mass(maps, src, answer_rows(task))


def source_mass(maps: np.ndarray, inputs: np.ndarray, correct: np.ndarray, task: Task
                ) -> np.ndarray:
    """Mean weight that answer query p = prompt_len-1+j puts on the input positions holding
    the digit it must write (correct[j]), per (layer, head): the "copy source" of each
    answer token. Reverse: the mirror position; sort: where the next-larger digit sits.
    maps (..., L, H, T, T), inputs (..., input_len), correct (..., A) -> (..., L, H)."""
    rows = task.prompt_len - 1 + np.arange(task.answer_len)
    w = np.asarray(maps)[..., rows, :task.input_len]            # (..., L, H, A, in)
    hit = np.asarray(inputs)[..., None, :] == np.asarray(correct)[..., :, None]  # (..., A, in)
    return (w * hit[..., None, None, :, :]).sum(-1).mean(-1)


# --------------------------------------------------------------------------------------
# Trainer (engine/training.py protocol)
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TransformerSnapshot:
    step: int
    loss: float
    accuracy: float          # teacher-forced answer-token accuracy on the last batch
    diverged_at: int | None


class TransformerTrainer:
    """AdamW on the answer-token cross-entropy
    loss = mean over answer positions of -log softmax(logits)[target],
    fresh random batches from TASKS[task] drawn with a seeded generator."""

    def __init__(self, task: str = "reverse", config: ModelConfig = ModelConfig(),
                 lr: float = 3e-3, batch: int = 128, seed: int = 0,
                 device: str | torch.device | None = "cpu"):
        self.device = resolve_device(device)
        self.task, self.config = TASKS[task], config
        self.lr, self.batch, self.seed = float(lr), int(batch), int(seed)
        self.model = init_model(config, seed, self.device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.01)
        self.gen = make_generator(self.seed + 7, self.device)
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()
        self._last = {"loss": math.nan, "accuracy": math.nan}

    def train_step(self, with_accuracy: bool = True
                   ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One AdamW step; returns (loss, accuracy or None) as tensors (no host sync)."""
        self.model.train()
        inp, tgt, mask = make_batch(self.task, self.batch, self.gen)
        logits, _ = self.model(inp, return_attention=False)
        answer_logits, answer_tgt = logits[mask], tgt[mask]
        loss = F.cross_entropy(answer_logits, answer_tgt)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        acc = None
        if with_accuracy:
            acc = (answer_logits.detach().argmax(-1) == answer_tgt).float().mean()
        return loss.detach(), acc

    def step(self, n: int = 1) -> dict[str, float]:
        loss = acc = None
        done, n = 0, int(n)
        for i in range(n):
            if self.diverged_at is not None:
                break
            loss, acc = self.train_step(with_accuracy=(i == n - 1))
            done += 1
        if done == 0:
            return {}
        self.steps += done
        metrics = {"loss": float(loss), "accuracy": float(acc) if acc is not None else math.nan}
        if not math.isfinite(metrics["loss"]):
            self.diverged_at = self.steps
        self._last = metrics
        self.history.log(self.steps, metrics)
        return metrics

    def snapshot(self) -> TransformerSnapshot:
        return TransformerSnapshot(self.steps, self._last["loss"], self._last["accuracy"],
                                   self.diverged_at)

    def state_dict(self) -> dict:
        return {"model": {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()},
                "opt": self.opt.state_dict(), "gen": self.gen.get_state(),
                "steps": self.steps, "diverged_at": self.diverged_at,
                "history": self.history.state_dict(), "last": dict(self._last)}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        if "opt" in state:
            self.opt.load_state_dict(state["opt"])
        if "gen" in state:
            self.gen.set_state(state["gen"])
        self.steps = int(state.get("steps", 0))
        self.diverged_at = state.get("diverged_at")
        if "history" in state:
            self.history = History.from_state_dict(state["history"])
        self._last = dict(state.get("last", self._last))


# --------------------------------------------------------------------------------------
# Shipped weights
# --------------------------------------------------------------------------------------

MODEL_CONFIG_KEYS = ("n_layers", "n_heads", "d_model", "vocab", "max_len")


def model_config_of(config: ModelConfig) -> dict:
    """The model_config of a weights file (plain ints: loads with weights_only=True)."""
    return {k: int(getattr(config, k)) for k in MODEL_CONFIG_KEYS}


def weights_payload(trainer: TransformerTrainer) -> dict:
    """(model_config, state, meta) of a trained TransformerTrainer for weights.save; meta
    holds the task and the steps trained (scripts add the measured token accuracy)."""
    return {"model_config": model_config_of(trainer.config),
            "state": trainer.model.state_dict(),
            "meta": {"task": trainer.task.name, "steps": int(trainer.steps)}}


def save_pretrained(path, trainer: TransformerTrainer, **meta) -> Path:
    """Write assets/weights/attention_<task>.pt through engine/weights.py."""
    p = weights_payload(trainer)
    return weights.save(path, p["model_config"], p["state"], {**p["meta"], **meta})


def model_from_weights(w: weights.Weights, device: str | torch.device | None = "cpu"
                       ) -> tuple[TinyTransformer, dict]:
    """(model in eval mode, info) from loaded weights; info = meta plus "config" (the
    model_config), i.e. {"task", "steps", "config", "token_accuracy"} for shipped files."""
    try:
        model = TinyTransformer(ModelConfig(**w.model_config))
        model.load_state_dict(w.state)
    except (TypeError, ValueError, RuntimeError) as err:
        raise weights.StaleWeightsError(
            f"weights file {w.path} does not fit a TinyTransformer ({type(err).__name__}: "
            f"{err}): {weights.REBUILD_HINT}") from err
    model.eval()
    return model.to(resolve_device(device)), {**w.meta, "config": dict(w.model_config)}


def load_pretrained(path, device: str | torch.device | None = "cpu"
                    ) -> tuple[TinyTransformer, dict]:
    """(model, info) from a file written by save_pretrained. Raises weights.WeightsError
    (missing, corrupt or stale file) with a message that says how to rebuild it."""
    return model_from_weights(weights.load(path, "cpu"), device)
