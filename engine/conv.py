"""Convolution, feature maps and receptive fields, on real PyTorch layers.

Conventions (docs/MATH.md, "Convolution and receptive fields"):
- Deep-learning "convolution" is cross-correlation (no kernel flip), as torch's F.conv2d:
      out[i, j] = sum_{a, b} x_pad[i*s + a*d, j*s + b*d] * kernel[a, b]
- Output size:  n_out = floor((n + 2p - d(k-1) - 1) / s) + 1
- Receptive field of layer l (per axis), with r_0 = 1, j_0 = 1, start_0 = 0:
      r_l     = r_{l-1} + d_l (k_l - 1) j_{l-1}
      j_l     = j_{l-1} s_l
      start_l = start_{l-1} + (d_l (k_l - 1) / 2 - p_l) j_{l-1}
  (start = input coordinate of the centre of the first output; pixel i has centre i.)
- Output u of layer l sees input pixels  start_l + u j_l +- (r_l - 1)/2.
"""
from __future__ import annotations

import copy
import functools
import io
import math
from dataclasses import dataclass, field, asdict
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine import weights
from engine.datasets import load_digits, digits_split, sample_photo
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy

# --------------------------------------------------------------------------------------
# Output size and receptive-field arithmetic
# --------------------------------------------------------------------------------------


def conv_output_size(n: int, kernel: int, stride: int = 1, padding: int = 0,
                     dilation: int = 1) -> int:
    """n_out = floor((n + 2*padding - dilation*(kernel-1) - 1) / stride) + 1, as torch computes
    it for Conv/MaxPool/AvgPool (ceil_mode=False). ValueError when n_out < 1 or an argument
    is out of range."""
    n, kernel, stride, padding, dilation = (int(v) for v in (n, kernel, stride, padding, dilation))
    if n < 1 or kernel < 1 or stride < 1 or dilation < 1 or padding < 0:
        raise ValueError(f"need n, kernel, stride, dilation >= 1 and padding >= 0 "
                         f"(got n={n}, k={kernel}, s={stride}, p={padding}, d={dilation})")
    span = dilation * (kernel - 1) + 1          # extent of the dilated kernel
    if n + 2 * padding < span:
        raise ValueError(f"the kernel spans {span} pixels but the padded input has only "
                         f"{n + 2 * padding} (n={n}, p={padding}): no output")
    return (n + 2 * padding - span) // stride + 1


LAYER_KINDS = ("conv", "maxpool", "avgpool")


@dataclass(frozen=True)
class LayerSpec:
    """One conv/pool layer's geometry (square kernels; the same along both axes)."""
    kind: str = "conv"
    kernel: int = 3
    stride: int = 1
    padding: int = 0
    dilation: int = 1
    channels: int | None = None   # output channels of a conv (None: keep), for parameter counts

    def __post_init__(self):
        if self.kind not in LAYER_KINDS:
            raise ValueError(f"unknown layer kind {self.kind!r}; choose one of {LAYER_KINDS}")
        if self.kernel < 1 or self.stride < 1 or self.dilation < 1 or self.padding < 0:
            raise ValueError(f"bad layer {self}: kernel, stride, dilation >= 1, padding >= 0")
        if self.kind == "avgpool" and self.dilation != 1:
            raise ValueError("avgpool has no dilation")
        if self.kind != "conv" and 2 * self.padding > self.kernel:
            raise ValueError("pool padding must be at most half the kernel (torch's rule)")


def as_spec(layer: LayerSpec | Mapping) -> LayerSpec:
    """A LayerSpec from a LayerSpec or a dict with keys kind, kernel, stride, padding, dilation."""
    if isinstance(layer, LayerSpec):
        return layer
    known = {k: layer[k] for k in ("kind", "kernel", "stride", "padding", "dilation", "channels")
             if k in layer and layer[k] is not None and not (isinstance(layer[k], float)
                                                             and math.isnan(layer[k]))}
    for k in ("kernel", "stride", "padding", "dilation", "channels"):
        if k in known:
            known[k] = int(known[k])
    if "kind" in known:
        known["kind"] = str(known["kind"]).strip().lower()
    return LayerSpec(**known)


