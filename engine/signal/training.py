"""Deep MLPs training side by side on the bundled 8x8 digits: what the initialisation and batch
norm do to learning (the live part of the initialization page).

Every net is  x (64 standardised pixels) -> [Linear -> norm -> φ] x depth -> Linear -> 10 logits,
built by engine.nets.mlp with its own init scheme / gain / norm, trained with plain mini-batch
SGD on the same batches:  loss = mean cross-entropy,  W <- W - lr · ∂loss/∂W.
At step 0 (on the first training digits, no update) and every `log_every` steps it records the per-layer gradient norms ‖∂loss/∂W_l‖_F
(l = 1..depth+1): with a too-small init they shrink towards the input layers (vanishing
gradients), with He they stay of one size.

`lr_sweep` trains one net per learning rate for a few steps, with and without batch norm, and
reports the largest rate that still trains (mean loss of the last 20 steps finite and below
`train_fraction` · ln 10, the loss of a uniform guess).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from engine.datasets import digits_split
from engine.device import make_generator, resolve_device, to_numpy
from engine.nets import INITS, mlp
from engine.series import thin_older_half
from engine.training import TrainerBase

N_CLASSES = 10
CHANCE_LOSS = math.log(N_CLASSES)


@dataclass(frozen=True)
class NetSpec:
    """One of the networks: init scheme, its gain (σ_w for "normal"), and the norm layer."""
    init: str
    gain: float = 1.0
    norm: str = "none"

    @property
    def label(self) -> str:
        name = {"normal": f"normal σ_w={self.gain:g}"}.get(self.init, self.init)
        if self.init != "normal" and self.gain != 1.0:
            name += f" ×{self.gain:g}"
        return name + (f" + {self.norm}" if self.norm != "none" else "")


DEFAULT_NETS = (NetSpec("normal", 0.5), NetSpec("xavier_normal"), NetSpec("kaiming_normal"))


@dataclass(frozen=True)
class DeepNetsConfig:
    nets: tuple[NetSpec, ...] = DEFAULT_NETS
    depth: int = 20             # hidden layers
    width: int = 64
    activation: str = "relu"
    lr: float = 0.05
    batch_size: int = 64
    log_every: int = 10         # steps between two gradient-norm records
    seed: int = 0


@dataclass(frozen=True)
class DeepNetsSnapshot:
    step: int
    labels: tuple[str, ...]
    loss_steps: np.ndarray      # (T,)
    losses: np.ndarray          # (n_nets, T) mini-batch loss; NaN once a net diverged
    grad_steps: np.ndarray      # (K,)
    grad_norms: np.ndarray      # (K, n_nets, depth+1) ‖∂loss/∂W_l‖_F, l = 1..depth+1
    test_accuracy: np.ndarray   # (n_nets,) on the held-out digits (eval mode)
    diverged_at: tuple[int | None, ...]


def _standardised_digits(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    train, test = digits_split(0.2, seed=seed)
    xtr, xte = train.images.reshape(len(train.labels), -1), test.images.reshape(len(test.labels), -1)
    mean, std = xtr.mean(0), xtr.std(0)
    std = np.where(std > 0, std, 1.0)
    return (xtr - mean) / std, train.labels, (xte - mean) / std, test.labels


class DeepNetsTrainer(TrainerBase):
    """Trains the nets of `config` on the same mini-batches (trainer protocol). Its loss and
    gradient logs keep at most MAX_LOG entries (the older half thinned past it): a live page
    may play for an hour, and every frame's snapshot carries them."""
    MAX_LOG = 10_000

    def __init__(self, config: DeepNetsConfig = DeepNetsConfig(),
                 device: str | torch.device | None = None):
        for spec in config.nets:
            if spec.init not in INITS:
                raise KeyError(f"unknown init {spec.init!r}; choose one of {sorted(INITS)}")
        super().__init__()
        self.config, self.device = config, resolve_device(device)
        xtr, ytr, xte, yte = _standardised_digits(config.seed)
        as_t = lambda a, dt: torch.as_tensor(a, dtype=dt, device=self.device)  # noqa: E731
        self.x, self.y = as_t(xtr, torch.float32), as_t(ytr, torch.int64)
        self.x_test, self.y_test = as_t(xte, torch.float32), as_t(yte, torch.int64)
        widths = (self.x.shape[1], *[config.width] * config.depth, N_CLASSES)
        self.models = [mlp(widths, config.activation, s.init, s.gain, norm=s.norm,
                           seed=config.seed).to(self.device) for s in config.nets]
        for model in self.models:
            model.train()                 # training mode throughout; test_accuracy restores it
        self._lins = [self._linears(m) for m in self.models]    # walked once, not per step
        self._params = [[p for p in m.parameters()] for m in self.models]
        self.generator = make_generator(config.seed + 1, "cpu")
        self.net_diverged: list[int | None] = [None] * len(self.models)
        self._loss_steps: list[int] = []
        self._losses: list[np.ndarray] = []
        self._grad_steps: list[int] = [0]
        self._grad_norms: list[np.ndarray] = [self._init_grad_norms()]

    def _init_grad_norms(self) -> np.ndarray:
        """(n_nets, depth+1) gradient norms at initialisation, on the first batch_size training
        digits (no update, no draw from the batch generator): what step 0 shows."""
        xb, yb = self.x[:self.config.batch_size], self.y[:self.config.batch_size]
        bns = [m for model in self.models for m in model.modules()
               if isinstance(m, nn.BatchNorm1d)]
        momenta = [bn.momentum for bn in bns]
        for bn in bns:
            bn.momentum = 0.0            # the probe must not move the running statistics
        norms = np.stack([self._gradients(i, xb, yb)[1] for i in range(len(self.models))])
        for bn, momentum in zip(bns, momenta):
            bn.momentum = momentum
        for m in self.models:
            m.zero_grad(set_to_none=True)
        return norms

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.config.nets)

    def _linears(self, model: nn.Module) -> list[nn.Linear]:
        return [m for m in model.modules() if isinstance(m, nn.Linear)]

    def _iteration(self) -> dict[str, float]:
        """One SGD step of every net still training, on one shared mini-batch."""
        idx = torch.randint(len(self.y), (self.config.batch_size,), generator=self.generator)
        xb, yb = self.x[idx.to(self.device)], self.y[idx.to(self.device)]
        record = self.steps % self.config.log_every == 0
        losses, norms = np.full(len(self.models), np.nan), np.full(
            (len(self.models), self.config.depth + 1), np.nan)
        for i in range(len(self.models)):
            if self.net_diverged[i] is None:
                losses[i], norms[i] = self._sgd_step(i, xb, yb, record)
                if not math.isfinite(losses[i]):
                    self.net_diverged[i] = self.steps
        self._loss_steps.append(self.steps)
        self._losses.append(losses)
        if record:
            self._grad_steps.append(self.steps)
            self._grad_norms.append(norms)
        for steps, values in ((self._loss_steps, self._losses),
                              (self._grad_steps, self._grad_norms)):
            if len(steps) > self.MAX_LOG:            # left playing: bounded like History
                thin_older_half(steps, values)
        return {f"loss/{label}": float(v) for label, v in zip(self.labels, losses)}

    def _diverged(self, metrics: dict[str, float]) -> bool:
        """A diverged net stops (NaN loss from then on); the run stops once all have."""
        return all(d is not None for d in self.net_diverged)

    def _gradients(self, i: int, xb: torch.Tensor, yb: torch.Tensor,
                   norms: bool = True) -> tuple[float, np.ndarray | None]:
        """Loss and ‖∂loss/∂W_l‖_F per Linear of net i (only when `norms`: the page keeps
        them every log_every steps), with the gradients left in .grad."""
        model = self.models[i]
        model.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        if not norms:
            return float(loss.detach()), None
        with torch.no_grad():
            norm = torch.stack(torch._foreach_norm([m.weight.grad for m in self._lins[i]]))
        return float(loss.detach()), to_numpy(norm).astype(float)

    def _sgd_step(self, i: int, xb: torch.Tensor, yb: torch.Tensor,
                  record: bool) -> tuple[float, np.ndarray]:
        """theta <- theta - lr * grad for every parameter of net i (one fused call)."""
        loss, norms = self._gradients(i, xb, yb, norms=record)
        if norms is None:
            norms = np.full(self.config.depth + 1, np.nan)
        with torch.no_grad():
            params = [p for p in self._params[i] if p.grad is not None]
            torch._foreach_add_(params, [p.grad for p in params], alpha=-self.config.lr)
        return loss, norms

    @torch.no_grad()
    def test_accuracy(self) -> np.ndarray:
        acc = np.full(len(self.models), np.nan)
        for i, model in enumerate(self.models):
            if self.net_diverged[i] is None:
                model.eval()
                acc[i] = float((model(self.x_test).argmax(1) == self.y_test).float().mean())
                model.train()
        return acc

    def snapshot(self) -> DeepNetsSnapshot:
        n, L = len(self.models), self.config.depth + 1
        losses = np.array(self._losses).T if self._losses else np.zeros((n, 0))
        grads = np.array(self._grad_norms) if self._grad_norms else np.zeros((0, n, L))
        return DeepNetsSnapshot(self.steps, self.labels, np.array(self._loss_steps, np.int64),
                                losses, np.array(self._grad_steps, np.int64), grads,
                                self.test_accuracy(), tuple(self.net_diverged))

    def _modules(self) -> dict[str, nn.Module]:
        return {"models": nn.ModuleList(self.models)}     # shares the nets, keys "i.<name>"

    def _extra_state(self) -> dict:
        return {"net_diverged": list(self.net_diverged),
                "generator": self.generator.get_state(),
                "loss_steps": list(self._loss_steps), "losses": self._losses,
                "grad_steps": list(self._grad_steps), "grad_norms": self._grad_norms}

    def _load_extra_state(self, state: dict) -> None:
        self.net_diverged = list(state["net_diverged"])
        self.generator.set_state(state["generator"])
        self._loss_steps, self._losses = state["loss_steps"], state["losses"]
        self._grad_steps, self._grad_norms = state["grad_steps"], state["grad_norms"]


