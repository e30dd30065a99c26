"""TransformerTrainer: AdamW on next-token cross-entropy over the answer tokens of fresh
seeded batches, following engine/training.py's trainer protocol."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from engine.device import make_generator, resolve_device
from engine.training import History
from engine.attention.model import ModelConfig, init_model
from engine.attention.tasks import TASKS, make_batch


@dataclass(frozen=True)
class TransformerSnapshot:
    step: int
    loss: float
    accuracy: float          # teacher-forced answer-token accuracy on the last batch
    diverged_at: int | None


class TransformerTrainer:
    """AdamW on the answer-token cross-entropy
    loss = mean over answer positions of -log softmax(logits)[target],
    fresh random batches from TASKS[task] drawn with a seeded generator."""

    def __init__(self, task: str = "reverse", config: ModelConfig = ModelConfig(),
                 lr: float = 3e-3, batch: int = 128, seed: int = 0,
                 device: str | torch.device | None = "cpu"):
        self.device = resolve_device(device)
        self.task, self.config = TASKS[task], config
        self.lr, self.batch, self.seed = float(lr), int(batch), int(seed)
        self.model = init_model(config, seed, self.device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.01)
        self.gen = make_generator(self.seed + 7, self.device)
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()
        self._last = {"loss": math.nan, "accuracy": math.nan}

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
        acc = None
        if with_accuracy:
            acc = (answer_logits.detach().argmax(-1) == answer_tgt).float().mean()
        return loss.detach(), acc

    def step(self, n: int = 1) -> dict[str, float]:
        loss = acc = None
        done, n = 0, int(n)
        for i in range(n):
            if self.diverged_at is not None:
                break
            loss, acc = self.train_step(with_accuracy=(i == n - 1))
            done += 1
        if done == 0:
            return {}
        self.steps += done
        metrics = {"loss": float(loss), "accuracy": float(acc) if acc is not None else math.nan}
        if not math.isfinite(metrics["loss"]):
            self.diverged_at = self.steps
        self._last = metrics
        self.history.log(self.steps, metrics)
        return metrics

    def snapshot(self) -> TransformerSnapshot:
        return TransformerSnapshot(self.steps, self._last["loss"], self._last["accuracy"],
                                   self.diverged_at)

    def state_dict(self) -> dict:
        return {"model": {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()},
                "opt": self.opt.state_dict(), "gen": self.gen.get_state(),
                "steps": self.steps, "diverged_at": self.diverged_at,
                "history": self.history.state_dict(), "last": dict(self._last)}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        if "opt" in state:
            self.opt.load_state_dict(state["opt"])
        if "gen" in state:
            self.gen.set_state(state["gen"])
        self.steps = int(state.get("steps", 0))
        self.diverged_at = state.get("diverged_at")
        if "history" in state:
            self.history = History.from_state_dict(state["history"])
        self._last = dict(state.get("last", self._last))
