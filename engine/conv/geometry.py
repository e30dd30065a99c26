"""Output size and receptive-field arithmetic, per axis (docs/MATH.md).

    n_out = floor((n + 2p - d(k-1) - 1) / s) + 1
    r_l = r_{l-1} + d_l (k_l - 1) j_{l-1},  j_l = j_{l-1} s_l,
    start_l = start_{l-1} + (d_l (k_l - 1) / 2 - p_l) j_{l-1}        (r_0 = j_0 = 1, start_0 = 0)

Output u of layer l sees the input pixels start_l + u j_l +- (r_l - 1)/2 (clipped to the
image, and only those the padding does not replace: input_region).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from torch import nn


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


def _c(k, s=1, p=0, d=1, ch=None):
    return LayerSpec("conv", k, s, p, d, ch)


STACKS: dict[str, tuple[LayerSpec, ...]] = {
    "3x3 x 4": tuple(_c(3, p=1) for _ in range(4)),
    "VGG block": (_c(3, p=1), _c(3, p=1), LayerSpec("maxpool", 2, 2),
                  _c(3, p=1), _c(3, p=1), LayerSpec("maxpool", 2, 2)),
    "conv + pool": (_c(5, p=2), LayerSpec("maxpool", 2, 2), _c(5, p=2),
                    LayerSpec("maxpool", 2, 2), _c(3, p=1)),
    "k=2 x 4, no dilation": tuple(_c(2) for _ in range(4)),
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
