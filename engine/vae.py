"""Variational autoencoders on the 8x8 digits, the 1-D toy of the variational principle, and
the autoencoder-vs-PCA toy.

The VAE (Kingma & Welling 2014). Encoder q(z|x) = N(mu, diag(exp(logvar))), prior
p(z) = N(0, I), decoder p(x|z) (Bernoulli or Gaussian, mean `decode(z)`). Per example

    ELBO(x) = E_q[log p(x|z)] - KL(q(z|x) || p(z))  <=  log p(x)
    loss    = recon + beta * kl,   recon = -E_q[log p(x|z)],  kl = KL(q || p)

so loss = -ELBO when beta = 1. The gap log p(x) - ELBO = KL(q(z|x) || p(z|x)).
Reparameterisation: z = mu + exp(logvar / 2) * eps, eps ~ N(0, I): a sample that is a
differentiable function of (mu, logvar). The encoder outputs logvar = log sigma^2 (not log sigma).

Everything is pure torch/numpy; results for plotting are numpy arrays in frozen dataclasses.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from engine import weights as weights_file
from engine.datasets import digits_split
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.training import History

DATA_SEED = 0          # the fixed train/test split of the digits (1438 / 359)
GAUSSIAN_SIGMA = 0.1   # std of the Gaussian likelihood p(x|z) = N(decode(z), sigma^2 I)
LOG_2PI = math.log(2 * math.pi)


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DigitData:
    x_train: np.ndarray   # (1438, 64) float32 in [0, 1]
    y_train: np.ndarray   # (1438,) int64
    x_test: np.ndarray    # (359, 64)
    y_test: np.ndarray    # (359,)


def load_digit_data(seed: int = DATA_SEED) -> DigitData:
    """scikit-learn's 8x8 digits, scaled to [0, 1], flattened to 64, seeded 80/20 split."""
    tr, te = digits_split(0.2, seed)
    return DigitData(tr.images.reshape(-1, 64), tr.labels, te.images.reshape(-1, 64), te.labels)


def upsample(images: np.ndarray, factor: int = 4) -> np.ndarray:
    """Nearest-neighbour upsampling of (..., h, w) images, for display only."""
    return np.repeat(np.repeat(images, factor, axis=-2), factor, axis=-1)


def tile(images: np.ndarray, pad: int = 1, flip_rows: bool = True, fill: float = np.nan) -> np.ndarray:
    """(rows, cols, h, w) -> one (rows*(h+pad)-pad, cols*(w+pad)-pad) image; the padding
    holds `fill` (NaN: drawn as background). flip_rows puts row 0 at the bottom, so the tile
    matches a y-axis pointing up."""
    rows, cols, h, w = images.shape
    out = np.full((rows * (h + pad) - pad, cols * (w + pad) - pad), fill, dtype=np.float32)
    order = range(rows - 1, -1, -1) if flip_rows else range(rows)
    for r_out, r in enumerate(order):
        for c in range(cols):
            out[r_out * (h + pad): r_out * (h + pad) + h, c * (w + pad): c * (w + pad) + w] = images[r, c]
    return out


# --------------------------------------------------------------------------------------
# Closed forms and likelihoods
# --------------------------------------------------------------------------------------

