"""How one unit of a CNN's feature map is computed: the input window it sees and, for a
convolution, the kernel it applies.

For the unit (channel c, row r, column q) of a layer with kernel size k, stride s and zero
padding p over the input maps x_in (C_in, H, W):

    window  P = pad(x_in, p)[:, r·s : r·s + k, q·s : q·s + k]          (C_in, k, k)
    conv    pre = Σ_{i,u,v} P[i, u, v] · W[c, i, u, v] + b[c],  value = ReLU(pre)
            (the ReLU only where an activation follows the convolution)
    maxpool pre = value = max_{u,v} P[c, u, v]   (the channel's own window; padding −∞)

The layers are numbered like engine.conv.digits.feature_maps: one per convolution or
pooling module of model[0], with the activation that follows it merged in.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.conv.geometry import MODULE_READERS, PASS_THROUGH
from engine.device import to_numpy


@dataclass(frozen=True)
class UnitComputation:
    layer: int                  # index into feature_maps' list
    kind: str                   # "conv" or "maxpool"
    relu: bool                  # an activation follows (value = ReLU(pre))
    window: np.ndarray          # (C_in, k, k) for conv, (1, k, k) for a pool: what it sees
    kernel: np.ndarray | None   # (C_in, k, k) W[c] of a convolution, None for a pool
    bias: float                 # b[c] (0 for a pool)
    pre: float                  # Σ window·kernel + bias, or the window's max
    value: float                # the unit's value in the layer's output
    origin: tuple[int, int]     # the window's top-left in the input map (negative: padding)


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


@torch.no_grad()
def unit_computation(model: nn.Sequential, image: np.ndarray, layer: int, channel: int,
                     row: int, col: int) -> UnitComputation:
    """The window, kernel and sums behind output[layer][channel, row, col] of model[0] on one
    (H, W) image (see the module docstring). Raises IndexError for a unit that is not there."""
    mods = list(model[0].children())
    x = torch.as_tensor(np.asarray(image, np.float32))[None, None]       # (1, 1, H, W)
    li, i = -1, 0
    while i < len(mods):
        m = mods[i]
        if type(m) not in MODULE_READERS:
            raise TypeError(f"unexpected module {type(m).__name__} in model[0]")
        x_in, x = x, m(x)
        relu = i + 1 < len(mods) and isinstance(mods[i + 1], PASS_THROUGH)
        if relu:
            x = mods[i + 1](x)
            i += 1
        li += 1
        if li == layer:
            return _unit(m, x_in, x, layer, relu, channel, row, col)
        i += 1
    raise IndexError(f"layer {layer} out of range (the model has {li + 1})")


def _unit(m: nn.Module, x_in: torch.Tensor, out: torch.Tensor, layer: int, relu: bool,
          channel: int, row: int, col: int) -> UnitComputation:
    _, c_out, h, w = out.shape
    if not (0 <= channel < c_out and 0 <= row < h and 0 <= col < w):
        raise IndexError(f"unit ({channel}, {row}, {col}) outside the layer's {c_out}×{h}×{w}")
    k, s, p = _pair(m.kernel_size), _pair(m.stride), _pair(m.padding)
    r0, c0 = row * s[0], col * s[1]
    value = float(out[0, channel, row, col])
    if isinstance(m, nn.Conv2d):
        padded = F.pad(x_in, (p[1], p[1], p[0], p[0]))                  # zeros
        window = padded[0, :, r0:r0 + k[0], c0:c0 + k[1]]                 # (C_in, k, k)
        kernel = m.weight[channel]                                       # (C_in, k, k)
        bias = float(m.bias[channel]) if m.bias is not None else 0.0
        pre = float((window * kernel).sum()) + bias
        return UnitComputation(layer, "conv", relu, to_numpy(window), to_numpy(kernel), bias,
                               pre, value, (r0 - p[0], c0 - p[1]))
    padded = F.pad(x_in, (p[1], p[1], p[0], p[0]), value=-float("inf"))
    window = padded[0, channel:channel + 1, r0:r0 + k[0], c0:c0 + k[1]]   # (1, k, k)
    pre = float(window.max())
    return UnitComputation(layer, "maxpool", relu, to_numpy(window), None, 0.0, pre, value,
                           (r0 - p[0], c0 - p[1]))
