"""The playground's network: an MLP from the k chosen features to one logit,

    h_0 = phi(x)  (k,),   h_l = act(W_l h_{l-1} + b_l)  l = 1..L,   f(x) = W_{L+1} h_L + b_{L+1},

L = 0..6 hidden layers of 1..8 units, act one of ACTIVATIONS; P(class 1 | x) = sigmoid(f(x)).
Initialised as the playground does: every weight ~ U(-0.5, 0.5), every bias 0.1 (seeded).

Regularisation of the weights W (never the biases), added to the data loss:

    L1:  R = rate * sum |W|          dR/dW = rate * sign(W)
    L2:  R = rate * 1/2 * sum W^2    dR/dW = rate * W

`layer_outputs` runs the same network in numpy on (W, b) arrays, for many points at once:
`neuron_maps` evaluates every neuron on a res x res grid of the plane in one batched pass (the
pictures the page draws), `keep` masks hidden units out (a knocked-out neuron outputs 0)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from engine.network.features import feature_matrix

ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")
REGULARIZERS = ("none", "L1", "L2")
MAX_LAYERS, MAX_UNITS = 6, 8

Layers = Sequence[tuple[np.ndarray, np.ndarray]]

_TORCH_ACT = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
              "linear": lambda z: z}
_NUMPY_ACT = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh,
              "sigmoid": lambda z: 1 / (1 + np.exp(-np.clip(z, -60, 60))),
              "linear": lambda z: z}


def check_architecture(n_in: int, hidden: Sequence[int], activation: str) -> None:
    if n_in < 1:
        raise ValueError("no input feature is selected: choose at least one")
    if len(hidden) > MAX_LAYERS or any(not 1 <= int(w) <= MAX_UNITS for w in hidden):
        raise ValueError(f"0 to {MAX_LAYERS} hidden layers of 1 to {MAX_UNITS} neurons")
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}: one of {', '.join(ACTIVATIONS)}")


class PlaygroundNet(nn.Module):
    """Linear layers k -> hidden[0] -> ... -> 1 with `activation` between them."""

    def __init__(self, n_in: int, hidden: Sequence[int], activation: str = "tanh",
                 seed: int = 0):
        super().__init__()
        check_architecture(n_in, hidden, activation)
        self.activation = activation
        dims = [int(n_in), *map(int, hidden), 1]
        g = torch.Generator().manual_seed(int(seed))
        linears: list[nn.Linear] = []
        for fan_in, fan_out in zip(dims[:-1], dims[1:]):
            lin = nn.Linear(fan_in, fan_out)
            with torch.no_grad():
                lin.weight.copy_(torch.rand(fan_out, fan_in, generator=g) - 0.5)
                lin.bias.fill_(0.1)
            linears.append(lin)
        self.linears = nn.ModuleList(linears)
        self._lins = linears                  # the same modules, typed


    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """The logits f (n,) of the features h (n, k)."""
        act = _TORCH_ACT[self.activation]
        for lin in self._lins[:-1]:
            h = act(lin(h))                                                  # (n, units)
        return self._lins[-1](h).squeeze(-1)                                 # (n,)

    def penalty(self, kind: str, rate: float) -> torch.Tensor:
        """R of the module docstring over every weight matrix (biases excluded)."""
        if kind == "none" or rate == 0:
            return torch.zeros(())
        ws = [lin.weight for lin in self._lins]
        if kind == "L1":
            return rate * torch.stack([w.abs().sum() for w in ws]).sum()
        if kind == "L2":
            return rate * 0.5 * torch.stack([(w * w).sum() for w in ws]).sum()
        raise ValueError(f"unknown regularisation {kind!r}: one of {', '.join(REGULARIZERS)}")

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(W (out, in), b (out,)) float32 numpy copies, input layer first."""
        return [(lin.weight.detach().cpu().numpy().copy(), lin.bias.detach().cpu().numpy().copy())
                for lin in self._lins]


def layer_outputs(layers: Layers, activation: str, h0: np.ndarray,
                  keep: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """[h_1 (n, d_1), ..., h_L (n, d_L), f (n, 1)] for the inputs h0 (n, k): every hidden
    layer's output and the logit, all points at once. keep[l] (d_{l+1},) multiplies layer l+1's
    output (0: the unit is knocked out)."""
    with np.errstate(over="ignore", invalid="ignore"):      # a diverged run's inf weights
        return _layer_outputs(layers, _NUMPY_ACT[activation], h0, keep)


def _layer_outputs(layers: Layers, act, h0: np.ndarray,
                   keep: Sequence[np.ndarray] | None) -> list[np.ndarray]:
    h, outs = np.asarray(h0, np.float32), []
    for i, (W, b) in enumerate(layers[:-1]):
        h = act(h @ W.T + b)                                                 # (n, d_l)
        if keep is not None:
            h = h * keep[i]
        outs.append(h)
    W, b = layers[-1]
    outs.append(h @ W.T + b)                                                 # (n, 1)
    return outs


def grid_points(box: Sequence[float], res: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xs (res,), ys (res,), points (res * res, 2)) of a regular grid, row iy = ys[iy]."""
    xs = np.linspace(box[0], box[1], res, dtype=np.float32)
    ys = np.linspace(box[2], box[3], res, dtype=np.float32)
    xx, yy = np.meshgrid(xs, ys)
    return xs, ys, np.stack([xx.ravel(), yy.ravel()], 1)


@dataclass(frozen=True)
class NeuronMaps:
    xs: np.ndarray                 # (res,)
    ys: np.ndarray                 # (res,)
    inputs: np.ndarray             # (k, res, res) each feature over the plane, [iy, ix]
    hidden: list[np.ndarray]       # per hidden layer (d_l, res, res): each neuron's output
    output: np.ndarray             # (res, res) P(class 1 | x) = sigmoid(f(x))


def neuron_maps(layers: Layers, activation: str, features: Sequence[str],
                box: Sequence[float], res: int,
                keep: Sequence[np.ndarray] | None = None) -> NeuronMaps:
    """Every neuron's output over a res x res grid of the input plane, in one batched forward
    pass through `layer_outputs`."""
    xs, ys, pts = grid_points(box, res)
    h0 = feature_matrix(pts, features)                                       # (res^2, k)
    outs = layer_outputs(layers, activation, h0, keep)

    def as_maps(a: np.ndarray) -> np.ndarray:                                # (res^2, d) -> (d, res, res)
        return np.ascontiguousarray(a.T.reshape(a.shape[1], res, res))

    logit = outs[-1][:, 0].reshape(res, res)
    return NeuronMaps(xs, ys, as_maps(h0), [as_maps(h) for h in outs[:-1]],
                      (1 / (1 + np.exp(-np.clip(logit, -60, 60)))).astype(np.float32))


def bce(logits: np.ndarray, y: np.ndarray) -> float:
    """Mean binary cross-entropy of logits (n,) against y (n,) in {0, 1}, in float64:
    mean(softplus(f) - y f)."""
    f = np.asarray(logits, np.float64)
    return float(np.mean(np.logaddexp(0.0, f) - np.asarray(y, np.float64) * f))


def weight_norm(layers: Layers) -> float:
    """sqrt(sum of every squared weight) (biases excluded)."""
    return float(np.sqrt(sum(float((np.asarray(W, np.float64) ** 2).sum()) for W, _ in layers)))