def kl_standard_normal(mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
    """KL(N(mu, exp(logvar)) || N(0, I)) = 1/2 sum_j (mu_j^2 + exp(logvar_j) - 1 - logvar_j),
    summed over the last (latent) dimension: one value per example. Zero iff mu = 0, logvar = 0."""
    return 0.5 * (mu.pow(2) + logvar.exp() - 1.0 - logvar).sum(-1)


def reparameterize(mu: torch.Tensor, logvar: torch.Tensor,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """z = mu + exp(logvar / 2) * eps, eps ~ N(0, I) drawn with `generator`."""
    eps = torch.randn(mu.shape, generator=generator, device=mu.device, dtype=mu.dtype)
    return mu + torch.exp(0.5 * logvar) * eps


def bernoulli_nll(logits: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """-log p(x|z) = sum_i BCE(sigmoid(logits_i), x_i) (x in [0, 1]), one value per example."""
    return F.binary_cross_entropy_with_logits(logits, x.expand_as(logits), reduction="none").sum(-1)


def gaussian_nll(logits: torch.Tensor, x: torch.Tensor, sigma: float = GAUSSIAN_SIGMA) -> torch.Tensor:
    """-log N(x; m, sigma^2 I) = sum_i (x_i - m_i)^2 / (2 sigma^2) + D/2 log(2 pi sigma^2),
    m = sigmoid(logits) (the mean image stays in [0, 1]), one value per example."""
    m = torch.sigmoid(logits)
    d = x.shape[-1]
    return ((x - m).pow(2).sum(-1) / (2 * sigma**2)
            + 0.5 * d * (LOG_2PI + 2 * math.log(sigma)))


LIKELIHOODS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "bernoulli": bernoulli_nll,
    "gaussian": gaussian_nll,
}


# --------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------

def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


@dataclass(frozen=True)
class Loss:
    total: torch.Tensor   # mean over the batch of recon + beta * kl
    recon: torch.Tensor   # mean over the batch of -E_q[log p(x|z)]
    kl: torch.Tensor      # mean over the batch of KL(q(z|x) || p(z))

    def __iter__(self):   # (total, recon, kl) = model.loss(x)
        return iter((self.total, self.recon, self.kl))


class VAE(nn.Module):
    """MLP encoder input_dim -> hidden -> (mu, logvar) in R^latent_dim, MLP decoder back.

    deterministic=True is a plain autoencoder: z = mu, no KL term (kl reported as 0).
    `decode(z)` returns the mean image (sigmoid of the decoder logits) for both likelihoods.
    Weights are initialised from `seed` without touching the global generator.
    """

    def __init__(self, input_dim: int = 64, latent_dim: int = 2, hidden: tuple[int, ...] = (256, 128),
                 likelihood: str = "bernoulli", deterministic: bool = False, seed: int = 0):
        super().__init__()
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"unknown likelihood {likelihood!r}; choose one of {sorted(LIKELIHOODS)}")
        if latent_dim < 1:
            raise ValueError("latent_dim must be >= 1")
        self.input_dim, self.latent_dim = int(input_dim), int(latent_dim)
        self.hidden, self.likelihood = tuple(int(h) for h in hidden), likelihood
        self.deterministic = bool(deterministic)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.encoder = _mlp([self.input_dim, *self.hidden, 2 * self.latent_dim])
            self.decoder = _mlp([self.latent_dim, *self.hidden[::-1], self.input_dim])

    def config(self) -> dict:
        return {"input_dim": self.input_dim, "latent_dim": self.latent_dim,
                "hidden": list(self.hidden), "likelihood": self.likelihood,
                "deterministic": self.deterministic}

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mu, logvar), each (batch, latent_dim); logvar = log sigma^2 (zeros for an AE)."""
        mu, logvar = self.encoder(x).chunk(2, dim=-1)
        if self.deterministic:
            logvar = torch.zeros_like(mu)
        return mu, logvar

    def reparameterize(self, mu, logvar, generator=None) -> torch.Tensor:
        return reparameterize(mu, logvar, generator)

    def decode_logits(self, z: torch.Tensor) -> torch.Tensor:
        return self.decoder(z)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Mean image E[x|z] = sigmoid(decoder(z)), (batch, input_dim) in [0, 1]."""
        return torch.sigmoid(self.decoder(z))

    def loss(self, x: torch.Tensor, beta: float = 1.0, n_samples: int = 1,
             generator: torch.Generator | None = None, reparam: bool = True) -> Loss:
        """Batch means of recon = -1/S sum_s log p(x | z_s), z_s = mu + sigma * eps_s (S =
        n_samples), kl = KL(q || p) in closed form, total = recon + beta * kl (= -ELBO at
        beta = 1). reparam=False samples z without a path to (mu, logvar) (z detached):
        the reconstruction term then sends no gradient to the encoder."""
        mu, logvar = self.encode(x)
        nll = LIKELIHOODS[self.likelihood]
        if self.deterministic:
            recon = nll(self.decode_logits(mu), x)
            kl = torch.zeros_like(recon)
        else:
            s = max(1, int(n_samples))
            mu_s, lv_s = mu.expand(s, *mu.shape), logvar.expand(s, *logvar.shape)
            z = reparameterize(mu_s, lv_s, generator)
            if not reparam:
                z = z.detach()
            recon = nll(self.decode_logits(z), x).mean(0)
            kl = kl_standard_normal(mu, logvar)
        recon, kl = recon.mean(), kl.mean()
        return Loss(recon + beta * kl, recon, kl)


