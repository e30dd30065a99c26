"""Diffusion on 2-D data: noise schedules, the forward process, an exact Gaussian-mixture
denoiser, a small eps-network and its trainer, DDPM / DDIM / Langevin samplers, and sample
quality metrics.

Index convention: timesteps are t = 1..T. The schedule tensors are stored 0-based, so
    betas[t-1] = beta_t,  alphas[t-1] = alpha_t = 1 - beta_t,
    alpha_bars[t-1] = alpha_bar_t = prod_{s<=t} (1 - beta_s),
and alpha_bar_0 = 1 (no noise), available as `schedule.alpha_bar(0)`.

Forward process: q(x_t | x_0) = N(sqrt(alpha_bar_t) x_0, (1 - alpha_bar_t) I).
Noise and score: eps*(x_t, t) = -sqrt(1 - alpha_bar_t) grad_x log q_t(x_t).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from engine import weights as weights_file
from engine.datasets import DATASETS, ToyData, _mixture, parse_points_csv as parse_csv
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.training import History

EpsFn = Callable[[torch.Tensor, int], torch.Tensor]      # eps(x_t, t) -> (n, 2)
ScoreFn = Callable[[torch.Tensor], torch.Tensor]         # grad log p(x) -> (n, 2)


# --------------------------------------------------------------------------------------
# Schedules and the forward process
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Schedule:
    """beta_t for t = 1..T (float64, CPU). betas[t-1] = beta_t, alphas = 1 - betas,
    alpha_bars[t-1] = prod_{s<=t} alphas[s-1]."""
    name: str
    betas: torch.Tensor
    alphas: torch.Tensor
    alpha_bars: torch.Tensor

    @property
    def T(self) -> int:
        return int(self.betas.numel())

    @classmethod
    def from_betas(cls, name: str, betas: torch.Tensor) -> "Schedule":
        betas = torch.as_tensor(betas, dtype=torch.float64)
        alphas = 1.0 - betas
        return cls(name, betas, alphas, torch.cumprod(alphas, 0))

    @classmethod
    def linear(cls, T: int = 1000, beta_start: float = 1e-4, beta_end: float = 0.02) -> "Schedule":
        """DDPM: beta_t linear from beta_start (t=1) to beta_end (t=T)."""
        if T < 1:
            raise ValueError("T must be >= 1")
        return cls.from_betas("linear", torch.linspace(beta_start, beta_end, int(T),
                                                       dtype=torch.float64))

    @classmethod
    def cosine(cls, T: int = 1000, s: float = 0.008) -> "Schedule":
        """Nichol & Dhariwal: alpha_bar_t = f(t)/f(0), f(t) = cos^2(((t/T + s)/(1 + s)) pi/2);
        beta_t = 1 - alpha_bar_t / alpha_bar_{t-1}, clipped to at most 0.999."""
        if T < 1:
            raise ValueError("T must be >= 1")
        t = torch.arange(int(T) + 1, dtype=torch.float64)
        f = torch.cos(((t / T + s) / (1 + s)) * math.pi / 2) ** 2
        ab = f / f[0]
        betas = (1 - ab[1:] / ab[:-1]).clamp(max=0.999)
        return cls.from_betas("cosine", betas)

    def alpha_bar(self, t: int) -> float:
        """alpha_bar_t for t in 0..T (alpha_bar_0 = 1)."""
        return 1.0 if t <= 0 else float(self.alpha_bars[int(t) - 1])

    def snr(self) -> torch.Tensor:
        """Signal-to-noise ratio SNR(t) = alpha_bar_t / (1 - alpha_bar_t), t = 1..T."""
        return self.alpha_bars / (1 - self.alpha_bars)


SCHEDULES: dict[str, Callable[..., Schedule]] = {"linear": Schedule.linear,
                                                 "cosine": Schedule.cosine}


def _ab_of(t, schedule: Schedule, like: torch.Tensor) -> torch.Tensor:
    """alpha_bar_t as a tensor broadcastable against `like` (n, d); t int or (n,) ints."""
    ab_full = torch.cat([torch.ones(1, dtype=torch.float64), schedule.alpha_bars])
    t = torch.as_tensor(t, device="cpu").long()
    ab = ab_full[t].to(dtype=like.dtype, device=like.device)
    return ab.reshape(-1, *([1] * (like.dim() - 1))) if ab.dim() else ab


def q_sample(x0: torch.Tensor, t, noise: torch.Tensor, schedule: Schedule) -> torch.Tensor:
    """x_t = sqrt(alpha_bar_t) x0 + sqrt(1 - alpha_bar_t) noise  (t int or (n,) ints in 0..T)."""
    ab = _ab_of(t, schedule, x0)
    return ab.sqrt() * x0 + (1 - ab).sqrt() * noise


def q_step(x_prev: torch.Tensor, t: int, noise: torch.Tensor, schedule: Schedule) -> torch.Tensor:
    """One forward step x_t = sqrt(1 - beta_t) x_{t-1} + sqrt(beta_t) noise."""
    beta = float(schedule.betas[t - 1])
    return math.sqrt(1 - beta) * x_prev + math.sqrt(beta) * noise


# --------------------------------------------------------------------------------------
# Exact denoiser of a Gaussian mixture
# --------------------------------------------------------------------------------------

def gmm_log_prob_and_score(x: torch.Tensor, means: torch.Tensor, covs: torch.Tensor,
                           log_w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """log p(x) and grad_x log p(x) of p = sum_k w_k N(means_k, covs_k) in 2-D.

    x (n, 2); means (k, 2); covs (k, 2, 2), or (k,) variances of isotropic components; log_w (k,) or (n, k) (-inf masks a component).
    grad log p(x) = sum_k r_k(x) C_k^{-1} (m_k - x), r_k = responsibilities."""
    if covs.dim() == 1:                                          # isotropic: covs = var_k
        diff = means[None] - x[:, None]                          # (n, k, 2): m_k - x
        sol = diff / covs[None, :, None]
        joint = log_w + (-0.5 * (diff * sol).sum(-1) - torch.log(covs)[None]
                         - math.log(2 * math.pi))
        r = torch.softmax(joint, -1)
        return torch.logsumexp(joint, -1), (r[..., None] * sol).sum(1)
    a, b = covs[:, 0, 0], covs[:, 0, 1]
    c, d = covs[:, 1, 0], covs[:, 1, 1]
    det = a * d - b * c
    inv = torch.stack([torch.stack([d, -b], -1), torch.stack([-c, a], -1)], -2) / det[:, None, None]
    diff = means[None] - x[:, None]                              # (n, k, 2): m_k - x
    sol = torch.einsum("kij,nkj->nki", inv, diff)                # C_k^{-1} (m_k - x)
    maha = (diff * sol).sum(-1)                                  # (n, k)
    logn = -0.5 * maha - 0.5 * torch.log(det)[None] - math.log(2 * math.pi)
    joint = log_w + logn
    log_p = torch.logsumexp(joint, -1)
    r = torch.softmax(joint, -1)
    return log_p, (r[..., None] * sol).sum(1)


class MixtureDenoiser:
    """The exact eps*(x_t, t) for data x_0 ~ sum_k w_k N(mu_k, Sigma_k).

    q_t(x) = sum_k w_k N(sqrt(ab_t) mu_k, ab_t Sigma_k + (1 - ab_t) I)  (ab_t = alpha_bar_t), and
    eps*(x_t, t) = -sqrt(1 - ab_t) grad log q_t(x_t).
    Class conditioning: `classes[k]` is the class of component k (default: one component =
    one class); eps(x, t, c) uses only the components of class c (weights renormalised).
    `std` is a float (isotropic), a (k,) array, or full covariances (k, 2, 2)."""

    def __init__(self, means, std, weights=None, schedule: Schedule | None = None,
                 classes=None, device=None):
        self.device = resolve_device(device)
        self.means = torch.as_tensor(np.asarray(means), dtype=torch.float32, device=self.device)
        k = self.means.shape[0]
        s = torch.as_tensor(np.asarray(std, dtype=np.float64), dtype=torch.float32)
        if s.dim() == 3:
            covs = s
        else:
            covs = (s.reshape(-1).expand(k) ** 2)[:, None, None] * torch.eye(2)
        self.covs = covs.to(self.device)
        diag = self.covs[:, 0, 0]
        self.isotropic = bool(torch.allclose(self.covs, diag[:, None, None] * torch.eye(2, device=self.device)))
        self.vars = diag if self.isotropic else None
        w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, np.float64)
        if np.any(w < 0) or w.sum() <= 0:
            raise ValueError("mixture weights must be non-negative and not all zero")
        w = w / w.sum()
        self.weights = w
        with np.errstate(divide="ignore"):
            self.log_w = torch.as_tensor(np.log(w), dtype=torch.float32, device=self.device)
        self.classes = torch.as_tensor(np.arange(k) if classes is None else np.asarray(classes),
                                       dtype=torch.long, device=self.device)
        self.num_classes = int(self.classes.max()) + 1
        self.schedule = schedule or Schedule.linear()
        self._eye = torch.eye(2, device=self.device)

    @classmethod
    def from_data(cls, data: ToyData, schedule: Schedule | None = None, device=None,
                  bandwidth: float = 0.08, max_points: int = 256, seed: int = 0):
        """The exact denoiser of `data`: its mixture when it is one, else a kernel density
        estimate (one N(x_i, bandwidth^2 I) per point, at most max_points points)."""
        if data.centers is not None:
            return cls(data.centers, data.std, data.weights, schedule, device=device)
        idx = np.arange(len(data.points))
        if len(idx) > max_points:
            idx = numpy_rng(seed).choice(len(idx), max_points, replace=False)
        return cls(data.points[idx], bandwidth, None, schedule, classes=data.labels[idx],
                   device=device)

    def _log_w(self, x: torch.Tensor, c) -> torch.Tensor:
        if c is None:
            return self.log_w
        c = torch.as_tensor(c, device=self.device).long().reshape(-1, 1)
        return torch.where(self.classes[None] == c, self.log_w[None],
                           torch.full_like(self.log_w[None], -math.inf)).expand(x.shape[0], -1)

    def log_prob_and_score(self, x: torch.Tensor, t: int, c=None):
        """log q_t(x) and grad log q_t(x) (t = 0: the data density itself)."""
        ab = self.schedule.alpha_bar(t)
        covs = ab * self.vars + (1 - ab) if self.isotropic else ab * self.covs + (1 - ab) * self._eye
        return gmm_log_prob_and_score(x, math.sqrt(ab) * self.means, covs, self._log_w(x, c))

    def log_prob(self, x: torch.Tensor, t: int, c=None) -> torch.Tensor:
        return self.log_prob_and_score(x, t, c)[0]

    def score(self, x: torch.Tensor, t: int, c=None) -> torch.Tensor:
        return self.log_prob_and_score(x, t, c)[1]

    def eps(self, x: torch.Tensor, t: int, c=None) -> torch.Tensor:
        """eps*(x_t, t) = -sqrt(1 - alpha_bar_t) grad log q_t(x_t)."""
        return -math.sqrt(1 - self.schedule.alpha_bar(t)) * self.score(x, t, c)

    __call__ = eps

    def score_sigma(self, x: torch.Tensor, sigma: float, c=None) -> torch.Tensor:
        """grad log of the data smoothed with N(0, sigma^2 I) (variance-exploding noise,
        for annealed Langevin): covariances Sigma_k + sigma^2 I."""
        covs = self.vars + sigma ** 2 if self.isotropic else self.covs + sigma ** 2 * self._eye
        return gmm_log_prob_and_score(x, self.means, covs, self._log_w(x, c))[1]

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """n exact samples of the data mixture."""
        rng = numpy_rng(seed)
        comp = rng.choice(len(self.weights), size=n, p=self.weights)
        chol = np.linalg.cholesky(to_numpy(self.covs).astype(np.float64))
        z = rng.standard_normal((n, 2))
        return (to_numpy(self.means)[comp] + np.einsum("nij,nj->ni", chol[comp], z)).astype(np.float32)


# --------------------------------------------------------------------------------------
# The eps-network and its trainer
# --------------------------------------------------------------------------------------

def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding [sin(t f_i), cos(t f_i)], f_i = 10000^(-i/half), i < half."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], -1)


class EpsMLP(nn.Module):
    """eps_theta(x_t, t, c): an MLP on [x_t, emb(t), emb(c)] with SiLU. Class token
    `num_classes` is the "no class" token used for classifier-free guidance."""

    def __init__(self, hidden: int = 64, depth: int = 3, emb_dim: int = 32,
                 num_classes: int = 0):
        super().__init__()
        self.hidden, self.depth, self.emb_dim, self.num_classes = hidden, depth, emb_dim, num_classes
        self.class_emb = nn.Embedding(num_classes + 1, emb_dim) if num_classes else None
        d_in = 2 + emb_dim + (emb_dim if num_classes else 0)
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [nn.Linear(d_in if i == 0 else hidden, hidden), nn.SiLU()]
        layers.append(nn.Linear(hidden, 2))
        self.net = nn.Sequential(*layers)

    def config(self) -> dict:
        return {"hidden": self.hidden, "depth": self.depth, "emb_dim": self.emb_dim,
                "num_classes": self.num_classes}

    def forward(self, x: torch.Tensor, t, c=None) -> torch.Tensor:
        """eps_theta(x, t, c); t and c are scalars or (n,) tensors. With one t and one c for
        the whole batch (sampling), the first layer's embedding part W_e [emb(t), emb(c)] + b
        is computed once and broadcast: the same numbers, a third fewer multiply-adds."""
        t = torch.as_tensor(t, device=x.device).reshape(-1)
        emb = [timestep_embedding(t, self.emb_dim)]
        if self.class_emb is not None:
            if c is None:
                c = self.num_classes
            c = torch.as_tensor(c, device=x.device).long().reshape(-1)
            emb.append(self.class_emb(c).expand(t.shape[0], -1) if c.shape[0] == 1 else
                       self.class_emb(c))
        emb = torch.cat([e.expand(max(e.shape[0] for e in emb), -1) for e in emb], -1)
        first = self.net[0]
        h = x @ first.weight[:, :2].T + (emb @ first.weight[:, 2:].T + first.bias)
        return self.net[1:](h)


@dataclass(frozen=True)
class DiffusionSnapshot:
    step: int
    loss: float                # mean loss of the last step() call
    samples: np.ndarray        # (m, 2) DDIM samples (eta=0, fixed seed) from the current net
    diverged_at: int | None


class DiffusionTrainer:
    """Minimises L = mean ||eps - eps_theta(x_t, t, c)||^2 with x_t = q_sample(x0, t, eps),
    t ~ U{1..T}, eps ~ N(0, I), Adam. With labels, c is the class, replaced by the "no class"
    token with probability p_uncond (classifier-free guidance training)."""

    def __init__(self, points: np.ndarray, labels: np.ndarray | None = None,
                 schedule: Schedule | None = None, hidden: int = 64, depth: int = 3,
                 lr: float = 2e-3, batch: int = 256, p_uncond: float = 0.1, seed: int = 0,
                 device=None, snapshot_particles: int = 400):
        self.device = resolve_device(device)
        self.seed, self.lr, self.batch, self.p_uncond = int(seed), float(lr), int(batch), float(p_uncond)
        self.schedule = schedule or Schedule.linear()
        self.x = torch.as_tensor(np.asarray(points), dtype=torch.float32, device=self.device)
        self.labels = None if labels is None else torch.as_tensor(
            np.asarray(labels), dtype=torch.long, device=self.device)
        num_classes = 0 if labels is None else int(np.max(labels)) + 1
        torch.manual_seed(self.seed)          # nn.Linear's init draws from the global generator
        self.model = EpsMLP(hidden, depth, num_classes=num_classes).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.gen = make_generator(self.seed, self.device)
        self.ab = torch.cat([torch.ones(1, dtype=torch.float64),
                             self.schedule.alpha_bars]).float().to(self.device)
        self.snapshot_particles = snapshot_particles
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()

    def loss_on_batch(self) -> torch.Tensor:
        g, n, T = self.gen, self.x.shape[0], self.schedule.T
        idx = torch.randint(0, n, (self.batch,), generator=g, device=self.device)
        t = torch.randint(1, T + 1, (self.batch,), generator=g, device=self.device)
        eps = torch.randn(self.batch, 2, generator=g, device=self.device)
        ab = self.ab[t][:, None]
        x_t = ab.sqrt() * self.x[idx] + (1 - ab).sqrt() * eps
        c = None
        if self.labels is not None:
            drop = torch.rand(self.batch, generator=g, device=self.device) < self.p_uncond
            c = torch.where(drop, self.model.num_classes, self.labels[idx])
        return ((eps - self.model(x_t, t, c)) ** 2).sum(-1).mean()

    def step(self, n: int = 1) -> dict[str, float]:
        total, done = 0.0, 0
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            self.opt.zero_grad(set_to_none=True)
            loss = self.loss_on_batch()
            loss.backward()
            self.opt.step()
            self.steps += 1
            value = float(loss.detach())
            if not math.isfinite(value):
                self.diverged_at = self.steps
                break
            total, done = total + value, done + 1
        metrics = {"loss": total / done} if done else {}
        if metrics:
            self.history.log(self.steps, metrics)
        return metrics

    @torch.no_grad()
    def snapshot(self) -> DiffusionSnapshot:
        res = ddim_sample(network_eps(self.model), self.snapshot_particles, self.schedule,
                          steps=25, eta=0.0, seed=self.seed, device=self.device)
        return DiffusionSnapshot(self.steps, self.history.last("loss"), res.samples,
                                 self.diverged_at)

    def state_dict(self) -> dict:
        return {"model": {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()},
                "opt": self.opt.state_dict(), "steps": self.steps,
                "diverged_at": self.diverged_at, "history": self.history.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.steps = int(state["steps"])
        self.diverged_at = state["diverged_at"]
        self.history = History.from_state_dict(state["history"])


def network_eps(model: EpsMLP, c=None) -> EpsFn:
    """eps(x, t) of a network (conditioned on class c, or unconditional when c is None)."""
    def fn(x: torch.Tensor, t: int) -> torch.Tensor:
        with torch.no_grad():
            return model(x, t, c)
    return fn


def save_model(model: EpsMLP, schedule: Schedule, path, meta: dict | None = None) -> None:
    """One engine.weights file: model_config {"net": EpsMLP config, "schedule": name, "T"},
    state = the network's state_dict(), meta = how it was trained."""
    weights_file.save(path, {"net": model.config(), "schedule": schedule.name, "T": schedule.T},
                 model.state_dict(), meta or {})


