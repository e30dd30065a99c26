"""Building small ReLU MLPs on 2-D inputs and their exact linear regions (engine.regions).

make_mlp builds the network; partition(model, box) cuts the box into the convex polygons on
which every hidden unit's on/off pattern is fixed (so f is affine there): one unit's line
z = (W_l M_l-1) x + (W_l c_l-1 + b_l) = 0 after another, layer by layer, vectorized over all
polygons (the formulas are in engine/regions/__init__.py). Also the edges of that partition by
layer, the number of distinct affine maps, grid checks, and parse_widths for the page's input.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy
from engine.nets import INITS as NET_INITS

Box = tuple[float, float, float, float]  # (xmin, xmax, ymin, ymax)



# --------------------------------------------------------------------------------------
# Building networks
# --------------------------------------------------------------------------------------

# this page's scheme names -> the shared registry engine.nets.INITS (W ~ N(0, std²) each)
INITS: dict[str, str] = {
    "kaiming": "kaiming_normal",   # He: N(0, 2 / fan_in)
    "xavier": "xavier_normal",     # Glorot: N(0, 2 / (fan_in + fan_out))
    "lecun": "normal",             # LeCun: N(0, 1 / fan_in)
}


def make_mlp(widths: Sequence[int], input_dim: int = 2, output_dim: int = 1, seed: int = 0,
             init: str = "kaiming", init_scale: float = 1.0) -> nn.Sequential:
    """Linear/ReLU layers of the given hidden `widths`, then a Linear to `output_dim`.

    Weights W ~ init_scale * N(0, std(fan_in, fan_out)^2) drawn by engine.nets.INITS[INITS[init]];
    biases b ~ init_scale * N(0, 1/fan_in), non-zero so the hyperplanes W_j x + b_j = 0 do not
    all pass through the origin. Deterministic for a given seed (CPU generator)."""
    widths = [int(w) for w in widths]
    if not widths or min(widths) < 1:
        raise ValueError("widths must be a non-empty list of positive integers")
    if init not in INITS:
        raise KeyError(f"unknown init {init!r}; choose one of {sorted(INITS)}")
    g = make_generator(seed, "cpu")
    dims = [int(input_dim), *widths, int(output_dim)]
    layers: list[nn.Module] = []
    for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:])):
        lin = nn.Linear(fan_in, fan_out)
        with torch.no_grad():
            lin.weight.copy_(NET_INITS[INITS[init]](fan_in, fan_out, g, init_scale))
            lin.bias.copy_(init_scale * torch.randn(fan_out, generator=g) / math.sqrt(fan_in))
        layers.append(lin)
        if i < len(dims) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def mlp_layers(model: nn.Module) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (W, b) of every Linear of a Linear/ReLU stack, as float64 numpy arrays."""
    lins = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not lins:
        raise ValueError("the model has no Linear layers")
    return [(to_numpy(m.weight).astype(np.float64), to_numpy(m.bias).astype(np.float64))
            for m in lins]


def _as_layers(model_or_layers) -> list[tuple[np.ndarray, np.ndarray]]:
    """A model's (W, b) list, or the list itself when (W, b) pairs were given."""
    if isinstance(model_or_layers, nn.Module):
        return mlp_layers(model_or_layers)
    return [(np.asarray(W, np.float64), np.asarray(b, np.float64)) for W, b in model_or_layers]


def hidden_widths(model: nn.Module) -> list[int]:
    return [w.shape[0] for w, _ in mlp_layers(model)[:-1]]


# --------------------------------------------------------------------------------------
# Exact regions in 2-D
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Region:
    vertices: np.ndarray        # (k, 2) counter-clockwise
    pattern: np.ndarray         # (n_hidden,) bool, on/off of every hidden unit, layer by layer
    output_affine: tuple[np.ndarray, np.ndarray]  # (w (out, 2), b (out,)): f(x) = w x + b

    @property
    def area(self) -> float:
        return float(polygon_area(self.vertices))

    @property
    def centroid(self) -> np.ndarray:
        return polygon_centroid(self.vertices)


