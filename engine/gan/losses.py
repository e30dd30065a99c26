"""GAN objectives as a registry, on raw D outputs r = D(x_real), f = D(G(z)), and the two
gradient penalties (WGAN-GP, R1).

    minimax  D: softplus(−r) + softplus(f)        G: −softplus(f) = log(1 − σ(f))
    nonsat.  D: as minimax                         G: softplus(−f) = −log σ(f)
    lsgan    D: ½(r − 1)² + ½f²                    G: ½(f − 1)²
    hinge    D: relu(1 − r) + relu(1 + f)          G: −f
    wgan     D: f − r (+ clip or λ·GP)             G: −f
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F


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
