"""K ReLU-region trainers of one shape stepped as one (a class on the ReLU regions page).

Each member is a RegionTrainer (its own task, data, seed, learning rate, step count). The
members' MLPs and Adam states are stacked (engine.stacked); one iteration is, for every active
member k, one full-batch Adam step on

    L_k = LOSSES[kind](f_k(x_k), y_k)      (MSE for regression, BCE-with-logits for classes)

with the gradient of Σ_k L_k taken once. Every `count_every` steps a member keeps its (W, b)
for the exact region count, as RegionTrainer does (the count is made when its history is read).
`unstack(k)` writes member k back: the trainer's weights and Adam state, as if it had been
stepped alone up to rounding per step (engine/gan/batched.py: what "trained together"
guarantees). Measured (`python -m scripts.batched_divergence --kind regions --members 8
--steps 1000`, learning rates 5e-3 to 4e-2, float32): every member within 3e-6 of its twin
alone through step 300; then full-batch Adam amplifies the last-bit differences: 6 of 8 part
beyond 1e-5 (from step 324, up to 0.14 at step 1,000), as twins alone one ulp apart part
(`--ulp`: 4 of 8, from step 367).

Batchable: Adam or SGD, and members share `batch_key` (layer shapes, loss kind, data size).
"""
from __future__ import annotations

import math

import torch

from engine.regions.trainer import RegionTrainer
from engine.stacked import (Batch, StackedAdam, StackedMLP, mlp_params, optimizer_kind,
                            optimizer_reason, relu_, rows_of)


def unbatchable_reason(trainer: RegionTrainer) -> str | None:
    return optimizer_reason(trainer.opt)


def batch_key(trainer: RegionTrainer) -> tuple:
    return (tuple(tuple(p.shape) for p in trainer.params), trainer.task.kind,
            tuple(trainer.x.shape), optimizer_kind(trainer.opt), str(trainer.device))


class BatchedRegions(Batch):
    """Members (RegionTrainers with one batch_key) stepped together."""

    def __init__(self, members: list[RegionTrainer]):
        super().__init__(members, batch_key, unbatchable_reason)
        self.loss = members[0].loss_fn
        self.net = StackedMLP([t.model for t in members], relu_)
        self.opt = StackedAdam(self.net.params, [mlp_params(t.model) for t in members],
                               [t.opt for t in members])
        self.x = torch.stack([t.x for t in members])          # (K, n, 2)
        self.y = torch.stack([t.y for t in members])          # (K, n)

    def step(self, n: int = 1, active: list[bool] | None = None) -> None:
        """n iterations of every active member that has not diverged; each member's steps,
        loss history (the last loss of the call, as RegionTrainer.step logs it), divergence
        and pending region counts kept as if it were stepped alone."""
        on = self.active(active)
        last: dict[int, float] = {}
        for _ in range(int(n)):
            if not on:
                break
            rows = self.rows(on)
            params = rows_of(self.net.params, rows)
            x = self.x if rows is None else self.x[rows]
            y = self.y if rows is None else self.y[rows]
            losses = torch.vmap(self.loss)(self.net(x, params)[..., 0], y)
            self.opt.step(torch.autograd.grad(losses.sum(), params), rows, on)
            values = losses.detach().tolist()
            for j, k in enumerate(on):
                t = self.members[k]
                t.steps += 1
                t.forget_cached()
                last[k] = values[j]
                if not math.isfinite(values[j]):
                    t.diverged_at = t.steps
                elif t.steps % t.count_every == 0:
                    t._pending.append((t.steps, [p[k].detach().clone()
                                                 for p in self.net.params]))
            on = [k for k in on if self.members[k].diverged_at is None]
        for k, loss in last.items():
            t = self.members[k]
            t._history.log(t.steps, {"loss": loss})

    def unstack(self, k: int) -> RegionTrainer:
        t = self.members[k]
        self.opt.write_back(k, mlp_params(t.model), t.opt)
        return t


BATCH = BatchedRegions
