"""GANs on 2-D targets, made measurable: losses, remedies against mode collapse, mode
coverage, the Dirac-GAN and the parallel-lines example. Pure torch/numpy (no drawing).

Notation used in the code: D(x) is the discriminator's / critic's raw output (a logit for the
classifier losses), G(z) the generator, `r = D(x_real)`, `f = D(G(z))`.

    min_G max_D  E log σ(r) + E log(1 − σ(f))                      ("minimax")

With the optimal D*(x) = p_data / (p_data + p_g) the generator minimises 2·JSD(p_data‖p_g) − log 4.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from engine import weights as weights_file
from engine.datasets import ToyData, grid, ring, spiral, two_moons
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.training import History

# --------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------

POOL_SIZE = 20_000   # real points drawn once per target; batches are drawn from this pool


def bimodal_1d(n: int = 1000, seed: int = 0, noise: float = 0.1, gap: float = 1.5) -> ToyData:
    """1-D bimodal target on the x-axis: x₁ ~ ½N(−gap, noise²) + ½N(+gap, noise²), x₂ = 0."""
    rng = numpy_rng(seed)
    labels = rng.integers(0, 2, n)
    centers = np.array([[-gap, 0.0], [gap, 0.0]], dtype=np.float32)
    pts = centers[labels].copy()
    pts[:, 0] += noise * rng.standard_normal(n)
    return ToyData(pts.astype(np.float32), labels.astype(np.int64), centers, float(noise),
                   np.array([0.5, 0.5]))


# name -> gen(n, seed, std) -> ToyData. Mixtures (ring, grid, bimodal) carry centers + std.
TARGETS: dict[str, Callable[..., ToyData]] = {
    "ring of 8": lambda n, seed, std: ring(n, seed, noise=std, k=8, radius=2.0),
    "5x5 grid": lambda n, seed, std: grid(n, seed, noise=std, k=5, spacing=1.0),
    "two moons": lambda n, seed, std: two_moons(n, seed, noise=std),
    "spiral": lambda n, seed, std: spiral(n, seed, noise=std),
    "1-D bimodal": lambda n, seed, std: bimodal_1d(n, seed, noise=std),
}


def make_target(name: str, std: float = 0.05, seed: int = 0, n: int = POOL_SIZE) -> ToyData:
    """TARGETS[name](n, seed, std) with a clear error for an unknown name or a bad std."""
    if name not in TARGETS:
        raise KeyError(f"unknown target {name!r}; choose one of {list(TARGETS)}")
    if not (0 < std <= 1.0):
        raise ValueError("std must be in (0, 1]")
    return TARGETS[name](int(n), int(seed), float(std))


def data_box(points: np.ndarray, margin: float = 0.5) -> tuple[float, float, float, float]:
    """(x_min, x_max, y_min, y_max) of the points, padded, with equal-ish extent >= 1."""
    lo, hi = points.min(0), points.max(0)
    mid, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 0.5) + margin
    return (float(mid[0] - half[0]), float(mid[0] + half[0]),
            float(mid[1] - half[1]), float(mid[1] + half[1]))


# --------------------------------------------------------------------------------------
# Mode coverage
# --------------------------------------------------------------------------------------

MIN_SHARE = 0.01   # a mode is "covered" if it holds >= 1% of the samples (20 of 2000)


@dataclass(frozen=True)
class Coverage:
    modes_covered: int            # modes holding >= min_share of all samples
    n_modes: int
    high_quality_fraction: float  # share of samples within n_sigma·std of their nearest mode
    histogram: np.ndarray         # (k,) samples assigned to each mode
    reverse_kl: float             # KL(q ‖ uniform) = log k − H(q), q = histogram / its sum
    n_samples: int = 0            # n, the number of samples looked at
    min_share: float = MIN_SHARE

    @property
    def covered(self) -> np.ndarray:
        """(k,) bool: which modes hold >= min_share·n samples."""
        return self.histogram >= self.min_share * max(self.n_samples, 1)


def mode_coverage(samples: np.ndarray, centers: np.ndarray, std: float, n_sigma: float = 3.0,
                  min_share: float = MIN_SHARE) -> Coverage:
    """A sample belongs to its nearest center c_j if ‖x − c_j‖ <= n_sigma·std (a "high-quality"
    sample); mode j is covered if count_j >= min_share·n (n = all samples). The third number is
    KL(q ‖ u) = Σ_j q_j log(q_j k), q_j = count_j / Σ count: 0 for a uniform spread, log k for
    one mode; NaN when no sample is near any mode."""
    x = np.asarray(samples, dtype=np.float64)
    c = np.asarray(centers, dtype=np.float64)
    k = len(c)
    d2 = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)          # (n, k)
    nearest = d2.argmin(1)
    good = np.sqrt(d2[np.arange(len(x)), nearest]) <= n_sigma * std
    hist = np.bincount(nearest[good], minlength=k).astype(np.int64)
    n = max(len(x), 1)
    covered = int((hist >= min_share * n).sum()) if len(x) else 0
    total = hist.sum()
    if total:
        q = hist / total
        nz = q > 0
        rkl = float((q[nz] * np.log(q[nz] * k)).sum())
    else:
        rkl = math.nan
    return Coverage(covered, k, float(good.mean()) if len(x) else 0.0, hist, rkl, len(x), min_share)


# --------------------------------------------------------------------------------------
# Losses (registry). Each maps raw D outputs to the two objectives that are minimised.
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GANLoss:
    d_loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (r, f) -> scalar
    g_loss: Callable[[torch.Tensor], torch.Tensor]                # f -> scalar
    critic: bool          # True: D is an unbounded critic (Wasserstein); False: a classifier
    formula: str          # LaTeX for the page


LOSSES: dict[str, GANLoss] = {
    # D: −log σ(r) − log(1 − σ(f)) = softplus(−r) + softplus(f); G: log(1 − σ(f)) = −softplus(f)
    "minimax": GANLoss(lambda r, f: F.softplus(-r).mean() + F.softplus(f).mean(),
                       lambda f: -F.softplus(f).mean(), False,
                       r"\min_G\ \mathbb{E}\log(1-D(G(z)))"),
    # G: −log σ(f) = softplus(−f)
    "nonsaturating": GANLoss(lambda r, f: F.softplus(-r).mean() + F.softplus(f).mean(),
                             lambda f: F.softplus(-f).mean(), False,
                             r"\min_G\ -\mathbb{E}\log D(G(z))"),
    # least squares: D: ½(r − 1)² + ½f², G: ½(f − 1)²
    "lsgan": GANLoss(lambda r, f: 0.5 * ((r - 1) ** 2).mean() + 0.5 * (f ** 2).mean(),
                     lambda f: 0.5 * ((f - 1) ** 2).mean(), False,
                     r"\min_G\ \tfrac12\mathbb{E}(D(G(z))-1)^2"),
    # hinge: D: relu(1 − r) + relu(1 + f), G: −f
    "hinge": GANLoss(lambda r, f: F.relu(1 - r).mean() + F.relu(1 + f).mean(),
                     lambda f: -f.mean(), True,
                     r"\min_D\ \mathbb{E}[1-D(x)]_+ + \mathbb{E}[1+D(G(z))]_+"),
    # Wasserstein critic: D: f − r, G: −f; Lipschitz by weight clipping (clip c)
    "wgan-clip": GANLoss(lambda r, f: f.mean() - r.mean(), lambda f: -f.mean(), True,
                         r"\min_D\ \mathbb{E}D(G(z)) - \mathbb{E}D(x),\ |w|\le c"),
    # ... or by the gradient penalty λ(‖∇D(x̂)‖ − 1)² on interpolates (added in the trainer)
    "wgan-gp": GANLoss(lambda r, f: f.mean() - r.mean(), lambda f: -f.mean(), True,
                       r"\min_D\ \mathbb{E}D(G(z)) - \mathbb{E}D(x) + "
                       r"\lambda\,\mathbb{E}(\|\nabla D(\hat x)\|-1)^2"),
}


def gradient_penalty(critic: Callable[[torch.Tensor], torch.Tensor], real: torch.Tensor,
                     fake: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """WGAN-GP: E (‖∇_x̂ D(x̂)‖₂ − 1)² with x̂ = eps·real + (1 − eps)·fake, eps ~ U[0,1] per row
    (shape (B, 1)). Differentiable w.r.t. the critic's parameters (create_graph=True)."""
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def r1_penalty(critic: Callable[[torch.Tensor], torch.Tensor], real: torch.Tensor) -> torch.Tensor:
    """R1 (Mescheder et al. 2018): ½ E‖∇_x D(x_real)‖²; the trainer multiplies by r1_gamma."""
    x = real.detach().requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    return 0.5 * (grad ** 2).sum(1).mean()


