"""Masked and causal convolutions, the layers that make a network autoregressive.

A k x k kernel (p = k // 2, offsets dr, dc in -p..p from its centre) of a PixelCNN layer keeps
only the taps that come before the centre in raster order:

    mask[dr, dc] = 1  if dr < 0, or dr == 0 and dc < 0            (type A, the first layer)
    mask[dr, dc] = 1  if dr < 0, or dr == 0 and dc <= 0           (type B, the layers after)

so out[r, c] = sum_{dr, dc} w[dr, dc] * mask[dr, dc] * x[r + dr, c + dc] never reads a pixel
after (r, c), and type A does not read (r, c) itself. The two-stack layer of the gated PixelCNN
splits this: a vertical stack sees every column of the rows above (its output is shifted down
one row), a horizontal stack sees the pixels to the left on the row, and the vertical stack
feeds the horizontal one: no pixel above is left out.

A causal 1-D convolution of kernel size k and dilation d pads (k - 1) d zeros on the left only:

    out[t] = sum_{j=0}^{k-1} w[j] * x[t - (k - 1 - j) d]

so out[t] reads x[t - (k - 1) d .. t] and nothing later."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

KINDS = ("A", "B")


def kernel_mask(k: int, kind: str) -> torch.Tensor:
    """(k, k) float mask of a type-A or type-B kernel, k odd (see the module docstring)."""
    if k < 1 or k % 2 == 0:
        raise ValueError(f"a masked kernel needs an odd size, not {k}")
    if kind not in KINDS:
        raise ValueError(f"unknown mask type {kind!r}: one of {', '.join(KINDS)}")
    p = k // 2
    mask = torch.zeros(k, k)
    mask[:p, :] = 1                                   # every row above the centre
    mask[p, :p] = 1                                   # the centre row, left of the centre
    if kind == "B":
        mask[p, p] = 1                                # and the centre itself
    return mask


class MaskedConv2d(nn.Conv2d):
    """A k x k convolution (zero padding p, same size out) whose kernel is multiplied by a
    type-A or type-B mask in every forward pass: the masked weights get no gradient and
    never act."""

    mask: torch.Tensor

    def __init__(self, c_in: int, c_out: int, k: int, kind: str, bias: bool = True):
        super().__init__(c_in, c_out, k, padding=k // 2, bias=bias)
        self.kind = kind
        self.register_buffer("mask", kernel_mask(k, kind)[None, None])   # (1, 1, k, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:                  # (B, c_in, H, W)
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class VerticalConv(nn.Module):
    """The vertical stack's layer: a (p + 1) x k kernel over rows r - p .. r and columns
    c - p .. c + p (padding p above, p left and right, none below)."""

    def __init__(self, c_in: int, c_out: int, k: int):
        super().__init__()
        self.p = k // 2
        self.conv = nn.Conv2d(c_in, c_out, (self.p + 1, k))

    def forward(self, v: torch.Tensor) -> torch.Tensor:                  # (B, c_in, H, W)
        return self.conv(F.pad(v, (self.p, self.p, self.p, 0)))          # (B, c_out, H, W)


class HorizontalConv(nn.Module):
    """The horizontal stack's layer: a 1 x (p + 1) kernel over columns c - p .. c of the row
    (type B), or 1 x p over c - p .. c - 1 (type A)."""

    def __init__(self, c_in: int, c_out: int, k: int, kind: str):
        super().__init__()
        if k < 3 or k % 2 == 0:
            raise ValueError(f"a horizontal stack needs an odd kernel of at least 3, not {k}")
        self.p, self.kind = k // 2, kind
        width = self.p + 1 if kind == "B" else self.p
        self.conv = nn.Conv2d(c_in, c_out, (1, width))

    def forward(self, h: torch.Tensor) -> torch.Tensor:                  # (B, c_in, H, W)
        if self.kind == "A":                          # out[c] reads c - p .. c - 1: drop the last
            return self.conv(F.pad(h, (self.p, 0)))[..., :-1]            # (B, c_out, H, W)
        return self.conv(F.pad(h, (self.p, 0)))                          # (B, c_out, H, W)


def shift_down(v: torch.Tensor) -> torch.Tensor:
    """v moved down one row (row 0 zero): (B, C, H, W) -> (B, C, H, W), out[r] = v[r - 1]."""
    return F.pad(v, (0, 0, 1, 0))[..., :-1, :]


class TwoStackLayer(nn.Module):
    """One layer of the two-stack PixelCNN (the gated PixelCNN without its gates):
    v' = V(v), h' = H(h) + shift_down(V(v)). The first layer (type A) gets the image as both
    v and h."""

    def __init__(self, c_in: int, c_out: int, k: int, kind: str):
        super().__init__()
        self.vertical = VerticalConv(c_in, c_out, k)
        self.horizontal = HorizontalConv(c_in, c_out, k, kind)

    def forward(self, v: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        v_out = self.vertical(v)                                         # (B, c_out, H, W)
        return v_out, self.horizontal(h) + shift_down(v_out)


class CausalConv1d(nn.Conv1d):
    """A causal (shifted) 1-D convolution of kernel size k and dilation d: (k - 1) d zeros on
    the left, none on the right, so out[t] reads x[t - (k - 1) d .. t]."""

    def __init__(self, c_in: int, c_out: int, k: int = 2, dilation: int = 1,
                 bias: bool = True):
        super().__init__(c_in, c_out, k, dilation=dilation, bias=bias)
        self.left = (k - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:                  # (B, c_in, T)
        return super().forward(F.pad(x, (self.left, 0)))                 # (B, c_out, T)
