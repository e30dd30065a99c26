"""A BERT encoder (post-LayerNorm, as in Devlin et al. 2019) in plain PyTorch, with the
parameter layout of a Hugging Face `BertModel` checkpoint, so all-MiniLM-L6-v2's packaged
weights load into it directly (`from_checkpoint`). Inference only (no dropout).

For token ids t (B × T), with d = hidden size, H heads of d_h = d / H columns:

    x_0 = LN(E_word[t] + E_pos[0..T-1] + E_type[0])                        (B, T, d)

and for every layer l = 0 .. L-1, with input x = x_l:

    q = x W_q + b_q,  k = x W_k + b_k,  v = x W_v + b_v        (split into H heads of d_h)
    weights_h = softmax(q_h k_hᵀ / √d_h)                      (B, H, T, T), rows sum to 1
    context_h = keep[b, l, h] · weights_h v_h                 (B, H, T, d_h), heads rejoined
    a = LN(x + context W_o + b_o)
    x_{l+1} = LN(a + GELU(a W_1 + b_1) W_2 + b_2)             (GELU with the erf)

LN is LayerNorm with eps from the config. `keep` is the head mask (B, L, H) of 1 (keep) and 0
(silence the head: its d_h columns of the context are zero before the output projection);
without one every head is kept. All tokens are real (no padding): every batch row has the
same T. The explicit softmax runs when the weights are asked for; otherwise
F.scaled_dot_product_attention computes the same context faster.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from engine.attention.tensor_file import read_safetensors


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        """The fields of a Hugging Face config.json that this encoder uses."""
        raw = json.loads(path.read_text())
        if raw.get("model_type", "bert") != "bert":
            raise ValueError(f"{path.name}: model_type {raw.get('model_type')!r} is not bert")
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{path.name}: only absolute position embeddings are supported")
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"{path.name}: only the erf GELU activation is supported")
        fields = cls.__dataclass_fields__
        return cls(**{k: raw[k] for k in fields if k in raw})

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads


@dataclass(frozen=True)
class EncoderOutput:
    hidden_states: tuple[torch.Tensor, ...]        # L + 1 of (B, T, d): x_0 .. x_L
    attentions: tuple[torch.Tensor, ...] | None    # L of (B, H, T, T), when asked for

    @property
    def last_hidden_state(self) -> torch.Tensor:
        return self.hidden_states[-1]


class BertLayer(nn.Module):
    """One encoder layer: multi-head self-attention, then the feed-forward block, each with
    a residual connection and LayerNorm after it."""

    def __init__(self, c: BertConfig):
        super().__init__()
        d = c.hidden_size
        self.heads = c.num_attention_heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=c.layer_norm_eps)
        self.ff_in = nn.Linear(d, c.intermediate_size)
        self.ff_out = nn.Linear(c.intermediate_size, d)
        self.ff_norm = nn.LayerNorm(d, eps=c.layer_norm_eps)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        return x.view(B, T, self.heads, d // self.heads).transpose(1, 2)   # (B, H, T, d_h)

    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None,
                weights: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x (B, T, d), keep (B, H) or None -> (x_next (B, T, d), weights (B, H, T, T) or None)."""
        B, T, d = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        w = None
        if weights:
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
            context = w @ v                                            # (B, H, T, d_h)
        else:
            context = F.scaled_dot_product_attention(q, k, v)          # (B, H, T, d_h)
        if keep is not None:
            context = context * keep.to(context.dtype)[:, :, None, None]
        context = context.transpose(1, 2).reshape(B, T, d)             # (B, T, d)
        a = self.attn_norm(x + self.attn_out(context))
        return self.ff_norm(a + self.ff_out(F.gelu(self.ff_in(a)))), w


