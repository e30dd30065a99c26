"""RecurrentNet: a recurrent layer (rnn | gru | lstm) + a linear readout of h_T, and its answers.

    probabilities = softmax(head(h_T))
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, to_numpy
from engine.recurrent.cells import MODULES
from engine.recurrent.gradients import set_forget_bias
from engine.recurrent.tasks import make_task_batch, task_metrics


class RecurrentNet(nn.Module):
    """`kind` recurrent layer (batch_first) + a linear readout of the last hidden state."""

    def __init__(self, kind: str, input_size: int, hidden: int, n_out: int):
        super().__init__()
        if kind not in ("rnn", "gru", "lstm"):
            raise ValueError(f"unknown kind {kind!r}: rnn | gru | lstm")
        self.kind = kind
        self.rnn = MODULES[kind](input_size, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def _init_net(net: RecurrentNet, seed: int, forget_bias: float) -> None:
    g = make_generator(seed, "cpu")
    k = 1.0 / math.sqrt(net.rnn.hidden_size)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 2 * k - k)
    set_forget_bias(net.rnn, net.kind, forget_bias)


@torch.no_grad()
def accuracy_by_length(net: RecurrentNet, task: str, lengths, n: int = 256, seed: int = 0,
                       **params) -> np.ndarray:
    """Accuracy of `net` on n fresh seeded samples at each length (delay) in `lengths`."""
    dev = next(net.parameters()).device
    acc = []
    for L in lengths:
        b = make_task_batch(task, n, int(L), seed=seed + 7919 * int(L), device=dev, **params)
        acc.append(float(task_metrics(task, net(b.x), b.y)[1]))
    return np.asarray(acc)


@torch.no_grad()
def predict_probs(net: RecurrentNet, x) -> np.ndarray:
    """softmax(head(h_T)) of a classifier net for one unbatched sequence x (T, input_size)."""
    p = next(net.parameters())
    xt = torch.as_tensor(np.asarray(x), dtype=p.dtype, device=p.device)[None]
    return to_numpy(torch.softmax(net(xt)[0], dim=0)).astype(np.float64)


@torch.no_grad()
def head_probs(net: RecurrentNet, h_T) -> np.ndarray:
    """softmax(head(h_T)): the classifier's answer for a final hidden state h_T (H,), e.g.
    the last row of a (possibly clamped) lstm_trace."""
    p = next(net.parameters())
    h = torch.as_tensor(np.asarray(h_T), dtype=p.dtype, device=p.device)
    return to_numpy(torch.softmax(net.head(h), dim=-1)).astype(np.float64)