# --------------------------------------------------------------------------------------
# Networks and optimizers
# --------------------------------------------------------------------------------------

def mlp(d_in: int, hidden: tuple[int, ...], d_out: int, act: Callable[[], nn.Module],
        spectral: bool = False) -> nn.Sequential:
    """Linear → act → ... → Linear; with `spectral`, every Linear weight is W / σ(W), σ from one
    power-iteration step per forward (σ ≈ uᵀWv)."""
    layers: list[nn.Module] = []
    dims = (d_in, *hidden)
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), act()]
    layers.append(nn.Linear(dims[-1], d_out))
    if spectral:
        layers = [nn.utils.parametrizations.spectral_norm(m) if isinstance(m, nn.Linear) else m
                  for m in layers]
    return nn.Sequential(*layers)


# foreach=True: one multi-tensor call per update instead of one per parameter (the default on
# CUDA; on the CPU a little less Python per step, bitwise the per-parameter loop's numbers).
OPTIMIZERS: dict[str, Callable] = {
    "adam": lambda params, lr, betas: torch.optim.Adam(params, lr=lr, betas=betas, foreach=True),
    "rmsprop": lambda params, lr, betas: torch.optim.RMSprop(params, lr=lr,   # PyTorch α = 0.99
                                                             foreach=True),
    "sgd": lambda params, lr, betas: torch.optim.SGD(params, lr=lr, foreach=True),
}


# Differentiable optimizer updates for the unrolled D, on all of D's parameters flattened
# into one vector p (a few large ops instead of many small ones): update(p, g, state, lr,
# betas) -> (new p, new state). Every op keeps the graph, so G's gradient flows through them.