# --------------------------------------------------------------------------------------
# What the page draws
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LatentGrid:
    images: np.ndarray    # (n, n, 8, 8): images[iy, ix] decoded at z[dims] = (zx[ix], zy[iy])
    zx: np.ndarray        # (n,) latent coordinates along dims[0] (ascending)
    zy: np.ndarray        # (n,) along dims[1] (ascending)
    dims: tuple[int, int]
    span: str


def grid_values(n: int, span: str = "quantiles", lo: float = 0.05, hi: float = 0.95,
                limit: float = 3.0) -> np.ndarray:
    """n coordinates: Phi^-1(linspace(lo, hi, n)) (the N(0,1) quantiles, Kingma & Welling's
    figure) or linspace(-limit, limit, n)."""
    return SPANS[span](int(n), lo, hi, limit)


SPANS: dict[str, Callable[..., np.ndarray]] = {
    "quantiles": lambda n, lo, hi, limit: torch.special.ndtri(
        torch.linspace(lo, hi, n, dtype=torch.float64)).numpy(),
    "linear": lambda n, lo, hi, limit: np.linspace(-limit, limit, n),
}


@torch.no_grad()
def latent_grid(model: VAE, n: int = 15, span: str = "quantiles", lo: float = 0.05,
                hi: float = 0.95, dims: tuple[int, int] = (0, 1), limit: float = 3.0,
                values: tuple[np.ndarray, np.ndarray] | None = None) -> LatentGrid:
    """Decode the n x n grid z[dims[0]] = zx[ix], z[dims[1]] = zy[iy], all other coordinates 0
    (the prior mean): a traversal of two latent dimensions. One batched decoder call.
    `values` = (zx, zy) gives the coordinates directly (e.g. spanning an autoencoder's codes,
    which has no prior to take quantiles of); `span` is then only the grid's label."""
    if values is not None:
        return _decode_grid(model, np.asarray(values[0], np.float64),
                            np.asarray(values[1], np.float64), dims, span)
    if span not in SPANS:
        raise ValueError(f"unknown span {span!r}; choose one of {sorted(SPANS)}")
    if not 0.0 < lo < hi < 1.0:
        raise ValueError("need 0 < lo < hi < 1")
    if len(set(dims)) != 2 or not all(0 <= d < model.latent_dim for d in dims):
        raise ValueError(f"dims must be two different latent dimensions in 0..{model.latent_dim - 1}")
    vals = grid_values(n, span, lo, hi, limit)
    return _decode_grid(model, vals, vals, dims, span)


@torch.no_grad()
def _decode_grid(model: VAE, zx: np.ndarray, zy: np.ndarray, dims: tuple[int, int],
                 span: str) -> LatentGrid:
    if len(set(dims)) != 2 or not all(0 <= d < model.latent_dim for d in dims):
        raise ValueError(f"dims must be two different latent dimensions in 0..{model.latent_dim - 1}")
    dev = next(model.parameters()).device
    vx = torch.as_tensor(zx, dtype=torch.float32, device=dev)
    vy = torch.as_tensor(zy, dtype=torch.float32, device=dev)
    z = torch.zeros(len(zy), len(zx), model.latent_dim, device=dev)
    z[..., dims[0]] = vx[None, :]
    z[..., dims[1]] = vy[:, None]
    side = int(round(math.sqrt(model.input_dim)))
    imgs = model.decode(z.reshape(-1, model.latent_dim)).reshape(len(zy), len(zx), side, side)
    return LatentGrid(to_numpy(imgs), zx.copy(), zy.copy(), (int(dims[0]), int(dims[1])), span)


