"""K GANs of one shape stepped as one: a class's GANs trained together.

Each member is a GANTrainer (its own target, seed, data stream, learning rates, step count).
BatchedGAN stacks the members' G and D (engine.stacked.StackedMLP: one batched matmul per
layer for all K) and their optimizers (StackedAdam: each member's own moments, step count and
learning rate). One iteration, for every active member k, in its trainer's order:

    D: real_k, z_k from k's generator;  L_D,k = LOSSES[loss].d_loss(D_k(real_k), D_k(G_k(z_k)))
    G: z_k;                              L_G,k = LOSSES[loss].g_loss(D_k(G_k(z_k)))

with the gradient of Σ_k L_k taken once (members are independent, so member k gets ∇L_k).
A member masked out of a step (paused, or its bucket empty) draws no samples and keeps its
weights, moments and step count. `unstack(k)` writes member k back into its GANTrainer.

What "trained together" guarantees: every iteration computes for each member what its own
step computes (its draws in its order, its losses, gradients and update; the learning-rate
coefficients rounded once to the weights' dtype, as torch.optim rounds them), up to rounding:
a batched matmul adds in another order than a member's own, a last-bit difference per step.
Measured (`python -m scripts.batched_divergence --members 16 --lr 2.5e-4 --steps 1000`: 16
GANs at LIVE_DEFAULTS' sizes, learning rates 2.5e-4 to 4e-3, each against its twin alone;
one CPU thread):
  float64 (GANTrainer dtype): every member within 5e-13 of its twin after 1,000 iterations;
  float32: <= 1.9e-8 after one iteration, <= 2e-6 through iteration 200; then a GAN's training
    amplifies the difference: 12 of the 16 part beyond 1e-5 (the first at iteration 239),
    by up to 1.1 at iteration 1,000.
Two float32 runs alone whose G differs by one ulp in one weight (`--ulp`) part the same way
(14 of 16, the first at iteration 239, often at the very iteration the batched twin parts):
the parting is the training's sensitivity to rounding, not the batch. It is abrupt: member 3
(lr 1e-3) and its twin go from 2.7e-7 apart to 1.1e-4 in every tensor in iteration 239, where
one real point's pre-activation at one LeakyReLU of D's second layer is 1.0e-7 in one run and
-6.0e-8 in the other (`--gates 3 239 --lr 2.5e-4`): the gate flips (slope 1 against 0.2), and
that point's share of D's gradient changes by a finite amount. So in float32 a
batched member is the same training up to rounding per step, not the same bits after
hundreds of steps; the tests compare float32 over a few dozen iterations and many iterations
in float64 (tests/engine/test_gan_batched.py, tests/test_worker_batching.py).

On a GPU (or with `static=True`) the batch takes the static form of engine.stacked: the stacks
padded to a bucket size, every row computed and masked, the members' draws made first and
passed in, so that the whole iteration (D's and G's updates) is one CUDA graph replayed
(engine.cuda_graph.GraphedStep); on a CPU the same static iteration runs eagerly, and equals
the members stepped alone as above (tests/engine/test_gan_batched.py).

What can be batched (`unbatchable_reason`): D's rows independent (no packing, minibatch std or
spectral norm), no unrolled D, no R1 or gradient penalty, no weight clipping, Adam or SGD; and
members share `batch_key`: architecture, loss, batch size, latent size, betas, D/G steps,
device and dtype.
"""
from __future__ import annotations

import numpy as np
import torch

from engine.cuda_graph import GraphedStep, use_cuda_graph
from engine.device import to_numpy
from engine.gan.measures import mode_coverage
from engine.gan.trainer import GANTrainer
from engine.stacked import (Batch, StackedAdam, StackedMLP, bucket_size, leaky_relu_,
                            mlp_params, optimizer_kind, optimizer_reason, padded, relu_, rows_of)


