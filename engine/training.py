"""The live-training protocol every trainable demo follows, and helpers around it.

A trainer is a plain object (no Streamlit) with

    step(n) -> dict[str, float]   advance n iterations, return the latest metrics
    snapshot() -> Any             what the page draws (small, CPU/numpy)
    state_dict() / load_state_dict(d)
    steps: int                    iterations done so far
    history: History              metric name -> list of (step, value)

Divergence is a result, not a crash: a trainer whose loss becomes non-finite sets
`diverged_at` to the step and further step() calls do nothing.

`TrainerBase` implements that bookkeeping once: a topic trainer writes one `_iteration()`
(one update, returning its metrics) and declares its parts (`_modules()`, `_optimizers()`,
`_extra_state()` / `_load_extra_state()`); the base owns `steps`, `diverged_at`, `history`,
the `step(n)` loop and `state_dict()` / `load_state_dict()`. A saved state never shares a
tensor with the live trainer (optimizer states are deep-copied on save and on load).

`run_for(trainer, max_steps, budget_s)` advances a trainer by at most max_steps iterations
and stops early once budget_s seconds of wall time are spent (docs/ARCHITECTURE.md: budget ticks by
time, not step count). The page's fragment calls it once per tick.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy
from engine.series import thin_older_half


@runtime_checkable
class Trainer(Protocol):
    steps: int
    diverged_at: int | None

    def step(self, n: int = 1) -> dict[str, float]: ...
    def snapshot(self) -> Any: ...
    def state_dict(self) -> dict: ...
    def load_state_dict(self, state: dict) -> None: ...


@dataclass
class History:
    """Metric name -> parallel lists of steps and values (for loss curves).

    Bounded: a metric holds at most MAX_POINTS points. When a log would pass it, the older
    half is thinned to every second point (its first point kept), so the recent MAX_POINTS/2
    points keep full resolution and older ones halve again at each later thinning. A live
    page trains for as long as a student leaves Play on (a worker logs ~40 times a second);
    unbounded lists grew a playing GAN's process by ~1 MB a minute."""
    steps: dict[str, list[int]] = field(default_factory=dict)
    values: dict[str, list[float]] = field(default_factory=dict)
    MAX_POINTS: ClassVar[int] = 10_000

    def log(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            steps = self.steps.setdefault(name, [])
            values = self.values.setdefault(name, [])
            steps.append(int(step))
            values.append(float(value))
            if len(steps) > self.MAX_POINTS:
                thin_older_half(steps, values)

    def last(self, name: str, default: float = math.nan) -> float:
        vals = self.values.get(name)
        return vals[-1] if vals else default

    def as_arrays(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return (np.asarray(self.steps.get(name, []), dtype=np.int64),
                np.asarray(self.values.get(name, []), dtype=np.float64))

    def copy(self) -> "History":
        return History({k: list(v) for k, v in self.steps.items()},
                       {k: list(v) for k, v in self.values.items()})

    def state_dict(self) -> dict:
        return {"steps": {k: list(v) for k, v in self.steps.items()},
                "values": {k: list(v) for k, v in self.values.items()}}

    @classmethod
    def from_state_dict(cls, state: dict) -> "History":
        return cls({k: list(v) for k, v in state["steps"].items()},
                   {k: list(v) for k, v in state["values"].items()})


@dataclass(frozen=True)
class TickResult:
    steps_done: int      # iterations run in this tick
    seconds: float       # wall time spent training in this tick
    metrics: dict        # metrics after the last iteration (empty if none ran)
    diverged_at: int | None


def run_for(trainer: Trainer, max_steps: int, budget_s: float = 0.4,
            chunk: int | None = None, *, stop: Callable[[], bool] | None = None,
            chunk_s: float | None = None) -> TickResult:
    """Advance `trainer` by at most `max_steps` iterations, in chunks, stopping once
    `budget_s` seconds have elapsed (checked between chunks), the run diverged, or
    `stop()` returns True (checked before every chunk: a Pause lands within one chunk).

    With `chunk_s`, chunks are sized by time: the first has `chunk` iterations (1 if not
    given), each next one n = floor(chunk_s / t_step) with t_step the seconds per iteration
    of the chunk before (growing at most 4x per chunk), so a chunk costs about chunk_s."""
    max_steps = max(0, int(max_steps))
    if chunk_s is None:
        chunk = max(1, int(chunk or max(1, max_steps // 20)))
    else:
        chunk = max(1, int(chunk or 1))
    t0 = time.perf_counter()
    done, metrics = 0, {}
    while done < max_steps and trainer.diverged_at is None:
        if stop is not None and stop():
            break
        n = min(chunk, max_steps - done)
        t_chunk = time.perf_counter()
        metrics = trainer.step(n)
        done += n
        now = time.perf_counter()
        if now - t0 >= budget_s:
            break
        if chunk_s is not None:
            t_step = max((now - t_chunk) / n, 1e-6)
            chunk = max(1, min(4 * n, int(chunk_s / t_step)))
    return TickResult(done, time.perf_counter() - t0, metrics, trainer.diverged_at)


def tell_playing(trainer: Any, playing: bool) -> None:
    """Tell a trainer that keeps a `playing` attribute whether it is played live (a costly
    view can then be measured off the training path while it plays); others are left alone."""
    if hasattr(trainer, "playing"):
        trainer.playing = bool(playing)


# --------------------------------------------------------------------------------------
# The trainer base: the protocol's bookkeeping, written once
# --------------------------------------------------------------------------------------

_BOOKKEEPING = ("steps", "diverged_at", "history")


class TrainerBase:
    """Base of every topic trainer: owns `steps`, `diverged_at`, `history`, `step(n)` and the
    state dict. A subclass calls `super().__init__()` first and implements

        _iteration() -> dict[str, float]   one iteration; `self.steps` already counts it
                                            (t = 1, 2, ...: Adam's bias correction uses t)
        snapshot() -> Any                   what the page draws (plain numbers / numpy)

    and declares what its state is made of (each optional):

        _modules() -> {name: nn.Module}            saved as CPU copies of module.state_dict()
        _optimizers() -> {name: Optimizer}         saved as copy.deepcopy(opt.state_dict())
        _extra_state() -> dict                     the rest (RNG states, counters, caches' keys)
        _load_extra_state(state)                   gets a deep copy of those keys back

    `step(n)` runs up to n iterations: steps += 1, metrics = _iteration(); an iteration whose
    metrics hold a NaN/inf (`_diverged(metrics)`, overridable) sets diverged_at = steps and
    ends the run; later calls do nothing. History: with `log_every = None` (default) the last
    metrics of each step(n) call are logged once (`_log`, overridable), with `log_every = k`
    the metrics of every iteration with steps % k == 0. step(n) returns the last non-empty
    metrics of the call.

    State: state_dict() is {module names: state, optimizer names: state, "steps",
    "diverged_at", "history", extra keys}, all copies: training on after a save, or after
    loading the same dict into several trainers, never changes the saved dict (an optimizer's
    own state_dict() holds its live moment tensors, and torch's load_state_dict keeps tensors
    that already sit on the right device: both sides are deep-copied here).

    Snapshots: `cached(key, compute)` returns compute() computed once per trainer state (it
    is forgotten after every iteration and every load, or by `forget_cached()` for a subclass
    that changes its state elsewhere), so a snapshot that costs attacks or a partition is not
    recomputed for every frame drawn between two steps.

    Batching: a trainer that a class server may step together with others of its kind names
    the engine module that batches it (`batched`; live/batching.py states that module's
    protocol); None: it is stepped alone."""

    log_every: int | None = None
    batched: str | None = None

    def __init__(self) -> None:
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()
        self._cache: dict[Any, Any] = {}

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        """compute(), once per trainer state (see the class docstring)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def forget_cached(self) -> None:
        self._cache.clear()

    # ---- what a subclass writes ------------------------------------------------------
    def _iteration(self) -> dict[str, float]:
        raise NotImplementedError(f"{type(self).__name__} must implement _iteration()")

    def snapshot(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement snapshot()")

    def _modules(self) -> dict[str, nn.Module]:
        return {}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {}

    def _extra_state(self) -> dict:
        return {}

    def _load_extra_state(self, state: dict) -> None:
        pass

    def _diverged(self, metrics: dict[str, float]) -> bool:
        """True if this iteration's metrics show a diverged run (default: any NaN/inf)."""
        return not all(math.isfinite(v) for v in metrics.values())

    def _log(self, metrics: dict[str, float]) -> None:
        self.history.log(self.steps, metrics)

    # ---- the protocol ------------------------------------------------------------------
    def step(self, n: int = 1) -> dict[str, float]:
        metrics: dict[str, float] = {}
        every = self.log_every
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            self.steps += 1
            if self._cache:
                self._cache.clear()
            m = self._iteration()
            if not m:
                continue
            metrics = m
            diverged = self._diverged(m)
            if every and self.steps % every == 0:
                self._log(m)
            if diverged:
                self.diverged_at = self.steps
                break
        if not every and metrics:
            self._log(metrics)
        return metrics

    def state_dict(self) -> dict:
        state: dict[str, Any] = {}
        for name, module in self._modules().items():
            state[name] = {k: v.detach().to("cpu", copy=True)
                           for k, v in module.state_dict().items()}
        for name, opt in self._optimizers().items():
            state[name] = copy.deepcopy(opt.state_dict())
        state.update(steps=self.steps, diverged_at=self.diverged_at,
                     history=self.history.state_dict())
        extra = copy.deepcopy(self._extra_state())
        clash = set(extra) & set(state)
        if clash:
            raise KeyError(f"{type(self).__name__}._extra_state() reuses the names {sorted(clash)}")
        state.update(extra)
        return state

    def load_state_dict(self, state: dict) -> None:
        modules, optimizers = self._modules(), self._optimizers()
        for name, module in modules.items():
            module.load_state_dict(state[name])          # copies into the live parameters
        for name, opt in optimizers.items():
            opt.load_state_dict(copy.deepcopy(state[name]))
        self.steps = int(state["steps"])
        self.diverged_at = None if state["diverged_at"] is None else int(state["diverged_at"])
        self.history = History.from_state_dict(state["history"])
        self._cache.clear()
        known = set(modules) | set(optimizers) | set(_BOOKKEEPING)
        self._load_extra_state(copy.deepcopy({k: v for k, v in state.items() if k not in known}))


class TrainerGroup:
    """Several trainers advanced together, for pages that race them on one figure.

    step(n) calls every member's step(n) and returns their metrics prefixed "name/";
    `steps` is the furthest member's count; `diverged_at` is the first member divergence
    (stop="any": the group stops as soon as one member diverges) or, with stop="all", the
    last one once every member has diverged (one diverged racer does not stop the others).
    The state dict is {name: member.state_dict()}; snapshot() is {name: member.snapshot()}."""

    STOPS = ("any", "all")

    def __init__(self, members: dict[str, Trainer], stop: str = "any"):
        if stop not in self.STOPS:
            raise ValueError(f"stop must be one of {self.STOPS}, not {stop!r}")
        if not members:
            raise ValueError("a trainer group needs at least one member")
        self.members, self.stop = dict(members), stop

    @property
    def steps(self) -> int:
        return max(m.steps for m in self.members.values())

    @property
    def diverged_at(self) -> int | None:
        hit = [m.diverged_at for m in self.members.values() if m.diverged_at is not None]
        if self.stop == "any":
            return min(hit) if hit else None
        return max(hit) if len(hit) == len(self.members) else None

    def step(self, n: int = 1) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for name, member in self.members.items():
            metrics.update({f"{name}/{k}": v for k, v in member.step(n).items()})
        return metrics

    def snapshot(self) -> dict[str, Any]:
        return {name: m.snapshot() for name, m in self.members.items()}

    def state_dict(self) -> dict:
        return {name: m.state_dict() for name, m in self.members.items()}

    def load_state_dict(self, state: dict) -> None:
        for name, m in self.members.items():
            m.load_state_dict(state[name])


# --------------------------------------------------------------------------------------
# The reference trainer: a small MLP classifier on 2-D points. Used by the tests of the
# protocol and of the live-training widget; also a template for the topic trainers.
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClassifierSnapshot:
    step: int
    loss: float
    accuracy: float
    grid_x: np.ndarray        # (res,) x-coordinates of the probability grid
    grid_y: np.ndarray        # (res,) y-coordinates
    probability: np.ndarray   # (res, res) P(class 1 | x) on the grid, [iy, ix]
    diverged_at: int | None


class MLPClassifierTrainer(TrainerBase):
    """Full-batch logistic MLP on 2-D points x (n, 2) with labels y in {0, 1}.

    loss = mean BCE(sigmoid(f(x)), y), minimised with plain gradient descent
    w <- w - lr * grad(loss). Deterministic for a given seed on a given device.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, hidden: int = 16, lr: float = 0.5,
                 seed: int = 0, device: str | torch.device | None = None):
        super().__init__()
        self.device = resolve_device(device)
        self.seed, self.lr = int(seed), float(lr)
        self.x = torch.as_tensor(np.asarray(x), dtype=torch.float32, device=self.device)
        self.y = torch.as_tensor(np.asarray(y), dtype=torch.float32, device=self.device)
        g = make_generator(self.seed, "cpu")
        self.model = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        with torch.no_grad():
            for p in self.model.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * (1.0 / math.sqrt(p.shape[-1])))
        self.model.to(self.device)

    def loss(self) -> torch.Tensor:
        logits = self.model(self.x).squeeze(-1)
        return nn.functional.binary_cross_entropy_with_logits(logits, self.y)

    def _iteration(self) -> dict[str, float]:
        self.model.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        with torch.no_grad():
            for p in self.model.parameters():
                p -= self.lr * p.grad
        return {"loss": float(loss.detach())}

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    @torch.no_grad()
    def accuracy(self) -> float:
        pred = (self.model(self.x).squeeze(-1) > 0).float()
        return float((pred == self.y).float().mean())

    @torch.no_grad()
    def snapshot(self, res: int = 40) -> ClassifierSnapshot:
        lo = to_numpy(self.x.min(0).values) - 0.5
        hi = to_numpy(self.x.max(0).values) + 0.5
        gx, gy = np.linspace(lo[0], hi[0], res), np.linspace(lo[1], hi[1], res)
        xx, yy = np.meshgrid(gx, gy)
        grid = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32,
                               device=self.device)
        prob = torch.sigmoid(self.model(grid)).reshape(res, res)
        return ClassifierSnapshot(self.steps, float(self.loss()), self.accuracy(),
                                  gx, gy, to_numpy(prob), self.diverged_at)


class SingleModelTrainer(TrainerBase):
    """A trainer of one model (self.model) by one optimizer (self.opt) drawing its batches
    from one generator (self.gen): its checkpoint holds exactly these three. (Read untyped:
    each subclass keeps its own types for them.)"""

    def _modules(self) -> dict[str, nn.Module]:
        me: Any = self              # each subclass types its own model
        return {"model": me.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        me: Any = self
        return {"opt": me.opt}

    def _extra_state(self) -> dict:
        me: Any = self
        return {"gen": me.gen.get_state()}

    def _load_extra_state(self, state: dict) -> None:
        me: Any = self
        me.gen.set_state(state["gen"])