@torch.no_grad()
def decode_point(model: VAE, z: np.ndarray | list[float]) -> np.ndarray:
    """The (8, 8) mean image decoded at one latent point z (latent_dim,)."""
    dev = next(model.parameters()).device
    zt = torch.as_tensor(np.asarray(z, dtype=np.float32), device=dev).reshape(1, -1)
    side = int(round(math.sqrt(model.input_dim)))
    return to_numpy(model.decode(zt)).reshape(side, side)


@torch.no_grad()
def interpolate(model: VAE, x_a: np.ndarray, x_b: np.ndarray, steps: int = 8) -> np.ndarray:
    """Decode z_t = (1 - t) mu(x_a) + t mu(x_b), t = linspace(0, 1, steps): (steps, 8, 8)."""
    dev = next(model.parameters()).device
    xs = torch.as_tensor(np.stack([np.ravel(x_a), np.ravel(x_b)]), dtype=torch.float32, device=dev)
    mu, _ = model.encode(xs)
    t = torch.linspace(0, 1, int(steps), device=dev)[:, None]
    z = (1 - t) * mu[0] + t * mu[1]
    side = int(round(math.sqrt(model.input_dim)))
    return to_numpy(model.decode(z)).reshape(-1, side, side)


@dataclass(frozen=True)
class LatentCodes:
    means: np.ndarray     # (n, latent_dim) encoder means mu(x)
    logvars: np.ndarray   # (n, latent_dim)
    labels: np.ndarray    # (n,)


@torch.no_grad()
def encode_dataset(model: VAE, x: np.ndarray, labels: np.ndarray) -> LatentCodes:
    """Encoder means and log-variances of every row of x (n, 64), in one batch."""
    dev = next(model.parameters()).device
    mu, logvar = model.encode(torch.as_tensor(x, dtype=torch.float32, device=dev))
    return LatentCodes(to_numpy(mu), to_numpy(logvar), np.asarray(labels))


@torch.no_grad()
def reconstruction_mse(model: VAE, x: np.ndarray) -> float:
    """Mean over pixels and images of (x - decode(mu(x)))^2 (the encoder mean, no sampling)."""
    dev = next(model.parameters()).device
    xt = torch.as_tensor(x, dtype=torch.float32, device=dev)
    mu, _ = model.encode(xt)
    return float((model.decode(mu) - xt).pow(2).mean())


# --------------------------------------------------------------------------------------
# Live training
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VAESnapshot:
    step: int
    epoch: float
    codes: LatentCodes        # test digits
    grid: LatentGrid
    recon_test: float
    kl_test: float
    elbo_test: float
    diverged_at: int | None