def load_model(path_or_bytes, device=None) -> tuple[EpsMLP, Schedule, dict]:
    """(model, schedule, meta) from a file written by save_model (a path or its bytes; a
    missing, stale or corrupt file raises an engine.weights.WeightsError)."""
    stored = weights_file.load(path_or_bytes, "cpu")
    cfg = stored.model_config
    model = EpsMLP(**cfg["net"])
    model.load_state_dict(stored.state)
    model.eval()
    return (model.to(resolve_device(device)), SCHEDULES[cfg["schedule"]](int(cfg["T"])),
            dict(stored.meta))


# --------------------------------------------------------------------------------------
# Samplers
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleResult:
    samples: np.ndarray     # (n, 2) final samples
    times: np.ndarray       # (F,) time label of each recorded frame (diffusion t, or Langevin step)
    frames: np.ndarray      # (F, n, 2) recorded states (F = 0 when not recorded)
    diverged_at: int | None = None


def guidance(eps_cond: EpsFn, eps_uncond: EpsFn, w: float) -> EpsFn:
    """Classifier-free guidance: eps_hat = (1 + w) eps(x, c) - w eps(x)  (w = 0: conditional)."""
    if w == 0:
        return eps_cond

    def fn(x: torch.Tensor, t: int) -> torch.Tensor:
        return (1 + w) * eps_cond(x, t) - w * eps_uncond(x, t)
    return fn


