"""Backpropagation through whole layers, and what a full Jacobian costs in each mode.

Linear layer y = W x + b with upstream gradient delta = dL/dy:

    dL/dW = delta x^T   (n_out x n_in)     dL/dx = W^T delta   (n_in)     dL/db = delta
    batched (rows are examples): dW = Delta^T X,  dX = Delta W,  db = sum_rows Delta

Losses (registry LOSSES), B = batch size, with their closed-form dL/dy:

    mse            L = 1/(2B) sum_b |y_b - t_b|^2           dL/dy = (y - t) / B
    cross_entropy  L = -1/B sum_b log softmax(y_b)[t_b]     dL/dy = (softmax(y) - onehot(t)) / B

Jacobian of f: R^n -> R^m, f(x) = W2 tanh(W1 x): forward mode pushes one tangent e_j per
input (n Jacobian-vector products, one column each); reverse mode pulls one cotangent e_i
per output (m vector-Jacobian products, one row each) after a single forward pass.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class LinearGrads:
    dW: np.ndarray
    dx: np.ndarray
    db: np.ndarray


def linear_layer_grads(W, x, upstream) -> LinearGrads:
    """dL/dW = delta x^T, dL/dx = W^T delta, dL/db = delta for y = W x + b (x: (n_in,) or a
    batch (B, n_in); upstream delta: (n_out,) or (B, n_out))."""
    W, x, delta = (np.asarray(a, dtype=np.float64) for a in (W, x, upstream))
    if W.ndim != 2 or x.shape[-1] != W.shape[1] or delta.shape[-1] != W.shape[0] \
            or x.shape[:-1] != delta.shape[:-1]:
        raise ValueError(f"shapes do not fit y = W x: W {W.shape}, x {x.shape}, "
                         f"dL/dy {delta.shape}")
    rows_delta, rows_x = delta.reshape(-1, W.shape[0]), x.reshape(-1, W.shape[1])
    return LinearGrads(rows_delta.T @ rows_x, delta @ W, rows_delta.sum(0))


@dataclass(frozen=True)
class Loss:
    name: str
    value: Callable[[np.ndarray, np.ndarray], float]
    grad: Callable[[np.ndarray, np.ndarray], np.ndarray]      # dL/dy
    torch_value: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _softmax(y):
    e = np.exp(y - y.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


LOSSES = {
    "mse": Loss("mse", lambda y, t: float(0.5 * ((y - t) ** 2).sum() / len(y)),
                lambda y, t: (y - t) / len(y),
                lambda y, t: 0.5 * ((y - t) ** 2).sum() / len(y)),
    "cross_entropy": Loss(
        "cross_entropy",
        lambda y, t: float(-np.log(_softmax(y)[np.arange(len(y)), t]).mean()),
        lambda y, t: (_softmax(y) - np.eye(y.shape[1])[t]) / len(y),
        lambda y, t: F.cross_entropy(y, t)),
}


@dataclass(frozen=True)
class LayerExample:
    W: np.ndarray
    b: np.ndarray
    x: np.ndarray                # (B, n_in)
    target: np.ndarray           # (B, n_out) for mse, (B,) class indices for cross_entropy
    y: np.ndarray                # (B, n_out)
    loss: float
    delta: np.ndarray            # dL/dy, closed form
    grads: LinearGrads           # by the formulas above
    torch_grads: LinearGrads     # torch.autograd on the same loss
    torch_loss: float

    @property
    def max_abs_diff(self) -> float:
        return float(max(np.abs(a - b).max() for a, b in
                         zip((self.grads.dW, self.grads.dx, self.grads.db),
                             (self.torch_grads.dW, self.torch_grads.dx, self.torch_grads.db))))

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        return {"W": self.W.shape, "x": self.x.shape, "b": self.b.shape, "y": self.y.shape,
                "dL/dy": self.delta.shape, "dL/dW": self.grads.dW.shape,
                "dL/dx": self.grads.dx.shape, "dL/db": self.grads.db.shape}


def layer_example(n_in: int, n_out: int, batch: int = 1, loss: str = "mse",
                  seed: int = 0) -> LayerExample:
    """A random linear layer + loss (float64), its gradients by the formulas and by autograd."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r} (known: {', '.join(LOSSES)})")
    rng = np.random.default_rng(seed)
    W = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in))
    b = rng.normal(0, 0.1, n_out)
    x = rng.normal(0, 1, (batch, n_in))
    target = rng.integers(0, n_out, batch) if loss == "cross_entropy" \
        else rng.normal(0, 1, (batch, n_out))
    y = x @ W.T + b
    spec = LOSSES[loss]
    delta = spec.grad(y, target)
    grads = linear_layer_grads(W, x, delta)
    tW, tb, tx = (torch.tensor(a, requires_grad=True) for a in (W, b, x))
    t_target = torch.tensor(target)
    t_loss = spec.torch_value(tx @ tW.T + tb, t_target)
    dW, db, dx = torch.autograd.grad(t_loss, (tW, tb, tx))
    return LayerExample(W, b, x, target, y, spec.value(y, target), delta, grads,
                        LinearGrads(dW.numpy(), dx.numpy(), db.numpy()), float(t_loss.detach()))


