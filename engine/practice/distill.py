"""Knowledge distillation on the digits (notes 001, L6564): a small student trained on the hard
labels vs on a teacher's soft targets at temperature T.

Teacher: MLP 64 -> 128 -> 10 (ReLU) trained by full-batch Adam on all 1,200 training digits.
Students: MLP 64 -> hidden -> 10 from one seeded initialisation, trained on the first `labels`
training digits only, with logits s, teacher logits t, labels y:

    hard:  L = CE(s, y)
    soft:  L = α · T² · KL( softmax(t/T) ‖ softmax(s/T) ) + (1 − α) · CE(s, y)

The T² keeps the soft term's gradient on the scale of the hard one's as T grows (the
gradient of the KL in s is (softmax(s/T) − softmax(t/T)) / T)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.practice.pruning import digits_split

TEACHER_STEPS, EVAL_EVERY = 300, 10


def mlp(hidden: int, seed: int) -> nn.Module:
    torch.manual_seed(int(seed))
    return nn.Sequential(nn.Linear(64, int(hidden)), nn.ReLU(), nn.Linear(int(hidden), 10))


def distillation_loss(student: torch.Tensor, teacher: torch.Tensor, y: torch.Tensor, T: float,
                      alpha: float) -> torch.Tensor:
    """α T² KL(softmax(t/T) ‖ softmax(s/T)) + (1 − α) CE(s, y), batch-mean; logits (n, 10)."""
    log_p_s = F.log_softmax(student / T, dim=-1)                     # (n, 10)
    p_t = F.softmax(teacher / T, dim=-1)                             # (n, 10)
    kl = F.kl_div(log_p_s, p_t, reduction="batchmean")
    return alpha * T * T * kl + (1 - alpha) * F.cross_entropy(student, y)


def soft_targets(logits: torch.Tensor, temperatures: tuple[float, ...]) -> np.ndarray:
    """softmax(logits / T) for each T: (len(temperatures), 10) for one example's logits."""
    return np.stack([F.softmax(logits / T, dim=-1).numpy() for T in temperatures])


def _train(model: nn.Module, loss_fn, steps: int, lr: float, xt, yt,
           every: int = EVAL_EVERY) -> list[float]:
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    acc = []
    for t in range(1, steps + 1):
        loss = loss_fn(model)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if t % every == 0:
            with torch.no_grad():
                acc.append(float((model(xt).argmax(-1) == yt).float().mean()))
    return acc


def example_targets(index: int, temperatures: tuple[float, ...],
                    seed: int = 0) -> tuple[np.ndarray, int, np.ndarray]:
    """(the test digit `index` (8, 8), its label, the teacher's soft targets (T, 10))."""
    _, _, xt, yt = digits_split(seed)
    teacher, _ = teacher_of(int(seed))
    with torch.no_grad():
        logits = teacher(xt[index:index + 1])[0]                     # (10,)
    return xt[index].reshape(8, 8).numpy(), int(yt[index]), soft_targets(logits, temperatures)


@dataclass(frozen=True)
class Distillation:
    steps: np.ndarray             # (k,) iterations of the accuracy curves
    hard: np.ndarray              # (k,) student on hard labels: test accuracy
    soft: np.ndarray              # (k,) student on soft targets
    teacher_accuracy: float
    example: np.ndarray           # (8, 8) the example digit
    example_label: int
    targets: np.ndarray           # (len(temperatures), 10) its soft targets
    temperatures: tuple[float, ...]


@functools.lru_cache(maxsize=2)
def teacher_of(seed: int) -> tuple[nn.Module, float]:
    """The teacher trained on all training digits, and its test accuracy (once per seed)."""
    x, y, xt, yt = digits_split(seed)
    teacher = mlp(128, seed + 100)
    _train(teacher, lambda m: F.cross_entropy(m(x), y), TEACHER_STEPS, 1e-2, xt, yt,
           every=TEACHER_STEPS)
    with torch.no_grad():
        return teacher, float((teacher(xt).argmax(-1) == yt).float().mean())


def distill(labels: int, T: float, hidden: int = 16, steps: int = 300, alpha: float = 0.9,
            lr: float = 1e-2, seed: int = 0, example: int = 0,
            temperatures: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)) -> Distillation:
    """Teacher, then a hard-label and a soft-target student from the same initialisation."""
    if labels < 10:
        raise ValueError("Give the students at least 10 labelled digits.")
    if T <= 0:
        raise ValueError("The temperature must be positive.")
    x, y, xt, yt = digits_split(seed)
    teacher, t_acc = teacher_of(int(seed))
    with torch.no_grad():
        xs, ys = x[:int(labels)], y[:int(labels)]
        t_logits = teacher(xs)                                       # (labels, 10)
        ex_logits = teacher(xt[example:example + 1])[0]              # (10,)
    hard = _train(mlp(hidden, seed), lambda m: F.cross_entropy(m(xs), ys), steps, lr, xt, yt)
    soft = _train(mlp(hidden, seed), lambda m: distillation_loss(m(xs), t_logits, ys, T, alpha),
                  steps, lr, xt, yt)
    return Distillation(np.arange(1, len(hard) + 1) * EVAL_EVERY, np.array(hard),
                        np.array(soft), t_acc, xt[example].reshape(8, 8).numpy(),
                        int(yt[example]), soft_targets(ex_logits, temperatures), temperatures)
