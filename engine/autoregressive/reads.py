"""What the page reads off a live PixelCNNTrainer besides its snapshot, as plain data
(live.controls' read(fn) with fn module-level and picklable, bound by functools.partial)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.autoregressive.digits import SIDE, quantised_digits
from engine.autoregressive.pixelcnn import CLASSES, predictive, sample
from engine.autoregressive.trainer import PixelCNNTrainer

SAMPLES = 10             # digits drawn per frame: one per class when the model is conditional
SAMPLE_SEED = 0          # the same noise every frame: the samples change only with the model


@dataclass(frozen=True)
class Samples:
    steps: int
    images: np.ndarray       # (10, 8, 8) levels
    given_rows: int          # rows copied from test digits (completion), 0 for free samples
    originals: np.ndarray    # (10, 8, 8) the test digits completed (zeros for free samples)
    labels: np.ndarray       # (10,) the class each sample was drawn for (-1: unconditional)


def samples_of(trainer: PixelCNNTrainer, mode: str, temperature: float) -> Samples:
    """10 digits drawn pixel by pixel from the live model: free, or the lower half of the
    first 10 test digits completed from their upper half."""
    def compute() -> Samples:
        model = trainer.model
        labels = (torch.arange(SAMPLES, device=trainer.x.device) % CLASSES
                  if trainer.conditional else None)
        given, rows = None, 0
        originals = np.zeros((SAMPLES, SIDE, SIDE), dtype=np.int64)
        if mode == "complete":
            given, rows = trainer.x_test[:SAMPLES], SIDE // 2
            originals = given.cpu().numpy()
            labels = trainer.y_test[:SAMPLES] if trainer.conditional else None
        images, _ = sample(model, SAMPLES, temperature, SAMPLE_SEED, labels, given, rows,
                           trainer.x.device)
        shown = (labels.cpu().numpy() if labels is not None
                 else -np.ones(SAMPLES, dtype=np.int64))
        return Samples(int(trainer.steps), images.cpu().numpy(), rows, originals, shown)
    return trainer.cached(("samples", mode, float(temperature)), compute)


@dataclass(frozen=True)
class Predictive:
    steps: int
    digit: np.ndarray        # (8, 8) the test digit
    label: int
    row: int
    col: int
    probs: np.ndarray        # (Q,) p(x_rc = q | the pixels before it)
    truth: int               # the digit's level at (row, col)


def predictive_of(trainer: PixelCNNTrainer, index: int, row: int, col: int) -> Predictive:
    """The live model's distribution over the levels of pixel (row, col) of test digit
    `index`, given the digit's pixels before it in raster order."""
    d = quantised_digits(trainer.levels)
    i = int(index) % len(d.test)
    x = torch.from_numpy(d.test[i:i + 1]).to(trainer.x.device)          # (1, 8, 8)
    y = torch.tensor([int(d.test_labels[i])], device=trainer.x.device)
    p = predictive(trainer.model, x, trainer.labels(y))[0, row, col]    # (Q,)
    return Predictive(int(trainer.steps), d.test[i], int(d.test_labels[i]), int(row),
                      int(col), p.cpu().numpy(), int(d.test[i, row, col]))