# PyTorch's forward-mode AD levels are process-global, not per thread: two jvp loops running
# at once in two threads (two app sessions) break each other's dual level, so they take turns.
_FORWARD_AD = threading.Lock()


@dataclass(frozen=True)
class JacobianCost:
    n_in: int
    n_out: int
    forward_passes: int          # Jacobian-vector products run (one per input)
    reverse_passes: int          # vector-Jacobian products run (one per output)
    jacobian_forward: np.ndarray     # (n_out, n_in), column by column
    jacobian_reverse: np.ndarray     # (n_out, n_in), row by row
    jacobian_exact: np.ndarray       # W2 diag(1 - h^2) W1
    seconds_forward: float
    seconds_reverse: float

    @property
    def cheaper(self) -> str:
        return "reverse" if self.reverse_passes < self.forward_passes else \
            "forward" if self.forward_passes < self.reverse_passes else "tie"

    @property
    def max_error(self) -> float:
        return float(max(np.abs(self.jacobian_forward - self.jacobian_exact).max(),
                         np.abs(self.jacobian_reverse - self.jacobian_exact).max()))


def cost_forward_vs_reverse(n_in: int, n_out: int, hidden: int = 16,
                            seed: int = 0) -> JacobianCost:
    """The full Jacobian of f(x) = W2 tanh(W1 x) at a random x, built by forward mode
    (torch.func.jvp per input) and by reverse mode (torch.func.vjp per output), counting
    the passes each needs and timing them."""
    if n_in < 1 or n_out < 1:
        raise ValueError("n_in and n_out must be at least 1")
    g = torch.Generator().manual_seed(seed)
    W1 = torch.randn(hidden, n_in, generator=g, dtype=torch.float64) / n_in ** 0.5
    W2 = torch.randn(n_out, hidden, generator=g, dtype=torch.float64) / hidden ** 0.5
    x = torch.randn(n_in, generator=g, dtype=torch.float64)

    def f(v):
        return W2 @ torch.tanh(W1 @ v)

    with _FORWARD_AD:
        t0 = time.perf_counter()
        columns, forward_passes = [], 0
        for e in torch.eye(n_in, dtype=torch.float64):
            columns.append(torch.func.jvp(f, (x,), (e,))[1])
            forward_passes += 1
        t1 = time.perf_counter()
    _, pull = torch.func.vjp(f, x)
    rows, reverse_passes = [], 0
    for e in torch.eye(n_out, dtype=torch.float64):
        rows.append(pull(e)[0])
        reverse_passes += 1
    t2 = time.perf_counter()
    h = torch.tanh(W1 @ x)
    exact = W2 @ torch.diag(1 - h ** 2) @ W1
    return JacobianCost(n_in, n_out, forward_passes, reverse_passes,
                        torch.stack(columns, 1).numpy(), torch.stack(rows, 0).numpy(),
                        exact.numpy(), t1 - t0, t2 - t1)
