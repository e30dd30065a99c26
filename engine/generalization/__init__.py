"""Generalization and regularization: an MLP classifier whose train and validation curves
split, and the regularizers that close the gap.

Data. A 2-D toy set from engine.datasets (few points) or the 8x8 digits, cut into a training
and a validation set drawn from the same distribution. `label_noise` = f replaces the labels
of a fraction f of ALL points (train and validation alike: the task itself is noisy) by a
different class drawn uniformly; `random_labels` replaces every TRAINING label by a uniform
random class (Zhang et al. 2017) and keeps the true validation labels, so validation
accuracy measures what was learned about the real task.

Model. An MLP  h_0 = x,  h_l = drop(relu(W_l h_{l-1} + b_l)),  logits = W_L h_{L-1} + b_L,
with all parameters in one flat vector theta (the weights are views of it).
Dropout (inverted): drop(h) = h * m / (1 - p), m_i ~ Bernoulli(1 - p) in training and
drop(h) = h in evaluation, so E[drop(h)] = h.

Objective and updates (full batch, g = grad of the objective):
    objective = CE(logits, y) + (l2 / 2) * ||theta||^2          (coupled L2: g = grad CE + l2 * theta)
    theta <- theta * (1 - lr * weight_decay) - lr * u(g)        (decoupled decay, Loshchilov & Hutter)
with u from OPTIMIZERS: sgd u = g; momentum v <- beta v + g, u = v; adam
m <- b1 m + (1-b1) g, v <- b2 v + (1-b2) g^2, u = (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps).
Adam + weight_decay is torch.optim.AdamW step for step. Both penalties act on every
parameter (weights and biases), as torch's weight_decay does.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch.nn import functional as F

from engine.datasets import DATASETS, digits_split, make_dataset
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.training import TrainerBase, TrainerGroup

DIGITS = "digits"
DATASET_NAMES = ("two_moons", "circles", "spiral", DIGITS)
DIGITS_SPLIT_SEED = 0    # the fixed train/validation cut of the digits (1438 / 359)


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SplitData:
    x_train: np.ndarray      # (n_train, d) float32
    y_train: np.ndarray      # (n_train,) int64: the labels the network is trained on
    x_val: np.ndarray        # (n_val, d)
    y_val: np.ndarray        # (n_val,) int64
    clean_train: np.ndarray  # (n_train,) the labels before noise / randomization
    n_classes: int


def flip_labels(labels: np.ndarray, fraction: float, n_classes: int,
                rng: np.random.Generator) -> np.ndarray:
    """A copy of `labels` where round(fraction * n) positions, chosen at random, get a
    different class, uniform among the other n_classes - 1."""
    out = labels.copy()
    k = int(round(float(np.clip(fraction, 0.0, 1.0)) * len(labels)))
    idx = rng.choice(len(labels), size=k, replace=False)
    out[idx] = (labels[idx] + rng.integers(1, n_classes, size=k)) % n_classes
    return out


def make_split(dataset: str = "two_moons", n_train: int = 60, n_val: int = 500,
               noise: float = 0.25, label_noise: float = 0.0, random_labels: bool = False,
               seed: int = 0) -> SplitData:
    """Training and validation sets of `dataset` (a 2-D generator name or "digits")."""
    rng = numpy_rng(seed + 7919)
    if dataset == DIGITS:
        tr, va = digits_split(0.2, DIGITS_SPLIT_SEED)
        pick = numpy_rng(seed).permutation(len(tr.labels))[:min(int(n_train), len(tr.labels))]
        x_tr, y_tr = tr.images[pick].reshape(len(pick), -1), tr.labels[pick]
        x_va, y_va = va.images.reshape(len(va.labels), -1), va.labels
        x_va, y_va = x_va[:min(int(n_val), len(y_va))], y_va[:min(int(n_val), len(y_va))]
        n_classes = 10
    else:
        if dataset not in DATASETS:
            raise KeyError(f"unknown dataset {dataset!r}; choose one of {DATASET_NAMES}")
        d = make_dataset(dataset, int(n_train) + int(n_val), seed=seed, noise=noise)
        x_tr, x_va = d.points[:n_train], d.points[n_train:]
        y_tr, y_va = d.labels[:n_train], d.labels[n_train:]
        n_classes = int(d.labels.max()) + 1
    clean = y_tr.copy()
    if label_noise > 0:
        noisy = flip_labels(np.concatenate([y_tr, y_va]), label_noise, n_classes, rng)
        y_tr, y_va = noisy[:len(y_tr)], noisy[len(y_tr):]
    if random_labels:
        y_tr = rng.integers(0, n_classes, size=len(y_tr))
    return SplitData(np.ascontiguousarray(x_tr, np.float32), y_tr.astype(np.int64),
                     np.ascontiguousarray(x_va, np.float32), y_va.astype(np.int64),
                     clean.astype(np.int64), n_classes)


# --------------------------------------------------------------------------------------
# Model: an MLP on one flat parameter vector, with inverted dropout
# --------------------------------------------------------------------------------------

def dropout(h: torch.Tensor, p: float, training: bool,
            generator: torch.Generator | None = None) -> torch.Tensor:
    """Inverted dropout: h * m / (1 - p) with m ~ Bernoulli(1 - p) when training, else h."""
    if not training or p <= 0.0:
        return h
    keep = torch.rand(h.shape, generator=generator, device=h.device) >= p
    return h * keep / (1.0 - p)


class MLP:
    """sizes = (d_in, hidden..., n_classes); ReLU hidden layers, dropout p after each.
    theta (flat, requires grad) holds [W_1, b_1, W_2, b_2, ...]; W_l has shape (out, in).
    Init: W ~ N(0, 2 / fan_in) (He), b = 0, drawn from `seed`."""

    def __init__(self, sizes: tuple[int, ...], p: float = 0.0, seed: int = 0,
                 device: str | torch.device | None = None):
        self.sizes, self.p = tuple(int(s) for s in sizes), float(p)
        self.device = resolve_device(device)
        self.shapes = [(b, a) for a, b in zip(self.sizes[:-1], self.sizes[1:])]
        g = make_generator(seed, "cpu")
        parts = []
        for out, inp in self.shapes:
            parts += [torch.randn(out * inp, generator=g) * math.sqrt(2.0 / inp), torch.zeros(out)]
        self.theta = torch.cat(parts).to(self.device).requires_grad_(True)
        self.training = False

    def layers(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(W_l, b_l) as views of theta."""
        out, o = [], 0
        for rows, cols in self.shapes:
            w = self.theta[o:o + rows * cols].view(rows, cols)
            o += rows * cols
            out.append((w, self.theta[o:o + rows]))
            o += rows
        return out

    def __call__(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        layers = self.layers()
        h = x
        for w, b in layers[:-1]:
            h = dropout(torch.relu(F.linear(h, w, b)), self.p, self.training, generator)
        w, b = layers[-1]
        return F.linear(h, w, b)

    def weight_norm(self) -> float:
        """||theta||_2 over all parameters (the quantity both penalties shrink)."""
        return float(self.theta.detach().norm())


@dataclass(frozen=True)
class DecisionGrid:
    grid_x: np.ndarray       # (res,)
    grid_y: np.ndarray       # (res,)
    probability: np.ndarray  # (res, res) P(class 1 | x) at (grid_x[ix], grid_y[iy]), [iy, ix]
    label: np.ndarray        # (res, res) int: argmax class


@torch.no_grad()
def decision_grid(model: MLP, box: tuple[float, float, float, float], res: int = 60) -> DecisionGrid:
    """The model (evaluation mode, no dropout) on a res x res grid over
    box = (x_min, x_max, y_min, y_max), in one batch: softmax probabilities."""
    x0, x1, y0, y1 = map(float, box)
    gx, gy = np.linspace(x0, x1, int(res)), np.linspace(y0, y1, int(res))
    xx, yy = np.meshgrid(gx, gy)
    pts = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32,
                          device=model.device)
    training, model.training = model.training, False
    prob = torch.softmax(model(pts), -1)
    model.training = training
    prob = to_numpy(prob).reshape(int(res), int(res), -1)
    return DecisionGrid(gx, gy, prob[..., min(1, prob.shape[-1] - 1)].astype(np.float32),
                        prob.argmax(-1))


