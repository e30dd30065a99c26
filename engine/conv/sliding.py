"""The sliding window, step by step, and the full feature map; the kernel registry.

    out[i, j] = sum_{a, b} x_pad[i*s + a*d, j*s + b*d] * kernel[a, b]   (no flip, as F.conv2d)

and the same window for a pooling layer, which keeps the largest tap (max pooling) or the mean
of the taps (average pooling) instead of a weighted sum.
"""
from __future__ import annotations

import torch.nn.functional as F
from dataclasses import dataclass

import numpy as np
import torch

from engine.device import resolve_device, to_numpy
from engine.conv.geometry import conv_output_size


@dataclass(frozen=True)
class ConvFrames:
    padded: np.ndarray        # (H + 2p, W + 2p) the zero-padded input
    windows: np.ndarray       # (n_out, kh, kw) the input values under the kernel taps
    products: np.ndarray      # (n_out, kh, kw) windows * kernel
    sums: np.ndarray          # (n_out,) products summed = the output value
    corners: np.ndarray       # (n_out, 2) padded (row, col) of the window's top-left tap
    out_shape: tuple[int, int]
    padding: int
    stride: int
    dilation: int
    op: str = "conv"          # "conv", or the pooling of pool_animation_frames: "max", "avg"

    @property
    def output(self) -> np.ndarray:
        return self.sums.reshape(self.out_shape)


def conv_animation_frames(image: np.ndarray, kernel: np.ndarray, stride: int = 1,
                          padding: int = 0, dilation: int = 1) -> ConvFrames:
    """Every output position of a single-channel cross-correlation, taps made explicit:
    windows[u, a, b] = x_pad[r_u + a d, c_u + b d], products = windows * kernel[a, b],
    sums[u] = sum_{a,b} products[u, a, b]  (= F.conv2d output, row-major u)."""
    img = torch.as_tensor(np.asarray(image, dtype=np.float32))
    ker = torch.as_tensor(np.asarray(kernel, dtype=np.float32))
    if img.dim() != 2 or ker.dim() != 2:
        raise ValueError("image and kernel must be 2-D (one channel)")
    kh, kw = ker.shape
    oh = conv_output_size(img.shape[0], kh, stride, padding, dilation)
    ow = conv_output_size(img.shape[1], kw, stride, padding, dilation)
    padded = F.pad(img, (padding,) * 4)
    cols = F.unfold(padded[None, None], (kh, kw), dilation=dilation, stride=stride)  # (1, kh*kw, L)
    windows = cols[0].T.reshape(-1, kh, kw)
    products = windows * ker
    rows, cols_ = torch.meshgrid(torch.arange(oh) * stride, torch.arange(ow) * stride,
                                 indexing="ij")
    corners = torch.stack([rows.reshape(-1), cols_.reshape(-1)], 1)
    return ConvFrames(to_numpy(padded), to_numpy(windows), to_numpy(products),
                      to_numpy(products.sum(dim=(1, 2))), to_numpy(corners), (oh, ow),
                      int(padding), int(stride), int(dilation))


POOL_OPS = ("max", "avg")


def pool_animation_frames(image: np.ndarray, size: int, stride: int, padding: int = 0,
                          dilation: int = 1, op: str = "max") -> ConvFrames:
    """Every output position of a size x size pooling window, taps made explicit as in
    conv_animation_frames: for "max" the products are the taps and each output is their
    largest, for "avg" the products are taps / size² and each output is their sum, the mean.
    The padding adds zeros (F.avg_pool2d's default; F.max_pool2d pads with −∞ instead, the same
    output on a non-negative input)."""
    if op not in POOL_OPS:
        raise ValueError(f"unknown pooling {op!r}: one of {', '.join(POOL_OPS)}")
    ones = np.ones((size, size), np.float32)
    frames = conv_animation_frames(image, ones if op == "max" else ones / size ** 2, stride,
                                   padding, dilation)
    sums = frames.windows.max(axis=(1, 2)) if op == "max" else frames.sums
    return ConvFrames(frames.padded, frames.windows, frames.products, sums, frames.corners,
                      frames.out_shape, frames.padding, frames.stride, frames.dilation, op)


