"""CNNs built from layer specs, and the effective receptive field (Luo et al. 2016):

    ERF(x_in) = E_x |d y[out_index] / d x|,   x ~ N(0, 1) seeded

a Gaussian-like bump that puts most of its mass in the centre of the theoretical box
(central_mass: mass share >> area share)."""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy
from engine.conv.geometry import (LayerSpec, Region, as_spec, input_region, layers_from_model,
                                  receptive_field)


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