def _frame_picks(n_steps: int, record: int) -> set[int]:
    """Indices 0..n_steps (0 = start state) of the `record` frames to keep, evenly spaced."""
    if record <= 0:
        return set()
    return set(np.unique(np.round(np.linspace(0, n_steps, min(record, n_steps + 1))).astype(int)))


class _Recorder:
    def __init__(self, n_steps: int, record: int):
        self.picks, self.times, self.frames = _frame_picks(n_steps, record), [], []

    def __call__(self, i: int, label: int, x: torch.Tensor) -> None:
        if i in self.picks:
            self.times.append(int(label))
            self.frames.append(to_numpy(x).astype(np.float32))

    def result(self, x: torch.Tensor) -> SampleResult:
        out = to_numpy(x).astype(np.float32)
        frames = np.stack(self.frames) if self.frames else np.zeros((0, *out.shape), np.float32)
        bad = np.where(~np.isfinite(out).all(1))[0]
        return SampleResult(out, np.asarray(self.times, np.int64), frames,
                            None if not len(bad) else -1)


def _start(n: int, seed: int, device, x_T) -> tuple[torch.Tensor, torch.Generator, torch.device]:
    dev = resolve_device(device)
    g = make_generator(seed, dev)
    x = torch.randn(n, 2, generator=g, device=dev) if x_T is None else \
        torch.as_tensor(x_T, dtype=torch.float32, device=dev).clone()
    return x, g, dev


