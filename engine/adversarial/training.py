"""Adversarial training (Madry et al. 2018) of the digits CNN, and the shipped snapshots.

The min-max problem
    min_theta  E_(x,y) [ max_{||delta||_inf <= eps} L(f_theta(x + delta), y) ]
is trained by approximating the inner max with an attack (PGD-k or FGSM, engine.adversarial)
on each minibatch and taking an Adam step on the loss at the attacked inputs:
    x_adv = attack(f_theta, x, y, eps);   theta <- Adam(theta, grad_theta L(f_theta(x_adv), y))
with a cosine learning rate lr_t = lr * (1 + cos(pi t / total_steps)) / 2. train_eps = 0 (or
attack "none") is ordinary training: the same loop, clean inputs.

The network is engine.conv's digits CNN (8x8 input, conv 8-16-16, linear 10), trained on the
seeded 80/20 split of scikit-learn's digits (engine.datasets.digits_split(0.2, 0)); the test
part (359 digits) is the held-out set every curve on the page is measured on.
"""
from __future__ import annotations

import copy
import math
import os
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine import weights
from engine.adversarial import AttackSpec, RobustnessCurve, attack, robust_accuracy
from engine.conv import DIGITS_LAYERS, digits_cnn
from engine.datasets import Digits, digits_split
from engine.device import numpy_rng, resolve_device
from engine.training import TrainerBase

WEIGHTS_DIR = Path(__file__).resolve().parents[2] / "assets" / "weights"
SNAPSHOTS = {"standard": WEIGHTS_DIR / "adversarial_standard.pt",
             "robust": WEIGHTS_DIR / "adversarial_robust.pt"}
SPLIT_SEED = 0
TEST_FRACTION = 0.2
MODEL_CONFIG = {"name": "digits_cnn", "in_shape": [1, 8, 8], "classes": 10,
                "layers": [[s.kind, s.kernel, s.stride, s.padding, s.dilation, s.channels]
                           for s in DIGITS_LAYERS]}
TRAIN_ATTACKS = ("pgd", "fgsm", "none")


def heldout_digits() -> Digits:
    """The fixed held-out digits (359 images) every accuracy on the page is measured on."""
    return digits_split(TEST_FRACTION, SPLIT_SEED)[1]


def training_digits() -> Digits:
    return digits_split(TEST_FRACTION, SPLIT_SEED)[0]


@dataclass(frozen=True)
class AdvTrainConfig:
    train_eps: float = 0.15       # radius of the L-inf ball the inner attack searches
    attack: str = "pgd"           # "pgd" | "fgsm" | "none" (ordinary training)
    attack_steps: int = 7         # PGD-k inside training (alpha = eps / 4)
    lr: float = 3e-3              # Adam, cosine decay to 0 at total_steps
    batch: int = 64
    total_steps: int = 920        # 40 epochs of 23 minibatches
    seed: int = 0                 # init, minibatch order, random starts

    def __post_init__(self):
        if self.attack not in TRAIN_ATTACKS:
            raise ValueError(f"attack must be one of {TRAIN_ATTACKS}, not {self.attack!r}")
        if not self.train_eps >= 0:
            raise ValueError("train_eps must be >= 0")
        if self.batch < 1 or self.total_steps < 1 or self.attack_steps < 1:
            raise ValueError("batch, total_steps and attack_steps must be >= 1")

    @property
    def adversarial(self) -> bool:
        return self.attack != "none" and self.train_eps > 0

    def inner_spec(self, step: int) -> AttackSpec:
        return AttackSpec("fgsm") if self.attack == "fgsm" else \
            AttackSpec("pgd", steps=self.attack_steps, seed=self.seed * 1_000_003 + step)


@dataclass(frozen=True)
class AdvSnapshot:
    step: int
    loss: float                   # training loss at the (attacked) minibatch, last step
    clean_accuracy: float         # on the test split
    curve: RobustnessCurve        # PGD accuracy vs eps on the test split
    lr: float
    diverged_at: int | None
    curve_step: int = -1          # the step the curve and clean accuracy were measured at

    def __post_init__(self):
        if self.curve_step < 0:
            object.__setattr__(self, "curve_step", self.step)


