"""K VAE trainers of one shape stepped as one (a class on the VAE page).

Each member is a VAETrainer (its own seed, shuffling, β, learning rate, step count). Its
minibatch is drawn as the trainer draws it (its own epoch permutation; ε from its own
generator); the members' encoders and decoders run as two stacks (engine.stacked), and

    L_k = mean recon_k + β_k · mean KL_k,   z = μ + exp(½ log σ²) ε   (ε detached path when
                                                                        reparam is off)

is minimised by each member's own Adam, the gradient of Σ_k L_k taken once. The trainer's own
bookkeeping is kept: training averages logged every `log_every` steps, the test measures and
latent snapshots deferred with the step's weights (VAETrainer._defer), and every member's
weights written back at the end of each call, so what its history and snapshots read is its
own. `unstack(k)` also writes its Adam state back: the same numbers as the trainer stepped
alone, up to rounding per step (engine/gan/batched.py: what "trained together" guarantees).
Measured (`python -m scripts.batched_divergence --kind vae --members 8 --steps 1000`,
learning rates 5e-4 to 4e-3, float32): 7 of 8 members within 3.1e-6 of their twins alone
over 1,000 steps; the one at 4e-3 parts at step 405 (by up to 0.39), and so does its twin
alone one ulp apart (`--ulp`, at step 794): at that rate the training amplifies rounding.

Batchable: Adam or SGD, and members share `batch_key` (network shape, likelihood, plain
autoencoder or not, reparameterisation on or off, batch size).
"""
from __future__ import annotations

import numpy as np
import torch

from engine.stacked import (Batch, StackedAdam, StackedMLP, mlp_params, optimizer_kind,
                            optimizer_reason, relu_, rows_of)
from engine.vae.model import LIKELIHOODS, kl_standard_normal
from engine.vae.trainer import VAETrainer


def unbatchable_reason(trainer: VAETrainer) -> str | None:
    return optimizer_reason(trainer.opt)


def batch_key(trainer: VAETrainer) -> tuple:
    m = trainer.model
    return (tuple(tuple(p.shape) for p in m.parameters()), m.likelihood, m.deterministic,
            trainer.reparam, trainer.batch_size, optimizer_kind(trainer.opt), str(trainer.device))


def _own(trainer: VAETrainer) -> list[torch.Tensor]:
    return mlp_params(trainer.model.encoder) + mlp_params(trainer.model.decoder)


class BatchedVAE(Batch):
    """Members (VAETrainers with one batch_key) stepped together."""

    def __init__(self, members: list[VAETrainer]):
        super().__init__(members, batch_key, unbatchable_reason)
        first = members[0]
        self.nll = LIKELIHOODS[first.model.likelihood]
        self.deterministic = first.model.deterministic
        self.reparam = first.reparam
        self.encoder = StackedMLP([t.model.encoder for t in members], relu_)
        self.decoder = StackedMLP([t.model.decoder for t in members], relu_)
        self.n_enc = len(self.encoder.params)
        self.opt = StackedAdam(self.encoder.params + self.decoder.params,
                               [_own(t) for t in members], [t.opt for t in members])
        self.beta = torch.tensor([t.beta for t in members])
        self.names = [name for name, _ in first.model.named_parameters()]

    def _losses(self, on: list[int], params: list[torch.Tensor]) -> torch.Tensor:
        """(K', 3): total, recon, kl of each active member's next minibatch."""
        x = torch.stack([self.members[k]._batch() for k in on])          # (K', B, 64)
        mu, logvar = self.encoder(x, params[:self.n_enc]).chunk(2, dim=-1)
        dec = params[self.n_enc:]
        if self.deterministic:
            recon = self.nll(self.decoder(mu, dec), x)
            kl = torch.zeros_like(recon)
        else:
            eps = torch.stack([torch.randn((1, *mu.shape[1:]), generator=self.members[k].gen,
                                           device=mu.device, dtype=mu.dtype)[0] for k in on])
            z = mu + torch.exp(0.5 * logvar) * eps
            if not self.reparam:
                z = z.detach()
            recon = self.nll(self.decoder(z, dec), x)
            kl = kl_standard_normal(mu, logvar)
        recon, kl = recon.mean(-1), kl.mean(-1)
        rows = torch.tensor(on)
        return torch.stack([recon + self.beta[rows] * kl, recon, kl], -1)

    def _params_of(self, k: int) -> dict[str, torch.Tensor]:
        """Member k's weights now, named as its model's state_dict."""
        return {name: p[k].detach().clone() for name, p in zip(self.names, self.opt.params)}

    def step(self, n: int = 1, active: list[bool] | None = None) -> None:
        """n minibatch updates of every active member that has not diverged, with its
        trainer's logging, deferred measures and divergence check; then every member's
        weights written back and any long queue of deferred measures made."""
        on = self.active(active)
        for _ in range(int(n)):
            if not on:
                break
            rows = self.rows(on)
            params = rows_of(self.opt.params, rows)
            losses = self._losses(on, params)
            self.opt.step(torch.autograd.grad(losses[:, 0].sum(), params), rows, on)
            for k, vals in zip(on, losses.detach().numpy()):
                self._book(k, vals)
            on = [k for k in on if self.members[k].diverged_at is None]
        for k, t in enumerate(self.members):
            self.opt.write_back(k, _own(t), t.opt)
            if len(t._pending) > t.MAX_PENDING:
                t._measure_pending()

    def _book(self, k: int, vals: np.ndarray) -> None:
        """VAETrainer's bookkeeping of one iteration (TrainerBase.step + _iteration + _log)."""
        t = self.members[k]
        t.steps += 1
        t.forget_cached()
        finite = bool(np.isfinite(vals).all())
        if finite:
            t._acc += vals
            t._acc_n += 1
            if t.snapshot_due(t.steps):
                t._defer(snapshot=True, params=self._params_of(k))
        if t.steps % t.log_every == 0 and finite:
            t._logged = t._log_train()
            if t.test_due(t.steps):
                t._defer(test=True, params=self._params_of(k))
        if not finite:
            t.diverged_at = t.steps

    def unstack(self, k: int) -> VAETrainer:
        t = self.members[k]
        self.opt.write_back(k, _own(t), t.opt)
        return t


BATCH = BatchedVAE
