"""The live trainer of the representation-learning page: DEC (engine/representations/dec.py)
on scikit-learn's digits. The shipped autoencoder's encoder f and k-means centres mu (fitted
to the codes, seeded) start the run; every iteration is one Adam step on a minibatch B of

    L = (1/|B|) sum_{i in B} sum_j p_ij log(p_ij / q_ij)  +  gamma (1/|B|) sum_{i in B}
        |x_i - g(f(x_i))|^2 / 64

with q the Student-t soft assignments of f(x_i) to mu, and the target p recomputed from q of
all digits every `update_interval` iterations (held fixed in between). gamma = 0 is DEC
(decoder g unused); gamma > 0 keeps the reconstruction loss engaged (notes 001, L4822).
snapshot(): the codes in a fixed 2-D projection, each digit's cluster and q, the cluster
accuracy (Hungarian matching) and the pull of the loss toward one centre vs q_ij (L4735)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.cluster import KMeans
from torch import nn

from engine.representations.dec import (Autoencoder, digits_pixels, kl_loss, pull_toward,
                                        soft_assign, target_distribution)
from engine.representations.metrics import cluster_accuracy
from engine.training import TrainerBase

TOP = 8                  # members shown per cluster


def kmeans_centres(z: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(centres (k, d), labels (n,)) of scikit-learn's k-means (10 restarts) on z (n, d)."""
    if not 2 <= int(k) <= len(z):
        raise ValueError(f"{k} clusters of {len(z)} digits: choose 2 to {len(z)} clusters")
    km = KMeans(n_clusters=int(k), n_init=10, random_state=int(seed)).fit(z)
    return km.cluster_centers_.astype(np.float32), km.labels_.astype(np.int64)


def projection(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean (d,), basis (d, 2)): the first two principal axes of z (n, d)."""
    mean = z.mean(0)
    _, _, vt = np.linalg.svd(z - mean, full_matrices=False)
    return mean, vt[:2].T


def top_members(cluster: np.ndarray, score: np.ndarray, k: int, top: int = TOP
                ) -> np.ndarray:
    """(k, top) int64: per cluster j, the indices of its members (cluster == j) of largest
    score, best first; -1 where a cluster has fewer members."""
    out = np.full((int(k), int(top)), -1, dtype=np.int64)
    for j in range(int(k)):
        members = np.flatnonzero(cluster == j)
        best = members[np.argsort(-score[members], kind="stable")][:top]
        out[j, :len(best)] = best
    return out


class Centres(nn.Module):
    def __init__(self, mu: np.ndarray):
        super().__init__()
        self.mu = nn.Parameter(torch.as_tensor(mu))                     # (k, d)


@dataclass(frozen=True)
class Snapshot:
    points: np.ndarray       # (n, 2) the codes in the fixed 2-D projection
    centres: np.ndarray      # (k, 2) the centres in the same projection
    labels: np.ndarray       # (n,) the true digits
    cluster: np.ndarray      # (n,) argmax_j q_ij
    q_max: np.ndarray        # (n,) max_j q_ij
    accuracy: float          # cluster accuracy, Hungarian matching
    loss: float              # KL(P||Q) over all digits, with the current target
    q_j: np.ndarray          # (n,) q_ij for the cluster j drawn in the gradient curve
    pull_j: np.ndarray       # (n,) the loss's pull of each code toward mu_j (pull_toward)
    j: int
    top: np.ndarray          # (k, TOP) per cluster, its members of largest q_ij (-1: none)


class DECTrainer(TrainerBase):
    """DEC / IDEC on the digits; one iteration, one Adam step on a minibatch."""

    log_every = 5

    def __init__(self, ae_state: dict, k: int = 10, alpha: float = 1.0, lr: float = 1e-3,
                 gamma: float = 0.0, update_interval: int = 20, batch: int = 256,
                 seed: int = 0, device: str = "cpu"):
        super().__init__()
        if alpha <= 0:
            raise ValueError("the Student-t's degrees of freedom alpha must be positive")
        x, y = digits_pixels()
        self.x = torch.from_numpy(x).to(device)                         # (n, 64)
        self.labels = y
        self.alpha, self.gamma = float(alpha), float(gamma)
        self.update_interval, self.batch = max(1, int(update_interval)), int(batch)
        self.ae = Autoencoder().to(device)
        self.ae.load_state_dict(ae_state)
        z0 = self.codes().cpu().numpy()                                 # (n, d)
        mu, km_labels = kmeans_centres(z0, k, seed)
        self.kmeans_accuracy = cluster_accuracy(y, km_labels)
        self.mean, self.basis = projection(z0)
        self.centres = Centres(mu).to(device)
        self.opt = torch.optim.Adam([*self.ae.parameters(), *self.centres.parameters()], lr=lr)
        self.gen = torch.Generator().manual_seed(int(seed))
        self.target = self.full_q().detach()                            # replaced at step 1

    def codes(self) -> torch.Tensor:
        with torch.no_grad():
            return self.ae.encoder(self.x)                              # (n, d)

    def full_q(self) -> torch.Tensor:
        return soft_assign(self.codes(), self.centres.mu.detach(), self.alpha)  # (n, k)

    def _iteration(self) -> dict[str, float]:
        if (self.steps - 1) % self.update_interval == 0:
            q = self.full_q()
            self.target = target_distribution(q)                        # (n, k)
            acc = cluster_accuracy(self.labels, q.argmax(1).cpu().numpy())
            self.history.log(self.steps - 1, {"accuracy": acc})
        idx = torch.randint(len(self.x), (self.batch,), generator=self.gen).to(self.x.device)
        xb = self.x[idx]                                                # (B, 64)
        z = self.ae.encoder(xb)                                         # (B, d)
        q = soft_assign(z, self.centres.mu, self.alpha)                 # (B, k)
        cluster = kl_loss(self.target[idx], q)
        loss = cluster
        if self.gamma > 0:
            loss = loss + self.gamma * (self.ae.decoder(z) - xb).pow(2).mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"loss": float(cluster.detach())}

    def snapshot(self) -> Snapshot:
        return self.cached("snapshot", self._snapshot)

    def _snapshot(self) -> Snapshot:
        z = self.codes()                                                # (n, d)
        mu = self.centres.mu.detach()                                   # (k, d)
        q = soft_assign(z, mu, self.alpha)                              # (n, k)
        p = target_distribution(q)
        cluster = q.argmax(1)
        j = int(torch.bincount(cluster, minlength=len(mu)).argmax())
        pull = pull_toward(z, mu, p, q, self.alpha, j)
        zn, mun = z.cpu().numpy(), mu.cpu().numpy()
        top = top_members(cluster.cpu().numpy(), q.max(1).values.cpu().numpy(), len(mu))
        return Snapshot(((zn - self.mean) @ self.basis).astype(np.float32),
                        ((mun - self.mean) @ self.basis).astype(np.float32),
                        self.labels, cluster.cpu().numpy(), q.max(1).values.cpu().numpy(),
                        cluster_accuracy(self.labels, cluster.cpu().numpy()),
                        float(kl_loss(self.target, q)), q[:, j].cpu().numpy(),
                        pull.cpu().numpy(), j, top)

    def _modules(self) -> dict[str, nn.Module]:
        return {"ae": self.ae, "centres": self.centres}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}

    def _extra_state(self) -> dict:
        return {"target": self.target.cpu().clone(), "gen": self.gen.get_state()}

    def _load_extra_state(self, state: dict) -> None:
        self.target = state["target"].to(self.x.device)
        self.gen.set_state(state["gen"])
