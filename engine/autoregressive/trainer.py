"""The live trainer of the autoregressive page: a PixelCNN (engine/autoregressive/pixelcnn.py)
fitted by minibatch Adam to the quantised 8 x 8 digits by maximum likelihood,

    L(θ) = -(1 / 64 B) sum_b sum_i log2 p_θ(x_bi | x_b,<i [, y_b])     bits per pixel

snapshot(): the test digits' bits per pixel next to the independent-pixel baseline's."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.autoregressive.digits import independent_bits, quantised_digits
from engine.autoregressive.pixelcnn import PixelCNN, bits_per_pixel
from engine.training import SingleModelTrainer


@dataclass(frozen=True)
class Snapshot:
    steps: int
    test_bits: float         # bits per pixel of the test digits under the model
    baseline_bits: float     # ... under the independent-pixel model
    levels: int
    pretrained: int | None = None   # iterations trained offline when loaded from a file


class PixelCNNTrainer(SingleModelTrainer):
    """Adam on L(θ) over seeded minibatches of the training digits; one iteration, one
    minibatch."""

    log_every = 5            # the curve keeps every 5th iteration

    def __init__(self, levels: int = 4, hidden: int = 32, layers: int = 4, lr: float = 3e-3,
                 conditional: bool = False, batch: int = 64, seed: int = 0,
                 device: str = "cpu", gated: bool = False):
        super().__init__()
        d = quantised_digits(int(levels))
        self.levels, self.conditional, self.batch = int(levels), bool(conditional), int(batch)
        self.config = {"levels": int(levels), "hidden": int(hidden), "layers": int(layers),
                       "lr": float(lr), "conditional": bool(conditional), "batch": int(batch),
                       "seed": int(seed), "gated": bool(gated)}
        self.pretrained_steps: int | None = None   # iterations trained offline, if loaded
        self.device = device
        self.x = torch.from_numpy(d.train).to(device)                   # (N, 8, 8)
        self.y = torch.from_numpy(d.train_labels).to(device)             # (N,)
        self.x_test = torch.from_numpy(d.test).to(device)                # (M, 8, 8)
        self.y_test = torch.from_numpy(d.test_labels).to(device)         # (M,)
        self.baseline = independent_bits(d.train, d.test, self.levels)
        with torch.random.fork_rng(devices=[]):                      # seeded, whatever ran before
            torch.manual_seed(seed)
            self.model = PixelCNN(self.levels, int(hidden), int(layers),
                                  self.conditional, bool(gated)).to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=float(lr))
        self.gen = torch.Generator().manual_seed(int(seed))

    def labels(self, y: torch.Tensor) -> torch.Tensor | None:
        return y if self.conditional else None

    def _iteration(self) -> dict[str, float]:
        idx = torch.randint(0, len(self.x), (self.batch,), generator=self.gen)
        idx = idx.to(self.x.device)
        loss = bits_per_pixel(self.model, self.x[idx], self.labels(self.y[idx]))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"bits": float(loss.detach())}

    @torch.no_grad()
    def test_bits(self) -> float:
        return float(bits_per_pixel(self.model, self.x_test, self.labels(self.y_test)))

    def snapshot(self) -> Snapshot:
        return self.cached("snapshot", lambda: Snapshot(
            int(self.steps), self.test_bits(), float(self.baseline), self.levels,
            self.pretrained_steps))



def test_digit(levels: int, index: int) -> tuple[np.ndarray, int]:
    """(8, 8) levels and the class of test digit `index` (wrapped into the test set)."""
    d = quantised_digits(int(levels))
    i = int(index) % len(d.test)
    return d.test[i], int(d.test_labels[i])
