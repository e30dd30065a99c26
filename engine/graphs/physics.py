"""Balls joined by springs in 2-D, simulated exactly, and an interaction network that learns
their accelerations (Battaglia et al., 2016).

The system: n balls of unit mass at positions x (n, 2) with velocities v (n, 2); a spring of
stiffness K and rest length REST joins balls i and j where springs[i, j] = 1. Its energy

    E = sum_i |v_i|^2 / 2 + sum_{i<j} springs_ij K (|x_j - x_i| - REST)^2 / 2

and the acceleration of ball i is a_i = sum_j springs_ij K (|d_ij| - REST) d_ij / |d_ij|,
d_ij = x_j - x_i. Velocity Verlet (symplectic: E stays within O(dt^2) of its start for all
time) advances it by dt:

    v_half = v + a(x) dt / 2,   x' = x + v_half dt,   v' = v_half + a(x') dt / 2

The interaction network replaces a(x) by a learned one with the same structure: an edge model
phi_e maps each spring's relative position (d_ij, |d_ij|) to an effect e_ij, the effects into
a ball are summed, and a node model phi_v maps the sum to the ball's acceleration,

    a_i = phi_v( sum_j springs_ij phi_e(d_ij, |d_ij|) )

It sees only relative positions and a sum over neighbours, so it is the same function for any
number of balls and any numbering of them (relabelled in, relabelled out)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

K = 5.0            # spring stiffness
REST = 1.0         # spring rest length
DT = 0.02          # the time step of the simulation and of the rollouts
EFFECT = 16        # width of an edge's effect e_ij


def spring_system(n: int, seed: int = 0, extra: float = 0.25) -> tuple[np.ndarray, ...]:
    """A seeded system of n balls: springs (n, n) 0/1 symmetric (a chain 0-1-...-(n-1), and
    each pair 2 or 3 apart along it joined with probability `extra`), positions x (n, 2) on a
    circle of spacing about REST jittered by N(0, 0.25^2), velocities v (n, 2) ~ N(0, 0.3^2)
    with their mean removed."""
    rng = np.random.default_rng(int(seed))
    n = max(int(n), 1)
    springs = np.zeros((n, n))
    for i in range(n - 1):
        springs[i, i + 1] = 1
    for i in range(n):
        for j in range(i + 2, min(i + 4, n)):
            if rng.random() < extra:
                springs[i, j] = 1
    springs = np.maximum(springs, springs.T)
    radius = max(n * REST / (2 * np.pi), REST)
    angle = 2 * np.pi * np.arange(n) / max(n, 1)
    x = radius * np.stack([np.cos(angle), np.sin(angle)], 1) + 0.25 * rng.standard_normal((n, 2))
    v = 0.3 * rng.standard_normal((n, 2))
    v -= v.mean(0)
    return springs, x, v


def spring_acceleration(x: torch.Tensor, springs: torch.Tensor) -> torch.Tensor:
    """a_i = sum_j springs_ij K (|d_ij| - REST) d_ij / |d_ij|, d_ij = x_j - x_i (unit masses);
    x (..., n, 2), springs (n, n) -> (..., n, 2)."""
    d = x[..., None, :, :] - x[..., :, None, :]                      # (..., n, n, 2): x_j - x_i
    r = d.norm(dim=-1, keepdim=True)                                  # (..., n, n, 1)
    unit = d / r.clamp_min(1e-9)                                      # (..., n, n, 2)
    force = springs[..., None] * K * (r - REST) * unit                # (..., n, n, 2)
    return force.sum(-2)                                              # (..., n, 2)


def spring_energy(x: torch.Tensor, v: torch.Tensor, springs: torch.Tensor) -> torch.Tensor:
    """E = sum_i |v_i|^2 / 2 + sum_{i<j} springs_ij K (|d_ij| - REST)^2 / 2;
    x, v (..., n, 2) -> (...)."""
    d = x[..., None, :, :] - x[..., :, None, :]                      # (..., n, n, 2)
    r = (d ** 2).sum(-1).clamp_min(1e-18).sqrt()                      # (..., n, n), 0 -> 1e-9
    potential = (springs * K * (r - REST) ** 2 / 2).sum((-1, -2)) / 2  # each pair twice
    return (v ** 2).sum((-1, -2)) / 2 + potential


def rollout(accel, x0: torch.Tensor, v0: torch.Tensor, steps: int,
            dt: float = DT) -> tuple[torch.Tensor, torch.Tensor]:
    """Velocity Verlet with accelerations accel(x) (n, 2) -> (n, 2): positions and velocities
    (steps + 1, n, 2) at t = 0, dt, ..., steps dt (one accel call per step)."""
    x, v = x0, v0
    a = accel(x)                                                      # (n, 2)
    xs, vs = [x], [v]
    for _ in range(int(steps)):
        v_half = v + a * (dt / 2)
        x = x + v_half * dt
        a = accel(x)
        v = v_half + a * (dt / 2)
        xs.append(x)
        vs.append(v)
    return torch.stack(xs), torch.stack(vs)


def simulate(springs: np.ndarray, x0: np.ndarray, v0: np.ndarray, steps: int,
             dt: float = DT) -> tuple[np.ndarray, np.ndarray]:
    """The exact system's trajectory in float64: x, v (steps + 1, n, 2)."""
    s = torch.tensor(springs, dtype=torch.float64)                    # (n, n), copies
    xs, vs = rollout(lambda x: spring_acceleration(x, s), torch.tensor(x0, dtype=torch.float64),
                     torch.tensor(v0, dtype=torch.float64), steps, dt)
    return xs.numpy(), vs.numpy()


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, d_out))


class InteractionNetwork(nn.Module):
    """a_i = phi_v( sum_j springs_ij phi_e(d_ij, |d_ij|) ), d_ij = x_j - x_i: phi_e and phi_v
    MLPs with two hidden layers of `hidden` units."""

    def __init__(self, hidden: int = 64):
        super().__init__()
        self.edge = _mlp(3, hidden, EFFECT)                           # phi_e
        self.node = _mlp(EFFECT, hidden, 2)                           # phi_v

    def forward(self, x: torch.Tensor, springs: torch.Tensor) -> torch.Tensor:
        """x (..., n, 2), springs (..., n, n) -> accelerations (..., n, 2)."""
        d = x[..., None, :, :] - x[..., :, None, :]                   # (..., n, n, 2)
        r = d.norm(dim=-1, keepdim=True)                              # (..., n, n, 1)
        effects = self.edge(torch.cat([d, r], -1))                    # (..., n, n, EFFECT)
        total = (springs[..., None] * effects).sum(-2)                # (..., n, EFFECT)
        return self.node(total)                                       # (..., n, 2)
