"""Translation equivariance and approximate invariance.

    f(T x) = T f(x)      (conv with circular padding, T a circular shift)
    P f(T x) ~ P f(x)    (max pool P: exact only for shifts that are multiples of the pool size)
"""
from __future__ import annotations

import torch.nn.functional as F
from dataclasses import dataclass

import numpy as np
import torch

from engine.device import resolve_device, to_numpy
from engine.conv.images import _to_gray


@dataclass(frozen=True)
class Equivariance:
    conv_of_shifted: np.ndarray   # f(T x): conv with circular padding of the shifted image
    shifted_conv: np.ndarray      # T f(x)
    equivariance_error: float     # max |f(T x) - T f(x)| (0 up to float error)
    pooled: np.ndarray            # P f(x): max-pooled feature map
    pooled_of_shifted: np.ndarray  # P f(T x)
    pooled_difference: np.ndarray  # P f(T x) - P f(x)
    change_unpooled: float        # ||f(T x) - f(x)|| / ||f(x)||
    change_pooled: float          # ||P f(T x) - P f(x)|| / ||P f(x)||


def shift_equivariance(image: np.ndarray, kernel: np.ndarray, shift: tuple[int, int],
                       pool: int = 2, device: str | torch.device | None = "cpu") -> Equivariance:
    """T = circular shift by (dy, dx), f = conv with circular padding (same size), P = max pool
    pool x pool, stride pool. f(Tx) = T f(x) exactly (translation equivariance); P f(Tx) is
    close to P f(x) for small shifts (approximate invariance), exact-shifted when the shift
    is a multiple of `pool`."""
    dev = resolve_device(device)
    x = torch.as_tensor(np.asarray(_to_gray(image), np.float32), device=dev)[None, None]
    k = torch.as_tensor(np.asarray(kernel, np.float32), device=dev)[None, None]
    kh, kw = k.shape[-2:]
    if kh % 2 == 0 or kw % 2 == 0:
        raise ValueError("use an odd-sized kernel for the same-size (circular) convolution")
    if pool < 1 or pool > min(x.shape[-2:]):
        raise ValueError("pool size must be between 1 and the image size")
    pad = (kw // 2, kw // 2, kh // 2, kh // 2)

    def f(t):
        return F.conv2d(F.pad(t, pad, mode="circular"), k)

    dy, dx = int(shift[0]), int(shift[1])
    fx = f(x)
    f_tx = f(torch.roll(x, (dy, dx), dims=(-2, -1)))
    t_fx = torch.roll(fx, (dy, dx), dims=(-2, -1))
    p_fx, p_ftx = F.max_pool2d(fx, pool), F.max_pool2d(f_tx, pool)
    eps = 1e-12
    return Equivariance(
        to_numpy(f_tx[0, 0]), to_numpy(t_fx[0, 0]), float((f_tx - t_fx).abs().max()),
        to_numpy(p_fx[0, 0]), to_numpy(p_ftx[0, 0]), to_numpy((p_ftx - p_fx)[0, 0]),
        float((f_tx - fx).norm() / (fx.norm() + eps)),
        float((p_ftx - p_fx).norm() / (p_fx.norm() + eps)))