CURVE_NICE = 10    # the background curve's thread priority (Linux nice; training's is 0)


class AdversarialTrainer(TrainerBase):
    """The trainer protocol of engine/training.py around the min-max loop above.

    The snapshot's robustness curve costs len(eval_eps) PGD attacks on 359 digits (~0.4 s on
    one core), far more than a training step. With `curve_every_s` = None it is measured at
    every new state (once per state). With a number, a snapshot taken while the trainer is
    playing (`playing`, set by the live runtime) does not wait for it: it carries the last
    measured curve, labelled with its step (AdvSnapshot.curve_step), and a background thread
    measures a copy of the model as it is now, at most once per `curve_every_s` seconds
    after the previous one ended; a snapshot while not playing (paused, Step, finished)
    measures its own state."""

    def __init__(self, config: AdvTrainConfig = AdvTrainConfig(), train: Digits | None = None,
                 test: Digits | None = None, eval_eps=(0.0, 0.05, 0.1, 0.125, 0.15, 0.2),
                 eval_attack: AttackSpec = AttackSpec("pgd", steps=10),
                 device: str | torch.device | None = "cpu", curve_every_s: float | None = None):
        super().__init__()
        self.curve_every_s = None if curve_every_s is None else float(curve_every_s)
        self._measured: AdvSnapshot | None = None    # the latest curve measured, any step
        self._measuring: threading.Thread | None = None
        self._measure_started = -math.inf
        self.playing = False          # told by the live runtime (engine.training.tell_playing)
        self.config, self.device = config, resolve_device(device)
        train = train if train is not None else training_digits()
        self.test = test if test is not None else heldout_digits()
        self.eval_eps, self.eval_attack = tuple(float(e) for e in eval_eps), eval_attack
        self.x = torch.as_tensor(train.images[:, None], device=self.device)
        self.y = torch.as_tensor(train.labels, device=self.device)
        self.model = digits_cnn(config.seed).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.rng = numpy_rng(config.seed)
        self.order = np.zeros(0, np.int64)
        self.cursor = 0
        self.last_loss = math.nan

    def learning_rate(self, step: int) -> float:
        """lr_t = lr (1 + cos(pi min(t, T) / T)) / 2."""
        t = min(step, self.config.total_steps) / self.config.total_steps
        return self.config.lr * 0.5 * (1.0 + math.cos(math.pi * t))

    def _next_batch(self) -> torch.Tensor:
        if self.cursor >= len(self.order):
            self.order, self.cursor = self.rng.permutation(len(self.y)), 0
        idx = self.order[self.cursor:self.cursor + self.config.batch]
        self.cursor += self.config.batch
        return torch.as_tensor(idx, device=self.device)

    def _iteration(self) -> dict[str, float]:
        """Minibatch t = steps - 1 (0-based): attack it, one Adam step at lr_t."""
        cfg, t = self.config, self.steps - 1
        idx = self._next_batch()
        x, y = self.x[idx], self.y[idx]
        if cfg.adversarial:
            x = attack(self.model, x, y, cfg.train_eps, cfg.inner_spec(t))
        for group in self.opt.param_groups:
            group["lr"] = self.learning_rate(t)
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.last_loss = float(loss.detach())
        return {"loss": self.last_loss,
                "batch_accuracy": float((logits.argmax(1) == y).float().mean())}

    def snapshot(self) -> AdvSnapshot:
        """Clean and PGD accuracy on the test split (once per trainer state: the curve costs
        len(eval_eps) attacks); with curve_every_s, see the class docstring."""
        if self.curve_every_s is None or not self.playing or self._measured is None:
            snap = self.cached("snapshot", lambda: self._measure(self.model, self.steps))
            self._measured = snap
            return snap
        self._measure_later()
        done = self._measured
        return replace(done, step=self.steps, loss=self.last_loss,
                       lr=self.learning_rate(self.steps), diverged_at=self.diverged_at)

    def _measure_later(self) -> None:
        """Start measuring a copy of the model in a background thread, unless one runs, the
        last started less than curve_every_s ago, or this step is measured already."""
        now = time.perf_counter()
        if not threading.main_thread().is_alive():   # the interpreter is exiting
            return
        if (self._measuring is not None and self._measuring.is_alive()) or \
                now - self._measure_started < self.curve_every_s or \
                self._measured.curve_step == self.steps:
            return
        model, step = copy.deepcopy(self.model), self.steps

        def run() -> None:
            if hasattr(os, "setpriority"):         # Linux: per thread; yields to training
                try:
                    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), CURVE_NICE)
                except OSError:
                    pass
            snap = self._measure(model, step)
            if self._measured is None or snap.curve_step > self._measured.curve_step:
                self._measured = snap
            self._measure_started = time.perf_counter()   # the pause counts from the end

        self._measure_started = now
        # daemon=False, said explicitly (a thread inherits the flag of the one starting it, and
        # Streamlit's script threads are daemons): the interpreter joins it at exit instead of
        # killing it inside a torch op, which aborts the process
        self._measuring = threading.Thread(target=run, name="dlplay-adv-curve", daemon=False)
        self._measuring.start()

    def wait_for_curve(self, timeout: float | None = None) -> None:
        """Block until a background curve measurement (if any) is done (tests, benchmarks)."""
        if self._measuring is not None:
            self._measuring.join(timeout)

    def _measure(self, model: nn.Module, step: int) -> AdvSnapshot:
        model.eval()
        curve = robust_accuracy(model, self.test.images, self.test.labels,
                                self.eval_eps, self.eval_attack)
        clean = curve.accuracy[0] if self.eval_eps and self.eval_eps[0] == 0 else \
            robust_accuracy(model, self.test.images, self.test.labels, [0.0]).accuracy[0]
        return AdvSnapshot(step, self.last_loss, float(clean), curve,
                           self.learning_rate(step), self.diverged_at, step)

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"optimizer": self.opt}

    def _extra_state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "order": self.order, "cursor": self.cursor,
                "last_loss": self.last_loss}

    def _load_extra_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.order, self.cursor = np.asarray(state["order"]), int(state["cursor"])
        self.last_loss = float(state["last_loss"])
        self._measured = None                      # a loaded state is measured afresh


