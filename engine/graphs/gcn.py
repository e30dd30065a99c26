"""Message passing of a graph convolutional network (Kipf & Welling, 2017), in torch.

One GCN layer mixes each node's feature with its neighbours' through the normalised
adjacency with self-loops,

    a_hat = D^-1/2 (A + I) D^-1/2,   D = diag(deg),  deg_i = 1 + sum_j A_ij

so node i receives the message a_hat[i, j] * h_j = h_j / sqrt(deg_i deg_j) from every
neighbour j and from itself, and

    H' = a_hat @ H @ W            (a layer; the page's message passing drops W: H' = a_hat @ H)

Repeating H_{k+1} = a_hat @ H_k smooths the features: a_hat's largest eigenvalue is 1 with
eigenvector sqrt(deg), every other one has |lambda| < 1 on a connected graph, so
H_k -> sqrt(deg) sqrt(deg)^T H_0 / sum(deg) and the degree-rescaled features
z_i = h_i / sqrt(deg_i) all tend to the same vector (over-smoothing)."""
from __future__ import annotations

import numpy as np
import torch


def normalized_adjacency(adjacency: torch.Tensor) -> torch.Tensor:
    """a_hat = D^-1/2 (A + I) D^-1/2 with deg_i = 1 + sum_j A_ij; (n, n) -> (n, n)."""
    n = adjacency.shape[0]
    a_tilde = adjacency + torch.eye(n, dtype=adjacency.dtype, device=adjacency.device)  # (n, n)
    inv_sqrt = a_tilde.sum(1).rsqrt()                                                # (n,)
    return inv_sqrt[:, None] * a_tilde * inv_sqrt[None, :]                           # (n, n)


def propagate(a_hat: torch.Tensor, h0: torch.Tensor, layers: int) -> torch.Tensor:
    """(layers + 1, n, d): H_0 = h0 and H_{k+1} = a_hat @ H_k, k < layers (no weights)."""
    out = [h0]
    for _ in range(int(layers)):
        out.append(a_hat @ out[-1])                                  # (n, d)
    return torch.stack(out)


def rescaled(h: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    """z_i = h_i / sqrt(deg_i), deg_i = 1 + sum_j A_ij: the features whose spread message
    passing drives to 0; (..., n, d) -> (..., n, d)."""
    deg = adjacency.sum(1) + 1                                       # (n,)
    return h / deg.sqrt()[:, None]


def spread(z: torch.Tensor) -> torch.Tensor:
    """mean_i ||z_i - mean_j z_j||: how far the nodes' features lie from their mean;
    (..., n, d) -> (...)."""
    return (z - z.mean(-2, keepdim=True)).norm(dim=-1).mean(-1)


def spread_by_depth(adjacency: np.ndarray, h0: np.ndarray, layers: int) -> np.ndarray:
    """(layers + 1,) spread(z_k) / spread(z_0) of the degree-rescaled features after k layers
    of H_{k+1} = a_hat @ H_k (1 at k = 0; NaN where the layer-0 spread is 0)."""
    a = torch.as_tensor(adjacency, dtype=torch.float64)              # (n, n)
    h = propagate(normalized_adjacency(a), torch.as_tensor(h0, dtype=torch.float64), layers)
    s = spread(rescaled(h, a))                                       # (layers + 1,)
    return (s / s[0]).numpy() if float(s[0]) > 0 else np.full(len(s), np.nan)


class GCN(torch.nn.Module):
    """Two GCN layers (the bias after the propagation, as in PyTorch Geometric's GCNConv):
    logits = a_hat @ relu(a_hat @ X @ W1 + b1) @ W2 + b2."""

    def __init__(self, d_in: int, hidden: int, classes: int):
        super().__init__()
        self.lin1 = torch.nn.Linear(d_in, hidden, bias=False)        # W1
        self.lin2 = torch.nn.Linear(hidden, classes, bias=False)     # W2
        self.b1 = torch.nn.Parameter(torch.zeros(hidden))
        self.b2 = torch.nn.Parameter(torch.zeros(classes))

    def forward(self, x: torch.Tensor, a_hat: torch.Tensor) -> torch.Tensor:
        h = torch.relu(a_hat @ self.lin1(x) + self.b1)               # (n, hidden)
        return a_hat @ self.lin2(h) + self.b2                        # (n, classes)


class MLP(torch.nn.Module):
    """The same two layers without the graph: logits = relu(X @ W1 + b1) @ W2 + b2."""

    def __init__(self, d_in: int, hidden: int, classes: int):
        super().__init__()
        self.lin1 = torch.nn.Linear(d_in, hidden)
        self.lin2 = torch.nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor, a_hat: torch.Tensor | None = None) -> torch.Tensor:
        return self.lin2(torch.relu(self.lin1(x)))                   # (n, classes)


def permutation_error(model: torch.nn.Module, x: torch.Tensor, adjacency: torch.Tensor,
                      seed: int = 0) -> float:
    """max |f(P X, P A P^T) - P f(X, A)| over a seeded random permutation P of the nodes:
    0 up to float rounding when f is permutation-equivariant (a GCN is)."""
    n = x.shape[0]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(int(seed)))  # (n,)
    with torch.no_grad():
        out = model(x, normalized_adjacency(adjacency))                            # (n, c)
        out_p = model(x[perm], normalized_adjacency(adjacency[perm][:, perm]))     # (n, c)
    return float((out_p - out[perm]).abs().max())