def _unroll_state(opt: torch.optim.Optimizer, params: list[torch.Tensor]) -> dict:
    """opt's current state for `params`, detached and flattened like p: step t, and Adam's
    moments m, v or RMSprop's square_avg s where it has them (absent before its first step:
    the updates then start from zeros)."""
    st = [opt.state.get(p, {}) for p in params]
    state: dict = {"t": float(st[0]["step"]) if st and "step" in st[0] else 0.0}
    for name, key in (("m", "exp_avg"), ("v", "exp_avg_sq"), ("s", "square_avg")):
        if st and key in st[0]:
            state[name] = torch.cat([s[key].detach().reshape(-1) for s in st])
    return state


def _adam_unroll(p, g, state, lr, betas, eps=1e-8):
    """Adam: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², p ← p − lr·m̂ / (√(v̂ + eps²) + eps),
    m̂ = m / (1 − β₁ᵗ), v̂ = v / (1 − β₂ᵗ). The eps² inside the root keeps its derivative finite
    where v = 0; otherwise this is torch.optim.Adam's step (checked in the tests)."""
    b1, b2 = betas
    t = state["t"] + 1
    zero = torch.zeros_like(p)
    m = b1 * state.get("m", zero) + (1 - b1) * g
    v = b2 * state.get("v", zero) + (1 - b2) * g * g
    p = p - (lr / (1 - b1 ** t)) * m / ((v / (1 - b2 ** t) + eps * eps).sqrt() + eps)
    return p, {**state, "t": t, "m": m, "v": v}


def _rmsprop_unroll(p, g, state, lr, betas, alpha=0.99, eps=1e-8):
    """RMSprop (PyTorch's): s ← αs + (1−α)g², p ← p − lr·g / (√(s + eps²) + eps)."""
    s = alpha * state.get("s", torch.zeros_like(p)) + (1 - alpha) * g * g
    return p - lr * g / ((s + eps * eps).sqrt() + eps), {**state, "s": s}


UNROLL_UPDATES: dict[str, Callable] = {
    "adam": _adam_unroll,
    "rmsprop": _rmsprop_unroll,
    "sgd": lambda p, g, state, lr, betas: (p - lr * g, state),
}