def final_loss(snapshot: DeepNetsSnapshot, last: int = 20) -> np.ndarray:
    """(n_nets,) mean mini-batch loss over the last `last` steps (NaN for a diverged net)."""
    tail = snapshot.losses[:, -last:]
    return np.where(np.isfinite(tail).all(1), tail.mean(1) if tail.size else np.nan, np.nan)


@dataclass(frozen=True)
class LRSweep:
    lrs: np.ndarray               # (n_lr,)
    labels: tuple[str, ...]       # one per net spec
    final_loss: np.ndarray        # (n_nets, n_lr) NaN = diverged
    trains: np.ndarray            # (n_nets, n_lr) bool: finite and < train_fraction · ln 10
    max_stable_lr: np.ndarray     # (n_nets,) largest lr that trains (NaN: none)
    steps: int
    train_fraction: float = field(default=0.75)


def lr_sweep(lrs: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0),
             nets: tuple[NetSpec, ...] = (NetSpec("kaiming_normal"),
                                          NetSpec("kaiming_normal", norm="batchnorm")),
             depth: int = 10, width: int = 64, activation: str = "relu", steps: int = 60,
             seed: int = 0, train_fraction: float = 0.75,
             device: str | torch.device | None = None) -> LRSweep:
    """Train every net at every learning rate for `steps` SGD steps (same batches)."""
    losses = np.full((len(nets), len(lrs)), np.nan)
    for j, lr in enumerate(lrs):
        tr = DeepNetsTrainer(DeepNetsConfig(tuple(nets), depth, width, activation, float(lr),
                                            log_every=10 ** 9, seed=seed), device)
        tr.step(steps)
        losses[:, j] = final_loss(tr.snapshot())
    return sweep_from_losses(lrs, tuple(n.label for n in nets), losses, steps, train_fraction)


def sweep_from_losses(lrs, labels: tuple[str, ...], losses: np.ndarray, steps: int,
                      train_fraction: float = 0.75) -> LRSweep:
    """The sweep of final losses (n_nets, n_lr), e.g. trained one learning rate at a time:
    a net trains at lr when its loss is finite and < train_fraction · ln 10."""
    losses = np.asarray(losses, float)
    trains = np.isfinite(losses) & (losses < train_fraction * CHANCE_LOSS)
    lr_arr = np.asarray(lrs, float)
    best = np.array([lr_arr[t].max() if t.any() else np.nan for t in trains])
    return LRSweep(lr_arr, tuple(labels), losses, trains, best, int(steps), float(train_fraction))
