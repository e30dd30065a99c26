"""A continuous-time flow (a neural ODE, notes 004 chapter 11's flows taken to infinitely many
thin layers) on 2-D points, integrated with fixed-step RK4 from t = 0 (data) to t = 1 (base):

    dz/dt = g(z, t),          z(0) = x,  z(1) = f(x)
    d l/dt = tr(dg/dz),       l(0) = 0,  log p(x) = log N(z(1); 0, I) + l(1)

g is an MLP [z, t] -> tanh(W1 .) -> tanh(W2 .) -> W3 . + b3; its 2 x 2 Jacobian in z is exact
and cheap (no extra backward pass):

    J = W3 diag(1 - a2^2) W2 diag(1 - a1^2) W1[:, :2]        a1, a2 the hidden activations

Hutchinson's estimator tr(J) ~ eps^T J eps, eps Rademacher (E[eps eps^T] = I), is what
higher-dimensional flows use; `hutchinson_trace` computes it with one vector-Jacobian
product, for comparison with the exact trace.
"""
from __future__ import annotations

import torch
from torch import nn


class ODEField(nn.Module):
    """g(z, t): 3 -> hidden -> hidden -> 2, tanh, last layer starting at zero (g = 0: identity)."""

    def __init__(self, hidden: int = 32):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(3, hidden), nn.Linear(hidden, hidden), \
            nn.Linear(hidden, 2)
        nn.init.zeros_(self.l3.weight)
        nn.init.zeros_(self.l3.bias)

    def forward(self, z: torch.Tensor, t: float) -> torch.Tensor:
        """g(z, t) (n, 2) for z (n, 2)."""
        return self.with_trace(z, t)[0]

    def with_trace(self, z: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(g(z, t) (n, 2), tr(dg/dz) (n,)) with the exact Jacobian."""
        inp = torch.cat([z, torch.full_like(z[:, :1], float(t))], 1)      # (n, 3)
        a1 = torch.tanh(self.l1(inp))                                      # (n, H)
        a2 = torch.tanh(self.l2(a1))                                       # (n, H)
        g = self.l3(a2)                                                    # (n, 2)
        j1 = (1 - a1 ** 2)[:, :, None] * self.l1.weight[None, :, :2]       # (n, H, 2)
        j2 = (1 - a2 ** 2)[:, :, None] * (self.l2.weight @ j1)             # (n, H, 2)
        jac = self.l3.weight @ j2                                          # (n, 2, 2)
        return g, jac.diagonal(dim1=1, dim2=2).sum(1)

    def jacobian(self, z: torch.Tensor, t: float) -> torch.Tensor:
        """(n, 2, 2) dg/dz at each point, by autograd (for tests and the estimator)."""
        z = z.detach().requires_grad_(True)
        g = self(z, t)
        rows = [torch.autograd.grad(g[:, r].sum(), z, retain_graph=True)[0] for r in range(2)]
        return torch.stack(rows, 1)


def hutchinson_trace(field: ODEField, z: torch.Tensor, t: float,
                     generator: torch.Generator | None = None, probes: int = 1) -> torch.Tensor:
    """(n,) mean over `probes` Rademacher eps of eps^T (dg/dz) eps (unbiased for the trace)."""
    n = z.shape[0]
    zs = z.detach().repeat(int(probes), 1).requires_grad_(True)                    # (P n, 2)
    g = field(zs, t)
    eps = torch.randint(0, 2, zs.shape, generator=generator).to(z.dtype) * 2 - 1  # (P n, 2)
    vjp = torch.autograd.grad(g, zs, eps)[0]                                     # eps^T J
    return (vjp * eps).sum(1).reshape(int(probes), n).mean(0)                    # (n,)


class ODEFlow(nn.Module):
    """The flow x -> z = z(1) by `steps` RK4 steps of the augmented state (z, l)."""

    def __init__(self, hidden: int = 32, steps: int = 8):
        super().__init__()
        if steps < 1:
            raise ValueError("the ODE needs at least one RK4 step")
        self.field = ODEField(int(hidden))
        self.steps = int(steps)

    def _rk4(self, z: torch.Tensor, t0: float, t1: float
             ) -> tuple[torch.Tensor, torch.Tensor]:
        h = (t1 - t0) / self.steps
        logdet = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)
        t = t0
        for _ in range(self.steps):
            k1, c1 = self.field.with_trace(z, t)
            k2, c2 = self.field.with_trace(z + 0.5 * h * k1, t + 0.5 * h)
            k3, c3 = self.field.with_trace(z + 0.5 * h * k2, t + 0.5 * h)
            k4, c4 = self.field.with_trace(z + h * k3, t + h)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)                # (n, 2)
            logdet = logdet + h / 6 * (c1 + 2 * c2 + 2 * c3 + c4)      # (n,)
            t += h
        return z, logdet

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z = z(1) (n, 2) and l(1) = int_0^1 tr(dg/dz) dt (n,), the log-determinant."""
        return self._rk4(x, 0.0, 1.0)

    def inverse(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x = z(0), integrating backwards from t = 1 (approximate: RK4's error, measured)."""
        return self._rk4(z, 1.0, 0.0)