class Discriminator(nn.Module):
    """D on 2-D points with the optional remedies that change its input:
    PacGAN `pack`: D sees `pack` samples concatenated, (B, 2) -> (B/pack, 2·pack);
    `minibatch_std`: the mean over features of the batch std, s = mean_j std_i(x_ij), is
    appended to every row as one more input."""

    def __init__(self, hidden: tuple[int, ...], pack: int = 1, minibatch_std: bool = False,
                 spectral: bool = False, dim: int = 2):
        super().__init__()
        self.pack, self.minibatch_std = int(pack), bool(minibatch_std)
        d_in = dim * self.pack + (1 if self.minibatch_std else 0)
        self.net = mlp(d_in, hidden, 1, lambda: nn.LeakyReLU(0.2), spectral)

    def prepare(self, x: torch.Tensor) -> torch.Tensor:
        if self.pack > 1:
            x = x[: (len(x) // self.pack) * self.pack].reshape(-1, x.shape[1] * self.pack)
        if self.minibatch_std:
            s = x.std(0, unbiased=False).mean() if len(x) > 1 else x.new_zeros(())
            x = torch.cat([x, s.expand(len(x), 1)], 1)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(self.prepare(x)).squeeze(-1)

    def pointwise(self, x: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """D's value for each single point x (for heatmaps and arrows): the point is packed
        with copies of itself, and the minibatch-std feature is taken from `context` (a
        batch of fakes) or 0."""
        h = x.repeat(1, self.pack) if self.pack > 1 else x
        if self.minibatch_std:
            s = (context.std(0, unbiased=False).mean() if context is not None and len(context) > 1
                 else x.new_zeros(()))
            h = torch.cat([h, s.expand(len(h), 1)], 1)
        return self.net(h).squeeze(-1)


# --------------------------------------------------------------------------------------
# The trainer
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CriticGrid:
    xs: np.ndarray       # (res,)
    ys: np.ndarray       # (res,)
    values: np.ndarray   # (res, res) [iy, ix]: σ(D) for classifier losses, D for critics
    kind: str            # "D(x) = P(real)" or "critic D(x)"


@dataclass(frozen=True)
class GANSnapshot:
    step: int
    real: np.ndarray            # (m, 2) real points (fixed subset)
    fake: np.ndarray            # (m, 2) generated points (fixed latent codes)
    arrows_at: np.ndarray       # (a, 2) fakes that get an arrow
    arrows: np.ndarray          # (a, 2) −∇_x loss_G at those fakes (direction they move)
    critic: CriticGrid
    coverage: Coverage | None   # None when the target has no modes (moons, spiral, upload)
    diverged_at: int | None


@dataclass
class _Eval:
    steps: list[int] = field(default_factory=list)
    hists: list[list[int]] = field(default_factory=list)


class GANTrainer:
    """A GAN on 2-D points following engine.training's trainer protocol.

    One iteration = `d_steps` updates of D on  L_D(r, f) [+ λ·GP] [+ r1_gamma·R1]  followed by
    `g_steps` updates of G on  L_G(f), with r = D(x_real), f = D(G(z)), z ~ N(0, I_latent_dim),
    the pair (L_D, L_G) from LOSSES[loss]. Remedies (keyword arguments):
      unrolled_steps k: G's loss is taken against D_k, D after k differentiable updates on
        L_D by D's optimizer rule (Adam from opt_d's moments; `unroll_optimizer`, `unroll_lr`
        override it, default lr_d) (Metz et al. 2016; gradients flow through the unroll);
      r1_gamma γ: + (γ/2) E‖∇D(x_real)‖²;  gp_lambda λ for "wgan-gp";  clip c for "wgan-clip";
      spectral_norm: W / σ(W) in every layer of D;  pack: PacGAN;  minibatch_std.
    Every `eval_every` iterations the mode coverage of G on `eval_n` fixed latent codes is logged.
    """

    def __init__(self, target: ToyData, loss: str = "nonsaturating",
                 g_hidden: tuple[int, ...] = (128, 128), d_hidden: tuple[int, ...] = (128, 128),
                 latent_dim: int = 2, lr_g: float = 1e-3, lr_d: float = 1e-3,
                 optimizer: str = "adam", betas: tuple[float, float] = (0.5, 0.999),
                 d_steps: int = 1, g_steps: int = 1, batch_size: int = 256, seed: int = 0,
                 device: str | torch.device | None = None, *, unrolled_steps: int = 0,
                 unroll_lr: float | None = None, unroll_optimizer: str | None = None,
                 r1_gamma: float = 0.0,
                 spectral_norm: bool = False, minibatch_std: bool = False, pack: int = 1,
                 gp_lambda: float = 10.0, clip: float = 0.01, eval_every: int = 50,
                 eval_n: int = 2000, n_sigma: float = 3.0):
        if loss not in LOSSES:
            raise KeyError(f"unknown loss {loss!r}; choose one of {list(LOSSES)}")
        if optimizer not in OPTIMIZERS:
            raise KeyError(f"unknown optimizer {optimizer!r}; choose one of {list(OPTIMIZERS)}")
        if min(d_steps, g_steps, batch_size, latent_dim, pack) < 1 or unrolled_steps < 0:
            raise ValueError("d_steps, g_steps, batch_size, latent_dim and pack must be >= 1")
        self.device = resolve_device(device)
        self.target = target
        self.loss_name, self.loss = loss, LOSSES[loss]
        self.latent_dim, self.batch_size = int(latent_dim), int(batch_size)
        self.d_steps, self.g_steps = int(d_steps), int(g_steps)
        self.unrolled_steps, self.r1_gamma = int(unrolled_steps), float(r1_gamma)
        self.unroll_optimizer = unroll_optimizer or optimizer
        if self.unroll_optimizer not in UNROLL_UPDATES:
            raise KeyError(f"unknown unroll optimizer {self.unroll_optimizer!r}; choose one of "
                           f"{list(UNROLL_UPDATES)}")
        self.unroll_lr = float(unroll_lr if unroll_lr is not None else lr_d)
        self.betas = (float(betas[0]), float(betas[1]))
        self.gp_lambda, self.clip = float(gp_lambda), float(clip)
        self.eval_every, self.n_sigma = int(eval_every), float(n_sigma)
        self.seed = int(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.G = mlp(self.latent_dim, tuple(g_hidden), 2, nn.ReLU)
            self.D = Discriminator(tuple(d_hidden), pack, minibatch_std, spectral_norm)
        self.G.to(self.device)
        self.D.to(self.device)
        self.opt_g = OPTIMIZERS[optimizer](self.G.parameters(), lr_g, betas)
        self.opt_d = OPTIMIZERS[optimizer](self.D.parameters(), lr_d, betas)
        self.gen = make_generator(self.seed + 1, self.device)
        self.real = torch.as_tensor(target.points, dtype=torch.float32, device=self.device)
        g_eval = make_generator(self.seed + 2, "cpu")
        self.z_eval = torch.randn(int(eval_n), self.latent_dim, generator=g_eval).to(self.device)
        rng = numpy_rng(self.seed + 3)
        self.show_idx = rng.choice(len(target.points), min(600, len(target.points)), replace=False)
        self.box = data_box(target.points)
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()
        self.evals = _Eval()
        self.pretrained: dict | None = None   # set by load_trainer: where the state came from
        self._evaluate()

    # ---- sampling -------------------------------------------------------------------
    def _real_batch(self) -> torch.Tensor:
        idx = torch.randint(len(self.real), (self.batch_size,), generator=self.gen,
                            device=self.device)
        return self.real[idx]

    def _z(self, n: int | None = None) -> torch.Tensor:
        return torch.randn(n or self.batch_size, self.latent_dim, generator=self.gen,
                           device=self.device)

    @torch.no_grad()
    def sample(self, n: int = 1000, seed: int | None = None) -> np.ndarray:
        """n generated points (n, 2); with `seed`, from fresh seeded latent codes."""
        if seed is None:
            z = self._z(n)
        else:
            z = torch.randn(n, self.latent_dim, generator=make_generator(seed, "cpu"))
        return to_numpy(self.G(z.to(self.device)))

    # ---- updates ----------------------------------------------------------------------
    def _d_objective(self, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
        loss = self.loss.d_loss(self.D(real), self.D(fake))
        if self.loss_name == "wgan-gp":
            m = min(len(real), len(fake))
            eps = torch.rand(m, 1, generator=self.gen, device=self.device)
            loss = loss + self.gp_lambda * gradient_penalty(self.D, real[:m], fake[:m], eps)
        if self.r1_gamma > 0:
            loss = loss + self.r1_gamma * r1_penalty(self.D, real)
        return loss

    def d_step(self) -> float:
        """One update of D on a fresh real batch and fresh fakes; returns L_D."""
        real = self._real_batch()
        with torch.no_grad():
            fake = self.G(self._z())
        self.opt_d.zero_grad(set_to_none=True)
        loss = self._d_objective(real, fake)
        loss.backward()
        self.opt_d.step()
        if self.loss_name == "wgan-clip":
            with torch.no_grad():
                for p in self.D.parameters():
                    p.clamp_(-self.clip, self.clip)
        return loss.detach()

    def unrolled_params(self, fake: torch.Tensor) -> dict[str, torch.Tensor]:
        """D's parameters after `unrolled_steps` differentiable updates on L_D by D's own
        optimizer rule (UNROLL_UPDATES[unroll_optimizer], from opt_d's current state, as Metz
        et al. 2016 unroll Adam), each on a fresh real batch and the same `fake` = G(z), which
        enters with its graph: G's gradient then sees how D would react to it. D itself is not
        changed."""
        named = list(self.D.named_parameters())
        shapes = [p.shape for _, p in named]
        sizes = [p.numel() for _, p in named]
        state = _unroll_state(self.opt_d, [p for _, p in named])
        flat = torch.cat([p.detach().reshape(-1) for _, p in named]).requires_grad_(True)
        update = UNROLL_UPDATES[self.unroll_optimizer]
        # one forward on [real; fake] unless D mixes rows (minibatch std, packing)
        joint = not self.D.minibatch_std and self.D.pack == 1

        def as_params(vec: torch.Tensor) -> dict[str, torch.Tensor]:
            return {n: v.view(s) for (n, _), v, s in zip(named, vec.split(sizes), shapes)}

        for _ in range(self.unrolled_steps):
            real, params = self._real_batch(), as_params(flat)
            if joint:
                r, f = functional_call(self.D, params, (torch.cat([real, fake]),)).split(
                    [len(real), len(fake)])
            else:
                r = functional_call(self.D, params, (real,))
                f = functional_call(self.D, params, (fake,))
            (grad,) = torch.autograd.grad(self.loss.d_loss(r, f), flat, create_graph=True)
            flat, state = update(flat, grad, state, self.unroll_lr, self.betas)
        return as_params(flat)

    def g_step(self) -> float:
        """One update of G on fresh latent codes; returns L_G."""
        fake = self.G(self._z())
        if self.unrolled_steps:
            f = functional_call(self.D, self.unrolled_params(fake), (fake,))
        else:
            f = self.D(fake)
        loss = self.loss.g_loss(f)
        grads = torch.autograd.grad(loss, list(self.G.parameters()))
        for p, g in zip(self.G.parameters(), grads):
            p.grad = g
        self.opt_g.step()
        return loss.detach()

    def step(self, n: int = 1, part: str = "both") -> dict[str, float]:
        """n iterations; part="d" or "g" runs only D's or G's updates (the page's Step D/G)."""
        ld, lg = [], []
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            if part in ("both", "d"):
                for _ in range(self.d_steps):
                    ld.append(self.d_step())
            if part in ("both", "g"):
                for _ in range(self.g_steps):
                    lg.append(self.g_step())
            if part == "both":
                self.steps += 1
                if self.steps % self.eval_every == 0:
                    self._evaluate()
        metrics: dict[str, float] = {}
        if ld:
            metrics["loss_d"] = float(torch.stack(ld).mean())
        if lg:
            metrics["loss_g"] = float(torch.stack(lg).mean())
        if metrics:
            if not all(math.isfinite(v) for v in metrics.values()):
                self.diverged_at = self.steps
            self.history.log(self.steps, metrics)
        if part != "both":
            self._evaluate()
        return metrics

    # ---- measurements -------------------------------------------------------------------
    @torch.no_grad()
    def coverage(self) -> Coverage | None:
        t = self.target
        if t.centers is None or t.std is None:
            return None
        fake = to_numpy(self.G(self.z_eval))
        if not np.isfinite(fake).all():
            return None
        return mode_coverage(fake, t.centers, t.std, self.n_sigma)

    def _evaluate(self) -> None:
        cov = self.coverage()
        if cov is None:
            return
        self.history.log(self.steps, {"modes": cov.modes_covered,
                                      "high_quality": cov.high_quality_fraction,
                                      "reverse_kl": cov.reverse_kl})
        if self.evals.steps and self.evals.steps[-1] == self.steps:
            self.evals.hists[-1] = cov.histogram.tolist()
        else:
            self.evals.steps.append(self.steps)
            self.evals.hists.append(cov.histogram.tolist())

    def mode_history(self) -> tuple[np.ndarray, np.ndarray]:
        """(steps (T,), histograms (T, k)) of the mode counts on the fixed eval codes."""
        k = 0 if self.target.centers is None else len(self.target.centers)
        return (np.asarray(self.evals.steps, dtype=np.int64),
                np.asarray(self.evals.hists, dtype=np.int64).reshape(len(self.evals.steps), k))

    def _grid(self, box, res: int) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
        x0, x1, y0, y1 = box
        xs, ys = np.linspace(x0, x1, res), np.linspace(y0, y1, res)
        xx, yy = np.meshgrid(xs, ys)
        pts = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32,
                              device=self.device)
        return xs, ys, pts

    @torch.no_grad()
    def critic_grid(self, box=None, res: int = 50) -> CriticGrid:
        """D on a res×res grid over `box`: σ(D) = P(real) for classifier losses, raw D for
        critics (Wasserstein, hinge)."""
        xs, ys, pts = self._grid(box or self.box, res)
        ctx = self.G(self.z_eval[: self.batch_size])
        v = self.D.pointwise(pts, ctx)
        if not self.loss.critic:
            return CriticGrid(xs, ys, to_numpy(torch.sigmoid(v)).reshape(res, res),
                              "D(x) = P(real)")
        return CriticGrid(xs, ys, to_numpy(v).reshape(res, res), "critic D(x)")

    def fake_gradients(self, x: np.ndarray | torch.Tensor) -> np.ndarray:
        """−∇_x L_G(D(x)) at each point x (n, 2): the direction a fake sample at x is pushed
        (the gradient reaching G's output; pointwise D, see Discriminator.pointwise)."""
        pts = torch.as_tensor(np.asarray(x), dtype=torch.float32, device=self.device)
        pts = pts.detach().requires_grad_(True)
        with torch.no_grad():
            ctx = self.G(self.z_eval[: self.batch_size])
        f = self.D.pointwise(pts, ctx)
        # per-sample loss: L_G is a mean, so scale by n to get each sample's own gradient
        (grad,) = torch.autograd.grad(self.loss.g_loss(f) * len(pts), pts)
        return to_numpy(-grad)

    def generator_field(self, box=None, res: int = 15) -> tuple[np.ndarray, np.ndarray]:
        """(points (res², 2), −∇_x L_G at each grid point): the field fakes follow."""
        _, _, pts = self._grid(box or self.box, res)
        return to_numpy(pts), self.fake_gradients(pts)

    def snapshot(self, res: int = 40, n_arrows: int = 60) -> GANSnapshot:
        with torch.no_grad():
            fake = to_numpy(self.G(self.z_eval[:600]))
        finite = np.isfinite(fake).all()
        at = fake[:n_arrows] if finite else np.zeros((0, 2), np.float32)
        arrows = self.fake_gradients(at) if finite and len(at) else np.zeros((0, 2), np.float32)
        cov = self.coverage() if finite else None
        return GANSnapshot(self.steps, self.target.points[self.show_idx], fake, at, arrows,
                           self.critic_grid(res=res), cov, self.diverged_at)

    # ---- state --------------------------------------------------------------------------
    def state_dict(self) -> dict:
        cpu = lambda m: {k: v.detach().cpu().clone() for k, v in m.state_dict().items()}  # noqa: E731
        # deep copies: an optimizer's state_dict() holds its live tensors, and loading it into
        # another trainer would otherwise share (and doubly update) the Adam moments
        return {"G": cpu(self.G), "D": cpu(self.D),
                "opt_g": copy.deepcopy(self.opt_g.state_dict()),
                "opt_d": copy.deepcopy(self.opt_d.state_dict()), "steps": self.steps,
                "diverged_at": self.diverged_at, "history": self.history.state_dict(),
                "evals": {"steps": list(self.evals.steps), "hists": list(self.evals.hists)},
                "gen": self.gen.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.G.load_state_dict(state["G"])
        self.D.load_state_dict(state["D"])
        self.opt_g.load_state_dict(copy.deepcopy(state["opt_g"]))
        self.opt_d.load_state_dict(copy.deepcopy(state["opt_d"]))
        self.steps, self.diverged_at = int(state["steps"]), state["diverged_at"]
        self.history = History.from_state_dict(state["history"])
        self.evals = _Eval(list(state["evals"]["steps"]), list(state["evals"]["hists"]))
        if "gen" in state:
            self.gen.set_state(state["gen"])


# --------------------------------------------------------------------------------------
# The optimal discriminator on 1-D densities (for the theory check)
# --------------------------------------------------------------------------------------

def optimal_discriminator(p_data: np.ndarray, p_g: np.ndarray) -> np.ndarray:
    """D*(x) = p_data(x) / (p_data(x) + p_g(x))."""
    p_data, p_g = np.asarray(p_data, float), np.asarray(p_g, float)
    return p_data / (p_data + p_g)


def fit_discriminator(real_sampler: Callable[[torch.Generator, int], torch.Tensor],
                      fake_sampler: Callable[[torch.Generator, int], torch.Tensor],
                      dim: int = 1, hidden: tuple[int, ...] = (64, 64), steps: int = 600,
                      lr: float = 3e-3, batch_size: int = 512, seed: int = 0,
                      device: str | torch.device | None = None
                      ) -> Callable[[np.ndarray], np.ndarray]:
    """Train D with the GAN discriminator loss softplus(−r) + softplus(f) against fixed real and
    fake distributions; returns x (n, dim) -> σ(D(x)), which approaches D* above."""
    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = mlp(dim, hidden, 1, lambda: nn.LeakyReLU(0.2)).to(dev)
    gen = make_generator(seed + 1, dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    d_loss = LOSSES["minimax"].d_loss
    for _ in range(steps):
        r = net(real_sampler(gen, batch_size).to(dev)).squeeze(-1)
        f = net(fake_sampler(gen, batch_size).to(dev)).squeeze(-1)
        opt.zero_grad(set_to_none=True)
        d_loss(r, f).backward()
        opt.step()

    @torch.no_grad()
    def prob(x: np.ndarray) -> np.ndarray:
        xt = torch.as_tensor(np.asarray(x, np.float32).reshape(-1, dim), device=dev)
        return to_numpy(torch.sigmoid(net(xt).squeeze(-1)))
    return prob


# --------------------------------------------------------------------------------------
# Dirac-GAN (Mescheder, Geiger, Nowozin 2018): data δ₀, generator δ_θ, D(x) = ψ·x
# --------------------------------------------------------------------------------------

def _sigmoid(u: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * u))


# loss name -> (∂L_D/∂f, ∂L_G/∂f) per sample, f = D(fake) = ψθ; the real sample is x = 0, so
# r = D(0) = 0 does not depend on ψ. These are the derivatives of LOSSES (checked in the tests).
DIRAC_DERIVATIVES: dict[str, tuple[Callable, Callable]] = {
    "minimax": (lambda f: _sigmoid(f), lambda f: -_sigmoid(f)),
    "nonsaturating": (lambda f: _sigmoid(f), lambda f: -_sigmoid(-f)),
    "lsgan": (lambda f: f, lambda f: f - 1.0),
    "hinge": (lambda f: (f > -1.0).astype(float), lambda f: -np.ones_like(f)),
    "wgan-clip": (lambda f: np.ones_like(f), lambda f: -np.ones_like(f)),
    "wgan-gp": (lambda f: np.ones_like(f), lambda f: -np.ones_like(f)),
}


@dataclass(frozen=True)
class DiracTrajectory:
    theta: np.ndarray      # (steps + 1,)
    psi: np.ndarray        # (steps + 1,)
    distance: np.ndarray   # (steps + 1,) √(θ² + ψ²): distance to the equilibrium (0, 0)
    diverged_at: int | None


def dirac_gradients(loss: str, theta: np.ndarray, psi: np.ndarray, gamma: float = 0.0,
                    gp_lambda: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """(∂L_G/∂θ, ∂L_D/∂ψ) of the Dirac-GAN, elementwise. With f = ψθ:
    ∂L_G/∂θ = ψ·L_G′(f);  ∂L_D/∂ψ = θ·L_D′(f) + γψ (R1: (γ/2)‖∇ₓD‖² = (γ/2)ψ²)
    [+ 2λ(|ψ| − 1)·sign ψ for WGAN-GP, whose ∇ₓD = ψ at every interpolate]."""
    if loss not in DIRAC_DERIVATIVES:
        raise KeyError(f"unknown loss {loss!r}; choose one of {list(DIRAC_DERIVATIVES)}")
    d_prime, g_prime = DIRAC_DERIVATIVES[loss]
    theta, psi = np.asarray(theta, float), np.asarray(psi, float)
    f = psi * theta
    g_theta = psi * g_prime(f)
    g_psi = theta * d_prime(f) + gamma * psi
    if loss == "wgan-gp":
        g_psi = g_psi + 2 * gp_lambda * (np.abs(psi) - 1) * np.sign(psi)
    return g_theta, g_psi


def dirac_gan_field(loss: str = "minimax", gamma: float = 0.0, box: float = 2.0,
                    res: int = 15) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The gradient vector field v(θ, ψ) = (−∂L_G/∂θ, −∂L_D/∂ψ) on a res×res grid over
    [−box, box]²; returns (theta, psi, v_theta, v_psi), each (res, res). For the standard GAN at
    the origin it is a rotation, (−ψ f′(0), θ f′(0)) with f′(0) = ½ (signs as in the code:
    v = (ψ/2, −θ/2))."""
    t = np.linspace(-box, box, res)
    th, ps = np.meshgrid(t, t, indexing="xy")
    g_th, g_ps = dirac_gradients(loss, th, ps, gamma)
    return th, ps, -g_th, -g_ps


def dirac_gan(loss: str = "minimax", lr: float = 0.1, steps: int = 300, gamma: float = 0.0,
              d_steps: int = 1, simultaneous: bool = False, theta0: float = 1.0,
              psi0: float = 1.0, clip: float = 1.0) -> DiracTrajectory:
    """Gradient descent on the Dirac-GAN: ψ ← ψ − lr ∂L_D/∂ψ (d_steps times), θ ← θ − lr ∂L_G/∂θ;
    `simultaneous` evaluates both gradients at the same point, otherwise G sees the updated ψ.
    The standard GAN does not converge (alternating: circles; simultaneous: spirals out); R1
    with γ large enough relative to lr converges to (0, 0)."""
    th, ps = float(theta0), float(psi0)
    thetas, psis = [th], [ps]
    diverged = None
    for i in range(int(steps)):
        if simultaneous:
            g_th, g_ps = dirac_gradients(loss, th, ps, gamma)
            th, ps = th - lr * float(g_th), ps - lr * float(g_ps)
        else:
            for _ in range(max(1, int(d_steps))):
                ps = ps - lr * float(dirac_gradients(loss, th, ps, gamma)[1])
                if loss == "wgan-clip":
                    ps = min(max(ps, -clip), clip)
            th = th - lr * float(dirac_gradients(loss, th, ps, gamma)[0])
        if loss == "wgan-clip":
            ps = min(max(ps, -clip), clip)
        if not (math.isfinite(th) and math.isfinite(ps)) or max(abs(th), abs(ps)) > 1e6:
            diverged = i + 1
            break
        thetas.append(th)
        psis.append(ps)
    theta, psi = np.array(thetas), np.array(psis)
    return DiracTrajectory(theta, psi, np.hypot(theta, psi), diverged)


# --------------------------------------------------------------------------------------
# Why Wasserstein: parallel lines
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParallelLines:
    theta: np.ndarray   # (m,)
    jsd: np.ndarray     # (m,) JSD(P_0 ‖ P_θ) = log 2 for θ ≠ 0, 0 at θ = 0
    w1: np.ndarray      # (m,) W₁(P_0, P_θ) = |θ|


def parallel_lines(theta: np.ndarray) -> ParallelLines:
    """P_0 = (0, U[−1,1]) vs P_θ = (θ, U[−1,1]). Disjoint supports for θ ≠ 0, so
    JSD = ½KL(P_0‖M) + ½KL(P_θ‖M) = log 2 (no gradient in θ), while W₁ = |θ| (gradient ±1)."""
    theta = np.asarray(theta, dtype=np.float64)
    return ParallelLines(theta, np.where(theta != 0, math.log(2), 0.0), np.abs(theta))


# --------------------------------------------------------------------------------------
# Defaults of the trainer and of the page (the page's presets and their measured claims live in
# topic_pages/gan.py, next to the text that states them)
# --------------------------------------------------------------------------------------

TRAINER_DEFAULTS: dict = dict(loss="nonsaturating", g_hidden=(128, 128), d_hidden=(128, 128),
                              latent_dim=2, lr_g=1e-3, lr_d=1e-3, optimizer="adam",
                              d_steps=1, unrolled_steps=0, r1_gamma=0.0, spectral_norm=False,
                              minibatch_std=False, pack=1, gp_lambda=10.0)

# What the page trains when no preset is chosen: the ring with 2×32 networks, so that 50
# iterations and one redraw fit in ~0.25 s on one CPU thread (benchmarks/bench_gan.py).
# Measured every 100 iterations up to 3,000: seed 0 covers >= 7 modes from 1,100 on and 8
# from 1,600 on; seeds 1-3 >= 7 from 1,800 on.
LIVE_TARGET: tuple[str, float] = ("ring of 8", 0.05)
LIVE_DEFAULTS: dict = {**TRAINER_DEFAULTS, "g_hidden": (32, 32), "d_hidden": (32, 32)}


# --------------------------------------------------------------------------------------
# Pretrained snapshots (assets/weights/gan_<name>.pt, written by scripts/pretrain_gan.py)
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PretrainSpec:
    target: str
    std: float
    kwargs: dict     # GANTrainer keyword arguments
    steps: int       # iterations trained offline
    seed: int = 0


# name -> what scripts/pretrain_gan.py trains; the page shows "default" at first paint
PRETRAINED: dict[str, PretrainSpec] = {
    "default": PretrainSpec(*LIVE_TARGET, LIVE_DEFAULTS, 3000),
}


def _plain(value):
    """Tuples as lists, recursively (the stored config compares equal to a page's)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def trainer_config(target: str, std: float, seed: int, kwargs: dict) -> dict:
    """The config a snapshot is stored with: enough to rebuild the trainer exactly."""
    return _plain({"target": target, "std": float(std), "seed": int(seed), "kwargs": kwargs})


def save_trainer(trainer: GANTrainer, path, config: dict, meta: dict | None = None) -> None:
    """The trainer's full state (G, D, both optimizers, history, mode history, RNG) as one
    engine.weights file (a path or an open binary buffer), with the config that built it (see
    trainer_config) as its model_config."""
    weights_file.save(path, _plain(config), trainer.state_dict(), meta or {})


def load_trainer(path_or_bytes, device: str | torch.device | None = None
                 ) -> tuple[GANTrainer, dict]:
    """(trainer, config) from a file written by save_trainer (a path or its bytes; read by
    engine.weights.load, so a missing, stale or corrupt file raises a WeightsError): the
    trainer is rebuilt from the stored config and continues exactly where the snapshot stopped
    (on another device than the CPU it keeps its own sampling RNG). trainer.pretrained holds
    the stored meta."""
    stored = weights_file.load(path_or_bytes, "cpu")
    cfg = stored.model_config
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in cfg["kwargs"].items()}
    trainer = GANTrainer(make_target(cfg["target"], cfg["std"], cfg["seed"]), seed=cfg["seed"],
                         device=device, **kwargs)
    state = dict(stored.state)
    if trainer.device.type != "cpu":
        state.pop("gen", None)      # a CPU generator's state does not fit a CUDA/MPS one
    trainer.load_state_dict(state)
    trainer.pretrained = dict(stored.meta)
    return trainer, cfg