@torch.no_grad()
def ddpm_sample(eps_fn: EpsFn, n: int, schedule: Schedule, seed: int = 0, device=None,
                record: int = 0, x_T=None) -> SampleResult:
    """Ancestral DDPM sampling from x_T ~ N(0, I):
    x_{t-1} = (1/sqrt(alpha_t)) (x_t - beta_t / sqrt(1 - alpha_bar_t) eps(x_t, t)) + sigma_t z,
    sigma_t^2 = beta_t, z ~ N(0, I), and no noise in the last step (t = 1)."""
    x, g, dev = _start(n, seed, device, x_T)
    T = schedule.T
    rec = _Recorder(T, record)
    rec(0, T, x)
    betas, alphas, abars = (schedule.betas.tolist(), schedule.alphas.tolist(),
                            schedule.alpha_bars.tolist())
    for i, t in enumerate(range(T, 0, -1), start=1):
        beta, alpha, ab = betas[t - 1], alphas[t - 1], abars[t - 1]
        x = (x - beta / math.sqrt(1 - ab) * eps_fn(x, t)) / math.sqrt(alpha)
        if t > 1:
            x = x + math.sqrt(beta) * torch.randn(x.shape, generator=g, device=dev)
        rec(i, t - 1, x)
    return rec.result(x)