# --------------------------------------------------------------------------------------
# The shipped snapshots, through the shared weights format
# --------------------------------------------------------------------------------------

def save_model(path: str | Path, model: nn.Module, meta: dict) -> Path:
    return weights.save(path, MODEL_CONFIG, model.state_dict(), meta)


def model_from_weights(w: weights.Weights, device: str | torch.device = "cpu") -> nn.Sequential:
    """Build the digits CNN described by w.model_config and load w.state into it (eval mode)."""
    if not weights.configs_equal(w.model_config, MODEL_CONFIG):
        raise weights.StaleWeightsError(f"{w.path} describes {w.model_config}, not the digits "
                                        f"CNN {MODEL_CONFIG}: {weights.REBUILD_HINT}")
    model = digits_cnn(0).to(resolve_device(device))
    model.load_state_dict(w.state)
    return model.eval()


def load_snapshot(name: str, device: str | torch.device = "cpu") -> tuple[nn.Sequential, dict]:
    """The shipped "standard" or "robust" CNN and its meta (recipe, measured accuracies)."""
    if name not in SNAPSHOTS:
        raise KeyError(f"unknown snapshot {name!r}; choose one of {sorted(SNAPSHOTS)}")
    w = weights.load(SNAPSHOTS[name], device, expect_config=MODEL_CONFIG)
    return model_from_weights(w, device), w.meta


def config_meta(config: AdvTrainConfig) -> dict:
    return asdict(config)
