"""The VAE model: closed forms, likelihoods and the encoder/decoder.

    KL(N(mu, diag sigma^2) || N(0, I)) = 1/2 sum_j (mu_j^2 + sigma_j^2 - 1 - log sigma_j^2)
    z = mu + sigma * eps, eps ~ N(0, I)                          (reparameterisation)
    Bernoulli: -log p(x|z) = sum_i BCE(sigmoid(logit_i), x_i)
    Gaussian:  -log p(x|z) = ||x - m||^2 / (2 sigma^2) + D/2 log(2 pi sigma^2)
    loss = recon + beta * kl  (= -ELBO at beta = 1)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F


GAUSSIAN_SIGMA = 0.1   # std of the Gaussian likelihood p(x|z) = N(decode(z), sigma^2 I)
LOG_2PI = math.log(2 * math.pi)


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
            # one sample (what training draws): z (batch, latent) directly, the same draws and
            # the same numbers as the (1, batch, latent) stack, without its broadcast copies
            mu_s, lv_s = (mu, logvar) if s == 1 else (mu.expand(s, *mu.shape),
                                                      logvar.expand(s, *logvar.shape))
            z = reparameterize(mu_s, lv_s, generator)
            if not reparam:
                z = z.detach()
            recon = nll(self.decode_logits(z), x)
            recon = recon if s == 1 else recon.mean(0)
            kl = kl_standard_normal(mu, logvar)
        recon, kl = recon.mean(), kl.mean()
        return Loss(recon + beta * kl, recon, kl)