def ddim_timesteps(T: int, steps: int) -> list[int]:
    """The evenly spaced sub-sequence tau_i = round(i T / S), i = 1..S (tau_S = T)."""
    steps = max(1, min(int(steps), T))
    return sorted(set(int(round(i * T / steps)) for i in range(1, steps + 1)))


@torch.no_grad()
def ddim_sample(eps_fn: EpsFn, n: int, schedule: Schedule, steps: int = 50, eta: float = 0.0,
                seed: int = 0, device=None, record: int = 0, x_T=None) -> SampleResult:
    """DDIM on the sub-sequence tau (t -> s = previous tau, s = 0 at the end):
    x0_hat = (x_t - sqrt(1 - ab_t) eps) / sqrt(ab_t),
    sigma = eta sqrt((1 - ab_s)/(1 - ab_t)) sqrt(1 - ab_t/ab_s),
    x_s = sqrt(ab_s) x0_hat + sqrt(1 - ab_s - sigma^2) eps + sigma z.
    eta = 0 is deterministic given x_T (the seed)."""
    x, g, dev = _start(n, seed, device, x_T)
    taus = ddim_timesteps(schedule.T, steps)
    rec = _Recorder(len(taus), record)
    rec(0, taus[-1], x)
    seq = list(reversed(taus))
    for i, t in enumerate(seq, start=1):
        s = seq[i] if i < len(seq) else 0
        ab_t, ab_s = schedule.alpha_bar(t), schedule.alpha_bar(s)
        e = eps_fn(x, t)
        x0 = (x - math.sqrt(1 - ab_t) * e) / math.sqrt(ab_t)
        sigma = eta * math.sqrt((1 - ab_s) / (1 - ab_t)) * math.sqrt(max(0.0, 1 - ab_t / ab_s))
        x = math.sqrt(ab_s) * x0 + math.sqrt(max(0.0, 1 - ab_s - sigma ** 2)) * e
        if sigma > 0:
            x = x + sigma * torch.randn(x.shape, generator=g, device=dev)
        rec(i, s, x)
    return rec.result(x)


