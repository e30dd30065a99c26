"""K diffusion trainers of one shape stepped as one (a class on the diffusion page).

Each member is a DiffusionTrainer (its own points, schedule, seed, learning rate, label
dropout). Per iteration every active member k draws its own batch from its own generator in
its trainer's order (rows, t ~ U{1..T}, eps, the dropped labels) and builds
x_t = √ᾱ_t x₀ + √(1−ᾱ_t) eps; the members' eps-networks run as one stack (engine.stacked:
the first layer on [x_t, emb(t), emb(c)], SiLU between layers, each member's class embedding
looked up in its own table), and

    L_k = mean ‖eps − eps_θk(x_t, t, c)‖²

is minimised by each member's own Adam, the gradient of Σ_k L_k taken once. `unstack(k)`
writes member k back: weights and Adam state as if stepped alone, up to rounding per step
(engine/gan/batched.py: what "trained together" guarantees); measured on one CPU thread
(`python -m scripts.batched_divergence --kind diffusion --members 8 --steps 1000`, learning
rates 1e-3 to 8e-3): the members equal their twins alone bit for bit over 1,000 steps.

Batchable: Adam or SGD, and members share `batch_key` (network shape, classes, batch, T).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.diffusion.network import timestep_embedding
from engine.diffusion.trainer import DiffusionTrainer
from engine.stacked import (Batch, StackedAdam, StackedMLP, mlp_params, optimizer_kind,
                            optimizer_reason, rows_of, stack)


def unbatchable_reason(trainer: DiffusionTrainer) -> str | None:
    return optimizer_reason(trainer.opt)


def batch_key(trainer: DiffusionTrainer) -> tuple:
    return (tuple(tuple(p.shape) for p in trainer.model.parameters()),
            trainer.model.config()["num_classes"], trainer.batch, trainer.schedule.T,
            optimizer_kind(trainer.opt), str(trainer.device))


def _own(trainer: DiffusionTrainer) -> list[torch.Tensor]:
    """The member's parameters in stacking order: the MLP's, then its class table."""
    emb = trainer.model.class_emb
    return mlp_params(trainer.model.net) + ([emb.weight] if emb is not None else [])


class BatchedDiffusion(Batch):
    """Members (DiffusionTrainers with one batch_key) stepped together."""

    def __init__(self, members: list[DiffusionTrainer]):
        super().__init__(members, batch_key, unbatchable_reason)
        first = members[0].model
        self.emb_dim, self.classes = first.emb_dim, first.class_emb is not None
        self.net = StackedMLP([t.model.net for t in members], F.silu)
        self.table = stack([[t.model.class_emb.weight] for t in members]) if self.classes else []
        self.opt = StackedAdam(self.net.params + self.table, [_own(t) for t in members],
                               [t.opt for t in members])

    def _draw(self, t: DiffusionTrainer):
        """One member's batch, drawn as DiffusionTrainer.loss_on_batch draws it."""
        g, n, T, b, dev = t.gen, t.x.shape[0], t.schedule.T, t.batch, t.device
        idx = torch.randint(0, n, (b,), generator=g, device=dev)
        steps = torch.randint(1, T + 1, (b,), generator=g, device=dev)
        eps = torch.randn(b, 2, generator=g, device=dev)
        ab = t.ab[steps][:, None]
        x_t = ab.sqrt() * t.x[idx] + (1 - ab).sqrt() * eps
        c = None
        if t.labels is not None:
            drop = torch.rand(b, generator=g, device=dev) < t.p_uncond
            c = torch.where(drop, t.model.num_classes, t.labels[idx])
        return x_t, steps, eps, c

    def _losses(self, on: list[int], rows: torch.Tensor | None) -> tuple[torch.Tensor, list]:
        draws = [self._draw(self.members[k]) for k in on]
        x_t, steps, eps = (torch.stack([d[i] for d in draws]) for i in range(3))
        k, b = steps.shape
        parts = [x_t, timestep_embedding(steps.reshape(-1), self.emb_dim).reshape(k, b, -1)]
        params = rows_of(self.net.params + self.table, rows)
        mlp = params[:len(self.net.params)]
        if self.classes:
            table = params[-1]                                   # (K', classes + 1, emb)
            c = torch.stack([d[3] for d in draws])               # (K', B)
            parts.append(table[torch.arange(k)[:, None], c])
        out = self.net(torch.cat(parts, -1), mlp)
        return ((eps - out) ** 2).sum(-1).mean(-1), params

    def step(self, n: int = 1, active: list[bool] | None = None) -> None:
        """n iterations of every active member that has not diverged; each member's steps,
        history (the mean of the call's finite losses, as DiffusionTrainer.step logs it) and
        divergence kept as if it were stepped alone."""
        on = self.active(active)
        total = {k: [0.0, 0] for k in on}
        for _ in range(int(n)):
            if not on:
                break
            rows = self.rows(on)
            losses, params = self._losses(on, rows)
            self.opt.step(torch.autograd.grad(losses.sum(), params), rows, on)
            for k, value in zip(on, losses.detach().tolist()):
                t = self.members[k]
                t.steps += 1
                t.forget_cached()
                if math.isfinite(value):
                    total[k][0] += value
                    total[k][1] += 1
                else:
                    t.diverged_at = t.steps
            on = [k for k in on if self.members[k].diverged_at is None]
        for k, (s, done) in total.items():
            if done:
                self.members[k].history.log(self.members[k].steps, {"loss": s / done})

    def unstack(self, k: int) -> DiffusionTrainer:
        t = self.members[k]
        self.opt.write_back(k, _own(t), t.opt)
        return t


BATCH = BatchedDiffusion
