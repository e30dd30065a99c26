"""The live trainer of the A network you build page: an MLP f: R² -> R fitted by full-batch Adam to two
noisy moons (an example to replace),

    L(θ) = mean_i BCE(σ(f(x_i)), y_i)

snapshot(): every point's predicted class and the training accuracy."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import make_moons
from torch import nn

from engine.training import TrainerBase


def make_points(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x (n, 2) float32, y (n,) float32 in {0, 1}): two interleaved half circles plus
    Gaussian noise of standard deviation `noise` (scikit-learn's make_moons), seeded."""
    x, y = make_moons(n_samples=int(n), noise=float(noise), random_state=int(seed))
    return x.astype(np.float32), y.astype(np.float32)


@dataclass(frozen=True)
class Snapshot:
    points: np.ndarray       # (n, 2)
    labels: np.ndarray       # (n,) the true classes
    predicted: np.ndarray    # (n,) the predicted classes, 1 where f(x) > 0
    accuracy: float          # share of the points predicted right


class NetworkTrainer(TrainerBase):
    """Full-batch Adam (torch.optim.Adam) on L = mean BCE(σ(f(x)), y) with
    f = Linear(2, h) -> tanh -> Linear(h, h) -> tanh -> Linear(h, 1); one iteration, one step."""

    log_every = 5            # the loss curve keeps every 5th iteration

    def __init__(self, n: int = 200, noise: float = 0.2, hidden: int = 16, lr: float = 0.01,
                 seed: int = 0, device: str = "cpu"):
        super().__init__()
        x, y = make_points(n, noise, seed)
        self.x = torch.from_numpy(x).to(device)                      # (n, 2)
        self.y = torch.from_numpy(y).to(device)                      # (n,)
        with torch.random.fork_rng(devices=[]):                      # seeded, whatever ran before
            torch.manual_seed(seed)
            self.model = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(),
                                       nn.Linear(hidden, hidden), nn.Tanh(),
                                       nn.Linear(hidden, 1)).to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)

    def loss(self) -> torch.Tensor:
        logits = self.model(self.x).squeeze(-1)                      # (n,)
        return F.binary_cross_entropy_with_logits(logits, self.y)

    def _iteration(self) -> dict[str, float]:
        loss = self.loss()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"loss": float(loss.detach())}

    def snapshot(self) -> Snapshot:
        with torch.no_grad():
            predicted = (self.model(self.x).squeeze(-1) > 0).float()  # (n,)
        return Snapshot(self.x.cpu().numpy(), self.y.cpu().numpy(), predicted.cpu().numpy(),
                        float((predicted == self.y).float().mean()))

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}
