"""The live trainer of the graphs page: semi-supervised node classification on Zachary's
karate club. A two-layer GCN (or, for comparison, the same MLP without the edges) is fitted by
full-batch Adam to the factions of a few labelled members,

    L(theta) = -(1 / |S|) sum_{i in S} log softmax(f_theta(X, a_hat))_{i, y_i}

S the labelled nodes, X the node features (one-hot: X = I, as in Kipf & Welling's karate
example, or seeded random vectors). snapshot(): each node's predicted faction, its
confidence, and the accuracy on the unlabelled nodes."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.graphs.gcn import GCN, MLP, normalized_adjacency
from engine.graphs.graphs import make_graph
from engine.training import TrainerBase

FEATURES = ("one-hot", "random")
RANDOM_DIM = 16          # the width of the random features


def labelled_nodes(adjacency: np.ndarray, labels: np.ndarray, per_class: int) -> np.ndarray:
    """(n,) bool: per class, its `per_class` best-connected nodes (most neighbours; ties to
    the lower index) are labelled."""
    deg = adjacency.sum(1)
    mask = np.zeros(len(labels), dtype=bool)
    for c in np.unique(labels):
        members = np.flatnonzero(labels == c)
        order = members[np.lexsort((members, -deg[members]))]
        mask[order[:max(int(per_class), 0)]] = True
    return mask


def features_of(kind: str, n: int, seed: int) -> np.ndarray:
    """(n, d) float32 node features: the identity (d = n) or seeded Gaussian (d = RANDOM_DIM);
    neither says anything about a node's neighbours."""
    if kind == "one-hot":
        return np.eye(n, dtype=np.float32)
    if kind == "random":
        rng = np.random.default_rng(int(seed) + 1)
        return rng.standard_normal((n, RANDOM_DIM)).astype(np.float32)
    raise ValueError(f"unknown features {kind!r}: one of {', '.join(FEATURES)}")


@dataclass(frozen=True)
class Snapshot:
    labels: np.ndarray       # (n,) the true factions
    labelled: np.ndarray     # (n,) bool, the nodes whose label the loss sees
    predicted: np.ndarray    # (n,) argmax of the softmax
    confidence: np.ndarray   # (n,) the predicted class's probability
    accuracy: float          # share of the unlabelled nodes predicted right (NaN: none)


class GraphsTrainer(TrainerBase):
    """Full-batch Adam (weight decay 5e-4) on the labelled nodes' mean cross-entropy of a
    GCN (model="gcn") or an MLP that ignores the edges (model="mlp"); one iteration, one
    step."""

    log_every = 2            # the loss curve keeps every 2nd iteration

    def __init__(self, per_class: int = 1, hidden: int = 16, lr: float = 0.01,
                 features: str = "one-hot", seed: int = 0, device: str = "cpu",
                 model: str = "gcn"):
        super().__init__()
        graph = make_graph("karate")
        if graph.labels is None:
            raise ValueError("node classification needs a graph with labels")
        mask = labelled_nodes(graph.adjacency, graph.labels, per_class)
        if not mask.any():
            raise ValueError("no node is labelled: the loss has nothing to fit")
        x = features_of(features, graph.n, seed)
        self.x = torch.from_numpy(x).to(device)                                # (n, d)
        adjacency = torch.as_tensor(graph.adjacency, dtype=torch.float32, device=device)
        self.a_hat = normalized_adjacency(adjacency)                           # (n, n)
        self.y = torch.as_tensor(graph.labels, dtype=torch.long, device=device)  # (n,)
        self.mask = torch.as_tensor(mask, device=device)                      # (n,)
        with torch.random.fork_rng(devices=[]):                      # seeded, whatever ran before
            torch.manual_seed(seed)
            net = GCN if model == "gcn" else MLP
            self.model = net(x.shape[1], hidden, 2).to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr, weight_decay=5e-4)

    def logits(self) -> torch.Tensor:
        return self.model(self.x, self.a_hat)                                  # (n, 2)

    def loss(self) -> torch.Tensor:
        return F.cross_entropy(self.logits()[self.mask], self.y[self.mask])

    def _iteration(self) -> dict[str, float]:
        loss = self.loss()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"loss": float(loss.detach())}

    def snapshot(self) -> Snapshot:
        with torch.no_grad():
            p = torch.softmax(self.logits(), -1)                               # (n, 2)
        confidence, predicted = p.max(-1)                                      # (n,), (n,)
        hidden = ~self.mask
        accuracy = (float((predicted[hidden] == self.y[hidden]).float().mean())
                    if bool(hidden.any()) else float("nan"))
        return Snapshot(self.y.cpu().numpy(), self.mask.cpu().numpy(),
                        predicted.cpu().numpy(), confidence.cpu().numpy(), accuracy)

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}
