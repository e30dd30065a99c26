"""A small GPT (decoder-only transformer) over characters.

    h_0 = E[x_t] + P[t]
    h_l = a_l + MLP(LN(a_l)),   a_l = h_{l-1} + Attn(LN(h_{l-1}))       (pre-norm blocks)
    Attn: softmax(Q K^T / sqrt(d_head) + M) V per head, M_ts = -inf for s > t (causal)
    logits_t = LN(h_L)_t W_E^T                                          (tied embedding)

so the logits at position t depend on x_1..x_t only."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.language_models.vocab import V


@dataclass(frozen=True)
class GPTConfig:
    vocab: int = V
    context: int = 128
    width: int = 64
    heads: int = 4
    layers: int = 3
    dropout: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.heads = cfg.heads
        self.ln1, self.ln2 = nn.LayerNorm(cfg.width), nn.LayerNorm(cfg.width)
        self.qkv = nn.Linear(cfg.width, 3 * cfg.width)
        self.proj = nn.Linear(cfg.width, cfg.width)
        self.mlp = nn.Sequential(nn.Linear(cfg.width, 4 * cfg.width), nn.GELU(),
                                 nn.Linear(4 * cfg.width, cfg.width))

    def attention(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(out (b, t, w), weights (b, heads, t, t)) with the causal mask."""
        b, t, w = x.shape
        q, k, v = self.qkv(x).split(w, dim=2)                          # 3 x (b, t, w)
        q, k, v = (z.view(b, t, self.heads, w // self.heads).transpose(1, 2)
                   for z in (q, k, v))                                 # (b, h, t, d)
        scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5)        # (b, h, t, t)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(mask, float("-inf")).softmax(-1)  # (b, h, t, t)
        out = (weights @ v).transpose(1, 2).reshape(b, t, w)           # (b, t, w)
        return self.proj(out), weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig = GPTConfig()):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.width)
        self.pos = nn.Embedding(cfg.context, cfg.width)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.width)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (b, t) with t <= context -> logits (b, t, vocab)."""
        t = ids.shape[1]
        if t > self.cfg.context:
            raise ValueError(f"{t} tokens exceed the context of {self.cfg.context}")
        pos = torch.arange(t, device=ids.device)
        h = self.embed(ids) + self.pos(pos)                            # (b, t, w)
        for block in self.blocks:
            h = block(h)
        return self.ln(h) @ self.embed.weight.T                        # (b, t, vocab)

    def loss(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy (nats per character) of targets (b, t) under the logits."""
        logits = self(ids)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def n_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
