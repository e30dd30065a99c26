"""VAETrainer: minibatch Adam on recon + beta * kl over the training digits, with logged test
metrics, the encoder's reconstruction-gradient norm, and latent snapshots for the replay.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from engine.device import make_generator, numpy_rng, resolve_device
from engine.training import History, TrainerBase
from engine.vae.data import DigitData, load_digit_data
from engine.vae.measures import LatentCodes, LatentGrid, encode_dataset, latent_grid
from engine.vae.model import VAE


@dataclass(frozen=True)
class VAESnapshot:
    step: int
    epoch: float
    codes: LatentCodes        # test digits
    grid: LatentGrid
    recon_test: float
    kl_test: float
    elbo_test: float
    diverged_at: int | None


class VAETrainer(TrainerBase):
    """Minibatch Adam on the loss recon + beta * kl over the 1438 training digits.

    One step = one minibatch (batch_size digits, reshuffled every epoch with the seed).
    Every `log_every` steps it logs the averages since the last log (train_recon, train_kl,
    train_elbo = -(recon + kl)); at the log steps `test_due` picks, the test metrics
    (test_recon, test_kl, test_elbo, with a fixed eps so curves do not jitter) and
    enc_grad_recon = ||d recon / d encoder params||, which is exactly 0 when reparam=False.
    At the steps `snapshot_due` picks (multiples of `snapshot_every`) it keeps the test
    encoder means (at most `max_snapshots`; older ones are thinned to every other).

    On engine.training.TrainerBase with log_every: `_iteration` is one minibatch update, and
    `_log` (every log_every steps) logs the averages since the last log plus the test metrics;
    a diverged iteration (NaN/inf loss) is neither averaged, logged nor snapshotted. step(n)
    returns the last training metrics it logged, else the latest ones. State: "model" (no
    optimizer state: a loaded model trains on with a fresh Adam, as the shipped files
    expect), steps, diverged_at, history, "config" and the latent "snapshots".

    The test metrics and the latent snapshots cost passes over the test digits (the test
    metrics about one training step's worth, the snapshot a sixth of one), so a step does not
    compute them: at a due step it keeps a copy of the parameters, and they are computed, with
    the same numbers, when `history` or `snapshots` is read (a view, a snapshot, a saved
    state), or once MAX_PENDING wait. They are due densely over the first DENSE_LOGS logs
    (the first epochs, where the KL spike and the fastest fall are) and then at every
    SPARSE_EVERY-th log (snapshots: every SNAPSHOT_SPARSE_EVERY-th), so that in a long run
    they cost ~1.5% of training instead of ~10% (`test_due`, `snapshot_due`).
    """

    batched = "engine.vae.batched"   # a class steps its trainers as one batch

    MAX_PENDING = 64
    DENSE_LOGS = 20       # test metrics at every log until log 20 (step 240 at log_every 12)
    SPARSE_EVERY = 8      # then at every 8th log (every 96 steps)
    SNAPSHOT_SPARSE_EVERY = 2   # snapshots cost a sixth of a test pass: every 2nd (48 steps)

    def test_due(self, step: int) -> bool:
        """Whether the test metrics are logged at `step` (a log step, dense then sparse)."""
        logs, rest = divmod(step, self.log_every)
        return rest == 0 and (logs <= self.DENSE_LOGS or logs % self.SPARSE_EVERY == 0)

    def snapshot_due(self, step: int) -> bool:
        """Whether a latent snapshot is kept at `step` (as test_due, on snapshot_every)."""
        count, rest = divmod(step, self.snapshot_every)
        dense = self.DENSE_LOGS * self.log_every // self.snapshot_every
        return rest == 0 and (count <= dense or count % self.SNAPSHOT_SPARSE_EVERY == 0)

    def __init__(self, latent_dim: int = 2, beta: float = 1.0, likelihood: str = "bernoulli",
                 deterministic: bool = False, reparam: bool = True, lr: float = 1e-3,
                 batch_size: int = 128, hidden: tuple[int, ...] = (256, 128), seed: int = 0,
                 device: str | torch.device | None = None, data: DigitData | None = None,
                 log_every: int = 12, snapshot_every: int = 24, max_snapshots: int = 80,
                 grid_n: int = 15, grid_span: str = "quantiles", grid_dims: tuple[int, int] = (0, 1)):
        super().__init__()
        self.device = resolve_device(device)
        self.seed, self.beta, self.reparam = int(seed), float(beta), bool(reparam)
        self.batch_size, self.lr = int(batch_size), float(lr)
        self.log_every, self.snapshot_every = max(1, int(log_every)), max(1, int(snapshot_every))
        self.max_snapshots = max(2, int(max_snapshots))
        self.grid_n, self.grid_span = int(grid_n), grid_span
        self.grid_dims = tuple(grid_dims) if latent_dim >= 2 else (0, 0)
        self.data = data or load_digit_data()
        self.model = VAE(64, latent_dim, hidden, likelihood, deterministic, seed).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.x = torch.as_tensor(self.data.x_train, device=self.device)
        self.x_test = torch.as_tensor(self.data.x_test, device=self.device)
        self.gen = make_generator(self.seed, self.device)
        self.rng = numpy_rng(self.seed)
        self._perm, self._pos = self.rng.permutation(len(self.x)), 0
        self._snapshots: list[tuple[int, np.ndarray]] = []
        self._pending: list[tuple[int, dict, bool, bool]] = []   # step, params, test?, snapshot?
        self._eval_model: VAE | None = None                     # measures a kept copy
        self._acc = np.zeros(3)
        self._acc_n = 0
        self._logged: dict[str, float] = {}
        self._log_now()

    @property
    def steps_per_epoch(self) -> float:
        return len(self.x) / self.batch_size

    def _batch(self) -> torch.Tensor:
        if self._pos + self.batch_size > len(self._perm):
            self._perm, self._pos = self.rng.permutation(len(self.x)), 0
        idx = self._perm[self._pos:self._pos + self.batch_size]
        self._pos += self.batch_size
        return self.x[torch.as_tensor(idx, device=self.device)]

    def _iteration(self) -> dict[str, float]:
        total, recon, kl = self.model.loss(self._batch(), self.beta, 1, self.gen, self.reparam)
        self.opt.zero_grad(set_to_none=True)
        total.backward()
        self.opt.step()
        vals = torch.stack([total.detach(), recon.detach(), kl.detach()]).cpu().numpy()
        if np.isfinite(vals).all():
            self._acc += vals
            self._acc_n += 1
            if self.snapshot_due(self.steps):
                self._defer(snapshot=True)
        return {"loss": float(vals[0]), "recon": float(vals[1]), "kl": float(vals[2])}

    def _log(self, metrics: dict[str, float]) -> None:
        if not self._diverged(metrics):
            self._logged = self._log_train()
            if self.test_due(self.steps):
                self._defer(test=True)

    def step(self, n: int = 1) -> dict[str, float]:
        self._logged = {}
        super().step(n)
        return self._logged or self.latest()

    def latest(self) -> dict[str, float]:
        return {k: self._history.last(k) for k in self._history.values}

    # ---- measures made when read (see the class docstring) ----------------------------
    @property
    def history(self) -> History:
        self._measure_pending()
        return self._history

    @history.setter
    def history(self, value: History) -> None:
        self._history, self._pending = value, []

    @property
    def snapshots(self) -> list[tuple[int, np.ndarray]]:
        self._measure_pending()
        return self._snapshots

    @snapshots.setter
    def snapshots(self, value: list[tuple[int, np.ndarray]]) -> None:
        self._snapshots, self._pending = value, []

    def _defer(self, test: bool = False, snapshot: bool = False,
               params: dict[str, torch.Tensor] | None = None) -> None:
        """Keep this step's parameters (the model's, or `params` given by a batch that holds
        them: engine/vae/batched.py) for a test measure and/or a latent snapshot. A batch
        measures the waiting ones itself once it has written the weights back."""
        from_model = params is None
        if self._pending and self._pending[-1][0] == self.steps:
            step, kept, t, sn = self._pending[-1]
            self._pending[-1] = (step, kept, t or test, sn or snapshot)
        else:
            if from_model:
                params = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            self._pending.append((self.steps, params, test, snapshot))
        if len(self._pending) > self.MAX_PENDING and from_model:
            self._measure_pending()

    def _measure_pending(self) -> None:
        pending, self._pending = self._pending, []
        for step, params, test, snapshot in pending:
            if step == self.steps:
                model = self.model
            else:
                if self._eval_model is None:
                    self._eval_model = copy.deepcopy(self.model)
                self._eval_model.load_state_dict(params)
                model = self._eval_model
            if test:
                self._history.log(step, self._test_metrics(model))
            if snapshot:
                self._keep_snapshot(step, model)

    def _keep_snapshot(self, step: int, model: VAE) -> None:
        self._snapshots.append((step, encode_dataset(model, self.data.x_test,
                                                     self.data.y_test).means))
        if len(self._snapshots) > self.max_snapshots:  # keep the first, thin the rest uniformly
            self._snapshots = self._snapshots[:1] + self._snapshots[2::2]

    def encoder_grad_norm_recon(self, model: VAE | None = None) -> float:
        """||d recon / d theta_encoder|| on the first 128 test digits with a fixed eps
        (exactly 0 when reparam=False: z is then sampled off the autograd graph)."""
        model = self.model if model is None else model
        params = list(model.encoder.parameters())
        g = make_generator(self.seed + 1, self.device)
        _, recon, _ = model.loss(self.x_test[:128], self.beta, 1, g, self.reparam)
        grads = torch.autograd.grad(recon, params, allow_unused=True)
        return float(torch.sqrt(sum((gr.pow(2).sum() for gr in grads if gr is not None),
                                    torch.zeros((), device=self.device))))

    def _log_train(self) -> dict[str, float]:
        """Log (and return) the training averages since the last log."""
        m: dict[str, float] = {}
        if self._acc_n:
            t, r, k = self._acc / self._acc_n
            m.update(train_loss=t, train_recon=r, train_kl=k, train_elbo=-(r + k))
            self._acc[:], self._acc_n = 0.0, 0
            self._history.log(self.steps, m)
        return m

    def _test_metrics(self, model: VAE) -> dict[str, float]:
        """Test recon, KL and ELBO (fixed eps) and the encoder's recon-gradient norm."""
        with torch.no_grad():
            g = make_generator(self.seed + 1, self.device)
            _, r, k = model.loss(self.x_test, self.beta, 1, g, True)
            r, k = float(r), float(k)
        return {"test_recon": r, "test_kl": k, "test_elbo": -(r + k),
                "enc_grad_recon": self.encoder_grad_norm_recon(model)}

    def _log_now(self) -> dict[str, float]:
        m = self._log_train()
        test = self._test_metrics(self.model)
        self._history.log(self.steps, test)
        return {**m, **test}

    def snapshot(self) -> VAESnapshot:
        codes = encode_dataset(self.model, self.data.x_test, self.data.y_test)
        if self.model.latent_dim >= 2:
            grid = latent_grid(self.model, self.grid_n, self.grid_span, dims=self.grid_dims)
        else:
            grid = LatentGrid(np.zeros((0, 0, 8, 8), np.float32), np.zeros(0), np.zeros(0), (0, 0), self.grid_span)
        return VAESnapshot(self.steps, self.steps / self.steps_per_epoch, codes, grid,
                           self.history.last("test_recon"), self.history.last("test_kl"),
                           self.history.last("test_elbo"), self.diverged_at)

    def _modules(self) -> dict[str, torch.nn.Module]:
        return {"model": self.model}

    def _extra_state(self) -> dict:
        snaps = {"steps": torch.tensor([s for s, _ in self.snapshots], dtype=torch.int64),
                 "means": torch.as_tensor(np.stack([m for _, m in self.snapshots]))
                 if self.snapshots else torch.zeros(0, len(self.x_test), self.model.latent_dim)}
        return {"config": self.model.config(), "snapshots": snaps}

    def _load_extra_state(self, state: dict) -> None:
        snaps = state.get("snapshots")
        self.snapshots = [] if snaps is None else [
            (int(s), m.numpy().copy()) for s, m in zip(snaps["steps"], snaps["means"])]
        if not self._snapshots or self._snapshots[-1][0] != self.steps:
            self._keep_snapshot(self.steps, self.model)
