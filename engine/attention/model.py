"""The tiny transformer (decoder-only, pre-LayerNorm, learned positions), greedy decoding
and accuracy on fresh inputs.

    x <- x + W_o concat_h attention(LN(x) W_q^h, LN(x) W_k^h, LN(x) W_v^h, causal)
    x <- x + MLP(LN(x))       (per block);   logits = head(LN(x)) over the vocabulary
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy
from engine.attention.dot_product import attention, causal_mask
from engine.attention.tasks import MAX_SEQ_LEN, N_DIGITS, SEP, TOKEN_NAMES, Task, VOCAB


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

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """mask: the additive causal mask, and the weights are returned (explicit softmax,
        engine.attention.dot_product.attention); None: causal, computed by the fused
        torch.nn.functional.scaled_dot_product_attention (the same numbers at float
        tolerance, no T x T tensors kept), weights None. Training takes the fused path."""
        b, t, d = x.shape
        qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, self.n_heads, d // self.n_heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)             # each (B, H, T, d_head)
        if mask is None:
            out, w = F.scaled_dot_product_attention(q, k, v, is_causal=True), None
        else:
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
        mask = self.mask[:t, :t] if return_attention else None    # None: the fused kernel
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