@dataclass(frozen=True)
class RFInfo:
    """Receptive-field bookkeeping after one layer (index 0 is the input itself)."""
    name: str
    kind: str
    kernel: int
    stride: int
    padding: int
    dilation: int
    size: int          # r: receptive field in input pixels (per axis)
    jump: int          # j: input-pixel distance between adjacent outputs
    start: float       # input coordinate of the centre of output 0
    out_size: int | None  # n: spatial size of this layer's output (None: input size unknown)


def receptive_field(layers: Sequence[LayerSpec | Mapping],
                    input_size: int | None = None) -> list[RFInfo]:
    """Per-layer r, j, start (and output size when input_size is given), input first.

    r_l = r_{l-1} + d_l (k_l - 1) j_{l-1};  j_l = j_{l-1} s_l;
    start_l = start_{l-1} + (d_l (k_l - 1)/2 - p_l) j_{l-1}."""
    r, j, start, n = 1, 1, 0.0, input_size
    out = [RFInfo("input", "input", 1, 1, 0, 1, r, j, start, n)]
    counts: dict[str, int] = {}
    for layer in layers:
        spec = as_spec(layer)
        counts[spec.kind] = counts.get(spec.kind, 0) + 1
        span = spec.dilation * (spec.kernel - 1)
        start = start + (span / 2 - spec.padding) * j
        r = r + span * j
        j = j * spec.stride
        if n is not None:
            n = conv_output_size(n, spec.kernel, spec.stride, spec.padding, spec.dilation)
        out.append(RFInfo(f"{spec.kind}{counts[spec.kind]}", spec.kind, spec.kernel, spec.stride,
                          spec.padding, spec.dilation, r, j, start, n))
    return out


def conv_parameters(layers: Sequence[LayerSpec | Mapping], in_channels: int = 1,
                    default_channels: int = 16, bias: bool = False) -> list[int]:
    """Weights per layer: a conv with c_in -> c_out channels has k^2 c_in c_out (+ c_out);
    pools have none. Three 3x3 convs c->c: 27c^2, one 7x7: 49c^2 (docs/MATH.md)."""
    c, counts = in_channels, []
    for layer in layers:
        spec = as_spec(layer)
        if spec.kind == "conv":
            c_out = spec.channels or default_channels
            counts.append(spec.kernel ** 2 * c * c_out + (c_out if bias else 0))
            c = c_out
        else:
            counts.append(0)
    return counts


def _square(v) -> int:
    """An int from an int or a tuple of equal ints (non-square kernels are not supported)."""
    if isinstance(v, (tuple, list)):
        if len(set(v)) != 1:
            raise ValueError(f"only square kernels/strides are supported (got {tuple(v)})")
        return int(v[0])
    return int(v)


PASS_THROUGH = (nn.ReLU, nn.LeakyReLU, nn.GELU, nn.Tanh, nn.Sigmoid, nn.ELU, nn.SiLU,
                nn.Identity, nn.BatchNorm1d, nn.BatchNorm2d, nn.Dropout, nn.Dropout2d)


def _conv_spec(m: nn.Module) -> LayerSpec:
    if isinstance(m.padding, str):
        raise ValueError(f"string padding {m.padding!r} is not supported; use integers")
    return LayerSpec("conv", _square(m.kernel_size), _square(m.stride), _square(m.padding),
                     _square(m.dilation), m.out_channels)


MODULE_READERS: dict[type, Callable[[nn.Module], LayerSpec]] = {
    nn.Conv1d: _conv_spec,
    nn.Conv2d: _conv_spec,
    nn.MaxPool1d: lambda m: LayerSpec("maxpool", _square(m.kernel_size),
                                      _square(m.stride or m.kernel_size), _square(m.padding),
                                      _square(m.dilation)),
    nn.MaxPool2d: lambda m: LayerSpec("maxpool", _square(m.kernel_size),
                                      _square(m.stride or m.kernel_size), _square(m.padding),
                                      _square(m.dilation)),
    nn.AvgPool1d: lambda m: LayerSpec("avgpool", _square(m.kernel_size),
                                      _square(m.stride or m.kernel_size), _square(m.padding)),
    nn.AvgPool2d: lambda m: LayerSpec("avgpool", _square(m.kernel_size),
                                      _square(m.stride or m.kernel_size), _square(m.padding)),
}


