"""Receptive fields of masked and causal stacks, computed three ways that must agree.

field_by_gradient: the real layers (all weights 1, no bias, no nonlinearity), the gradient of
    one output with respect to the input image: g[i, j] = d out[r, c] / d x[i, j] is the
    number of routes from input pixel (i, j) to output (r, c) through the layers (notes 004,
    Fig. 10.8 shades the pixels by it), and the field is {(i, j): g[i, j] > 0}.
field_by_offsets: mask algebra, no network: routes[r, c] = 1 at the output, and each layer,
    last to first, sends routes[i, j] to every (i + dr, j + dc) its mask keeps (inside the
    image: zero padding carries nothing).
field_by_perturbation: brute force on random weights: (i, j) is in the field when changing
    x[i, j] alone changes out[r, c].

The blind spot of an output (r, c) after L layers of k x k kernels (p = k // 2): the pixels
of the dense stack's window (rows r - L p .. r, columns c - L p .. c + L p) that come before
(r, c) in raster order, yet no route reaches. For a PixelCNN stack (type A, then type B) an
up-step moves at most p columns right and a same-row step only left, so row r - u is reached up
to column c + p min(u, L): away from the borders the blind spot holds

    sum_{u=1}^{L p} (L p - p min(u, L))   pixels,   L (L - 1) / 2 for k = 3.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from engine.autoregressive.masks import CausalConv1d, MaskedConv2d, TwoStackLayer, kernel_mask

STACKS = ("pixelcnn", "two-stack")


class MaskedStack(nn.Module):
    """L masked k x k layers, type A then type B, one channel, no bias, no nonlinearity."""

    def __init__(self, k: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(MaskedConv2d(1, 1, k, "A" if i == 0 else "B", bias=False)
                                    for i in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:                  # (B, 1, H, W)
        for layer in self.layers:
            x = layer(x)
        return x


class TwoStack(nn.Module):
    """L two-stack layers (vertical and horizontal, type A then B), one channel, no bias;
    the output is the last horizontal stack."""

    def __init__(self, k: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(TwoStackLayer(1, 1, k, "A" if i == 0 else "B")
                                    for i in range(layers))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                m.bias = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:                  # (B, 1, H, W)
        v, h = x, x
        for layer in self.layers:
            v, h = layer(v, h)
        return h


def check_field_args(size: int, k: int, layers: int, row: int, col: int) -> None:
    """ValueError in words for settings no field can be computed for."""
    if layers < 1:
        raise ValueError("a stack needs at least one layer")
    if k < 3 or k % 2 == 0:
        raise ValueError(f"the kernel size must be odd and at least 3, not {k}")
    if not (0 <= row < size and 0 <= col < size):
        raise ValueError(f"pixel ({row}, {col}) lies outside the {size} x {size} image: "
                         f"row and column run from 0 to {size - 1}")


def build_stack(stack: str, k: int, layers: int, weights: str = "ones",
                seed: int = 0) -> nn.Module:
    """The stack in float64, its weights all 1 (route counts) or seeded Gaussian."""
    if stack not in STACKS:
        raise ValueError(f"unknown stack {stack!r}: one of {', '.join(STACKS)}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = (MaskedStack(k, layers) if stack == "pixelcnn" else TwoStack(k, layers)).double()
    if weights == "ones":
        with torch.no_grad():
            for w in net.parameters():
                w.fill_(1.0)
    return net


def field_by_gradient(stack: str, size: int, k: int, layers: int, row: int,
                      col: int) -> np.ndarray:
    """(size, size) float64: d out[row, col] / d x through the real layers with unit weights,
    the number of routes from each input pixel (0 outside the field)."""
    check_field_args(size, k, layers, row, col)
    net = build_stack(stack, k, layers)
    x = torch.zeros(1, 1, size, size, dtype=torch.float64, requires_grad=True)
    net(x)[0, 0, row, col].backward()
    assert x.grad is not None
    return x.grad[0, 0].numpy().copy()


def field_by_offsets(size: int, k: int, layers: int, row: int, col: int) -> np.ndarray:
    """(size, size) route counts of a PixelCNN stack from its masks alone (no network)."""
    check_field_args(size, k, layers, row, col)
    p = k // 2
    routes = np.zeros((size, size))
    routes[row, col] = 1.0
    for i in reversed(range(layers)):
        mask = kernel_mask(k, "A" if i == 0 else "B").numpy()
        sent = np.zeros_like(routes)
        for dr, dc in zip(*np.nonzero(mask)):
            dr, dc = dr - p, dc - p
            # the output at (r, c) reads (r + dr, c + dc): move the counts by (dr, dc)
            src = routes[max(0, -dr):size - max(0, dr), max(0, -dc):size - max(0, dc)]
            sent[max(0, dr):size - max(0, -dr), max(0, dc):size - max(0, -dc)] += src
        routes = sent
    return routes


def field_by_perturbation(stack: str, size: int, k: int, layers: int, row: int, col: int,
                          seed: int = 0) -> np.ndarray:
    """(size, size) bool: the pixels whose change alone moves out[row, col], random weights."""
    check_field_args(size, k, layers, row, col)
    net = build_stack(stack, k, layers, weights="gaussian", seed=seed)
    gen = torch.Generator().manual_seed(seed)
    base = torch.randn(1, 1, size, size, dtype=torch.float64, generator=gen)
    bumped = base.repeat(size * size, 1, 1, 1)                           # (size², 1, H, W)
    idx = torch.arange(size * size)
    bumped.view(size * size, -1)[idx, idx] += 1.0
    with torch.no_grad():
        out0 = net(base)[0, 0, row, col]
        out = net(bumped)[:, 0, row, col]                                # (size²,)
    return (torch.abs(out - out0) > 1e-9).view(size, size).numpy()


def causal_window(size: int, k: int, layers: int, row: int, col: int) -> np.ndarray:
    """(size, size) bool: the pixels of the dense stack's window that precede (row, col)."""
    reach = layers * (k // 2)
    rr, cc = np.mgrid[:size, :size]
    inside = (np.abs(cc - col) <= reach) & (rr >= row - reach)
    before = (rr < row) | ((rr == row) & (cc < col))
    return inside & before


def blind_spot(field: np.ndarray, k: int, layers: int, row: int, col: int) -> np.ndarray:
    """(size, size) bool: the window's pixels before (row, col) that the field misses."""
    return causal_window(len(field), k, layers, row, col) & ~(field > 0)


def blind_spot_formula(k: int, layers: int) -> int:
    """The blind spot's size of a PixelCNN stack away from the borders (module docstring)."""
    p = k // 2
    reach = layers * p
    return sum(reach - p * min(u, layers) for u in range(1, reach + 1))


def future_leak(field: np.ndarray, row: int, col: int, centre: bool) -> int:
    """How many pixels at or after (row, col) in raster order reach it (0 for a causal
    stack; the centre itself counts only when `centre` is False)."""
    size = len(field)
    order = np.arange(size * size).reshape(size, size)
    target = row * size + col
    after = order > target if centre else order >= target
    return int(((field > 0) & after).sum())


# ----------------------------------------------------------------------------- 1-D
class CausalStack(nn.Module):
    """Causal 1-D convolutions, one channel, no bias, kernel k, one dilation per layer."""

    def __init__(self, k: int, dilations: tuple[int, ...]):
        super().__init__()
        self.layers = nn.ModuleList(CausalConv1d(1, 1, k, d, bias=False) for d in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:                  # (B, 1, T)
        for layer in self.layers:
            x = layer(x)
        return x


def causal_field(length: int, k: int, dilations: tuple[int, ...], t: int) -> np.ndarray:
    """(L + 1, length) float64: row l is d out_L[t] / d h_l, the gradient of sample t of the
    stack's output with respect to layer l's output (h_0 = x the input, h_L = the output),
    unit weights: row l counts the routes from each sample of layer l to the output sample,
    row 0 is the stack's receptive field in the input."""
    if not dilations:
        raise ValueError("a causal stack needs at least one layer")
    if k < 2:
        raise ValueError(f"a causal kernel needs at least 2 taps, not {k}")
    if min(dilations) < 1:
        raise ValueError("every dilation must be at least 1")
    if not 0 <= t < length:
        raise ValueError(f"sample {t} lies outside the sequence 0 .. {length - 1}")
    net = CausalStack(k, tuple(dilations)).double()
    with torch.no_grad():
        for w in net.parameters():
            w.fill_(1.0)
    h = torch.zeros(1, 1, length, dtype=torch.float64, requires_grad=True)
    hs = [h]
    for layer in net.layers:
        h = layer(h)                                                     # (1, 1, T)
        h.retain_grad()
        hs.append(h)
    hs[-1][0, 0, t].backward()
    rows = [hl.grad[0, 0].numpy().copy() if hl.grad is not None else np.zeros(length)
            for hl in hs]
    return np.stack(rows)                                                # (L + 1, T)


def causal_field_size(k: int, dilations: tuple[int, ...]) -> int:
    """1 + (k - 1) sum_l d_l: how many samples reach the last output (no border)."""
    return 1 + (k - 1) * int(sum(dilations))