class VAETrainer:
    """Minibatch Adam on the loss recon + beta * kl over the 1438 training digits.

    One step = one minibatch (batch_size digits, reshuffled every epoch with the seed).
    Every `log_every` steps it logs the averages since the last log (train_recon, train_kl,
    train_elbo = -(recon + kl)), the test metrics (test_recon, test_kl, test_elbo, with a fixed
    eps so curves do not jitter) and enc_grad_recon = ||d recon / d encoder params||, which is
    exactly 0 when reparam=False. Every `snapshot_every` steps it keeps the test encoder
    means (at most `max_snapshots`; older ones are thinned to every other).
    """

    def __init__(self, latent_dim: int = 2, beta: float = 1.0, likelihood: str = "bernoulli",
                 deterministic: bool = False, reparam: bool = True, lr: float = 1e-3,
                 batch_size: int = 128, hidden: tuple[int, ...] = (256, 128), seed: int = 0,
                 device: str | torch.device | None = None, data: DigitData | None = None,
                 log_every: int = 12, snapshot_every: int = 24, max_snapshots: int = 80,
                 grid_n: int = 15, grid_span: str = "quantiles", grid_dims: tuple[int, int] = (0, 1)):
        self.device = resolve_device(device)
        self.seed, self.beta, self.reparam = int(seed), float(beta), bool(reparam)
        self.batch_size, self.lr = int(batch_size), float(lr)
        self.log_every, self.snapshot_every = max(1, int(log_every)), max(1, int(snapshot_every))
        self.max_snapshots = max(2, int(max_snapshots))
        self.grid_n, self.grid_span = int(grid_n), grid_span
        self.grid_dims = tuple(grid_dims) if latent_dim >= 2 else (0, 0)
        self.data = data or load_digit_data()
        self.model = VAE(64, latent_dim, hidden, likelihood, deterministic, seed).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.x = torch.as_tensor(self.data.x_train, device=self.device)
        self.x_test = torch.as_tensor(self.data.x_test, device=self.device)
        self.gen = make_generator(self.seed, self.device)
        self.rng = numpy_rng(self.seed)
        self._perm, self._pos = self.rng.permutation(len(self.x)), 0
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()
        self.snapshots: list[tuple[int, np.ndarray]] = []
        self._acc = np.zeros(3)
        self._acc_n = 0
        self._log()

    @property
    def steps_per_epoch(self) -> float:
        return len(self.x) / self.batch_size

    def _batch(self) -> torch.Tensor:
        if self._pos + self.batch_size > len(self._perm):
            self._perm, self._pos = self.rng.permutation(len(self.x)), 0
        idx = self._perm[self._pos:self._pos + self.batch_size]
        self._pos += self.batch_size
        return self.x[torch.as_tensor(idx, device=self.device)]

    def step(self, n: int = 1) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            total, recon, kl = self.model.loss(self._batch(), self.beta, 1, self.gen, self.reparam)
            self.opt.zero_grad(set_to_none=True)
            total.backward()
            self.opt.step()
            self.steps += 1
            vals = torch.stack([total.detach(), recon.detach(), kl.detach()]).cpu().numpy()
            if not np.isfinite(vals).all():
                self.diverged_at = self.steps
                break
            self._acc += vals
            self._acc_n += 1
            if self.steps % self.log_every == 0:
                metrics = self._log()
            if self.steps % self.snapshot_every == 0:
                self._keep_snapshot()
        return metrics or self.latest()

    def latest(self) -> dict[str, float]:
        return {k: self.history.last(k) for k in self.history.values}

    def _keep_snapshot(self) -> None:
        self.snapshots.append((self.steps, encode_dataset(self.model, self.data.x_test,
                                                          self.data.y_test).means))
        if len(self.snapshots) > self.max_snapshots:   # keep the first, thin the rest uniformly
            self.snapshots = self.snapshots[:1] + self.snapshots[2::2]

    def encoder_grad_norm_recon(self) -> float:
        """||d recon / d theta_encoder|| on the first 128 test digits with a fixed eps
        (exactly 0 when reparam=False: z is then sampled off the autograd graph)."""
        params = list(self.model.encoder.parameters())
        g = make_generator(self.seed + 1, self.device)
        _, recon, _ = self.model.loss(self.x_test[:128], self.beta, 1, g, self.reparam)
        grads = torch.autograd.grad(recon, params, allow_unused=True)
        return float(torch.sqrt(sum((gr.pow(2).sum() for gr in grads if gr is not None),
                                    torch.zeros((), device=self.device))))

    def _log(self) -> dict[str, float]:
        m: dict[str, float] = {}
        if self._acc_n:
            t, r, k = self._acc / self._acc_n
            m.update(train_loss=t, train_recon=r, train_kl=k, train_elbo=-(r + k))
            self._acc[:], self._acc_n = 0.0, 0
        with torch.no_grad():
            g = make_generator(self.seed + 1, self.device)
            _, r, k = self.model.loss(self.x_test, self.beta, 1, g, True)
            r, k = float(r), float(k)
        m.update(test_recon=r, test_kl=k, test_elbo=-(r + k))
        m["enc_grad_recon"] = self.encoder_grad_norm_recon()
        self.history.log(self.steps, m)
        return m

    def snapshot(self) -> VAESnapshot:
        codes = encode_dataset(self.model, self.data.x_test, self.data.y_test)
        if self.model.latent_dim >= 2:
            grid = latent_grid(self.model, self.grid_n, self.grid_span, dims=self.grid_dims)
        else:
            grid = LatentGrid(np.zeros((0, 0, 8, 8), np.float32), np.zeros(0), np.zeros(0), (0, 0), self.grid_span)
        return VAESnapshot(self.steps, self.steps / self.steps_per_epoch, codes, grid,
                           self.history.last("test_recon"), self.history.last("test_kl"),
                           self.history.last("test_elbo"), self.diverged_at)

    def state_dict(self) -> dict:
        snaps = {"steps": torch.tensor([s for s, _ in self.snapshots], dtype=torch.int64),
                 "means": torch.as_tensor(np.stack([m for _, m in self.snapshots]))
                 if self.snapshots else torch.zeros(0, len(self.x_test), self.model.latent_dim)}
        return {"model": {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()},
                "config": self.model.config(), "steps": self.steps,
                "diverged_at": self.diverged_at, "history": self.history.state_dict(),
                "snapshots": snaps}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict({k: v.to(self.device) for k, v in state["model"].items()})
        self.steps = int(state.get("steps", 0))
        self.diverged_at = state.get("diverged_at")
        if "history" in state:
            self.history = History.from_state_dict(state["history"])
        snaps = state.get("snapshots")
        self.snapshots = [] if snaps is None else [
            (int(s), m.numpy().copy()) for s, m in zip(snaps["steps"], snaps["means"])]
        if not self.snapshots or self.snapshots[-1][0] != self.steps:
            self._keep_snapshot()