@dataclass(frozen=True)
class Partition:
    """All regions as flat arrays (what figures and tables use).
    Region r has vertices vertices[offsets[r]:offsets[r+1]] (counter-clockwise)."""
    vertices: np.ndarray        # (V, 2)
    offsets: np.ndarray         # (R+1,)
    patterns: np.ndarray        # (R, n_hidden) bool
    out_w: np.ndarray           # (R, out, 2)
    out_b: np.ndarray           # (R, out)
    area: np.ndarray            # (R,)
    centroid: np.ndarray        # (R, 2)
    box: Box
    widths: tuple[int, ...] = field(default=())

    @property
    def count(self) -> int:
        return len(self.area)

    def polygon(self, r: int) -> np.ndarray:
        return self.vertices[self.offsets[r]:self.offsets[r + 1]]

    def regions(self) -> list[Region]:
        return [Region(self.polygon(r), self.patterns[r], (self.out_w[r], self.out_b[r]))
                for r in range(self.count)]


def polygon_area(v: np.ndarray) -> float:
    """Shoelace: A = 1/2 sum_i (x_i y_i+1 - x_i+1 y_i) (positive when counter-clockwise)."""
    x, y = v[:, 0], v[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def polygon_centroid(v: np.ndarray) -> np.ndarray:
    x, y = v[:, 0], v[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    a = 0.5 * cross.sum()
    if abs(a) < 1e-300:
        return v.mean(0)
    return np.array([np.sum((x + np.roll(x, -1)) * cross),
                     np.sum((y + np.roll(y, -1)) * cross)]) / (6 * a)


def _padded_area(V: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Shoelace over padded polygons V (R, K, 2) with n (R,) valid vertices each."""
    R, K, _ = V.shape
    idx = np.arange(K)[None, :]
    nxt = np.where(idx + 1 < n[:, None], idx + 1, 0)
    Vn = np.take_along_axis(V, nxt[:, :, None].repeat(2, 2), 1)
    cross = V[..., 0] * Vn[..., 1] - Vn[..., 0] * V[..., 1]
    return 0.5 * np.where(idx < n[:, None], cross, 0.0).sum(1)


def _compact(P: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move the kept points of each row to the front (order preserved), trim the padding."""
    order = np.argsort(~keep, axis=1, kind="stable")
    P = np.take_along_axis(P, order[:, :, None].repeat(2, 2), 1)
    n = keep.sum(1)
    K = max(int(n.max()) if len(n) else 0, 1)
    return P[:, :K], n


def _dedupe(V: np.ndarray, n: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Drop a vertex that lies within `tol` of the previous one (cyclically)."""
    R, K, _ = V.shape
    idx = np.arange(K)[None, :]
    prv = np.where(idx == 0, n[:, None] - 1, idx - 1)
    Vp = np.take_along_axis(V, np.maximum(prv, 0)[:, :, None].repeat(2, 2), 1)
    close = np.abs(V - Vp).max(2) <= tol
    keep = (idx < n[:, None]) & ~(close & (n[:, None] > 1))
    return _compact(V, keep)


def _clip(V: np.ndarray, n: np.ndarray, s: np.ndarray, positive: bool):
    """The part of each convex polygon where s >= 0 (positive) or s <= 0, where s (R, K) is
    an affine function sampled at the vertices (vertices with s == 0 belong to both sides).
    Along edge i -> i+1 it keeps vertex i when on the side, and adds the crossing point
    v_i + t (v_i+1 - v_i), t = s_i / (s_i - s_i+1), when the signs strictly differ."""
    R, K, _ = V.shape
    idx = np.arange(K)[None, :]
    valid = idx < n[:, None]
    nxt = np.where(idx + 1 < n[:, None], idx + 1, 0)
    Vn = np.take_along_axis(V, nxt[:, :, None].repeat(2, 2), 1)
    sn = np.take_along_axis(s, nxt, 1)
    side = (s >= 0) if positive else (s <= 0)
    cross = valid & (s * sn < 0)
    denom = np.where(cross, s - sn, 1.0)
    t = np.where(cross, s / denom, 0.0)
    X = V + t[..., None] * (Vn - V)
    P = np.stack([V, X], 2).reshape(R, 2 * K, 2)
    keep = np.stack([valid & side, cross], 2).reshape(R, 2 * K)
    return _compact(P, keep)


def _default_tol(box: Box) -> float:
    return 1e-9 * max(box[1] - box[0], box[3] - box[2])


def partition(model_or_layers, box: Box = (-2.0, 2.0, -2.0, 2.0), tol: float | None = None,
              min_area: float | None = None) -> Partition:
    """The exact partition of `box` into the linear (activation) regions of a ReLU MLP with
    2 inputs. Regions are cut layer by layer: within a region the pre-activation of unit j of
    layer l is z_j(x) = P_j x + q_j with P = W_l M_l-1, q = W_l c_l-1 + b_l (see the module
    docstring); its line z_j = 0 splits the region when the vertex values s = P_j v + q_j take
    both signs beyond `tol` (a distance, scaled by |P_j|). A cut that would leave a piece of
    area below `min_area` is not made (no slivers; the region keeps its whole area and the
    pattern of its larger side), so the areas always sum to the box area."""
    layers = _as_layers(model_or_layers)
    if layers[0][0].shape[1] != 2:
        raise ValueError("partition needs a network with 2 inputs")
    xmin, xmax, ymin, ymax = map(float, box)
    if not (xmax > xmin and ymax > ymin):
        raise ValueError("the box needs xmin < xmax and ymin < ymax")
    tol = _default_tol(box) if tol is None else float(tol)
    min_area = 1e-10 * (xmax - xmin) * (ymax - ymin) if min_area is None else float(min_area)

    V = np.array([[[xmin, ymin], [xmax, ymin], [xmax, ymax], [xmin, ymax]]], dtype=np.float64)
    n = np.array([4])
    M = np.eye(2)[None]                     # (R, d_prev, 2): h_prev = M x + c on region r
    c = np.zeros((1, 2))
    n_hidden = sum(W.shape[0] for W, _ in layers[:-1])
    pat = np.zeros((1, n_hidden), bool)     # on/off of every hidden unit, per region
    col = 0
    for W, b in layers[:-1]:
        P = np.einsum("jk,rkd->rjd", W, M)  # (R, d_l, 2)
        q = c @ W.T + b                     # (R, d_l)
        for j in range(W.shape[0]):
            a, a0 = P[:, j, :], q[:, j]
            norm = np.hypot(a[:, 0], a[:, 1])
            s = V[..., 0] * a[:, :1] + V[..., 1] * a[:, 1:] + a0[:, None]
            valid = np.arange(V.shape[1])[None, :] < n[:, None]
            s[np.abs(s) <= tol * norm[:, None]] = 0.0
            smax = np.where(valid, s, -np.inf).max(1)
            smin = np.where(valid, s, np.inf).min(1)
            split = (smax > 0) & (smin < 0)
            # unsplit regions: on iff the unit is positive somewhere (or where the unit is
            # identically ~0 on the region, a degenerate unit with P_j ~ 0: on iff q_j > 0)
            on = np.where(smax > 0, True, np.where(smin < 0, False, a0 > 0))
            if split.any():
                ii = np.flatnonzero(split)
                Vs, ns, ss = V[ii], n[ii], s[ii]
                Vp, np_ = _dedupe(*_clip(Vs, ns, ss, True), tol)
                Vm, nm = _dedupe(*_clip(Vs, ns, ss, False), tol)
                ap = np.where(np_ >= 3, _padded_area(Vp, np_), 0.0)
                am = np.where(nm >= 3, _padded_area(Vm, nm), 0.0)
                real = (ap > min_area) & (am > min_area)
                on[ii[~real]] = ap[~real] >= am[~real]
                ii, Vp, np_, Vm, nm = ii[real], Vp[real], np_[real], Vm[real], nm[real]
                # the positive piece replaces the region, the negative piece is appended
                K = max(V.shape[1], Vp.shape[1], Vm.shape[1])
                V = _pad(V, K)
                V[ii] = _pad(Vp, K)
                n = n.copy()
                n[ii] = np_
                on[ii] = True
                V = np.concatenate([V, _pad(Vm, K)])
                n = np.concatenate([n, nm])
                on = np.concatenate([on, np.zeros(len(ii), bool)])
                P = np.concatenate([P, P[ii]])
                q = np.concatenate([q, q[ii]])
                pat = np.concatenate([pat, pat[ii]])
            pat[:, col] = on
            col += 1
        D = pat[:, col - W.shape[0]:col].astype(np.float64)  # (R, d_l)
        M = D[:, :, None] * P
        c = D * q
    W, b = layers[-1]
    out_w = np.einsum("ok,rkd->rod", W, M)
    out_b = c @ W.T + b
    patterns = pat
    area = _padded_area(V, n)
    # flatten, counter-clockwise (clipping preserves the box's orientation)
    keep = np.arange(V.shape[1])[None, :] < n[:, None]
    verts = V[keep]
    offsets = np.concatenate([[0], np.cumsum(n)])
    cent = _padded_centroid(V, n, area)
    return Partition(verts, offsets, patterns, out_w, out_b, area, cent, (xmin, xmax, ymin, ymax),
                     tuple(int(W.shape[0]) for W, _ in layers[:-1]))


def _pad(V: np.ndarray, K: int) -> np.ndarray:
    if V.shape[1] >= K:
        return V
    return np.concatenate([V, np.zeros((V.shape[0], K - V.shape[1], 2))], 1)


def _padded_centroid(V: np.ndarray, n: np.ndarray, area: np.ndarray) -> np.ndarray:
    """C = 1/(6A) sum_i (v_i + v_i+1) cross_i, over padded polygons."""
    R, K, _ = V.shape
    idx = np.arange(K)[None, :]
    nxt = np.where(idx + 1 < n[:, None], idx + 1, 0)
    Vn = np.take_along_axis(V, nxt[:, :, None].repeat(2, 2), 1)
    cross = np.where(idx < n[:, None], V[..., 0] * Vn[..., 1] - Vn[..., 0] * V[..., 1], 0.0)
    num = ((V + Vn) * cross[..., None]).sum(1)
    return num / (6 * np.where(np.abs(area) > 0, area, 1.0))[:, None]


def distinct_maps(part: Partition, rtol: float = 1e-9) -> int:
    """Number of different affine maps (w, b) among the regions. Activation regions can share
    a map (e.g. when a unit's outgoing weights are zero, or a later unit is off everywhere on
    both sides of a cut), so this is <= part.count; the linear pieces proper are the unions of
    regions with one map."""
    if part.count == 0:
        return 0
    maps = np.concatenate([part.out_w.reshape(part.count, -1), part.out_b], 1)
    scale = max(float(np.abs(maps).max()), 1e-300)
    keys = np.round(maps / (rtol * scale)).astype(np.int64)
    return len(np.unique(keys, axis=0))


@dataclass(frozen=True)
class Edges:
    """Every polygon side of a partition as a segment start -> end, with the hidden layer whose
    unit cuts along it (0-based; -1 for the sides that lie on the box)."""
    start: np.ndarray   # (E, 2)
    end: np.ndarray     # (E, 2)
    layer: np.ndarray   # (E,) int
    unit: np.ndarray    # (E,) int, index into the pattern (-1 on the box)


def edge_layers(model_or_layers, part: Partition) -> Edges:
    """Which unit made each edge: an edge lies on the zero set of the unit j whose
    pre-activation z_j is closest to 0 at the edge's midpoint, measured in units of the
    spread of z_j over all midpoints (|z_j(mid)| / std_j, argmin over j). A side whose two ends
    lie on the same side of the box is a box edge. Each interior edge appears twice (once per
    neighbouring region)."""
    layers = _as_layers(model_or_layers)
    counts = np.diff(part.offsets)
    idx = np.arange(len(part.vertices))
    last = np.repeat(part.offsets[1:] - 1, counts)
    first = np.repeat(part.offsets[:-1], counts)
    nxt = np.where(idx == last, first, idx + 1)
    a, b = part.vertices, part.vertices[nxt]
    xmin, xmax, ymin, ymax = part.box
    tol = _default_tol(part.box) * 10
    on_box = np.zeros(len(a), bool)
    for k, bound in ((0, xmin), (0, xmax), (1, ymin), (1, ymax)):
        on_box |= (np.abs(a[:, k] - bound) <= tol) & (np.abs(b[:, k] - bound) <= tol)
    mid = (a + b) / 2
    zs, layer_of = [], []
    h = mid
    for li, (W, bias) in enumerate(layers[:-1]):
        z = h @ W.T + bias
        zs.append(z)
        layer_of += [li] * W.shape[0]
        h = np.maximum(z, 0.0)
    if not zs:
        empty = np.full(len(a), -1)
        return Edges(a, b, empty, empty)
    z = np.concatenate(zs, 1)
    spread = z.std(0) + 1e-12
    unit = np.argmin(np.abs(z) / spread, 1)
    layer = np.asarray(layer_of)[unit]
    return Edges(a, b, np.where(on_box, -1, layer), np.where(on_box, -1, unit))


def linear_regions(model: nn.Module, box: Box = (-2.0, 2.0, -2.0, 2.0)) -> list[Region]:
    """The exact linear regions of a 2-input ReLU MLP inside `box`, as Region objects."""
    return partition(model, box).regions()


def count_regions(model: nn.Module, box: Box = (-2.0, 2.0, -2.0, 2.0)) -> int:
    return partition(model, box).count


def grid_patterns(model: nn.Module, box: Box, res: int = 200) -> np.ndarray:
    """Activation patterns (res*res, n_hidden) bool on a regular res x res grid of the box
    (plain forward pass in float64: h <- relu(W h + b), pattern = W h + b > 0)."""
    xs = np.linspace(box[0], box[1], res)
    ys = np.linspace(box[2], box[3], res)
    xx, yy = np.meshgrid(xs, ys)
    h = np.stack([xx.ravel(), yy.ravel()], 1)
    bits = []
    for W, b in mlp_layers(model)[:-1]:
        z = h @ W.T + b
        bits.append(z > 0)
        h = np.maximum(z, 0.0)
    return np.concatenate(bits, 1) if bits else np.zeros((len(h), 0), bool)


@torch.no_grad()
def evaluate_grid(model: nn.Module, box: Box, res: int = 80,
                  device: str | torch.device = "cpu") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xs (res,), ys (res,), f (res, res) indexed [iy, ix]): the network output on a grid."""
    dev = resolve_device(device)
    xs = np.linspace(box[0], box[1], res)
    ys = np.linspace(box[2], box[3], res)
    xx, yy = np.meshgrid(xs, ys)
    pts = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32, device=dev)
    param = next(model.parameters())
    out = model.to(dev)(pts)[:, 0]
    model.to(param.device)
    return xs, ys, to_numpy(out).reshape(res, res)


MAX_LAYERS, MAX_WIDTH = 6, 32


def parse_widths(text: str, max_layers: int = MAX_LAYERS,
                 max_width: int = MAX_WIDTH) -> tuple[int, ...]:
    """'16, 8, 4' (or '16x8x4') -> (16, 8, 4). Raises ValueError with a readable reason on
    bad input, including an empty entry ('16, x, 4', '16,,4'): nothing is silently dropped."""
    parts = re.split(r"[,;x×]", str(text).strip().rstrip(",;"))
    if not "".join(parts).strip():
        raise ValueError("give at least one width, e.g. 16, 8, 4")
    if any(not p.strip() for p in parts):
        raise ValueError(f"{text!r} has an empty entry between separators; write whole "
                         f"numbers separated by commas, e.g. 16, 8, 4")
    try:
        widths = tuple(int(p.strip()) for p in parts)
    except ValueError:
        raise ValueError(f"{text!r} is not a comma-separated list of whole numbers") from None
    if len(widths) > max_layers:
        raise ValueError(f"at most {max_layers} hidden layers")
    if min(widths) < 1 or max(widths) > max_width:
        raise ValueError(f"every width must be between 1 and {max_width}")
    return widths