@torch.no_grad()
def langevin(score_fn: ScoreFn, x0, step: float, n_steps: int, seed: int = 0, device=None,
             record: int = 0) -> SampleResult:
    """Unadjusted Langevin dynamics x <- x + step grad log p(x) + sqrt(2 step) z."""
    x, g, dev = _start(0, seed, device, x0)
    rec = _Recorder(n_steps, record)
    rec(0, 0, x)
    for i in range(1, int(n_steps) + 1):
        x = x + step * score_fn(x) + math.sqrt(2 * step) * torch.randn(x.shape, generator=g, device=dev)
        rec(i, i, x)
    return rec.result(x)


@torch.no_grad()
def annealed_langevin(score_fn: Callable[[torch.Tensor, float], torch.Tensor],
                      sigmas: Sequence[float], x0, step: float, n_steps_each: int,
                      seed: int = 0, device=None, record: int = 0) -> SampleResult:
    """Annealed Langevin (Song & Ermon 2019): for sigma_1 > ... > sigma_L, run n_steps_each
    Langevin steps on log p_sigma_i with step alpha_i = step * sigma_i^2 / sigma_L^2."""
    x, g, dev = _start(0, seed, device, x0)
    total = len(sigmas) * int(n_steps_each)
    rec = _Recorder(total, record)
    rec(0, 0, x)
    i = 0
    for sigma in sigmas:
        a = step * (sigma / sigmas[-1]) ** 2
        for _ in range(int(n_steps_each)):
            i += 1
            x = x + a * score_fn(x, sigma) + math.sqrt(2 * a) * torch.randn(x.shape, generator=g, device=dev)
            rec(i, i, x)
    return rec.result(x)


def annealed_step(sigmas: Sequence[float], ratio: float = 0.1) -> float:
    """A stable base step for annealed_langevin: step = ratio * sigma_L^2, so that level i
    moves by alpha_i = ratio * sigma_i^2, a fixed fraction of that level's variance
    (a larger base step makes the first, widest levels overshoot and diverge)."""
    return ratio * float(sigmas[-1]) ** 2


def geometric_sigmas(sigma_max: float, sigma_min: float, levels: int) -> list[float]:
    """sigma_1 = sigma_max > ... > sigma_L = sigma_min, geometrically spaced."""
    return np.geomspace(sigma_max, sigma_min, max(2, int(levels))).tolist()


# --------------------------------------------------------------------------------------
# Vector field for plots
# --------------------------------------------------------------------------------------

@torch.no_grad()
def eps_field(eps_fn: EpsFn, times: Sequence[int], lo: float, hi: float, res: int = 15,
              device=None) -> tuple[np.ndarray, np.ndarray]:
    """(grid (res*res, 2), field (F, res*res, 2)): -eps(x, t) on a grid for each t in times
    (t = 0 uses t = 1). -eps points along the score, towards the data."""
    dev = resolve_device(device)
    ticks = np.linspace(lo, hi, res)
    grid = np.stack(np.meshgrid(ticks, ticks), -1).reshape(-1, 2).astype(np.float32)
    g = torch.as_tensor(grid, device=dev)
    field = np.stack([to_numpy(-eps_fn(g, max(1, int(t)))) for t in times]) if len(times) else \
        np.zeros((0, len(grid), 2), np.float32)
    return grid, field


# --------------------------------------------------------------------------------------
# Quality metrics
# --------------------------------------------------------------------------------------

def mode_weights(samples: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Fraction of samples whose nearest mean (Euclidean) is means[k], k = 0..K-1."""
    samples = np.asarray(samples, np.float64)
    ok = np.isfinite(samples).all(1)
    if not ok.any():
        return np.zeros(len(means))
    d = ((samples[ok, None, :] - np.asarray(means)[None]) ** 2).sum(-1)
    return np.bincount(d.argmin(1), minlength=len(means)) / ok.sum()


def sliced_wasserstein(a: np.ndarray, b: np.ndarray, n_proj: int = 128, seed: int = 0) -> float:
    """Sliced 2-Wasserstein distance: sqrt(mean_theta W2^2(<a, theta>, <b, theta>)) over
    n_proj random unit directions theta; 1-D W2 from sorted projections (unequal sizes are
    compared at the quantile levels (i + 1/2)/m of the smaller sample, m = its size)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return math.inf
    theta = numpy_rng(seed).standard_normal((n_proj, a.shape[1]))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    pa, pb = np.sort(a @ theta.T, 0), np.sort(b @ theta.T, 0)
    m = min(len(pa), len(pb))
    level = (np.arange(m) + 0.5) / m                   # empirical quantile function at these levels
    qa = pa[(level * len(pa)).astype(int)]
    qb = pb[(level * len(pb)).astype(int)]
    return float(np.sqrt(np.mean((qa - qb) ** 2)))


def mmd_rbf(a: np.ndarray, b: np.ndarray, bandwidth: float | None = None) -> float:
    """Biased squared MMD with k(x, y) = exp(-||x - y||^2 / (2 h^2)):
    MMD^2 = mean k(a, a') + mean k(b, b') - 2 mean k(a, b); h = median pairwise distance
    of the pooled sample when not given."""
    a, b = torch.as_tensor(np.asarray(a, np.float64)), torch.as_tensor(np.asarray(b, np.float64))
    if bandwidth is None:
        z = torch.cat([a, b])[:1000]
        bandwidth = float(torch.cdist(z, z).median().clamp_min(1e-6))
    k = lambda u, v: torch.exp(-torch.cdist(u, v) ** 2 / (2 * bandwidth ** 2))  # noqa: E731
    return float(k(a, a).mean() + k(b, b).mean() - 2 * k(a, b).mean())


METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "sliced Wasserstein": sliced_wasserstein,
    "MMD (RBF)": mmd_rbf,
}


