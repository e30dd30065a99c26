"""A small PixelCNN for 8 x 8 digits with Q grey levels: p(x) = prod_i p(x_i | x_<i), each
factor a Q-way softmax over the levels of pixel i in raster order.

    h_0 = relu(A(x / (Q - 1)) + e_y)           A: a 5 x 5 type-A masked convolution
    h_l = relu(B_l(h_{l-1}) + e_y) + h_{l-1}   B_l: 3 x 3 type-B, l = 1 .. L
    (gated:  f, g = B_l(h_{l-1}) + e_y  split in two halves of C channels,
             h_l = tanh(f) ⊙ σ(g) + h_{l-1})
    logits = W h_L                             W: 1 x 1 convolution to Q channels

e_y: a learned vector per class (class-conditional model) or 0. The loss is the mean over
pixels of -log2 softmax(logits)[x]: bits per pixel (per dimension). Sampling draws the 64
pixels in raster order, one forward pass each: logits / T, T = 0 takes the most likely level."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from engine.autoregressive.digits import SIDE
from engine.autoregressive.masks import MaskedConv2d

CLASSES = 10


class PixelCNN(nn.Module):
    def __init__(self, levels: int, hidden: int = 32, layers: int = 4,
                 conditional: bool = False, gated: bool = False):
        super().__init__()
        if layers < 0:
            raise ValueError("the PixelCNN needs at least 0 type-B layers")
        self.levels, self.conditional, self.gated = int(levels), bool(conditional), bool(gated)
        self.hidden = int(hidden)
        width = 2 * hidden if gated else hidden                          # gated: f and g
        self.first = MaskedConv2d(1, hidden, 5, "A")
        self.blocks = nn.ModuleList(MaskedConv2d(hidden, width, 3, "B") for _ in range(layers))
        self.embed = nn.Embedding(CLASSES, width) if conditional else None
        self.out = nn.Conv2d(hidden, levels, 1)

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, 8, 8) long levels, y (B,) long classes -> logits (B, Q, 8, 8)."""
        e: torch.Tensor | float = 0.0
        if self.embed is not None:
            if y is None:
                raise ValueError("a class-conditional PixelCNN needs the classes")
            e = self.embed(y)[:, :, None, None]                          # (B, C or 2C, 1, 1)
        e_first = e[:, :self.hidden] if isinstance(e, torch.Tensor) else e
        z = (x.float() / (self.levels - 1))[:, None]                     # (B, 1, 8, 8)
        h = torch.relu(self.first(z) + e_first)                          # (B, C, 8, 8)
        for block in self.blocks:
            if self.gated:
                f, g = (block(h) + e).chunk(2, 1)                        # (B, C, 8, 8) each
                h = torch.tanh(f) * torch.sigmoid(g) + h
            else:
                h = torch.relu(block(h) + e) + h
        return self.out(h)                                               # (B, Q, 8, 8)


def bits_per_pixel(model: PixelCNN, x: torch.Tensor, y: torch.Tensor | None = None
                   ) -> torch.Tensor:
    """Mean over images and pixels of -log2 p(x_i | x_<i)."""
    return F.cross_entropy(model(x, y), x) / math.log(2)


@torch.no_grad()
def predictive(model: PixelCNN, x: torch.Tensor, y: torch.Tensor | None = None
               ) -> torch.Tensor:
    """(B, 8, 8, Q) p(x_i = q | x_<i) at every pixel, given the true pixels before it."""
    return torch.softmax(model(x, y), 1).permute(0, 2, 3, 1)


@torch.no_grad()
def sample(model: PixelCNN, n: int, temperature: float = 1.0, seed: int = 0,
           labels: torch.Tensor | None = None, given: torch.Tensor | None = None,
           given_rows: int = 0, device: str | torch.device = "cpu", side: int = SIDE
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """(images (n, 8, 8) long, probs (n, 8, 8, Q)): pixels drawn in raster order, probs[i]
    the distribution pixel i was drawn from. The first `given_rows` rows are copied from
    `given` (n, 8, 8) instead (completion). temperature 0: the most likely level. `side`:
    the grid's side (8 for a digit, 4 for a VQ-VAE's code grid)."""
    if temperature < 0 or not math.isfinite(temperature):
        raise ValueError("the temperature must be a finite number >= 0")
    gen = torch.Generator(device=device).manual_seed(int(seed))
    x = torch.zeros(n, side, side, dtype=torch.long, device=device)
    probs = torch.zeros(n, side, side, model.levels, device=device)
    if given is not None and given_rows > 0:
        x[:, :given_rows] = given[:, :given_rows].to(device)
    for r in range(given_rows, side):
        for c in range(side):
            logits = model(x, labels)[:, :, r, c]                        # (n, Q)
            p = torch.softmax(logits / max(temperature, 1e-8), -1) if temperature > 0 \
                else F.one_hot(logits.argmax(-1), model.levels).float()
            probs[:, r, c] = torch.softmax(logits, -1)
            x[:, r, c] = torch.multinomial(p, 1, generator=gen)[:, 0]
    if given_rows:
        probs[:, :given_rows] = predictive(model, x, labels)[:, :given_rows]
    return x, probs