class BertEncoder(nn.Module):
    """Embeddings and L layers; `forward` returns every layer's hidden states and, on request,
    its attention weights."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        d = config.hidden_size
        self.word = nn.Embedding(config.vocab_size, d)
        self.position = nn.Embedding(config.max_position_embeddings, d)
        self.token_type = nn.Embedding(config.type_vocab_size, d)
        self.embed_norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.layers = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) -> x_0 (B, T, d)."""
        T = ids.shape[1]
        positions = torch.arange(T, device=ids.device)
        return self.embed_norm(self.word(ids) + self.position(positions)[None]
                               + self.token_type.weight[0])

    def forward(self, ids: torch.Tensor, head_mask: torch.Tensor | None = None,
                attentions: bool = False) -> EncoderOutput:
        """ids (B, T) int64, head_mask (B, L, H) of 1/0 or None."""
        c = self.config
        if ids.ndim != 2 or not 0 < ids.shape[1] <= c.max_position_embeddings:
            raise ValueError(f"ids must be (batch, T) with 1 <= T <= "
                             f"{c.max_position_embeddings}, got {tuple(ids.shape)}")
        if head_mask is not None and tuple(head_mask.shape) != (
                ids.shape[0], c.num_hidden_layers, c.num_attention_heads):
            raise ValueError(f"head_mask must be (batch, layers, heads), "
                             f"got {tuple(head_mask.shape)}")
        x = self.embed(ids)
        hidden = [x]
        maps = []
        for l, layer in enumerate(self.layers):
            keep = None if head_mask is None else head_mask[:, l]
            x, w = layer(x, keep, attentions)
            hidden.append(x)
            if w is not None:
                maps.append(w)
        return EncoderOutput(tuple(hidden), tuple(maps) if attentions else None)

    def layers_from(self, x: torch.Tensor, start: int,
                    head_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x_start (B, T, d) through layers start .. L-1 -> x_L (B, T, d); head_mask
        (B, L, H) as in forward (its rows for the layers before `start` are not read)."""
        for l in range(start, len(self.layers)):
            x, _ = self.layers[l](x, None if head_mask is None else head_mask[:, l])
        return x

    # ------------------------------------------------------------------ checkpoints
    @classmethod
    def from_checkpoint(cls, folder: Path) -> BertEncoder:
        """The encoder of a Hugging Face BERT folder (config.json, model.safetensors), in eval
        mode; the pooler and buffers of the checkpoint are not used."""
        with torch.device("meta"):                       # no random init: all is loaded
            model = cls(BertConfig.from_file(folder / "config.json"))
        tensors = read_safetensors(folder / "model.safetensors")
        state = {}
        for name, tensor in tensors.items():
            own = checkpoint_to_own(name)
            if own is not None:
                state[own] = tensor
        # strict: a missing or unexpected tensor fails here; assign: the loaded tensors become
        # the parameters (the meta ones had no memory)
        model.load_state_dict(state, strict=True, assign=True)
        return model.eval().requires_grad_(False)


# Hugging Face BertModel names -> this module's names
_EMBEDDINGS = {"word_embeddings": "word", "position_embeddings": "position",
               "token_type_embeddings": "token_type", "LayerNorm": "embed_norm"}
_LAYER = {"attention.self.query": "query", "attention.self.key": "key",
          "attention.self.value": "value", "attention.output.dense": "attn_out",
          "attention.output.LayerNorm": "attn_norm", "intermediate.dense": "ff_in",
          "output.dense": "ff_out", "output.LayerNorm": "ff_norm"}
_PARAM = {"gamma": "weight", "beta": "bias"}          # the names of older checkpoints


def checkpoint_to_own(name: str) -> str | None:
    """This module's parameter name for a checkpoint tensor's name (a 'bert.' prefix
    allowed), None for the tensors it does not use (pooler, position_ids)."""
    name = name.removeprefix("bert.")
    module, _, param = name.rpartition(".")
    param = _PARAM.get(param, param)
    if module.startswith("embeddings."):
        own = _EMBEDDINGS.get(module.removeprefix("embeddings."))
        return None if own is None else f"{own}.{param}"
    if module.startswith("encoder.layer."):
        index, _, rest = module.removeprefix("encoder.layer.").partition(".")
        own = _LAYER.get(rest)
        return None if own is None else f"layers.{index}.{own}.{param}"
    return None
