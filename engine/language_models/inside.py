"""Inside a GPT for one prompt: each block's attention weights at the last position, and the
logit lens, the next-token distribution read from each layer's residual stream h_l with the
model's own final LayerNorm and unembedding:

    lens_l = softmax(LN(h_l)_T W_E^T),   l = 0 (the embeddings) .. L (= the model's output)

(nostalgebraist's logit lens); lens_L is exactly the model's next-token distribution."""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import torch

from engine.language_models.generate import context_ids
from engine.language_models.gpt import GPT, Block


@dataclass(frozen=True)
class Inside:
    ids: np.ndarray          # (t,) the ids the model read
    attention: np.ndarray    # (L, heads, t) each block's weights from the last position
    lens: np.ndarray         # (L + 1, V) next-token probabilities read at each layer


@torch.no_grad()
def inside(model: GPT, ids: np.ndarray) -> Inside:
    x = torch.as_tensor(context_ids(model, ids))[None]                  # (1, t)
    t = x.shape[1]
    h = model.embed(x) + model.pos(torch.arange(t))                     # (1, t, w)
    streams, weights = [h], []
    for module in model.blocks:
        block = cast(Block, module)
        a, w = block.attention(block.ln1(h))                            # w (1, heads, t, t)
        weights.append(w[0, :, -1])                                     # (heads, t)
        h = h + a
        h = h + block.mlp(block.ln2(h))
        streams.append(h)
    last = torch.stack([s[0, -1] for s in streams])                     # (L + 1, w)
    lens = (model.ln(last) @ model.embed.weight.T).softmax(-1)          # (L + 1, V)
    return Inside(x[0].numpy(), torch.stack(weights).double().numpy(),
                  lens.double().numpy())