# --------------------------------------------------------------------------------------
# Update rules on the flat vector (registry)
# --------------------------------------------------------------------------------------

def sgd_update(g: torch.Tensor, state: dict, t: int, **_) -> torch.Tensor:
    """u = g."""
    return g


def momentum_update(g: torch.Tensor, state: dict, t: int, beta: float = 0.9, **_) -> torch.Tensor:
    """Heavy ball (PyTorch form): v <- beta v + g, u = v."""
    v = state.setdefault("v", torch.zeros_like(g))
    return v.mul_(beta).add_(g)


def adam_update(g: torch.Tensor, state: dict, t: int, betas: tuple[float, float] = (0.9, 0.999),
                eps: float = 1e-8, **_) -> torch.Tensor:
    """m <- b1 m + (1-b1) g, v <- b2 v + (1-b2) g^2, u = m_hat / (sqrt(v_hat) + eps)."""
    b1, b2 = betas
    m = state.setdefault("m", torch.zeros_like(g))
    v = state.setdefault("v", torch.zeros_like(g))
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    denom = (v.sqrt() / math.sqrt(1 - b2 ** t)).add_(eps)
    return (m / (1 - b1 ** t)).div_(denom)


OPTIMIZERS: dict[str, Callable[..., torch.Tensor]] = {
    "sgd": sgd_update,
    "momentum": momentum_update,
    "adam": adam_update,
}


