"""SequenceTrainer (Adam on a RecurrentNet, a fresh seeded batch every step) and RaceTrainer
(several of them stepped together), following engine/training.py's trainer protocol."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from engine.device import make_generator, resolve_device
from engine.training import TrainerBase
from engine.recurrent.model import RecurrentNet, _init_net, accuracy_by_length
from engine.recurrent.tasks import TASKS, task_accuracy, task_loss


@dataclass(frozen=True)
class SequenceSnapshot:
    kind: str
    step: int
    loss: float
    accuracy: float
    level: int              # current length (delay) trained at
    diverged_at: int | None


class SequenceTrainer(TrainerBase):
    """Adam on a RecurrentNet of `kind` for TASKS[task], a fresh seeded batch every step.

    loss = cross-entropy (classes) or MSE (adding). With `curriculum`, training starts at
    length `length` and the length grows by `grow` once the running accuracy `ema` (EMA,
    weight 0.1, kept only with the curriculum) reaches `advance_at`, up to `max_length`; each
    batch then draws its length uniformly in [max(1, level // 2), level] so shorter cases
    stay learned.

    On engine.training.TrainerBase: one `_iteration()` per Adam step; steps, diverged_at
    (non-finite loss), history (the last metrics of each step(n) call) and the state dict
    (net, opt deep-copied, plus level, ema and the batch generator) come from the base."""

    def __init__(self, kind: str = "lstm", task: str = "delayed_recall", length: int = 10,
                 hidden: int = 16, lr: float = 1e-2, batch: int = 64, seed: int = 0,
                 device: str | torch.device | None = "cpu", curriculum: bool = False,
                 max_length: int | None = None, grow: int = 2, advance_at: float = 0.95,
                 forget_bias: float = 1.0, task_params: dict | None = None):
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
        super().__init__()
        self.kind, self.task, self.seed = kind, task, int(seed)
        self.task_params = dict(task_params or {})
        self.device = resolve_device(device)
        spec = TASKS[task]
        self.net = RecurrentNet(kind, spec.input_size(self.task_params), int(hidden),
                                spec.n_out(self.task_params))
        _init_net(self.net, self.seed, forget_bias)
        self.net.to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=float(lr))
        self.batch, self.level = int(batch), max(0, int(length))
        self.curriculum, self.grow, self.advance_at = bool(curriculum), int(grow), advance_at
        self.max_length = int(max_length) if max_length is not None else self.level
        self.gen = make_generator(self.seed + 1, "cpu")
        self.ema = 0.0
        self._last_batch: tuple[torch.Tensor, torch.Tensor] | None = None

    def _length(self) -> int:
        if not self.curriculum:
            return self.level
        lo = max(1, self.level // 2)
        return int(torch.randint(lo, self.level + 1, (1,), generator=self.gen))

    def _iteration(self) -> dict[str, float]:
        """One Adam step on a fresh batch. One host sync (the loss, so that a divergence stops
        at its step); the accuracy is computed every step only with the curriculum, whose
        running accuracy needs it, else once per step(n) call when the metrics are logged."""
        level = self.level
        b = TASKS[self.task].make(self.batch, self._length(), self.gen, self.device,
                                  **self.task_params)
        out = self.net(b.x)
        loss = task_loss(self.task, out, b.y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        value = float(loss.detach())
        self._last_batch = (out.detach(), b.y)
        if self.curriculum and math.isfinite(value):
            self.ema = 0.9 * self.ema + 0.1 * float(task_accuracy(self.task, *self._last_batch))
            if self.ema >= self.advance_at and self.level < self.max_length:
                self.level = min(self.max_length, self.level + self.grow)
                self.ema = 0.0
        return {"loss": value, "level": float(level)}

    def _log(self, metrics: dict[str, float]) -> None:
        """Adds the accuracy of the last batch to the metrics step(n) returns, then logs them
        (loss, accuracy, level)."""
        level = metrics.pop("level")
        metrics["accuracy"] = float(task_accuracy(self.task, *self._last_batch))
        metrics["level"] = level
        super()._log(metrics)

    def snapshot(self) -> SequenceSnapshot:
        return SequenceSnapshot(self.kind, self.steps, self.history.last("loss"),
                                self.history.last("accuracy"), self.level, self.diverged_at)

    def _modules(self) -> dict[str, nn.Module]:
        return {"net": self.net}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}

    def _extra_state(self) -> dict:
        return {"level": self.level, "ema": self.ema, "gen": self.gen.get_state()}

    def _load_extra_state(self, state: dict) -> None:
        self.level, self.ema = int(state["level"]), state["ema"]
        self.gen.set_state(state["gen"])


@dataclass(frozen=True)
class RaceSnapshot:
    step: int
    racers: dict[str, SequenceSnapshot]


class RaceTrainer(TrainerBase):
    """Several SequenceTrainers (e.g. RNN vs LSTM) on the same task and seed, stepped
    together; metrics are prefixed with the kind ("lstm/accuracy").

    On engine.training.TrainerBase for the bookkeeping (history, state dict), but step(n)
    hands the n iterations to each racer whole, so every racer logs once per call as when it
    trains alone. steps = the slowest racer's steps; one diverged racer does not stop the
    others, the race has diverged (diverged_at = the last racer's) once all have."""

    def __init__(self, kinds=("rnn", "lstm"), eval_every: int = 0, eval_n: int = 256,
                 **kwargs):
        """`eval_every` > 0: every racer's held-out accuracy at the task's full length
        (`max_length`, else `length`) on `eval_n` sequences seeded by the racers' seed
        (model.accuracy_by_length, as a trainer trained alone is measured) is logged as
        "<kind>/heldout" at each multiple of eval_every iterations: step(n) stops there."""
        super().__init__()
        self.racers = {k: SequenceTrainer(kind=k, **kwargs) for k in kinds}
        self.eval_every, self.eval_n = max(0, int(eval_every)), int(eval_n)
        self.eval_length = int(kwargs.get("max_length") or kwargs.get("length", 10))

    def _sync(self) -> None:
        self.steps = min(r.steps for r in self.racers.values())
        at = [r.diverged_at for r in self.racers.values()]
        self.diverged_at = max(at) if all(a is not None for a in at) else None

    def step(self, n: int = 1) -> dict[str, float]:
        metrics: dict[str, float] = {}
        n = int(n)
        while n > 0:
            chunk = n if not self.eval_every else min(
                n, self.eval_every - self.steps % self.eval_every)
            before = self.steps
            metrics = self._step_racers(chunk)
            n -= chunk
            if self.steps == before:             # every racer has diverged
                break
            if self.eval_every and self.steps % self.eval_every == 0:
                self._log({f"{k}/heldout": self._held_out(r) for k, r in self.racers.items()})
        return metrics

    def _step_racers(self, n: int) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for kind, r in self.racers.items():
            metrics.update({f"{kind}/{k}": v for k, v in r.step(n).items()})
        self._sync()
        if metrics:
            self._log(metrics)
        return metrics

    def _held_out(self, r: SequenceTrainer) -> float:
        return float(accuracy_by_length(r.net, r.task, [self.eval_length], n=self.eval_n,
                                        seed=r.seed, **r.task_params)[0])

    def snapshot(self) -> RaceSnapshot:
        return RaceSnapshot(self.steps, {k: r.snapshot() for k, r in self.racers.items()})

    def _extra_state(self) -> dict:
        return {k: r.state_dict() for k, r in self.racers.items()}

    def _load_extra_state(self, state: dict) -> None:
        for k, r in self.racers.items():
            r.load_state_dict(state[k])
        self._sync()
