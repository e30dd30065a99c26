"""K GANs of one shape stepped as one: a class's GANs trained together.

Each member is a GANTrainer (its own target, seed, data stream, learning rates, step count).
BatchedGAN stacks the members' weights, W (K, out, in) and b (K, out), so that one layer of all
K networks is one batched matmul,

    h_k ← act(h_k W_kᵀ + b_k)   for every member k at once   (torch.baddbmm),

and the members' Adam moments m, v (K, ...) with their own step t_k and learning rate lr_k:

    m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  p ← p − (lr_k / (1−β₁^t_k)) · m / (√v / √(1−β₂^t_k) + ε)

(torch.optim.Adam's step, per member). Members share nothing but the kernels: member k's loss
depends only on its own weights, so the gradient of Σ_k L_k with respect to member k's weights is
∇L_k. A member masked out of a step (paused, or its bucket empty) draws no samples and keeps its
weights, moments and step count.

`unstack(k)` writes member k's weights and optimizer state back into its GANTrainer and returns
it: the same state_dict, within float32 rounding, as the trainer stepped alone.

What can be batched (`unbatchable_reason`): D's rows independent (no packing, minibatch std or
spectral norm), no unrolled D, no R1 or gradient penalty, no weight clipping, Adam or SGD, and
the same architecture, loss, batch size, betas and D/G steps (`batch_key`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.device import to_numpy
from engine.gan.measures import mode_coverage
from engine.gan.trainer import GANTrainer

ADAM_EPS = 1e-8


def unbatchable_reason(trainer: GANTrainer) -> str | None:
    """Why `trainer` cannot join a batch (a sentence for the page), or None if it can."""
    checks = (
        (not trainer.D.rowwise, "D mixes rows (packing, minibatch std or spectral norm)"),
        (trainer.unrolled_steps > 0, "D is unrolled"),
        (trainer.r1_gamma > 0, "the R1 penalty is on"),
        (trainer.loss_name in ("wgan-gp", "wgan-clip"), "the Wasserstein loss needs a "
                                                        "gradient penalty or clipping"),
        (_optimizer_kind(trainer) not in ("adam", "sgd"), "the optimizer is not Adam or SGD"),
    )
    return next((why for bad, why in checks if bad), None)


def _optimizer_kind(trainer: GANTrainer) -> str:
    return {torch.optim.Adam: "adam", torch.optim.SGD: "sgd"}.get(type(trainer.opt_g), "other")


def batch_key(trainer: GANTrainer) -> tuple:
    """Trainers with equal keys can be stepped as one batch."""
    shapes = tuple(tuple(p.shape) for p in (*trainer.G.parameters(), *trainer.D.parameters()))
    return (shapes, trainer.loss_name, trainer.batch_size, trainer.latent_dim, trainer.d_steps,
            trainer.g_steps, _optimizer_kind(trainer), trainer.betas, str(trainer.device))


def _linears(net: nn.Module) -> list[nn.Linear]:
    return [m for m in net.modules() if isinstance(m, nn.Linear)]


@dataclass
class _Stack:
    """One network of all members: per layer W (K, out, in), b (K, out), leaves with grad;
    Adam's m and v beside them; `act` between layers."""
    weights: list[torch.Tensor]
    biases: list[torch.Tensor]
    act: Callable[[torch.Tensor], torch.Tensor]
    m: list[torch.Tensor]
    v: list[torch.Tensor]

    @classmethod
    def of(cls, nets: list[nn.Module], opts: list[torch.optim.Optimizer], act) -> "_Stack":
        layers = [_linears(n) for n in nets]
        weights = [torch.stack([ls[i].weight.detach() for ls in layers]).requires_grad_(True)
                   for i in range(len(layers[0]))]
        biases = [torch.stack([ls[i].bias.detach() for ls in layers]).requires_grad_(True)
                  for i in range(len(layers[0]))]
        m, v = [], []
        for attr, out in (("exp_avg", m), ("exp_avg_sq", v)):
            for i in range(len(layers[0])):
                for part in ("weight", "bias"):
                    out.append(torch.stack([
                        opt.state.get(getattr(ls[i], part), {}).get(
                            attr, torch.zeros_like(getattr(ls[i], part))).detach()
                        for ls, opt in zip(layers, opts)]))
        return cls(weights, biases, act, m, v)

    @property
    def params(self) -> list[torch.Tensor]:
        return [p for wb in zip(self.weights, self.biases) for p in wb]

    def write_back(self, k: int, net: nn.Module, opt: torch.optim.Optimizer, t: int) -> None:
        """Member k's weights (and, once it has stepped, its Adam state) into net and opt."""
        with torch.no_grad():
            own = [p for lin in _linears(net) for p in (lin.weight, lin.bias)]
            for j, (p, s) in enumerate(zip(own, self.params)):
                p.copy_(s[k])
                if t > 0 and isinstance(opt, torch.optim.Adam):
                    state = opt.state[p]
                    state["step"] = torch.tensor(float(t))
                    state["exp_avg"] = self.m[j][k].clone()
                    state["exp_avg_sq"] = self.v[j][k].clone()


