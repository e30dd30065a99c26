"""TransformerTrainer: AdamW on next-token cross-entropy over the answer tokens of fresh
seeded batches, following engine/training.py's trainer protocol."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from engine.device import make_generator, resolve_device
from engine.training import TrainerBase
from engine.attention.model import ModelConfig, init_model
from engine.attention.tasks import TASKS, make_batch


@dataclass(frozen=True)
class TransformerSnapshot:
    step: int
    loss: float
    accuracy: float          # teacher-forced answer-token accuracy on the last batch
    diverged_at: int | None


class TransformerTrainer(TrainerBase):
    """AdamW on the answer-token cross-entropy
    loss = mean over answer positions of -log softmax(logits)[target],
    fresh random batches from TASKS[task] drawn with a seeded generator.

    On engine.training.TrainerBase: one `_iteration()` per AdamW step; steps, diverged_at
    (a non-finite loss stops the run at its step), history (the last metrics of each step(n)
    call) and the state dict (model, opt deep-copied, the batch generator, the last metrics)
    come from the base."""

    def __init__(self, task: str = "reverse", config: ModelConfig = ModelConfig(),
                 lr: float = 3e-3, batch: int = 128, seed: int = 0,
                 device: str | torch.device | None = "cpu"):
        super().__init__()
        self.device = resolve_device(device)
        self.task, self.config = TASKS[task], config
        self.lr, self.batch, self.seed = float(lr), int(batch), int(seed)
        self.model = init_model(config, seed, self.device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.01)
        self.gen = make_generator(self.seed + 7, self.device)
        self._last = {"loss": math.nan, "accuracy": math.nan}
        self._answers: tuple[torch.Tensor, torch.Tensor] | None = None

    def train_step(self, with_accuracy: bool = True
                   ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One AdamW step; returns (loss, accuracy or None) as tensors (no host sync)."""
        self.model.train()
        inp, tgt, mask = make_batch(self.task, self.batch, self.gen)
        logits, _ = self.model(inp, return_attention=False)
        answer_logits, answer_tgt = logits[mask], tgt[mask]
        loss = F.cross_entropy(answer_logits, answer_tgt)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self._answers = (answer_logits.detach(), answer_tgt)
        acc = self._accuracy() if with_accuracy else None
        return loss.detach(), acc

    def _accuracy(self) -> torch.Tensor:
        """Teacher-forced answer-token accuracy of the last batch."""
        answer_logits, answer_tgt = self._answers
        return (answer_logits.argmax(-1) == answer_tgt).float().mean()

    def _iteration(self) -> dict[str, float]:
        loss, _ = self.train_step(with_accuracy=False)
        return {"loss": float(loss)}

    def _log(self, metrics: dict[str, float]) -> None:
        """The accuracy of the last batch joins the metrics once per step(n) call."""
        metrics["accuracy"] = float(self._accuracy())
        self._last = dict(metrics)
        super()._log(metrics)

    def snapshot(self) -> TransformerSnapshot:
        return TransformerSnapshot(self.steps, self._last["loss"], self._last["accuracy"],
                                   self.diverged_at)

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}

    def _extra_state(self) -> dict:
        return {"gen": self.gen.get_state(), "last": dict(self._last)}

    def _load_extra_state(self, state: dict) -> None:
        self.gen.set_state(state["gen"])
        self._last = dict(state["last"])