def load_model(state: dict, device: str | torch.device | None = None) -> VAE:
    """A VAE rebuilt from a state_dict() (config + weights), e.g. load_shipped(name)."""
    cfg = state["config"]
    model = VAE(cfg["input_dim"], cfg["latent_dim"], tuple(cfg["hidden"]), cfg["likelihood"],
                cfg["deterministic"])
    model.load_state_dict(state["model"])
    return model.to(resolve_device(device)).eval()


# --------------------------------------------------------------------------------------
# Shipped weights (assets/weights/vae_*.pt, written by scripts/pretrain_vae.py)
# --------------------------------------------------------------------------------------

WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "assets" / "weights"
PRETRAIN_EPOCHS = 120
SHIPPED: dict[str, dict] = {  # file name -> VAETrainer keyword arguments
    "vae_d2_bernoulli.pt": dict(latent_dim=2, beta=1.0, likelihood="bernoulli", deterministic=False),
    "vae_ae_d2_bernoulli.pt": dict(latent_dim=2, beta=1.0, likelihood="bernoulli", deterministic=True),
}
SHIPPED_HIDDEN = (256, 128)   # VAETrainer's default, what every shipped file was trained with


def shipped_name(latent_dim: int, likelihood: str, deterministic: bool) -> str | None:
    """The shipped weight file for these settings, or None."""
    for name, kw in SHIPPED.items():
        if (kw["latent_dim"], kw["likelihood"], kw["deterministic"]) == (latent_dim, likelihood, deterministic):
            return name
    return None


def shipped_config(name: str) -> dict:
    """The VAE.config() a shipped file must hold (what the code builds for it today)."""
    kw = SHIPPED[name]
    return {"input_dim": 64, "latent_dim": kw["latent_dim"], "hidden": list(SHIPPED_HIDDEN),
            "likelihood": kw["likelihood"], "deterministic": kw["deterministic"]}


def save_trainer(trainer: VAETrainer, path, meta: dict | None = None) -> None:
    """trainer.state_dict() as one engine.weights file: model_config = the VAE's config(),
    state = the weights, steps, history and latent snapshots (the page's replay)."""
    state = {k: v for k, v in trainer.state_dict().items() if k != "config"}
    weights_file.save(path, trainer.model.config(), state, meta or {})


def load_shipped(path_or_name, device: str | torch.device = "cpu") -> dict:
    """The VAETrainer.state_dict() stored in a file written by save_trainer (a path, or a
    name in SHIPPED under WEIGHTS_DIR), for VAETrainer.load_state_dict or load_model. A
    missing, corrupt or stale file (a SHIPPED name whose stored config is not what the code
    builds for it) raises an engine.weights.WeightsError."""
    in_dir = isinstance(path_or_name, str) and path_or_name in SHIPPED
    path = WEIGHTS_DIR / path_or_name if in_dir else Path(path_or_name)
    expect = shipped_config(path.name) if path.name in SHIPPED else None
    stored = weights_file.load(path, device, expect_config=expect)
    return {**stored.state, "config": stored.model_config}


# --------------------------------------------------------------------------------------
# The 1-D toy of the variational principle
# --------------------------------------------------------------------------------------