# --------------------------------------------------------------------------------------
# The trainer
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrainConfig:
    dataset: str = "two_moons"
    n_train: int = 60
    n_val: int = 500
    noise: float = 0.25          # geometric noise of the 2-D generator
    label_noise: float = 0.0
    random_labels: bool = False
    width: int = 128
    depth: int = 2
    dropout: float = 0.0
    optimizer: str = "adam"
    lr: float = 0.01
    l2: float = 0.0              # coupled: (l2 / 2) ||theta||^2 added to the loss
    weight_decay: float = 0.0    # decoupled: theta <- theta (1 - lr * weight_decay)
    patience: int = 0            # early stopping: evaluations without a better val loss (0: off)
    log_every: int = 10


@dataclass(frozen=True)
class GeneralizationSnapshot:
    step: int
    steps: np.ndarray           # (k,) logged iterations
    train_loss: np.ndarray      # (k,) cross-entropy on the training set (no penalty, no dropout)
    val_loss: np.ndarray
    train_acc: np.ndarray
    val_acc: np.ndarray
    weight_norm: np.ndarray     # (k,) ||theta||
    best_step: int | None       # iteration of the lowest validation loss so far
    stop_step: int | None       # where early stopping with `patience` stops (None: not yet/off)
    diverged_at: int | None