@dataclass(frozen=True)
class StepsQuality:
    steps: np.ndarray        # (m,) S values
    etas: np.ndarray         # (e,) eta values
    distance: np.ndarray     # (e, m) metric(samples(S, eta), reference)
    metric: str


def steps_vs_quality(eps_fn: EpsFn, schedule: Schedule, reference: np.ndarray,
                     steps: Sequence[int] = (5, 10, 20, 50, 100), etas: Sequence[float] = (0.0, 1.0),
                     n: int = 1000, seed: int = 0, metric: str = "sliced Wasserstein",
                     device=None, progress: Callable[[float], None] | None = None) -> StepsQuality:
    """DDIM sample quality vs step count S for each eta (the DDIM paper's table, in 2-D)."""
    dist = np.zeros((len(etas), len(steps)))
    jobs = [(i, j) for i in range(len(etas)) for j in range(len(steps))]
    for done, (i, j) in enumerate(jobs, start=1):
        res = ddim_sample(eps_fn, n, schedule, steps=steps[j], eta=etas[i], seed=seed, device=device)
        dist[i, j] = METRICS[metric](res.samples, reference)
        if progress:
            progress(done / len(jobs))
    return StepsQuality(np.asarray(steps), np.asarray(etas, float), dist, metric)


# --------------------------------------------------------------------------------------
# 2-D data for the page
# --------------------------------------------------------------------------------------

def weighted_mixture(n: int = 1000, seed: int = 0, noise: float = 0.25, k: int = 3,
                     first_weight: float = 0.6, radius: float = 2.0) -> ToyData:
    """k Gaussians N(r (cos 2pi j/k, sin 2pi j/k), noise^2 I) with weight first_weight on
    mode 0 and (1 - first_weight)/(k - 1) on each other mode."""
    if k < 2:
        raise ValueError("the mixture needs k >= 2 modes")
    angle = 2 * np.pi * np.arange(k) / k + np.pi / 2
    centers = radius * np.stack([np.cos(angle), np.sin(angle)], 1)
    w = np.full(k, (1 - first_weight) / (k - 1))
    w[0] = first_weight
    return _mixture(centers, n, noise, seed, w)


def two_mode_gap(n: int = 1000, seed: int = 0, noise: float = 0.5, gap: float = 8.0,
                 first_weight: float = 0.8) -> ToyData:
    """Two Gaussians at (-gap/2, 0) and (+gap/2, 0), weights (first_weight, 1 - first_weight):
    the Langevin demo."""
    centers = np.array([[-gap / 2, 0.0], [gap / 2, 0.0]])
    return _mixture(centers, n, noise, seed, np.array([first_weight, 1 - first_weight]))


DIFFUSION_DATA: dict[str, Callable[..., ToyData]] = {
    "mixture": weighted_mixture,
    "two_moons": DATASETS["two_moons"],
    "swiss_roll": DATASETS["swiss_roll"],
    "spiral": DATASETS["spiral"],
    "ring": DATASETS["ring"],
}
PRETRAINED = ("mixture", "two_moons", "swiss_roll", "spiral")


def parse_points_csv(text: str | bytes, max_rows: int = 5000) -> ToyData:
    """User points for this page: engine.datasets.parse_points_csv (x, y and an optional
    class column 0..9, header optional, validated), then centred and scaled so that the
    larger axis standard deviation is 1. Raises ValueError with a message a user can act on."""
    data = parse_csv(text, max_rows=max_rows, label_column=True, num_classes=10)
    pts = data.points.astype(np.float64)
    scale = pts.std(0).max()
    if scale <= 0:
        raise ValueError("all points are identical")
    return ToyData(((pts - pts.mean(0)) / scale).astype(np.float32), data.labels)


