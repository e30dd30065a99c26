"""Signal propagation at initialisation: how the variance of activations and gradients moves
through a deep random MLP, the mean-field (σ_w, σ_b) map, and batch normalisation step by step.

The network (all layers `width` wide, input x ~ N(0, I)):

    h_0 = x,   z_l = W_l h_{l-1} + b_l,   h_l = φ(norm(z_l)),   l = 1..L,
    W_l drawn by engine.nets.INITS[init] with gain σ_w  (init "normal": W ~ N(0, σ_w²/width)),
    b_l ~ N(0, σ_b²).

One layer (independent zero-mean weights): Var(z_l) = width · Var(W) · E[h_{l-1}²] + σ_b². For a
linear net Var(h_L)/Var(h_0) = (width · Var(W))^L; ReLU halves the second moment
(E[relu(z)²] = Var(z)/2), so Xavier (Var W = 1/width here) halves the variance per layer and He
(2/width) keeps it. Backwards, g_l = ∂loss/∂h_l obeys g_{l-1} = W_lᵀ (φ'(z_l) ⊙ g_l), so per layer
Var(g_{l-1}) / Var(g_l) = width · Var(W) · E[φ'(z)²] = χ  (σ_w² E[φ'(z)²] for init "normal").
The loss is a random readout, loss = Σ_i ⟨r_i, h_L(x_i)⟩ with r_i ~ N(0, I), so Var(g_L) = 1.

Mean field (Poole et al. 2016, Schoenholz et al. 2017): the pre-activation second moment follows
q_l = σ_w² E_{z~N(0, q_{l-1})}[φ(z)²] + σ_b² to a fixed point q*, and χ = σ_w² E_{z~N(0,q*)}[φ'(z)²]
separates the ordered phase (χ < 1: gradients vanish, inputs merge) from the chaotic one
(χ > 1: gradients explode); for tanh at σ_b = 0 the edge χ = 1 is σ_w = 1.

Batch norm (Ioffe & Szegedy 2015), per feature over a mini-batch of B samples:
μ_B = mean x, σ²_B = mean (x - μ_B)², x̂ = (x - μ_B)/√(σ²_B + ε), y = γ x̂ + β; running statistics
r_μ ← (1 - m) r_μ + m μ_B, r_σ² ← (1 - m) r_σ² + m σ²_B · B/(B - 1) (as torch); eval mode uses
y = γ (x - r_μ)/√(r_σ² + ε) + β.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.nets import INITS, init_weight

BN_EPS = 1e-5

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "linear": lambda z: z,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "gelu": F.gelu,
}

NORMS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "none": lambda z: z,
    "batchnorm": lambda z: F.batch_norm(z, None, None, training=True, eps=BN_EPS),
    "layernorm": lambda z: F.layer_norm(z, z.shape[-1:], eps=BN_EPS),
}

# Fixed histogram range per activation; values outside are counted in the end bins.
HIST_RANGE = {"tanh": (-1.0, 1.0), "sigmoid": (0.0, 1.0)}
DEFAULT_HIST_RANGE = (-3.0, 3.0)
HIST_BINS = 40
RANK_SAMPLES = 64      # (<= HIST_SAMPLES) samples in the effective rank (a (64, 64) Gram matrix per layer)
HIST_SAMPLES = 128     # samples (x all units) in each histogram and saturation fraction


@dataclass(frozen=True)
class Propagation:
    """Per-layer statistics of one random network; index 0 is the input x, index l is h_l."""
    act_mean: np.ndarray      # (L+1,) mean of h_l over samples and units
    act_var: np.ndarray       # (L+1,) variance of h_l over samples and units
    preact_var: np.ndarray    # (L+1,) variance of z_l (after the norm if any); [0] = Var(x)
    grad_var: np.ndarray      # (L+1,) Var(∂loss/∂h_l): h_l is the input of layer l+1
    eff_rank: np.ndarray      # (L+1,) exp(entropy of normalised singular values) of h_l
    hist_edges: np.ndarray    # (HIST_BINS+1,)
    hist: np.ndarray          # (L+1, HIST_BINS) fraction of the values of h_l per bin
    saturated: np.ndarray     # (L+1,) fraction of h_l within 2% of the range's ends
    diverged_at: int | None   # first layer whose activations are not finite (None: all fine)
    rank_samples: int         # how many samples the effective rank uses

    @property
    def depth(self) -> int:
        return len(self.act_var) - 1


def _var_mean(h: torch.Tensor) -> tuple[float, float]:
    """(variance, mean) over all entries of h (samples and units), population variance;
    redone in float64 when a float32 sum overflows (NaN/inf only if h itself is not finite)."""
    mean = h.mean()
    var = float(torch.linalg.vector_norm(h - mean) ** 2) / h.numel()
    if not (math.isfinite(var) and math.isfinite(float(mean))):
        v, m = torch.var_mean(h.double(), correction=0)
        return float(v), float(m)
    return var, float(mean)


def _histograms(stack: torch.Tensor, lo: float, hi: float) -> np.ndarray:
    """(layers, HIST_BINS) fraction of values per fixed bin, out-of-range values clamped."""
    layers = stack.shape[0]
    flat = torch.nan_to_num(stack.reshape(layers, -1), nan=0.0).clamp(lo, hi)
    idx = ((flat - lo) * (HIST_BINS / (hi - lo))).long().clamp(0, HIST_BINS - 1)
    idx = idx + HIST_BINS * torch.arange(layers, device=idx.device)[:, None]
    counts = torch.bincount(idx.reshape(-1), minlength=layers * HIST_BINS)
    return to_numpy(counts.reshape(layers, HIST_BINS).double() / flat.shape[1])


def effective_rank(h: np.ndarray | torch.Tensor) -> np.ndarray:
    """exp(-Σ p_i log p_i), p_i = s_i / Σ s_j over the singular values s of each (m, n) matrix
    in a batch (..., m, n); 0 for an all-zero matrix. 1 = every row on one line (rank collapse)."""
    h = torch.as_tensor(h, dtype=torch.float64)
    gram = h @ h.transpose(-1, -2)
    s = torch.linalg.eigvalsh(gram).clamp_min(0.0).sqrt()
    total = s.sum(-1, keepdim=True)
    p = torch.where(total > 0, s / total.clamp_min(1e-300), torch.zeros_like(s))
    ent = -(torch.where(p > 0, p * torch.log(p.clamp_min(1e-300)), torch.zeros_like(p))).sum(-1)
    return np.where(to_numpy(total[..., 0]) > 0, np.exp(to_numpy(ent)), 0.0)


def propagate(depth: int, width: int, activation: str = "tanh", init: str = "normal",
              n_samples: int = 1024, seed: int = 0, norm: str = "none", sigma_w: float = 1.0,
              sigma_b: float = 0.0, device: str | torch.device | None = None) -> Propagation:
    """Forward a batch x ~ N(0, I) of n_samples through a random MLP and back-propagate the
    random readout loss; per layer: mean/variance of h_l and z_l, the variance of the gradient
    w.r.t. h_l, the effective rank of h_l (first RANK_SAMPLES samples) and a histogram."""
    hs, zs, g, dev = _forward(depth, width, activation, init, n_samples, seed, norm, sigma_w,
                              sigma_b, device)
    readout = torch.randn(int(n_samples), int(width), generator=g).to(dev)
    (hs[-1] * readout).sum().backward()
    return _summarise(hs, zs, activation, min(RANK_SAMPLES, int(n_samples)))


def _forward(depth, width, activation, init, n_samples, seed, norm, sigma_w, sigma_b, device):
    """The random MLP of propagate on x ~ N(0, I): (h_0 … h_L with gradients retained,
    z_0 … z_L, the generator after the layers' draws, the device)."""
    for name, table in (("activation", ACTIVATIONS), ("norm", NORMS), ("init", INITS)):
        value = {"activation": activation, "norm": norm, "init": init}[name]
        if value not in table:
            raise KeyError(f"unknown {name} {value!r}; choose one of {sorted(table)}")
    depth, width, n_samples = int(depth), int(width), int(n_samples)
    if depth < 1 or width < 1 or n_samples < 2:
        raise ValueError("depth and width must be >= 1 and n_samples >= 2")
    dev = resolve_device(device)
    g = make_generator(seed, "cpu")
    phi, normalize = ACTIVATIONS[activation], NORMS[norm]
    x = torch.randn(n_samples, width, generator=g).to(dev).requires_grad_(True)
    hs, zs = [x], [x.detach()]
    h = x
    for _ in range(depth):
        w = init_weight(init, width, width, g, sigma_w).to(dev)
        b = (float(sigma_b) * torch.randn(width, generator=g)).to(dev)
        z = normalize(F.linear(h, w, b))
        h = phi(z)
        h.retain_grad()
        hs.append(h)
        zs.append(z.detach())
    return hs, zs, g, dev


def covariance_spectra(depth: int, width: int, activation: str = "tanh", init: str = "normal",
                       n_samples: int = 1024, seed: int = 0, norm: str = "none",
                       sigma_w: float = 1.0, sigma_b: float = 0.0,
                       device: str | torch.device | None = None) -> np.ndarray:
    """(L+1, width): the eigenvalues, largest first, of the covariance over the samples of
    h_0 = x, h_1, …, h_L of the same network propagate builds (same seed, same draws)."""
    hs = _forward(depth, width, activation, init, n_samples, seed, norm, sigma_w, sigma_b,
                  device)[0]
    out = []
    for h in hs:
        h = h.detach().to("cpu", torch.float64)
        out.append(to_numpy(torch.linalg.eigvalsh(torch.cov(h.T)).flip(0)))
    return np.stack(out)


def _summarise(hs: list[torch.Tensor], zs: list[torch.Tensor], activation: str,
               rank_samples: int) -> Propagation:
    lo, hi = HIST_RANGE.get(activation, DEFAULT_HIST_RANGE)
    n = len(hs)
    act_var, act_mean, pre_var, grad_var = (np.full(n, np.nan) for _ in range(4))
    diverged_at = None
    for l, (h, z) in enumerate(zip(hs, zs)):
        act_var[l], act_mean[l] = _var_mean(h.detach())
        if not (math.isfinite(act_var[l]) and math.isfinite(act_mean[l])):
            diverged_at = l
            act_var[l] = act_mean[l] = np.nan
            break
        pre_var[l] = _var_mean(z)[0]
        if h.grad is not None:
            grad_var[l] = _var_mean(h.grad)[0]
    finite = n if diverged_at is None else diverged_at
    grad_var[~np.isfinite(grad_var)] = np.nan
    grad_var[finite:] = np.nan
    hist, sat, rank = np.zeros((n, HIST_BINS)), np.full(n, np.nan), np.full(n, np.nan)
    if finite:
        head = torch.stack([h.detach()[:HIST_SAMPLES] for h in hs[:finite]])
        hist[:finite] = _histograms(head, lo, hi)
        margin = 0.02 * (hi - lo)
        sat[:finite] = to_numpy(((head <= lo + margin) | (head >= hi - margin)).double()
                                .mean(dim=(1, 2)))
        rank[:finite] = effective_rank(head[:, :rank_samples].to("cpu"))
    return Propagation(act_mean, act_var, pre_var, grad_var, rank,
                       np.linspace(lo, hi, HIST_BINS + 1), hist, sat, diverged_at, rank_samples)


def per_layer_ratio(values: np.ndarray, first: int = 1, last: int | None = None) -> float:
    """Geometric-mean ratio per layer between entries `first` and `last` (default: the end):
    (values[last] / values[first]) ** (1 / (last - first)); NaN when not finite/positive."""
    last = len(values) - 1 if last is None else last
    a, b = float(values[first]), float(values[last])
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)) or last <= first:
        return math.nan
    return (b / a) ** (1.0 / (last - first))