def layers_from_model(model: nn.Module) -> list[LayerSpec]:
    """The conv/pool specs of a (possibly nested) nn.Sequential, in order. Activations,
    BatchNorm and Dropout pass through; Flatten/Linear end the spatial part (reading stops);
    any other module is an error (its geometry is unknown)."""
    specs: list[LayerSpec] = []
    for m in model.modules():
        if isinstance(m, nn.Sequential) or m is model and not isinstance(m, tuple(MODULE_READERS)):
            continue
        reader = MODULE_READERS.get(type(m))
        if reader is not None:
            specs.append(reader(m))
        elif isinstance(m, (nn.Flatten, nn.Linear)):
            break
        elif not isinstance(m, PASS_THROUGH):
            raise ValueError(f"cannot read the geometry of {type(m).__name__}")
    return specs


@dataclass(frozen=True)
class Region:
    """The input rows/columns an output sees (inclusive ranges). `lo/hi`: the theoretical box
    centre +- (r-1)/2 (may reach into the padding: < 0 or >= size); `clip_lo/clip_hi`: the
    pixels of the image that really reach the output (min/max of the exact support, which
    accounts for padding at every layer); `pad_before/pad_after`: box pixels in the padding;
    `per_layer`: for the input and every layer, ((row_lo, col_lo), (row_hi, col_hi)) of the
    units of that layer that feed the output, in that layer's own coordinates."""
    lo: tuple[int, int]       # (row, col)
    hi: tuple[int, int]
    clip_lo: tuple[int, int]
    clip_hi: tuple[int, int]
    pad_before: tuple[int, int]
    pad_after: tuple[int, int]
    size: int                 # r (per axis)
    per_layer: tuple = ()


def _support_1d(specs: Sequence[LayerSpec], sizes: Sequence[int], u: int) -> list[np.ndarray]:
    """Backward pass of index sets along one axis: mask_L = {u}; an input position i of layer l
    is in mask_{l-1} when i = v s_l - p_l + t d_l for some v in mask_l and tap t < k_l.
    Returns the masks of the input and every layer (input first)."""
    mask = np.zeros(sizes[-1], bool)
    mask[u] = True
    masks = [mask]
    for spec, n_in in zip(reversed(specs), reversed(sizes[:-1])):
        v = np.nonzero(masks[0])[0]
        idx = (v[:, None] * spec.stride - spec.padding
               + np.arange(spec.kernel)[None, :] * spec.dilation).ravel()
        m = np.zeros(n_in, bool)
        m[idx[(idx >= 0) & (idx < n_in)]] = True
        masks.insert(0, m)
    return masks


def input_region(layers: Sequence[LayerSpec | Mapping], out_index: int | tuple[int, int],
                 input_size: int | tuple[int, int]) -> Region:
    """Input box seen by output `out_index` (row, col) of the last layer:
    centre = start + u*j, box = centre +- (r-1)/2; the clipped part is computed exactly by
    walking the layers backwards (_support_1d). ValueError for an index outside the output."""
    specs = [as_spec(layer) for layer in layers]
    idx = (out_index, out_index) if isinstance(out_index, (int, np.integer)) else tuple(out_index)
    size = (input_size, input_size) if isinstance(input_size, (int, np.integer)) else tuple(input_size)
    lo, hi, clo, chi, pb, pa, layer_lo, layer_hi = [], [], [], [], [], [], [], []
    r = 1
    for axis in range(2):
        infos = receptive_field(specs, int(size[axis]))
        info = infos[-1]
        u = int(idx[axis])
        if not 0 <= u < info.out_size:
            raise ValueError(f"output index {u} is outside the output (size {info.out_size})")
        centre = info.start + u * info.jump
        a, b = int(round(centre - (info.size - 1) / 2)), int(round(centre + (info.size - 1) / 2))
        masks = _support_1d(specs, [i.out_size for i in infos], u)
        seen = [np.nonzero(m)[0] for m in masks]
        if len(seen[0]) == 0:
            raise ValueError(f"output {u} sees only padding")
        lo.append(a); hi.append(b)
        clo.append(int(seen[0].min())); chi.append(int(seen[0].max()))
        pb.append(max(0, -a)); pa.append(max(0, b - (int(size[axis]) - 1)))
        layer_lo.append([int(s.min()) if len(s) else -1 for s in seen])
        layer_hi.append([int(s.max()) if len(s) else -1 for s in seen])
        r = info.size
    per_layer = tuple(((layer_lo[0][i], layer_lo[1][i]), (layer_hi[0][i], layer_hi[1][i]))
                      for i in range(len(specs) + 1))
    return Region(tuple(lo), tuple(hi), tuple(clo), tuple(chi), tuple(pb), tuple(pa), int(r),
                  per_layer)


