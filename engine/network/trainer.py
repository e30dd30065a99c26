"""The live trainer of the network page: the playground's MLP (engine/network/model.py) fitted
by minibatch SGD to a train split of one of its datasets,

    L(theta) = mean_{i in batch} [softplus(f(phi(x_i))) - y_i f(phi(x_i))] + R(W)

(the binary cross-entropy of sigmoid(f) against y in {0, 1}, R the L1/L2 penalty). One
iteration is one SGD step on `batch` training points; the batches walk through a seeded
shuffle of the training points, a new one per epoch (a pure function of the step count, so a
saved state resumes the same run). Every `log_every`-th iteration logs the data loss on the
whole train and test split (without R); every iteration returns its batch's loss (a NaN or inf
ends the run as diverged). snapshot(): the weights as numpy arrays, the splits and the losses."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.network.data import make_dataset, split
from engine.network.features import feature_matrix, ordered
from engine.network.model import PlaygroundNet
from engine.training import TrainerBase

N_POINTS = 500           # the playground's dataset size


@dataclass(frozen=True)
class Snapshot:
    layers: list[tuple[np.ndarray, np.ndarray]]   # (W (out, in), b (out,)) float32, input first
    features: tuple[str, ...]
    activation: str
    x_train: np.ndarray      # (n_train, 2)
    y_train: np.ndarray      # (n_train,)
    x_test: np.ndarray       # (n_test, 2)
    y_test: np.ndarray       # (n_test,)
    train_loss: float
    test_loss: float
    train_accuracy: float
    test_accuracy: float


class NetworkTrainer(TrainerBase):
    """Minibatch SGD (torch.optim.SGD, lr) on L(theta) of the module docstring."""

    log_every = 5            # the loss curves keep every 5th iteration

    def __init__(self, dataset: str = "circle", noise: float = 0.0, train_share: float = 0.5,
                 features: Sequence[str] = ("x1", "x2"), hidden: Sequence[int] = (4, 2),
                 activation: str = "tanh", lr: float = 0.03, regularization: str = "none",
                 reg_rate: float = 0.0, batch: int = 10, seed: int = 0, device: str = "cpu",
                 n: int = N_POINTS):
        super().__init__()
        self.features = ordered(features)
        if not self.features:
            raise ValueError("no input feature is selected: choose at least one")
        x, y = make_dataset(dataset, n, noise, seed)
        xtr, ytr, xte, yte = split(x, y, train_share, seed)
        self.points = (xtr, ytr, xte, yte)
        self.activation = activation
        self.regularization, self.reg_rate = regularization, float(reg_rate)
        self.batch = max(1, min(int(batch), len(xtr)))
        self.seed = int(seed)
        self.x = torch.from_numpy(feature_matrix(xtr, self.features)).to(device)   # (n_tr, k)
        self.y = torch.from_numpy(ytr).to(device)                                  # (n_tr,)
        self.x_test = torch.from_numpy(feature_matrix(xte, self.features)).to(device)
        self.y_test = torch.from_numpy(yte).to(device)                             # (n_te,)
        self.model = PlaygroundNet(len(self.features), hidden, activation, seed).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=float(lr))
        self._order: tuple[int, torch.Tensor] | None = None

    def _batch(self) -> torch.Tensor:
        """The indices of iteration `steps`'s minibatch (batch,)."""
        n = len(self.y)
        per_epoch = math.ceil(n / self.batch)
        epoch, k = divmod(self.steps - 1, per_epoch)
        if self._order is None or self._order[0] != epoch:
            perm = np.random.default_rng((self.seed, epoch)).permutation(n)
            self._order = (epoch, torch.from_numpy(perm).to(self.y.device))
        return self._order[1][k * self.batch:(k + 1) * self.batch]

    def data_loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(self.model(x), y)

    def _iteration(self) -> dict[str, float]:
        idx = self._batch()
        loss = (self.data_loss(self.x[idx], self.y[idx])
                + self.model.penalty(self.regularization, self.reg_rate))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        metrics = {"batch": float(loss.detach())}
        if self.steps % self.log_every == 0:
            with torch.no_grad():
                metrics["train"] = float(self.data_loss(self.x, self.y))
                metrics["test"] = float(self.data_loss(self.x_test, self.y_test))
        return metrics

    def snapshot(self) -> Snapshot:
        return self.cached("snapshot", self._snapshot)

    def _snapshot(self) -> Snapshot:
        with torch.no_grad():
            f_tr, f_te = self.model(self.x), self.model(self.x_test)         # (n_tr,), (n_te,)
            acc_tr = float(((f_tr > 0).float() == self.y).float().mean())
            acc_te = float(((f_te > 0).float() == self.y_test).float().mean())
            loss_tr = float(F.binary_cross_entropy_with_logits(f_tr, self.y))
            loss_te = float(F.binary_cross_entropy_with_logits(f_te, self.y_test))
        xtr, ytr, xte, yte = self.points
        return Snapshot(self.model.layers(), self.features, self.activation, xtr, ytr, xte,
                        yte, loss_tr, loss_te, acc_tr, acc_te)

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}