TOY_NOISE = 0.5   # x = g(z) + TOY_NOISE * n, n ~ N(0, 1)


def toy_g(z):
    """g(z) = z^3 - 3z: folds the line (local max 2 at z=-1, local min -2 at z=1), so p(x) is
    bimodal (modes near x = +-2) and p(z|x) has up to three modes for |x| < 2."""
    return z**3 - 3 * z


def toy_log_joint(x: float, z):
    """log p(x, z) = log N(z; 0, 1) + log N(x; g(z), TOY_NOISE^2) (numpy or torch z)."""
    return -0.5 * z**2 - 0.5 * (x - toy_g(z)) ** 2 / TOY_NOISE**2 - LOG_2PI - math.log(TOY_NOISE)


def _logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def toy_z_grid(lo: float = -5.0, hi: float = 5.0, n: int = 4001) -> np.ndarray:
    return np.linspace(lo, hi, n)


def toy_log_px(x, z_grid: np.ndarray | None = None) -> np.ndarray:
    """log p(x) = log integral p(x, z) dz by the trapezoid rule on z_grid (vectorised over x)."""
    zg = toy_z_grid() if z_grid is None else z_grid
    x = np.asarray(x, dtype=np.float64)
    lj = toy_log_joint(x[..., None], zg)
    w = np.full(zg.shape, zg[1] - zg[0])
    w[[0, -1]] *= 0.5
    return _logsumexp(lj + np.log(w), axis=-1)


def true_posterior(x: float, z_grid: np.ndarray | None = None) -> np.ndarray:
    """p(z|x) = p(x, z) / p(x) on z_grid (a density: integrates to 1 by the trapezoid rule)."""
    zg = toy_z_grid() if z_grid is None else z_grid
    return np.exp(toy_log_joint(float(x), zg) - toy_log_px(float(x), zg))


_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(60)   # for E over N(0, 1)
_GH_WEIGHTS = _GH_WEIGHTS / np.sqrt(2 * np.pi)


def elbo_gaussian_q(x: float, m, s):
    """ELBO(q) = E_q[log p(x, z)] + H(q) for q = N(m, s^2) (vectorised over m, s):
    the expectation by 60-point Gauss-Hermite (exact here: log p(x, z) is a degree-6
    polynomial in z), H(q) = 1/2 log(2 pi e s^2)."""
    m, s = np.asarray(m, np.float64), np.asarray(s, np.float64)
    z = m[..., None] + s[..., None] * _GH_NODES
    e_log_joint = np.sum(_GH_WEIGHTS * toy_log_joint(float(x), z), axis=-1)
    return e_log_joint + 0.5 * np.log(2 * np.pi * np.e * s**2)


def kl_q_posterior(x: float, m: float, s: float, z_grid: np.ndarray | None = None) -> float:
    """KL(q || p(z|x)) = integral q log(q / p(z|x)) dz by the trapezoid rule on z_grid."""
    zg = toy_z_grid(-12, 12, 24001) if z_grid is None else z_grid
    log_q = -0.5 * ((zg - m) / s) ** 2 - np.log(s) - 0.5 * LOG_2PI
    log_post = toy_log_joint(float(x), zg) - toy_log_px(float(x), zg)
    f = np.exp(log_q) * (log_q - log_post)
    return float(np.trapezoid(f, zg))


@dataclass(frozen=True)
class ToyELBO:
    x: float
    m: float
    s: float
    log_px: float
    elbo: float
    gap: float              # log p(x) - ELBO = KL(q || p(z|x)) >= 0
    z: np.ndarray           # grid for the curves
    posterior: np.ndarray   # p(z|x) on z
    q: np.ndarray           # N(z; m, s^2) on z
    x_axis: np.ndarray      # grid of x for the marginal
    px: np.ndarray          # p(x) on x_axis