# --------------------------------------------------------------------------------------
# Models from layer specs, and the effective receptive field
# --------------------------------------------------------------------------------------

POOLS = {"maxpool": nn.MaxPool2d, "avgpool": nn.AvgPool2d}


def build_cnn(layers: Sequence[LayerSpec | Mapping], in_channels: int = 1, channels: int = 8,
              activation: str | None = "relu", seed: int = 0, init: str = "kaiming") -> nn.Sequential:
    """An nn.Sequential of Conv2d (+ activation) and pooling layers with the given geometry.
    init: "kaiming" (random, seeded: w ~ N(0, 2/fan_in), b = 0) or "uniform" (every weight
    1/(k^2 c_in), b = 0: Luo et al.'s uniform-weight case)."""
    g = make_generator(seed, "cpu")
    mods: list[nn.Module] = []
    c = in_channels
    for layer in layers:
        spec = as_spec(layer)
        if spec.kind == "conv":
            c_out = spec.channels or channels
            conv = nn.Conv2d(c, c_out, spec.kernel, spec.stride, spec.padding, spec.dilation)
            fan_in = c * spec.kernel ** 2
            with torch.no_grad():
                if init == "uniform":
                    conv.weight.fill_(1.0 / fan_in)
                else:
                    conv.weight.copy_(torch.randn(conv.weight.shape, generator=g)
                                      * math.sqrt(2.0 / fan_in))
                conv.bias.zero_()
            mods.append(conv)
            if activation == "relu":
                mods.append(nn.ReLU())
            c = c_out
        elif spec.kind == "maxpool":
            mods.append(nn.MaxPool2d(spec.kernel, spec.stride, spec.padding, spec.dilation))
        else:
            mods.append(nn.AvgPool2d(spec.kernel, spec.stride, spec.padding))
    return nn.Sequential(*mods)


@dataclass(frozen=True)
class ERF:
    heatmap: np.ndarray        # (H, W) mean |d y_out / d x| over samples, scaled to max 1
    out_index: tuple[int, int]
    region: Region             # the theoretical box of the same output
    n_samples: int
    fraction_in_box: float     # share of the gradient mass inside the theoretical box
    radius_2sigma: float       # ~95% mass radius: 2 * sqrt(mean squared distance from the centre)