def unbatchable_reason(trainer: GANTrainer) -> str | None:
    """Why `trainer` cannot join a batch (a sentence for the page), or None if it can."""
    checks = (
        (not trainer.D.rowwise, "D mixes rows (packing, minibatch std or spectral norm)"),
        (trainer.unrolled_steps > 0, "D is unrolled"),
        (trainer.r1_gamma > 0, "the R1 penalty is on"),
        (trainer.loss_name in ("wgan-gp", "wgan-clip"), "the Wasserstein loss needs a "
                                                        "gradient penalty or clipping"),
    )
    return next((why for bad, why in checks if bad), None) or optimizer_reason(trainer.opt_g)


def batch_key(trainer: GANTrainer) -> tuple:
    """Trainers with equal keys can be stepped as one batch."""
    shapes = tuple(tuple(p.shape) for p in (*trainer.G.parameters(), *trainer.D.parameters()))
    return (shapes, trainer.loss_name, trainer.batch_size, trainer.latent_dim, trainer.d_steps,
            trainer.g_steps, optimizer_kind(trainer.opt_g), trainer.betas, str(trainer.device),
            str(trainer.dtype))


class BatchedGAN(Batch):
    """Members (GANTrainers with one batch_key) stepped together; see the module docstring."""

    def __init__(self, members: list[GANTrainer], static: bool | None = None):
        super().__init__(members, batch_key, unbatchable_reason)
        first = members[0]
        self.loss, self.d_steps, self.g_steps = first.loss, first.d_steps, first.g_steps
        self.device = first.device
        self.static = use_cuda_graph(self.device) if static is None else bool(static)
        rows = padded(members, bucket_size(len(members)) if self.static else len(members))
        self.G = StackedMLP([t.G for t in rows], relu_)
        self.D = StackedMLP([t.D for t in rows], leaky_relu_)
        self.opt_g = StackedAdam(self.G.params, [mlp_params(t.G) for t in rows],
                                 [t.opt_g for t in rows])
        self.opt_d = StackedAdam(self.D.params, [mlp_params(t.D) for t in rows],
                                 [t.opt_d for t in rows])
        self.graphed: GraphedStep | None = None     # the captured static iteration (CUDA)

    # ---- one update of D or G for the active members -------------------------------------
    def _d_update(self, active: list[int], rows: torch.Tensor | None) -> torch.Tensor:
        real, z = [], []
        for k in active:                  # each member's own draws, in its trainer's order
            real.append(self.members[k]._real_batch())
            z.append(self.members[k]._z())
        real, z = torch.stack(real), torch.stack(z)
        params = rows_of(self.D.params, rows)
        with torch.no_grad():
            fake = self.G.frozen(rows)(z)
        out = self.D(torch.cat([real, fake], 1), params).squeeze(-1)
        r, f = out.split([real.shape[1], fake.shape[1]], 1)
        losses = torch.vmap(self.loss.d_loss)(r, f)
        self.opt_d.step(torch.autograd.grad(losses.sum(), params), rows, active)
        return losses.detach()

    def _g_update(self, active: list[int], rows: torch.Tensor | None) -> torch.Tensor:
        z = torch.stack([self.members[k]._z() for k in active])
        params = rows_of(self.G.params, rows)
        f = self.D.frozen(rows)(self.G(z, params)).squeeze(-1)
        losses = torch.vmap(self.loss.g_loss)(f)
        self.opt_g.step(torch.autograd.grad(losses.sum(), params), rows, active)
        return losses.detach()

    # ---- the static iteration: fixed shapes, masked rows (a CUDA graph on a GPU) -------------
    def _static_iteration(self, real: torch.Tensor, z_d: torch.Tensor, z_g: torch.Tensor,
                          mask: torch.Tensor, c1_d: torch.Tensor, c2_d: torch.Tensor,
                          c1_g: torch.Tensor, c2_g: torch.Tensor) -> dict[str, torch.Tensor]:
        """One iteration of every row (real, z_d: (d_steps, S, B, ·); z_g: (g_steps, S, B,
        latent); c*: (updates, S)), kept where `mask` is on; the rows' losses (updates, S)."""
        d, g = [], []
        for j in range(self.d_steps):
            with torch.no_grad():
                fake = self.G(z_d[j])
            out = self.D(torch.cat([real[j], fake], 1)).squeeze(-1)
            r, f = out.split([real.shape[2], fake.shape[1]], 1)
            losses = torch.vmap(self.loss.d_loss)(r, f)
            grads = torch.autograd.grad(losses.sum(), self.D.params)
            self.opt_d.masked_step(grads, mask, c1_d[j], c2_d[j])
            d.append(losses.detach())
        for j in range(self.g_steps):
            f = self.D.frozen()(self.G(z_g[j])).squeeze(-1)
            losses = torch.vmap(self.loss.g_loss)(f)
            grads = torch.autograd.grad(losses.sum(), self.G.params)
            self.opt_g.masked_step(grads, mask, c1_g[j], c2_g[j])
            g.append(losses.detach())
        return {"d": torch.stack(d), "g": torch.stack(g)}

    def _static_inputs(self, on: list[int]) -> dict[str, torch.Tensor]:
        """The members' draws in their trainers' order (per D update: real, z; then each G
        update's z), zeros for the rows that do not step, the mask and the coefficients."""
        size, first = len(self.opt_d.t), self.members[0]
        b, latent, dev, dtype = first.batch_size, first.latent_dim, self.device, first.dtype
        real = torch.zeros(self.d_steps, size, b, first.real.shape[1], device=dev, dtype=dtype)
        z_d = torch.zeros(self.d_steps, size, b, latent, device=dev, dtype=dtype)
        z_g = torch.zeros(self.g_steps, size, b, latent, device=dev, dtype=dtype)
        for k in on:
            t = self.members[k]
            for j in range(self.d_steps):
                real[j, k], z_d[j, k] = t._real_batch(), t._z()
            for j in range(self.g_steps):
                z_g[j, k] = t._z()
        mask = torch.zeros(size, dtype=torch.bool)
        mask[on] = True
        cd = [self.opt_d.coefficients(on, dev) for _ in range(self.d_steps)]
        cg = [self.opt_g.coefficients(on, dev) for _ in range(self.g_steps)]
        return {"real": real, "z_d": z_d, "z_g": z_g, "mask": mask.to(dev),
                "c1_d": torch.stack([c[0] for c in cd]), "c2_d": torch.stack([c[1] for c in cd]),
                "c1_g": torch.stack([c[0] for c in cg]), "c2_g": torch.stack([c[1] for c in cg])}

    def _run_static(self, on: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = self._static_inputs(on)
        if use_cuda_graph(self.device):
            if self.graphed is None:
                self.graphed = GraphedStep(self._static_iteration, inputs)
            out = self.graphed(**inputs)
        else:
            out = self._static_iteration(**inputs)
        return out["d"][:, on], out["g"][:, on]

    def _run_dynamic(self, on: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        rows = self.rows(on)
        d = torch.stack([self._d_update(on, rows) for _ in range(self.d_steps)])
        g = torch.stack([self._g_update(on, rows) for _ in range(self.g_steps)])
        return d, g

    # ---- the trainer protocol, per member -------------------------------------------------
    def step(self, n: int = 1, active: list[bool] | None = None) -> None:
        """n iterations of every active member that has not diverged: D's then G's updates;
        each member's steps, history (one log per call, the call's mean losses, as
        GANTrainer.step), divergence and coverage checks kept as if it were stepped alone."""
        on = self.active(active)
        ld: dict[int, list[torch.Tensor]] = {k: [] for k in on}
        lg: dict[int, list[torch.Tensor]] = {k: [] for k in on}
        for _ in range(int(n)):
            if not on:
                break
            d, g = self._run_static(on) if self.static else self._run_dynamic(on)
            finite = (torch.isfinite(d).all(0) & torch.isfinite(g).all(0)).tolist()
            evaluate = []
            for j, k in enumerate(on):
                t = self.members[k]
                t.steps += 1
                t.forget_cached()
                ld[k] += list(d[:, j])
                lg[k] += list(g[:, j])
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
        fakes = self.G.frozen(torch.tensor(ks))(torch.stack([self.members[k].z_eval for k in ks]))
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
        self.opt_g.write_back(k, mlp_params(t.G), t.opt_g)
        self.opt_d.write_back(k, mlp_params(t.D), t.opt_d)
        return t


BATCH = BatchedGAN           # live/batching.py builds batches through this name
