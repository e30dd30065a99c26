"""The small digits CNN: learned feature maps. Trained with Adam on cross-entropy over the
seeded 80/20 split of scikit-learn's 8x8 digits; the shipped weights
(assets/weights/convolution_digits.pt, scripts/pretrain_convolution.py) go through
engine/weights.py."""
from __future__ import annotations

import torch.nn.functional as F
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from engine import weights
from engine.datasets import digits_split
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.conv.erf import build_cnn
from engine.conv.geometry import (LayerSpec, MODULE_READERS, PASS_THROUGH, RFInfo,
                                  layers_from_model, receptive_field)


DIGITS_LAYERS = (LayerSpec("conv", 3, 1, 1, 1, 8), LayerSpec("conv", 3, 1, 1, 1, 16),
                 LayerSpec("maxpool", 2, 2), LayerSpec("conv", 3, 1, 1, 1, 16),
                 LayerSpec("maxpool", 2, 2))
DIGITS_WEIGHTS = (Path(__file__).resolve().parents[2] / "assets" / "weights"
                  / "convolution_digits.pt")


def digits_cnn(seed: int = 0) -> nn.Sequential:
    """8x8 digits -> conv3(8) ReLU conv3(16) ReLU maxpool2 conv3(16) ReLU maxpool2 ->
    flatten (16*2*2) -> linear 10 (logits)."""
    features = build_cnn(DIGITS_LAYERS, in_channels=1, seed=seed)
    g = make_generator(seed + 1, "cpu")
    head = nn.Linear(16 * 2 * 2, 10)
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=g) / 8.0)
        head.bias.zero_()
    return nn.Sequential(features, nn.Flatten(), head)


@dataclass(frozen=True)
class TrainReport:
    epochs: int
    train_accuracy: float
    test_accuracy: float
    losses: list[float] = field(default_factory=list)


def train_digits_cnn(seed: int = 0, epochs: int = 15, lr: float = 3e-3, batch: int = 64,
                     device: str | torch.device | None = "cpu") -> tuple[nn.Sequential, TrainReport]:
    """Adam on cross-entropy over the seeded 80/20 digits split (minibatches from a seeded
    permutation). Returns the model (on CPU) and its accuracies."""
    dev = resolve_device(device)
    train, test = digits_split(0.2, seed)
    model = digits_cnn(seed).to(dev)
    xtr = torch.as_tensor(train.images[:, None], device=dev)
    ytr = torch.as_tensor(train.labels, device=dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    rng = numpy_rng(seed)
    losses = []
    for _ in range(epochs):
        perm = torch.as_tensor(rng.permutation(len(ytr)), device=dev)
        for i in range(0, len(perm), batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(float(loss.detach()))
    model = model.cpu().eval()
    return model, TrainReport(epochs, digits_accuracy(model, train.images, train.labels),
                              digits_accuracy(model, test.images, test.labels), losses)


@torch.no_grad()
def digits_accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    pred = model(torch.as_tensor(images[:, None])).argmax(1).numpy()
    return float((pred == labels).mean())


DIGITS_MODEL_CONFIG = {"name": "digits_cnn", "in_shape": [1, 8, 8], "classes": 10,
                       "layers": [[s.kind, s.kernel, s.stride, s.padding, s.dilation, s.channels]
                                  for s in DIGITS_LAYERS]}


def save_digits_cnn(path: Path | str, model: nn.Module, **meta) -> Path:
    """Write the digits CNN through engine/weights.py (model_config DIGITS_MODEL_CONFIG)."""
    return weights.save(path, DIGITS_MODEL_CONFIG, model.state_dict(), meta)


def digits_cnn_from_weights(w: weights.Weights) -> nn.Sequential:
    """The digits CNN (eval mode) with the loaded state; a state that does not fit is stale."""
    model = digits_cnn(0)
    try:
        model.load_state_dict(w.state)
    except RuntimeError as err:
        raise weights.StaleWeightsError(f"weights file {w.path} does not fit the digits CNN: "
                                        f"{weights.REBUILD_HINT}") from err
    return model.eval()


def load_digits_cnn(path: Path | str = DIGITS_WEIGHTS) -> nn.Sequential:
    """The shipped trained digits CNN. Raises weights.WeightsError (missing, corrupt or
    stale file, including one made for another architecture) with a rebuild hint."""
    return digits_cnn_from_weights(weights.load(path, "cpu", expect_config=DIGITS_MODEL_CONFIG))


@dataclass(frozen=True)
class FeatureMap:
    name: str                 # e.g. "conv1 + ReLU"
    maps: np.ndarray          # (C, H, W)
    rf: RFInfo                # receptive field of one unit of this layer


@torch.no_grad()
def feature_maps(model: nn.Sequential, image: np.ndarray) -> tuple[list[FeatureMap], np.ndarray]:
    """Every channel after every conv(+ReLU)/pool of model[0] (the feature extractor) for one
    (H, W) image, and the class probabilities softmax(model(x))."""
    feats = model[0]
    x = torch.as_tensor(np.asarray(image, np.float32))[None, None]
    specs = layers_from_model(feats)
    rfs = receptive_field(specs, image.shape[0])[1:]
    out: list[FeatureMap] = []
    li = -1
    mods = list(feats)
    for i, m in enumerate(mods):
        x = m(x)
        if type(m) in MODULE_READERS:
            li += 1
            act = i + 1 < len(mods) and isinstance(mods[i + 1], PASS_THROUGH)
            if not act:
                out.append(FeatureMap(rfs[li].name, to_numpy(x[0]), rfs[li]))
        elif isinstance(m, PASS_THROUGH):
            out.append(FeatureMap(f"{rfs[li].name} + {type(m).__name__}", to_numpy(x[0]), rfs[li]))
    probs = torch.softmax(model(torch.as_tensor(np.asarray(image, np.float32))[None, None]), 1)
    return out, to_numpy(probs[0])