def effective_receptive_field(model: nn.Module, input_shape: tuple[int, int, int],
                              out_index: tuple[int, int] | None = None, seed: int = 0,
                              n_samples: int = 32, device: str | torch.device | None = "cpu",
                              inputs: np.ndarray | torch.Tensor | None = None) -> ERF:
    """Luo et al. 2016: ERF(x_in) = E_x |d y[out_index] / d x|, with y summed over output
    channels and x ~ N(0, 1) of shape (n_samples, *input_shape) (or the given inputs).
    One batched backward pass: the samples do not interact, so d(sum_b y_b)/d x_b = d y_b/d x_b.
    out_index defaults to the centre output."""
    dev = resolve_device(device)
    if any(p.device != dev for p in model.parameters()):
        model = copy.deepcopy(model).to(dev)         # never move the caller's model
    model.eval()
    if inputs is None:
        g = make_generator(seed, dev)
        x = torch.randn((n_samples, *input_shape), generator=g, device=dev)
    else:
        x = torch.as_tensor(np.asarray(inputs, np.float32), device=dev).clone()
        n_samples = x.shape[0]
    x.requires_grad_(True)
    y = model(x)
    if y.dim() != 4:
        raise ValueError("the model must end in a spatial (N, C, H, W) output")
    oh, ow = y.shape[-2:]
    if out_index is None:
        out_index = ((oh - 1) // 2, (ow - 1) // 2)
    oi, oj = (int(v) for v in out_index)
    if not (0 <= oi < oh and 0 <= oj < ow):
        raise ValueError(f"output index {(oi, oj)} is outside the {oh}x{ow} output")
    (grad,) = torch.autograd.grad(y[:, :, oi, oj].sum(), x)   # no .grad left on the weights
    grad = grad.abs().mean(dim=(0, 1))          # (H, W): average over samples and channels
    heat = to_numpy(grad).astype(np.float64)
    total = heat.sum()
    specs = layers_from_model(model)
    region = input_region(specs, (oi, oj), tuple(input_shape[-2:]))
    r0, c0 = region.clip_lo
    r1, c1 = region.clip_hi
    inside = heat[r0:r1 + 1, c0:c1 + 1].sum() / total if total > 0 else 0.0
    if total > 0:
        info = [receptive_field(specs, n)[-1] for n in input_shape[-2:]]
        ci, cj = info[0].start + oi * info[0].jump, info[1].start + oj * info[1].jump
        ii, jj = np.meshgrid(np.arange(heat.shape[0]), np.arange(heat.shape[1]), indexing="ij")
        msd = float(((ii - ci) ** 2 + (jj - cj) ** 2).ravel() @ (heat / total).ravel())
        radius = 2 * math.sqrt(msd / 2)          # per-axis sigma = sqrt(msd / 2)
    else:
        radius = 0.0
    heat = heat / heat.max() if heat.max() > 0 else heat
    return ERF(heat, (oi, oj), region, int(n_samples), float(inside), float(radius))


def central_mass(erf: ERF, fraction: float = 0.5) -> tuple[float, float]:
    """(mass share, area share) of the square around the box centre with half-width
    fraction * (r - 1)/2, clipped to the image: mass share = sum of the ERF heatmap inside /
    total; area share = pixels inside / pixels of the (clipped) theoretical box. A field that
    is flat over the box has mass share = area share; Luo et al.'s Gaussian-like field has
    mass share >> area share."""
    heat = erf.heatmap
    total = heat.sum()
    reg = erf.region
    ci, cj = (reg.lo[0] + reg.hi[0]) / 2, (reg.lo[1] + reg.hi[1]) / 2
    half = fraction * (reg.size - 1) / 2
    ii, jj = np.indices(heat.shape)
    inner = (np.abs(ii - ci) <= half) & (np.abs(jj - cj) <= half)
    box = ((ii >= reg.clip_lo[0]) & (ii <= reg.clip_hi[0]) & (jj >= reg.clip_lo[1])
           & (jj <= reg.clip_hi[1]))
    mass = float(heat[inner].sum() / total) if total > 0 else 0.0
    return mass, float(inner.sum() / max(box.sum(), 1))


# --------------------------------------------------------------------------------------
# Sliding-window convolution, step by step, and the full feature map
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# Kernels (registry) and images
# --------------------------------------------------------------------------------------

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


def checkerboard(size: int = 128, square: int = 16) -> np.ndarray:
    """(size, size) float32: 1 where (row // square + col // square) is even, else 0."""
    i = np.arange(size) // square
    return ((i[:, None] + i[None, :]) % 2 == 0).astype(np.float32)


def shapes(size: int = 128) -> np.ndarray:
    """(size, size) float32 in [0, 1]: a filled square, a disc, a triangle and a thin line."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    img = np.zeros((size, size), np.float32)
    img[(yy > 0.1) & (yy < 0.4) & (xx > 0.1) & (xx < 0.4)] = 1.0
    img[(yy - 0.25) ** 2 + (xx - 0.72) ** 2 < 0.15 ** 2] = 0.7
    tri = (yy > 0.55) & (yy < 0.9) & (np.abs(xx - 0.27) < (yy - 0.55) * 0.6)
    img[tri] = 0.85
    img[(np.abs(yy - xx - (-0.05)) < 0.012) & (xx > 0.55) & (yy > 0.5)] = 1.0
    return img


def downscale(img: np.ndarray, max_side: int) -> np.ndarray:
    """Area-average downscale so max(H, W) <= max_side (no change if already small)."""
    h, w = img.shape[:2]
    scale = max(h, w) / max_side
    if scale <= 1:
        return img
    size = (max(1, int(round(h / scale))), max(1, int(round(w / scale))))
    x = torch.as_tensor(img if img.ndim == 3 else img[..., None]).permute(2, 0, 1)[None]
    y = F.interpolate(x, size=size, mode="area")[0].permute(1, 2, 0).numpy()
    return y if img.ndim == 3 else y[..., 0]


def square_image(img: np.ndarray, n: int) -> np.ndarray:
    """The centre square of a (H, W) or (H, W, C) image, side s = min(H, W), resized to (n, n):
    area average when shrinking (s >= n: out = mean of each (s/n)^2 block when n divides s),
    nearest neighbour when enlarging (out[i, j] = crop[floor(i s / n), floor(j s / n)], pixels
    stay sharp). The receptive-field tab's n x n input."""
    n = int(n)
    if n < 1:
        raise ValueError(f"the square side must be >= 1 (got {n})")
    img = np.asarray(img, dtype=np.float32)
    h, w = img.shape[:2]
    s = min(h, w)
    top, left = (h - s) // 2, (w - s) // 2
    crop = img[top:top + s, left:left + s]
    x = torch.as_tensor(np.ascontiguousarray(crop if crop.ndim == 3 else crop[..., None]))
    y = F.interpolate(x.permute(2, 0, 1)[None], size=(n, n), mode="area" if s >= n else "nearest")
    y = y[0].permute(1, 2, 0).numpy()
    return y if img.ndim == 3 else y[..., 0]


def _to_gray(img: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma 0.299 R + 0.587 G + 0.114 B."""
    return img if img.ndim == 2 else (img[..., :3] @ np.array([0.299, 0.587, 0.114], np.float32))


def _gray_to_rgb(img: np.ndarray) -> np.ndarray:
    return img if img.ndim == 3 else np.repeat(img[..., None], 3, axis=2)


IMAGES: dict[str, Callable[[], np.ndarray]] = {
    "china (photo)": lambda: sample_photo("china"),
    "flower (photo)": lambda: sample_photo("flower"),
    "digit (8x8)": lambda: load_digits().images[0],
    "checkerboard": lambda: checkerboard(128, 16),
    "shapes": lambda: shapes(128),
}


@functools.lru_cache(maxsize=8)
def _raw_image(name: str) -> np.ndarray:
    return IMAGES[name]()


@functools.lru_cache(maxsize=32)
def _cached_image(name: str, grayscale: bool, max_side: int) -> np.ndarray:
    img = downscale(_raw_image(name), max_side)
    # a copy: small images come back as the lru-cached raw array itself, and freezing that
    # made torch.as_tensor warn (non-writable array) in later downscale() calls
    img = np.array(_to_gray(img) if grayscale else _gray_to_rgb(img))
    img.setflags(write=False)
    return img


def load_image(name: str, grayscale: bool = True, max_side: int = 256) -> np.ndarray:
    """IMAGES[name], float32 in [0, 1], downscaled to max side `max_side`, (H, W) if grayscale
    else (H, W, 3). Cached (deterministic); the returned array is a fresh copy."""
    if name not in IMAGES:
        raise KeyError(f"unknown image {name!r}; choose one of {sorted(IMAGES)}")
    return _cached_image(name, bool(grayscale), int(max_side)).copy()


MAX_UPLOAD_BYTES = 10 * 1024 * 1024
UPLOAD_FORMATS = ("PNG", "JPEG")
MAX_UPLOAD_SIDE = 512


def load_upload(data: bytes, grayscale: bool = True, max_side: int = MAX_UPLOAD_SIDE) -> np.ndarray:
    """Decode an uploaded PNG/JPEG (at most 10 MB) to float32 in [0, 1], downscaled so the
    longer side is <= max_side; (H, W) if grayscale else (H, W, 3). Anything else -> ValueError
    with a message meant for the user."""
    from PIL import Image, UnidentifiedImageError
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is {len(data) / 2**20:.1f} MB; the limit is 10 MB")
    if len(data) == 0:
        raise ValueError("the file is empty")
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.format not in UPLOAD_FORMATS:
                raise ValueError(f"it is a {im.format} file; only PNG and JPEG are accepted")
            im.draft("RGB", (max_side, max_side))      # JPEG: decode at reduced size
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            rgb = np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0
    except ValueError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise ValueError("this is not a PNG or JPEG image (or it is damaged / far too large)"
                         ) from exc
    except (OSError, SyntaxError) as exc:
        raise ValueError(f"the image could not be decoded ({exc})") from exc
    return _to_gray(rgb) if grayscale else rgb


# --------------------------------------------------------------------------------------
# The small digits CNN: learned feature maps
# --------------------------------------------------------------------------------------

DIGITS_LAYERS = (LayerSpec("conv", 3, 1, 1, 1, 8), LayerSpec("conv", 3, 1, 1, 1, 16),
                 LayerSpec("maxpool", 2, 2), LayerSpec("conv", 3, 1, 1, 1, 16),
                 LayerSpec("maxpool", 2, 2))
DIGITS_WEIGHTS = Path(__file__).resolve().parent.parent / "assets" / "weights" / "convolution_digits.pt"


def digits_cnn(seed: int = 0) -> nn.Sequential:
    """8x8 digits -> conv3(8) ReLU conv3(16) ReLU maxpool2 conv3(16) ReLU maxpool2 ->
    flatten (16*2*2) -> linear 10 (logits)."""
    features = build_cnn(DIGITS_LAYERS, in_channels=1, seed=seed)
    g = make_generator(seed + 1, "cpu")
    head = nn.Linear(16 * 2 * 2, 10)
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=g) / 8.0)
        head.bias.zero_()
    return nn.Sequential(features, nn.Flatten(), head)


@dataclass(frozen=True)
class TrainReport:
    epochs: int
    train_accuracy: float
    test_accuracy: float
    losses: list[float] = field(default_factory=list)


def train_digits_cnn(seed: int = 0, epochs: int = 15, lr: float = 3e-3, batch: int = 64,
                     device: str | torch.device | None = "cpu") -> tuple[nn.Sequential, TrainReport]:
    """Adam on cross-entropy over the seeded 80/20 digits split (minibatches from a seeded
    permutation). Returns the model (on CPU) and its accuracies."""
    dev = resolve_device(device)
    train, test = digits_split(0.2, seed)
    model = digits_cnn(seed).to(dev)
    xtr = torch.as_tensor(train.images[:, None], device=dev)
    ytr = torch.as_tensor(train.labels, device=dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    rng = numpy_rng(seed)
    losses = []
    for _ in range(epochs):
        perm = torch.as_tensor(rng.permutation(len(ytr)), device=dev)
        for i in range(0, len(perm), batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(float(loss.detach()))
    model = model.cpu().eval()
    return model, TrainReport(epochs, digits_accuracy(model, train.images, train.labels),
                              digits_accuracy(model, test.images, test.labels), losses)


@torch.no_grad()
def digits_accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    pred = model(torch.as_tensor(images[:, None])).argmax(1).numpy()
    return float((pred == labels).mean())


DIGITS_MODEL_CONFIG = {"name": "digits_cnn", "in_shape": [1, 8, 8], "classes": 10,
                       "layers": [[s.kind, s.kernel, s.stride, s.padding, s.dilation, s.channels]
                                  for s in DIGITS_LAYERS]}


def save_digits_cnn(path: Path | str, model: nn.Module, **meta) -> Path:
    """Write the digits CNN through engine/weights.py (model_config DIGITS_MODEL_CONFIG)."""
    return weights.save(path, DIGITS_MODEL_CONFIG, model.state_dict(), meta)


def digits_cnn_from_weights(w: weights.Weights) -> nn.Sequential:
    """The digits CNN (eval mode) with the loaded state; a state that does not fit is stale."""
    model = digits_cnn(0)
    try:
        model.load_state_dict(w.state)
    except RuntimeError as err:
        raise weights.StaleWeightsError(f"weights file {w.path} does not fit the digits CNN: "
                                        f"{weights.REBUILD_HINT}") from err
    return model.eval()


def load_digits_cnn(path: Path | str = DIGITS_WEIGHTS) -> nn.Sequential:
    """The shipped trained digits CNN. Raises weights.WeightsError (missing, corrupt or
    stale file, including one made for another architecture) with a rebuild hint."""
    return digits_cnn_from_weights(weights.load(path, "cpu", expect_config=DIGITS_MODEL_CONFIG))


@dataclass(frozen=True)
class FeatureMap:
    name: str                 # e.g. "conv1 + ReLU"
    maps: np.ndarray          # (C, H, W)
    rf: RFInfo                # receptive field of one unit of this layer


@torch.no_grad()
def feature_maps(model: nn.Sequential, image: np.ndarray) -> tuple[list[FeatureMap], np.ndarray]:
    """Every channel after every conv(+ReLU)/pool of model[0] (the feature extractor) for one
    (H, W) image, and the class probabilities softmax(model(x))."""
    feats = model[0]
    x = torch.as_tensor(np.asarray(image, np.float32))[None, None]
    specs = layers_from_model(feats)
    rfs = receptive_field(specs, image.shape[0])[1:]
    out: list[FeatureMap] = []
    li = -1
    mods = list(feats)
    for i, m in enumerate(mods):
        x = m(x)
        if type(m) in MODULE_READERS:
            li += 1
            act = i + 1 < len(mods) and isinstance(mods[i + 1], PASS_THROUGH)
            if not act:
                out.append(FeatureMap(rfs[li].name, to_numpy(x[0]), rfs[li]))
        elif isinstance(m, PASS_THROUGH):
            out.append(FeatureMap(f"{rfs[li].name} + {type(m).__name__}", to_numpy(x[0]), rfs[li]))
    probs = torch.softmax(model(torch.as_tensor(np.asarray(image, np.float32))[None, None]), 1)
    return out, to_numpy(probs[0])


# --------------------------------------------------------------------------------------
# Equivariance and invariance
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# Layer-stack presets for the receptive-field tab
# --------------------------------------------------------------------------------------

def _c(k, s=1, p=0, d=1, ch=None):
    return LayerSpec("conv", k, s, p, d, ch)


STACKS: dict[str, tuple[LayerSpec, ...]] = {
    "3x3 x 4": tuple(_c(3, p=1) for _ in range(4)),
    "VGG block": (_c(3, p=1), _c(3, p=1), LayerSpec("maxpool", 2, 2),
                  _c(3, p=1), _c(3, p=1), LayerSpec("maxpool", 2, 2)),
    "conv + pool": (_c(5, p=2), LayerSpec("maxpool", 2, 2), _c(5, p=2),
                    LayerSpec("maxpool", 2, 2), _c(3, p=1)),
    "dilated 1-2-4-8 (WaveNet, k=2)": tuple(_c(2, d=d) for d in (1, 2, 4, 8)),
    "dilated 3x3, 1-2-4-8": tuple(_c(3, p=d, d=d) for d in (1, 2, 4, 8)),
    "one 7x7": (_c(7, p=3),),
    "three 3x3": (_c(3, p=1), _c(3, p=1), _c(3, p=1)),
    "strided 6-layer": (_c(3, p=1), _c(3, s=2, p=1), _c(3, p=1), _c(3, s=2, p=1),
                        _c(3, p=1), _c(3, p=1)),
    "3x3 x 12 (deep)": tuple(_c(3, p=1) for _ in range(12)),
}


def specs_table(layers: Sequence[LayerSpec | Mapping]) -> list[dict]:
    """Rows kind, kernel, stride, padding, dilation (for a data editor)."""
    return [{k: v for k, v in asdict(as_spec(layer)).items() if k != "channels"} for layer in layers]