def toy_elbo(x: float, m: float, s: float) -> ToyELBO:
    """Everything the "Why the ELBO" tab draws, for observation x and q = N(m, s^2)."""
    if s <= 0:
        raise ValueError("sigma of q must be > 0")
    z = toy_z_grid(-4, 4, 801)
    xa = np.linspace(-6, 6, 481)
    lp = float(toy_log_px(x))
    el = float(elbo_gaussian_q(x, m, s))
    q = np.exp(-0.5 * ((z - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))
    return ToyELBO(float(x), float(m), float(s), lp, el, lp - el, z, true_posterior(x, z), q,
                   xa, np.exp(toy_log_px(xa)))


def fit_q(x: float, m0: float = 0.0, s0: float = 1.0, steps: int = 300, lr: float = 0.05) -> tuple[float, float]:
    """Maximise ELBO(m, s) by Adam on (m, log s) from (m0, s0): converges to the Gaussian that
    hugs the posterior mode nearest the start (KL(q||p) is mode-seeking). Deterministic."""
    nodes = torch.as_tensor(_GH_NODES)
    weights = torch.as_tensor(_GH_WEIGHTS)
    m = torch.tensor(float(m0), dtype=torch.float64, requires_grad=True)
    log_s = torch.tensor(math.log(max(float(s0), 1e-3)), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([m, log_s], lr=lr)
    for _ in range(int(steps)):
        z = m + torch.exp(log_s) * nodes
        elbo = (weights * toy_log_joint(float(x), z)).sum() + log_s
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
    return float(m.detach()), float(torch.exp(log_s.detach()))


# --------------------------------------------------------------------------------------
# Autoencoder vs PCA on a curved 2-D manifold
# --------------------------------------------------------------------------------------

def curved_manifold(n: int = 400, seed: int = 0, noise: float = 0.05) -> np.ndarray:
    """Points near an arc: x = (2t, 1.5 (t^2 - 1/3)) + noise * e,
    t ~ U(-1, 1), e ~ N(0, I). A 1-D curve a line (PCA) cannot follow. (n, 2) float32."""
    rng = numpy_rng(seed)
    t = rng.uniform(-1, 1, n)
    pts = np.stack([2 * t, 1.5 * (t**2 - 1 / 3)], 1) + noise * rng.standard_normal((n, 2))
    return pts.astype(np.float32)


@dataclass(frozen=True)
class Reconstruction:
    points: np.ndarray    # (n, 2) input
    recon: np.ndarray     # (n, 2) reconstruction through a 1-D bottleneck
    mse: float            # mean over points of ||x - recon||^2
    curve: np.ndarray     # (m, 2) the decoder's image of the code range (the learned manifold)


def pca_reconstruct(points: np.ndarray, k: int = 1) -> Reconstruction:
    """Project onto the top-k principal directions: recon = mean + (x - mean) V_k V_k^T."""
    x = np.asarray(points, np.float64)
    mean = x.mean(0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    v = vt[:k].T
    codes = (x - mean) @ v
    recon = mean + codes @ v.T
    t = np.linspace(codes.min(), codes.max(), 100)[:, None] if k == 1 else codes
    curve = mean + t @ v.T
    return Reconstruction(points, recon.astype(np.float32),
                          float(((x - recon) ** 2).sum(1).mean()), curve.astype(np.float32))


def fit_autoencoder_2d(points: np.ndarray, hidden: int = 32, linear: bool = False,
                       steps: int = 1500, lr: float = 0.01, seed: int = 0,
                       device: str | torch.device | None = None) -> Reconstruction:
    """A 2 -> hidden -> 1 -> hidden -> 2 autoencoder (tanh; linear=True: 2 -> 1 -> 2 with no
    nonlinearity, which learns the PCA line) trained full-batch with Adam on mean ||x - x_hat||^2."""
    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        if linear:
            enc, dec = nn.Linear(2, 1), nn.Linear(1, 2)
        else:
            enc = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
            dec = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 2))
    enc, dec = enc.to(dev), dec.to(dev)
    x = torch.as_tensor(np.asarray(points, np.float32), device=dev)
    opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=lr)
    for _ in range(int(steps)):
        loss = (dec(enc(x)) - x).pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        codes = enc(x)
        recon = dec(codes)
        t = torch.linspace(float(codes.min()), float(codes.max()), 200, device=dev)[:, None]
        curve = dec(t)
        mse = float((recon - x).pow(2).sum(1).mean())
    return Reconstruction(np.asarray(points), to_numpy(recon), mse, to_numpy(curve))