class GeneralizationTrainer(TrainerBase):
    """Full-batch training of an MLP on SplitData with the regularizers of TrainConfig.

    Every `log_every` steps (and at step 0) it evaluates the model without dropout on the
    whole training and validation sets and logs train_loss, val_loss, train_acc, val_acc and
    weight_norm. It tracks the best validation loss (best_step, and a copy of theta there)
    and the early-stopping step: the first evaluation after `patience` evaluations without
    improvement. Training goes on past it, so the page shows what stopping avoided."""

    def __init__(self, config: TrainConfig = TrainConfig(), seed: int = 0,
                 device: str | torch.device | None = None, data: SplitData | None = None):
        if config.optimizer not in OPTIMIZERS:
            raise KeyError(f"unknown optimizer {config.optimizer!r}; choose one of {sorted(OPTIMIZERS)}")
        if not 0.0 <= config.dropout < 1.0:
            raise ValueError("dropout p must be in [0, 1)")
        super().__init__()
        self.log_every = int(config.log_every)
        self.config, self.seed = config, int(seed)
        self.device = resolve_device(device)
        self.data = data or make_split(config.dataset, config.n_train, config.n_val, config.noise,
                                       config.label_noise, config.random_labels, self.seed)
        d_in = self.data.x_train.shape[1]
        sizes = (d_in, *([int(config.width)] * int(config.depth)), self.data.n_classes)
        self.model = MLP(sizes, config.dropout, self.seed, self.device)
        as_t = lambda a: torch.as_tensor(a, device=self.device)   # noqa: E731
        self.x, self.y = as_t(self.data.x_train), as_t(self.data.y_train)
        self.x_val, self.y_val = as_t(self.data.x_val), as_t(self.data.y_val)
        self.update = OPTIMIZERS[config.optimizer]
        self.opt_state: dict[str, torch.Tensor] = {}
        self.gen = make_generator(self.seed + 1, self.device)
        self.best_step: int | None = None
        self.best_val = math.inf
        self.best_theta = self.model.theta.detach().clone()
        self.stop_step: int | None = None
        self._since_best = 0
        self._log(self._evaluate())

    def objective(self) -> torch.Tensor:
        """CE on the training set (dropout on) + (l2 / 2) ||theta||^2."""
        self.model.training = True
        loss = F.cross_entropy(self.model(self.x, self.gen), self.y)
        if self.config.l2:
            loss = loss + 0.5 * self.config.l2 * self.model.theta.pow(2).sum()
        return loss

    def _iteration(self) -> dict[str, float]:
        """One update; every log_every-th returns the evaluation (the base logs it)."""
        cfg, theta = self.config, self.model.theta
        loss = self.objective()
        theta.grad = None
        loss.backward()
        with torch.no_grad():
            u = self.update(theta.grad, self.opt_state, self.steps)
            if cfg.weight_decay:
                theta.mul_(1.0 - cfg.lr * cfg.weight_decay)
            theta.sub_(u, alpha=cfg.lr)
        return self._evaluate() if self.steps % self.log_every == 0 else {}

    def _diverged(self, metrics: dict[str, float]) -> bool:
        return not (math.isfinite(metrics["train_loss"]) and math.isfinite(metrics["weight_norm"]))

    def step(self, n: int = 1) -> dict[str, float]:
        """n updates; returns the last evaluation of this call, else the latest logged one."""
        return super().step(n) or self.latest()

    def latest(self) -> dict[str, float]:
        return {k: self.history.last(k) for k in self.history.values}

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Losses and accuracies without dropout, and ||theta||."""
        self.model.training = False
        out = {}
        for split, x, y in (("train", self.x, self.y), ("val", self.x_val, self.y_val)):
            logits = self.model(x)
            out[f"{split}_loss"] = float(F.cross_entropy(logits, y))
            out[f"{split}_acc"] = float((logits.argmax(-1) == y).float().mean())
        out["weight_norm"] = self.model.weight_norm()
        return out

    def _evaluate(self) -> dict[str, float]:
        """evaluate(), and the best-validation / early-stopping bookkeeping."""
        m = self.evaluate()
        if m["val_loss"] < self.best_val:
            self.best_val, self.best_step, self._since_best = m["val_loss"], self.steps, 0
            self.best_theta = self.model.theta.detach().clone()
        else:
            self._since_best += 1
            if self.config.patience and self.stop_step is None and self._since_best >= self.config.patience:
                self.stop_step = self.steps
        return m


    @torch.no_grad()
    def best_model(self) -> MLP:
        """A copy of the model with the weights of the best validation loss."""
        m = copy.copy(self.model)
        m.theta = self.best_theta.clone()
        m.training = False
        return m

    def snapshot(self) -> GeneralizationSnapshot:
        arr = lambda k: self.history.as_arrays(k)[1]   # noqa: E731
        return GeneralizationSnapshot(
            self.steps, self.history.as_arrays("val_loss")[0], arr("train_loss"), arr("val_loss"),
            arr("train_acc"), arr("val_acc"), arr("weight_norm"), self.best_step, self.stop_step,
            self.diverged_at)

    def _extra_state(self) -> dict:
        return {"theta": self.model.theta.detach().cpu(),
                "opt_state": {k: v.detach().cpu() for k, v in self.opt_state.items()},
                "gen": self.gen.get_state(), "best": (self.best_step, self.best_val),
                "best_theta": self.best_theta.cpu(), "stop": (self.stop_step, self._since_best)}

    def _load_extra_state(self, state: dict) -> None:
        with torch.no_grad():
            self.model.theta.copy_(state["theta"].to(self.device))
        self.opt_state = {k: v.to(self.device) for k, v in state["opt_state"].items()}
        self.gen.set_state(state["gen"])
        self.best_step, self.best_val = state["best"]
        self.best_theta = state["best_theta"].to(self.device)
        self.stop_step, self._since_best = state["stop"]


class PairTrainer(TrainerGroup):
    """Several GeneralizationTrainers advanced together (one step each per step): the page
    compares them on one figure (real vs random labels, Adam + L2 vs AdamW). The pair stops
    when the first of them diverges."""

    def __init__(self, trainers: dict[str, GeneralizationTrainer]):
        super().__init__(trainers, stop="any")

    @property
    def trainers(self) -> dict[str, GeneralizationTrainer]:
        return self.members

    def snapshot(self) -> dict[str, GeneralizationSnapshot]:
        return super().snapshot()