@torch.no_grad()
def density_grid(denoiser: MixtureDenoiser, lo: float, hi: float, res: int = 80, t: int = 0,
                 c=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gx (res,), gy (res,), q_t on the grid (res, res) indexed [iy, ix])."""
    ticks = np.linspace(lo, hi, res)
    xx, yy = np.meshgrid(ticks, ticks)
    g = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32,
                        device=denoiser.device)
    return ticks, ticks, to_numpy(denoiser.log_prob(g, t, c).exp()).reshape(res, res)


# --------------------------------------------------------------------------------------
# One reverse run for the page: sampler registry, recorded frames and the field per frame
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReverseSetup:
    """What a sampler needs. eps_fn: the (guided) eps(x, t) of the chosen denoiser;
    exact: the exact denoiser of the data (Langevin samplers use its score)."""
    eps_fn: EpsFn
    exact: MixtureDenoiser
    schedule: Schedule
    n: int = 500
    steps: int = 50            # DDIM sub-sequence length S
    eta: float = 0.0
    langevin_steps: int = 500  # plain Langevin steps; annealed: spread over `levels`
    levels: int = 10
    seed: int = 0
    device: str | None = None
    record: int = 30


@dataclass(frozen=True)
class ReverseRun:
    result: SampleResult
    time_label: str            # "t" (diffusion time) or "Langevin step"
    grid: np.ndarray           # (G, 2)
    field: np.ndarray          # (F, G, 2) the drift direction (-eps or score) at each frame


def langevin_step_size(den: MixtureDenoiser) -> float:
    """A stable step: 0.1 x the smallest component variance of the data mixture."""
    v = den.vars if den.isotropic else torch.linalg.eigvalsh(den.covs)[:, 0]
    return 0.1 * float(v.min())


def _langevin_start(s: ReverseSetup) -> torch.Tensor:
    g = make_generator(s.seed, "cpu")
    return 2.0 * torch.randn(s.n, 2, generator=g)


def _run_ddpm(s: ReverseSetup) -> SampleResult:
    return ddpm_sample(s.eps_fn, s.n, s.schedule, s.seed, s.device, s.record)


def _run_ddim(s: ReverseSetup) -> SampleResult:
    return ddim_sample(s.eps_fn, s.n, s.schedule, s.steps, s.eta, s.seed, s.device, s.record)


def _run_langevin(s: ReverseSetup) -> SampleResult:
    return langevin(lambda x: s.exact.score(x, 0), _langevin_start(s),
                    langevin_step_size(s.exact), s.langevin_steps, s.seed, s.device, s.record)


def annealed_sigmas(den: MixtureDenoiser, levels: int, sigma_max: float = 3.0) -> list[float]:
    """sigma_max down to a fifth of the data's smallest component std, geometric (the last
    level then barely widens the data: std sqrt(s^2 + (s/5)^2) ~ 1.02 s)."""
    v = den.vars if den.isotropic else torch.linalg.eigvalsh(den.covs)[:, 0]
    return geometric_sigmas(sigma_max, math.sqrt(float(v.min())) / 5, levels)


def _run_annealed(s: ReverseSetup) -> SampleResult:
    sig = annealed_sigmas(s.exact, s.levels)
    return annealed_langevin(lambda x, sg: s.exact.score_sigma(x, sg), sig, _langevin_start(s),
                             annealed_step(sig), max(1, s.langevin_steps // s.levels),
                             s.seed, s.device, s.record)


SAMPLERS: dict[str, Callable[[ReverseSetup], SampleResult]] = {
    "DDIM": _run_ddim,
    "DDPM": _run_ddpm,
    "Langevin": _run_langevin,
    "annealed Langevin": _run_annealed,
}


def reverse_run(sampler: str, setup: ReverseSetup, lim: float = 3.5, res: int = 13) -> ReverseRun:
    """Run SAMPLERS[sampler] and evaluate the drift field on a res x res grid at each
    recorded frame: -eps(x, t) for DDPM/DDIM (t of the frame), the score for Langevin
    (annealed: the score at the noise level of the frame)."""
    if sampler not in SAMPLERS:
        raise KeyError(f"unknown sampler {sampler!r}; choose one of {sorted(SAMPLERS)}")
    result = SAMPLERS[sampler](setup)
    ex = setup.exact
    if sampler in ("DDIM", "DDPM"):
        grid, field = eps_field(setup.eps_fn, result.times, -lim, lim, res, setup.device)
        return ReverseRun(result, "t", grid, field)
    if sampler == "Langevin":
        fn = lambda x, i: -ex.score(x, 0)  # noqa: E731
    else:
        sig = annealed_sigmas(ex, setup.levels)
        each = max(1, setup.langevin_steps // setup.levels)
        fn = lambda x, i: -ex.score_sigma(x, sig[min(len(sig) - 1, max(0, i - 1) // each)])  # noqa: E731
    grid, field = eps_field(fn, [max(1, int(i)) for i in result.times], -lim, lim, res, setup.device)
    return ReverseRun(result, "Langevin step", grid, field)