@dataclass(frozen=True)
class TransposedFrames:
    """A transposed convolution, input position by input position: input[u] spreads a copy of
    the kernel, scaled by its value, onto the output block whose top-left tap is corners[u]
    (taps d apart), and the block adds to what the earlier positions left there. The output
    is the full sum with `padding` rows and columns cropped from each side, as
    F.conv_transpose2d does."""
    input: np.ndarray         # (h, w) the map being spread out
    blocks: np.ndarray        # (n_in, kh, kw) input[u] * kernel
    corners: np.ndarray       # (n_in, 2) full-output (row, col) of the block's top-left tap
    partial: np.ndarray       # (n_in, H, W) the full output after positions 0 … u
    padding: int
    stride: int
    dilation: int
    op: str = "transposed"

    @property
    def full_shape(self) -> tuple[int, int]:
        return self.partial.shape[1:]

    @property
    def output(self) -> np.ndarray:
        p, (h, w) = self.padding, self.full_shape
        return self.partial[-1][p:h - p, p:w - p]


def transposed_animation_frames(image: np.ndarray, kernel: np.ndarray, stride: int = 1,
                                padding: int = 0, dilation: int = 1) -> TransposedFrames:
    """Every input position of a single-channel transposed convolution (the kernel not
    flipped, as F.conv_transpose2d): full[r·s + a·d, c·s + b·d] += x[r, c]·k[a, b]; the
    output crops `padding` from each side of the full map."""
    x = np.asarray(image, dtype=np.float64)
    k = np.asarray(kernel, dtype=np.float64)
    if x.ndim != 2 or k.ndim != 2:
        raise ValueError("image and kernel must be 2-D (one channel)")
    (h, w), (kh, kw) = x.shape, k.shape
    full = ((h - 1) * stride + dilation * (kh - 1) + 1, (w - 1) * stride + dilation * (kw - 1) + 1)
    if min(full) - 2 * padding < 1:
        raise ValueError(f"padding {padding} crops the whole {full[0]}×{full[1]} output")
    rows, cols = np.meshgrid(np.arange(h) * stride, np.arange(w) * stride, indexing="ij")
    corners = np.stack([rows.ravel(), cols.ravel()], 1)
    blocks = x.reshape(-1, 1, 1) * k
    steps = np.zeros((h * w, *full))
    for u, (r, c) in enumerate(corners):
        steps[u, r:r + dilation * (kh - 1) + 1:dilation, c:c + dilation * (kw - 1) + 1:dilation] = \
            blocks[u]
    return TransposedFrames(x.astype(np.float32), blocks.astype(np.float32), corners,
                            np.cumsum(steps, axis=0).astype(np.float32), int(padding),
                            int(stride), int(dilation))


def convolve(image: np.ndarray, kernel: np.ndarray, stride: int = 1, padding: int = 0,
             dilation: int = 1, device: str | torch.device | None = "cpu") -> np.ndarray:
    """F.conv2d of a (H, W) or (H, W, C) image with one 2-D kernel, applied to every channel
    separately (groups = C): out[i, j, c] = sum_{a,b} x_pad[i s + a d, j s + b d, c] k[a, b]."""
    dev = resolve_device(device)
    img = np.asarray(image, dtype=np.float32)
    gray = img.ndim == 2
    x = torch.as_tensor(img[None] if gray else img.transpose(2, 0, 1)).to(dev)[None]
    c = x.shape[1]
    ker = torch.as_tensor(np.asarray(kernel, dtype=np.float32), device=dev)
    if ker.dim() != 2:
        raise ValueError("the kernel must be 2-D")
    for n, k in zip(img.shape[:2], ker.shape):
        conv_output_size(n, k, stride, padding, dilation)       # clear error if empty
    w = ker[None, None].expand(c, 1, *ker.shape).contiguous()
    y = F.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=c)[0]
    out = to_numpy(y)
    return out[0] if gray else out.transpose(1, 2, 0)


KERNELS: dict[str, np.ndarray] = {
    "identity": np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], np.float32),
    "box blur": np.full((3, 3), 1 / 9, np.float32),
    "gaussian blur": np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16,
    "sharpen": np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32),
    "sobel x": np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], np.float32),
    "sobel y": np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float32),
    "laplacian": np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], np.float32),
    "emboss": np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], np.float32),
}
KERNEL_SUMS = {"identity": 1, "box blur": 1, "gaussian blur": 1, "sharpen": 1, "sobel x": 0,
               "sobel y": 0, "laplacian": 0, "emboss": 1}


def parse_kernel(values) -> np.ndarray:
    """A float32 kernel from a nested list / DataFrame values; ValueError if not a finite,
    non-empty 2-D grid."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError("the kernel must be a non-empty 2-D grid of numbers")
    if not np.all(np.isfinite(arr)):
        raise ValueError("every kernel cell needs a finite number")
    return arr.astype(np.float32)
