"""Seeded toy sequence tasks (delayed recall, adding, parity), their loss and accuracy.

    loss = cross-entropy over classes, or MSE of out[:, 0] for the regression task (adding)
    accuracy = argmax accuracy, or the fraction within the task's tolerance
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device


@dataclass(frozen=True)
class SeqBatch:
    """x (B, T, input_size) float, y (B,) long class or float target; the loss applies to
    the output after the last step."""
    x: torch.Tensor
    y: torch.Tensor


def delayed_recall(batch: int, length: int, generator: torch.Generator,
                   device: torch.device | str = "cpu", n_symbols: int = 4,
                   distract: float = 0.0) -> SeqBatch:
    """Remember a symbol for `length` = D steps: t=0 shows symbol s ~ U{0..K-1} (one-hot on
    channels 0..K-1), t=1..D are blank (each step shows a random distractor symbol with
    probability `distract`), t=D+1 raises the "go" channel K; the target is s. T = D + 2."""
    B, D, K = int(batch), int(length), int(n_symbols)
    s = torch.randint(0, K, (B,), generator=generator)
    x = torch.zeros(B, D + 2, K + 1)
    x[:, 0].scatter_(1, s[:, None], 1.0)
    if distract > 0 and D > 0:   # scatter in place: the batch is made every training step
        show = torch.rand(B, D, 1, generator=generator) < distract
        sym = torch.randint(0, K, (B, D, 1), generator=generator)
        x[:, 1:D + 1].scatter_(2, sym, show.float())
    x[:, D + 1, K] = 1.0
    return SeqBatch(x.to(device), s.to(device))


def adding(batch: int, length: int, generator: torch.Generator,
           device: torch.device | str = "cpu") -> SeqBatch:
    """The adding problem (Hochreiter & Schmidhuber 1997): T = length steps of (value ~ U(0,1),
    marker); one marker in the first half, one in the second; target = sum of the two
    marked values (regression, chance MSE ≈ 1/6 by predicting 1)."""
    B, T = int(batch), max(2, int(length))
    v = torch.rand(B, T, generator=generator)
    a = torch.randint(0, T // 2, (B,), generator=generator)
    b = torch.randint(T // 2, T, (B,), generator=generator)
    m = torch.zeros(B, T)
    m[torch.arange(B), a] = 1.0
    m[torch.arange(B), b] = 1.0
    y = (v * m).sum(1)
    return SeqBatch(torch.stack([v, m], -1).to(device), y.to(device))


def parity(batch: int, length: int, generator: torch.Generator,
           device: torch.device | str = "cpu") -> SeqBatch:
    """Counting modulo 2: T = length random bits; the target is (Σ bits) mod 2."""
    B, T = int(batch), max(1, int(length))
    bits = torch.randint(0, 2, (B, T), generator=generator)
    return SeqBatch(bits.float()[..., None].to(device), (bits.sum(1) % 2).to(device))


@dataclass(frozen=True)
class TaskSpec:
    make: Callable[..., SeqBatch]
    input_size: Callable[[dict], int]
    n_out: Callable[[dict], int]        # classes (cross-entropy) or 1 (regression, MSE)
    regression: bool
    length_label: str                   # what `length` means for this task
    tolerance: float = 0.04             # |error| counted as correct (regression only)


TASKS: dict[str, TaskSpec] = {
    "delayed_recall": TaskSpec(delayed_recall, lambda kw: kw.get("n_symbols", 4) + 1,
                               lambda kw: kw.get("n_symbols", 4), False, "delay D"),
    "adding": TaskSpec(adding, lambda kw: 2, lambda kw: 1, True, "sequence length T"),
    "parity": TaskSpec(parity, lambda kw: 1, lambda kw: 2, False, "sequence length T"),
}


def make_task_batch(task: str, batch: int, length: int, seed: int = 0,
                    device: str | torch.device | None = "cpu", **params) -> SeqBatch:
    """A seeded batch of TASKS[task] (same seed -> same batch)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    return TASKS[task].make(batch, length, make_generator(seed, "cpu"),
                            resolve_device(device), **params)


RECALL_ALPHABET = "ABCDEFGH"


def encode_recall(text: str, n_symbols: int = 4) -> np.ndarray:
    """A typed delayed-recall sequence -> (T, n_symbols + 1) input. Letters A, B, ... are the
    symbols, '.' or '_' a blank step, '?' the go cue; spaces are ignored."""
    alphabet = RECALL_ALPHABET[:n_symbols]
    chars = [c for c in text.upper() if not c.isspace()]
    if not chars:
        raise ValueError("type at least one symbol")
    x = np.zeros((len(chars), n_symbols + 1), dtype=np.float32)
    for t, ch in enumerate(chars):
        if ch in alphabet:
            x[t, alphabet.index(ch)] = 1.0
        elif ch == "?":
            x[t, n_symbols] = 1.0
        elif ch not in "._":
            raise ValueError(f"unknown symbol {ch!r}: use {', '.join(alphabet)}, '.' (blank) "
                             f"or '?' (go)")
    return x


def recall_text(s: int, delay: int, n_symbols: int = 4) -> str:
    """The typed form of a delayed-recall sample: symbol, D blanks, '?'."""
    return RECALL_ALPHABET[s] + "." * delay + "?"


def task_loss(task: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy (classes) or MSE of out[:, 0] (regression)."""
    if TASKS[task].regression:
        return nn.functional.mse_loss(out[:, 0], y)
    return nn.functional.cross_entropy(out, y)


def task_accuracy(task: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Argmax accuracy, or the fraction of regression outputs within the task's tolerance."""
    spec = TASKS[task]
    if spec.regression:
        return ((out[:, 0] - y).abs() < spec.tolerance).float().mean()
    return (out.argmax(1) == y).float().mean()


def task_metrics(task: str, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, accuracy): task_loss and task_accuracy."""
    return task_loss(task, out, y), task_accuracy(task, out, y)


def recall_labels(x: np.ndarray, n_symbols: int = 4) -> list[str]:
    """A readable label per step of a delayed-recall input: the symbol, '?' (go) or '.'."""
    out = []
    for row in np.asarray(x):
        if row.shape[0] > n_symbols and row[n_symbols] > 0.5:
            out.append("?")
        elif row[:n_symbols].max(initial=0) > 0.5:
            out.append(RECALL_ALPHABET[int(row[:n_symbols].argmax())])
        elif np.any(row != 0):
            out.append(f"{row.sum():.2f}")
        else:
            out.append(".")
    return out