# --------------------------------------------------------------------------------------
# Mean field: the (σ_w, σ_b) map
# --------------------------------------------------------------------------------------

DERIVATIVES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": np.ones_like,
    "tanh": lambda z: 1.0 - np.tanh(z) ** 2,
    "relu": lambda z: (z > 0).astype(np.float64),
    "sigmoid": lambda z: (s := 1.0 / (1.0 + np.exp(-z))) * (1.0 - s),
    "gelu": lambda z: _norm_cdf(z) + z * np.exp(-0.5 * z ** 2) / math.sqrt(2 * math.pi),
}

NUMPY_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": lambda z: z,
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
    "sigmoid": lambda z: 1.0 / (1.0 + np.exp(-z)),
    "gelu": lambda z: z * _norm_cdf(z),
}


def _norm_cdf(z: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr
    return ndtr(z)


@dataclass(frozen=True)
class VarianceMap:
    """Mean-field quantities on a (σ_b, σ_w) grid: arrays are indexed [i_b, i_w]."""
    sigma_w: np.ndarray       # (n_w,)
    sigma_b: np.ndarray       # (n_b,)
    q: np.ndarray             # (n_b, n_w) pre-activation second moment after `depth` layers
    chi: np.ndarray           # (n_b, n_w) σ_w² E[φ'(z)²], z ~ N(0, q)
    boundary_w: np.ndarray    # (n_b,) σ_w where χ first reaches 1 (linear interpolation; NaN)
    depth: int


def _gauss(n: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """Nodes/weights with Σ w f(x) ≈ E_{x~N(0,1)} f(x) (probabilists' Gauss-Hermite); an even
    count has no node at 0, so the ReLU step φ' gets E = 1/2 exactly."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / math.sqrt(2 * math.pi)


def variance_map(activation: str = "tanh", sigma_w_range: tuple[float, float] = (0.1, 4.0),
                 sigma_b_range: tuple[float, float] = (0.0, 2.0), depth: int = 50,
                 resolution: int = 60) -> VarianceMap:
    """Iterate q_l = σ_w² E[φ(√q_{l-1} u)²] + σ_b² (u ~ N(0,1), q_1 = σ_w² + σ_b² for
    an input with E[x²] = 1) `depth` times on a grid, then χ = σ_w² E[φ'(√q u)²]."""
    if activation not in NUMPY_ACTIVATIONS:
        raise KeyError(f"unknown activation {activation!r}; choose one of {sorted(DERIVATIVES)}")
    sw = np.linspace(*sigma_w_range, resolution)
    sb = np.linspace(*sigma_b_range, resolution)
    SW, SB = np.meshgrid(sw, sb)                      # [i_b, i_w]
    u, wts = _gauss()
    phi, dphi = NUMPY_ACTIVATIONS[activation], DERIVATIVES[activation]
    q = SW ** 2 + SB ** 2
    for _ in range(int(depth) - 1):
        q = SW ** 2 * (phi(np.sqrt(q)[..., None] * u) ** 2 @ wts) + SB ** 2
    chi = SW ** 2 * (dphi(np.sqrt(q)[..., None] * u) ** 2 @ wts)
    return VarianceMap(sw, sb, q, chi, _first_crossing(sw, chi), int(depth))


def _first_crossing(sw: np.ndarray, chi: np.ndarray) -> np.ndarray:
    out = np.full(chi.shape[0], np.nan)
    for i, row in enumerate(chi):
        above = np.nonzero(row >= 1.0)[0]
        if len(above) and above[0] > 0:
            j = above[0]
            t = (1.0 - row[j - 1]) / (row[j] - row[j - 1])
            out[i] = sw[j - 1] + t * (sw[j] - sw[j - 1])
    return out


def chi_at(activation: str, sigma_w: float, sigma_b: float, depth: int = 50) -> float:
    """χ at one point (the map on a 1x1 grid)."""
    m = variance_map(activation, (sigma_w, sigma_w), (sigma_b, sigma_b), depth, resolution=1)
    return float(m.chi[0, 0])


# --------------------------------------------------------------------------------------
# Batch norm, step by step
# --------------------------------------------------------------------------------------

DATA_MEAN = np.array([3.0, -1.0, 0.5])
DATA_STD = np.array([2.0, 0.5, 1.0])


@dataclass(frozen=True)
class BatchNormTrace:
    """One BN layer (F features) fed `n_batches` mini-batches of `batch_size` from N(mean, std²)."""
    x: np.ndarray              # (B, F) the last mini-batch
    batch_mean: np.ndarray     # (F,) μ_B of that batch
    batch_var: np.ndarray      # (F,) σ²_B (biased, 1/B)
    x_hat: np.ndarray          # (B, F) (x - μ_B) / √(σ²_B + ε)
    y_train: np.ndarray        # (B, F) γ x̂ + β
    y_eval: np.ndarray         # (B, F) γ (x - r_μ) / √(r_σ² + ε) + β, final running stats
    running_mean: np.ndarray   # (K+1, F) r_μ after 0..K batches (starts at 0)
    running_var: np.ndarray    # (K+1, F) r_σ² after 0..K batches (starts at 1)
    data_mean: np.ndarray      # (F,)
    data_std: np.ndarray       # (F,)
    gamma: np.ndarray
    beta: np.ndarray
    momentum: float
    eps: float


def _batches(n_batches: int, batch_size: int, mean: np.ndarray, std: np.ndarray,
             seed: int) -> np.ndarray:
    rng = numpy_rng(seed)
    return mean + std * rng.standard_normal((n_batches, batch_size, len(mean)))


def _running_stats(xs: np.ndarray, momentum: float) -> tuple[np.ndarray, np.ndarray]:
    k, b, f = xs.shape
    mu = xs.mean(1)
    var_unbiased = xs.var(1, ddof=1) if b > 1 else np.zeros((k, f))
    rm, rv = np.zeros((k + 1, f)), np.ones((k + 1, f))
    for i in range(k):
        rm[i + 1] = (1 - momentum) * rm[i] + momentum * mu[i]
        rv[i + 1] = (1 - momentum) * rv[i] + momentum * var_unbiased[i]
    return rm, rv


def batchnorm_trace(batch_size: int = 8, n_batches: int = 60, momentum: float = 0.1,
                    gamma: float = 1.0, beta: float = 0.0, seed: int = 0,
                    data_mean: np.ndarray = DATA_MEAN, data_std: np.ndarray = DATA_STD,
                    eps: float = BN_EPS) -> BatchNormTrace:
    """The BN computation on the last of `n_batches` mini-batches, and the running statistics."""
    if batch_size < 2:
        raise ValueError("batch norm in train mode needs a batch of at least 2 samples")
    mean, std = np.asarray(data_mean, float), np.asarray(data_std, float)
    xs = _batches(max(1, int(n_batches)), int(batch_size), mean, std, seed)
    rm, rv = _running_stats(xs, float(momentum))
    x = xs[-1]
    mu, var = x.mean(0), x.var(0)
    x_hat = (x - mu) / np.sqrt(var + eps)
    g, bt = np.full(len(mean), float(gamma)), np.full(len(mean), float(beta))
    y_eval = g * (x - rm[-1]) / np.sqrt(rv[-1] + eps) + bt
    return BatchNormTrace(x, mu, var, x_hat, g * x_hat + bt, y_eval, rm, rv, mean, std,
                          g, bt, float(momentum), float(eps))


def train_vs_eval_gap(batch_size: int, n_warmup: int = 200, n_eval: int = 50,
                      momentum: float = 0.1, seed: int = 0,
                      data_mean: np.ndarray = DATA_MEAN, data_std: np.ndarray = DATA_STD,
                      eps: float = BN_EPS) -> float:
    """Mean |y_train - y_eval| (γ = 1, β = 0, so in units of the normalised output) over n_eval
    fresh batches, with the running statistics of n_warmup training batches: how differently
    the same layer answers in train mode (batch statistics) and eval mode (running ones)."""
    if batch_size < 2:
        raise ValueError("batch norm in train mode needs a batch of at least 2 samples")
    mean, std = np.asarray(data_mean, float), np.asarray(data_std, float)
    xs = _batches(int(n_warmup) + int(n_eval), int(batch_size), mean, std, seed)
    rm, rv = _running_stats(xs[:n_warmup], float(momentum))
    test = xs[n_warmup:]
    y_train = (test - test.mean(1, keepdims=True)) / np.sqrt(test.var(1, keepdims=True) + eps)
    y_eval = (test - rm[-1]) / np.sqrt(rv[-1] + eps)
    return float(np.abs(y_train - y_eval).mean())
