"""The exact denoiser of a Gaussian mixture (and the density grid the page draws).

    q_t(x) = sum_k w_k N(sqrt(ab_t) mu_k, ab_t Sigma_k + (1 - ab_t) I)
    eps*(x_t, t) = -sqrt(1 - ab_t) grad log q_t(x_t)
"""
from __future__ import annotations

import math

import numpy as np
import torch

from engine.datasets import ToyData
from engine.device import numpy_rng, resolve_device, to_numpy
from engine.diffusion.schedule import Schedule


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


@torch.no_grad()
def density_grid(denoiser: MixtureDenoiser, lo: float, hi: float, res: int = 80, t: int = 0,
                 c=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gx (res,), gy (res,), q_t on the grid (res, res) indexed [iy, ix])."""
    ticks = np.linspace(lo, hi, res)
    xx, yy = np.meshgrid(ticks, ticks)
    g = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32,
                        device=denoiser.device)
    return ticks, ticks, to_numpy(denoiser.log_prob(g, t, c).exp()).reshape(res, res)