def _leaky(x: torch.Tensor) -> torch.Tensor:
    return F.leaky_relu(x, 0.2)


class BatchedGAN:
    """Members (GANTrainers with one batch_key) stepped together; see the module docstring."""

    def __init__(self, members: list[GANTrainer]):
        if not members:
            raise ValueError("a batch needs at least one member")
        keys = {batch_key(t) for t in members}
        if len(keys) > 1:
            raise ValueError("members differ in shape or settings (batch_key)")
        for t in members:
            why = unbatchable_reason(t)
            if why:
                raise ValueError(f"cannot batch this GAN: {why}")
        self.members = list(members)
        first = members[0]
        self.loss, self.kind = first.loss, _optimizer_kind(first)
        self.d_steps, self.g_steps = first.d_steps, first.g_steps
        self.G = _Stack.of([t.G for t in members], [t.opt_g for t in members], F.relu)
        self.D = _Stack.of([t.D for t in members], [t.opt_d for t in members], _leaky)
        # per member, shaped to broadcast over a stacked parameter's trailing dims
        self.lr_g = torch.tensor([t.opt_g.param_groups[0]["lr"] for t in members])
        self.lr_d = torch.tensor([t.opt_d.param_groups[0]["lr"] for t in members])
        self.t_g = [_adam_step(t.opt_g) for t in members]
        self.t_d = [_adam_step(t.opt_d) for t in members]
        self.b1, self.b2 = (float(b) for b in first.betas)

    @classmethod
    def from_trainers(cls, trainers: list[GANTrainer]) -> "BatchedGAN":
        return cls(trainers)

    def __len__(self) -> int:
        return len(self.members)

    # ---- one update of D or G for the active members -------------------------------------
    def _draw(self, idx: list[int], real: bool) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Each active member's own draws, in its trainer's order: the real batch (randint)
        then the latent codes (randn), from its own generator."""
        reals, zs = [], []
        for k in idx:
            t = self.members[k]
            if real:
                reals.append(t._real_batch())
            zs.append(t._z())
        return (torch.stack(reals) if real else None), torch.stack(zs)

    def _update(self, net: _Stack, grads, idx: torch.Tensor | None, lr: torch.Tensor,
                steps: list[int], active: list[int]) -> None:
        """Adam (or SGD) on the active members' slices of `net` (idx None: all members, in
        place); the others keep theirs."""
        rows = idx if idx is not None else slice(None)
        with torch.no_grad():
            if self.kind == "sgd":
                for p, g in zip(net.params, grads):
                    p[rows] -= lr[rows].view((-1,) + (1,) * (p.dim() - 1)) * g
                return
            t = torch.tensor([float(steps[k]) for k in active], dtype=torch.float64)
            c1 = (lr[rows].double() / (1 - self.b1 ** t)).float()
            c2 = (1 - self.b2 ** t).sqrt().float()
            for j, (p, g) in enumerate(zip(net.params, grads)):
                shape = (-1,) + (1,) * (p.dim() - 1)
                m, v = net.m[j][rows], net.v[j][rows]    # views when idx is None, else copies
                m.lerp_(g, 1 - self.b1)
                v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
                if idx is not None:
                    net.m[j][idx], net.v[j][idx] = m, v
                denom = (v.sqrt() / c2.view(shape)).add_(ADAM_EPS)
                p[rows] -= c1.view(shape) * m / denom

    def _d_update(self, active: list[int], idx: torch.Tensor | None) -> torch.Tensor:
        real, z = self._draw(active, real=True)
        params = _rows(self.D.params, idx)
        with torch.no_grad():
            fake = _subset(self.G, idx)(z)
        x = torch.cat([real, fake], 1)
        r, f = _call(self.D, params, x).squeeze(-1).split([real.shape[1], fake.shape[1]], 1)
        losses = torch.vmap(self.loss.d_loss)(r, f)
        grads = torch.autograd.grad(losses.sum(), params)
        for k in active:
            self.t_d[k] += 1
        self._update(self.D, grads, idx, self.lr_d, self.t_d, active)
        return losses.detach()

    def _g_update(self, active: list[int], idx: torch.Tensor | None) -> torch.Tensor:
        _, z = self._draw(active, real=False)
        params = _rows(self.G.params, idx)
        d_params = [p.detach() for p in _rows(self.D.params, idx)]
        f = _call(self.D, d_params, _call(self.G, params, z)).squeeze(-1)
        losses = torch.vmap(self.loss.g_loss)(f)
        grads = torch.autograd.grad(losses.sum(), params)
        for k in active:
            self.t_g[k] += 1
        self._update(self.G, grads, idx, self.lr_g, self.t_g, active)
        return losses.detach()

    # ---- the trainer protocol, per member -------------------------------------------------
    def step(self, n: int = 1, active: list[bool] | None = None) -> None:
        """n iterations of every active member that has not diverged: D's then G's updates;
        each member's steps, history (one log per call, the call's mean losses, as
        GANTrainer.step), divergence and coverage checks kept as if it were stepped alone."""
        on = [k for k in range(len(self)) if (active is None or active[k])
              and self.members[k].diverged_at is None]
        ld = {k: [] for k in on}
        lg = {k: [] for k in on}
        for _ in range(int(n)):
            if not on:
                break
            idx = None if len(on) == len(self) else torch.tensor(on)
            d = [self._d_update(on, idx) for _ in range(self.d_steps)]
            g = [self._g_update(on, idx) for _ in range(self.g_steps)]
            d_now, g_now = torch.stack(d), torch.stack(g)          # (updates, active)
            finite = (torch.isfinite(d_now).all(0) & torch.isfinite(g_now).all(0)).tolist()
            evaluate = []
            for j, k in enumerate(on):
                t = self.members[k]
                t.steps += 1
                t.forget_cached()
                ld[k] += list(d_now[:, j])
                lg[k] += list(g_now[:, j])
                if t.steps % t.eval_every == 0:
                    evaluate.append(k)
                if not finite[j]:
                    t.diverged_at = t.steps
            self._evaluate(evaluate)
            on = [k for k in on if self.members[k].diverged_at is None]
        for k in ld:
            if ld[k]:
                self.members[k].history.log(self.members[k].steps, {
                    "loss_d": float(torch.stack(ld[k]).mean()),
                    "loss_g": float(torch.stack(lg[k]).mean())})

    @torch.no_grad()
    def _evaluate(self, ks: list[int]) -> None:
        """The members' coverage checks (GANTrainer._evaluate) on their fixed latent codes,
        their generators run as one batch."""
        ks = [k for k in ks if self.members[k].target.centers is not None
              and self.members[k].target.std is not None]
        if not ks:
            return
        idx = torch.tensor(ks)
        fakes = _subset(self.G, idx)(torch.stack([self.members[k].z_eval for k in ks]))
        for k, fake in zip(ks, to_numpy(fakes)):
            t = self.members[k]
            if not np.isfinite(fake).all():
                continue
            cov = mode_coverage(fake, t.target.centers, t.target.std, t.n_sigma)
            t.history.log(t.steps, {"modes": cov.modes_covered,
                                    "high_quality": cov.high_quality_fraction,
                                    "reverse_kl": cov.reverse_kl})
            t.evals.add(t.steps, cov.histogram.tolist())

    def unstack(self, k: int) -> GANTrainer:
        """Member k as a normal GANTrainer: its weights and optimizer state written back."""
        t = self.members[k]
        self.G.write_back(k, t.G, t.opt_g, self.t_g[k])
        self.D.write_back(k, t.D, t.opt_d, self.t_d[k])
        return t


def _adam_step(opt: torch.optim.Optimizer) -> int:
    """The optimizer's step count t (0 before its first step)."""
    for state in opt.state.values():
        if "step" in state:
            return int(float(state["step"]))
    return 0


def _rows(params: list[torch.Tensor], idx: torch.Tensor | None) -> list[torch.Tensor]:
    """The members `idx` of stacked parameters (None: all of them, the leaves themselves)."""
    return list(params) if idx is None else [p[idx] for p in params]


def _subset(net: _Stack, idx: torch.Tensor | None):
    """net restricted to the members `idx` (no gradient)."""
    return lambda x: _call(net, [p.detach() for p in _rows(net.params, idx)], x)


def _call(net: _Stack, params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """net's forward with `params` (W₀, b₀, W₁, b₁, ...) in place of its own."""
    last = len(params) // 2 - 1
    for i in range(last + 1):
        w, b = params[2 * i], params[2 * i + 1]
        x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        if i < last:
            x = net.act(x)
    return x


BATCH = BatchedGAN           # live/batching.py builds batches through this name
