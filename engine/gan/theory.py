"""GAN theory checks: the optimal discriminator D* = p_data / (p_data + p_g) and a trained
approximation of it, the generator's minimax and non-saturating losses as functions of D's
verdict, the Dirac-GAN (Mescheder, Geiger, Nowozin 2018), and the parallel-lines example of why
Wasserstein distances give gradients where JSD does not.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy
from engine.gan.losses import LOSSES
from engine.gan.nets import mlp


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
# The generator's two classifier losses against D's verdict on a fake
# --------------------------------------------------------------------------------------

G_LOSS_CURVES = ("minimax", "nonsaturating")


@dataclass(frozen=True)
class GeneratorLossCurves:
    d: np.ndarray                  # (m,) D(G(z)) in (0, 1)
    loss: dict[str, np.ndarray]    # name -> L_G at each d
    slope: dict[str, np.ndarray]   # name -> ∂L_G/∂f, f = logit d: what reaches G through D


def generator_loss_curves(d: np.ndarray, names=G_LOSS_CURVES) -> GeneratorLossCurves:
    """L_G of LOSSES[name].g_loss for one fake whose verdict is D(G(z)) = d, and its derivative
    in D's logit f = log(d / (1 − d)) by autograd (the trainer's own loss functions)."""
    f = torch.logit(torch.as_tensor(np.asarray(d, dtype=np.float64)))
    loss, slope = {}, {}
    for name in names:
        x = f.clone().requires_grad_(True)
        values = torch.stack([LOSSES[name].g_loss(v.reshape(1)) for v in x])
        (grad,) = torch.autograd.grad(values.sum(), x)
        loss[name], slope[name] = to_numpy(values.detach()), to_numpy(grad)
    return GeneratorLossCurves(np.asarray(d, dtype=np.float64), loss, slope)


# --------------------------------------------------------------------------------------
# Optimal discriminator vs optimal Wasserstein critic between two 1-D Gaussians
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiscriminatorVsCritic:
    x: np.ndarray
    p_real: np.ndarray      # N(mu_real, σ²) density
    p_fake: np.ndarray      # N(mu_fake, σ²) density
    d_star: np.ndarray      # optimal discriminator p_real / (p_real + p_fake)
    d_slope: np.ndarray     # dD*/dx
    critic: np.ndarray      # an optimal 1-Lipschitz critic of W₁(real, fake), 0 at the middle
    critic_slope: np.ndarray


def _normal_pdf_cdf(x: np.ndarray, mu: float, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    t = torch.as_tensor((x - mu) / sigma, dtype=torch.float64)
    return (to_numpy(torch.exp(-t * t / 2)) / (sigma * math.sqrt(2 * math.pi)),
            to_numpy(torch.special.ndtr(t)))


def discriminator_vs_critic(x: np.ndarray, mu_real: float, mu_fake: float,
                            sigma: float = 1.0) -> DiscriminatorVsCritic:
    """D* = p_r/(p_r + p_f), its slope D*(1 − D*)·d/dx log(p_r/p_f) (exact for equal σ), and
    the optimal critic of W₁ = sup over 1-Lipschitz f of E_r f − E_f f: in 1-D its slope is
    sign(F_fake − F_real) (F: the CDFs), so between two shifted Gaussians of equal σ it is a
    straight line of slope ±1 rising towards the real data."""
    x = np.asarray(x, dtype=np.float64)
    pr, fr = _normal_pdf_cdf(x, mu_real, sigma)
    pf, ff = _normal_pdf_cdf(x, mu_fake, sigma)
    d = optimal_discriminator(pr, pf)
    d_slope = d * (1 - d) * (mu_real - mu_fake) / sigma ** 2
    slope = np.sign(ff - fr)
    critic = np.concatenate([[0.0], np.cumsum((slope[1:] + slope[:-1]) / 2 * np.diff(x))])
    critic -= np.interp((mu_real + mu_fake) / 2, x, critic)
    return DiscriminatorVsCritic(x, pr, pf, d, d_slope, critic, slope)
