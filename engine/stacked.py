"""K copies of one MLP and of its optimizer, stacked so that K trainers step as one.

StackedMLP: per Linear layer W (K, out, in) and b (K, out), leaves with grad; one layer of all
K networks is one batched matmul,

    h_k ← act(h_k W_kᵀ + b_k)   for every member k at once   (torch.baddbmm).

StackedAdam: each member's Adam moments m, v (K, ...), its own step count t_k and learning
rate lr_k (torch.optim.Adam's step, member by member):

    m ← β₁m + (1−β₁)g,   v ← β₂v + (1−β₂)g²,
    p ← p − (lr_k / (1−β₁^t_k)) · m / (√v / √(1−β₂^t_k) + ε)

or plain SGD, p ← p − lr_k·g. Members are independent: the gradient of Σ_k L_k with respect to
member k's weights is ∇L_k. An update touches only the `rows` given (the members that step);
the others keep their weights, moments and step counts.

StackedAdam works on any list of stacked leaves (an MLP's, plus e.g. a class embedding's):
`write_back(k, own, opt)` puts member k's weights into its own parameters `own` (same order)
and its optimizer state into its torch optimizer `opt` (engine/gan/batched.py,
engine/regions/batched.py and engine/diffusion/batched.py use these).
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

ADAM_EPS = 1e-8
BUCKETS = (8, 32, 128)      # the static form's stack sizes: few shapes, so few graph captures


def bucket_size(k: int) -> int:
    """The smallest bucket that holds k members (beyond the last: a multiple of it)."""
    for size in BUCKETS:
        if k <= size:
            return size
    return -(-k // BUCKETS[-1]) * BUCKETS[-1]


def padded(members: list, size: int) -> list:
    """members, then member 0 repeated up to `size` rows (rows that never step)."""
    return list(members) + [members[0]] * (size - len(members))


def linears(net: nn.Module) -> list[nn.Linear]:
    return [m for m in net.modules() if isinstance(m, nn.Linear)]


def mlp_params(net: nn.Module) -> list[torch.Tensor]:
    """net's Linear parameters in stacking order: W₀, b₀, W₁, b₁, ..."""
    return [p for lin in linears(net) for p in (lin.weight, lin.bias)]


def stack(own: list[list[torch.Tensor]]) -> list[torch.Tensor]:
    """Members' parameter lists (same shapes, same order) -> stacked leaves with grad."""
    return [torch.stack([ps[j].detach() for ps in own]).requires_grad_(True)
            for j in range(len(own[0]))]


def optimizer_kind(opt: torch.optim.Optimizer) -> str:
    """ "adam" (no AMSGrad, no weight decay), "sgd" (no momentum), or "other"."""
    group = opt.param_groups[0]
    if type(opt) is torch.optim.Adam and not group.get("amsgrad") and not group.get(
            "weight_decay") and not group.get("maximize"):
        return "adam"
    if type(opt) is torch.optim.SGD and not group.get("momentum") and not group.get(
            "weight_decay") and not group.get("maximize"):
        return "sgd"
    return "other"


def relu_(x: torch.Tensor) -> torch.Tensor:
    """ReLU in place: a layer's output is a fresh tensor that nothing else reads, and its
    backward needs only the result (a third less time for the small stacked nets)."""
    return torch.relu_(x)


def leaky_relu_(x: torch.Tensor, slope: float = 0.2) -> torch.Tensor:
    """LeakyReLU(slope) in place (slope > 0: its backward reads the sign of the result)."""
    return torch.nn.functional.leaky_relu_(x, slope)


def optimizer_reason(opt: torch.optim.Optimizer) -> str | None:
    """Why a trainer with optimizer `opt` cannot join a batch (None: Adam or plain SGD)."""
    return None if optimizer_kind(opt) in ("adam", "sgd") else "the optimizer is not Adam or SGD"


def rows_of(params: list[torch.Tensor], rows: torch.Tensor | None) -> list[torch.Tensor]:
    """The members `rows` of stacked parameters (None: all of them, the leaves themselves)."""
    return list(params) if rows is None else [p[rows] for p in params]


class StackedMLP:
    """Linear layers of K same-shaped networks stacked, with `act` between them (applied to
    each layer's fresh output: it may work in place, as relu_ and leaky_relu_ do)."""

    def __init__(self, nets: list[nn.Module], act: Callable[[torch.Tensor], torch.Tensor]):
        self.act = act
        self.params: list[torch.Tensor] = stack([mlp_params(n) for n in nets])

    def __call__(self, x: torch.Tensor, params: list[torch.Tensor] | None = None) -> torch.Tensor:
        """x (K', B, in) -> (K', B, out) with `params` (W₀, b₀, W₁, b₁, ...; default: all
        members' own)."""
        params = self.params if params is None else params
        last = len(params) // 2 - 1
        for i in range(last + 1):
            w, b = params[2 * i], params[2 * i + 1]
            x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
            if i < last:
                x = self.act(x)
        return x

    def frozen(self, rows: torch.Tensor | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
        """The members `rows` as a function without gradient to their weights."""
        params = [p.detach() for p in rows_of(self.params, rows)]
        return lambda x: self(x, params)


class StackedAdam:
    """The optimizer of every member for the stacked leaves `params` (see the module
    docstring); `own[k]` is member k's own parameter list in the same order, `opts[k]` its
    torch optimizer."""

    def __init__(self, params: list[torch.Tensor], own: list[list[torch.Tensor]],
                 opts: list[torch.optim.Optimizer]):
        self.params = params
        self.kind = optimizer_kind(opts[0])
        group = opts[0].param_groups[0]
        self.b1, self.b2 = (float(b) for b in group.get("betas", (0.9, 0.999)))
        self.eps = float(group.get("eps", ADAM_EPS))
        # the learning rates as torch.optim holds them (Python floats: float64), each rounded
        # once to the weights' dtype where an update uses it, as torch.optim's step does
        self.lr = torch.tensor([float(opt.param_groups[0]["lr"]) for opt in opts],
                               dtype=torch.float64)
        self.t = [_step_count(opt) for opt in opts]
        self.m, self.v = ([torch.stack([_state(opt, ps[j], key) for ps, opt in zip(own, opts)])
                           for j in range(len(params))]
                          for key in ("exp_avg", "exp_avg_sq"))

    def step(self, grads: list[torch.Tensor], rows: torch.Tensor | None,
             active: list[int]) -> None:
        """One update of the members `active` (their indices; `rows` the same as a tensor,
        or None when they are all the members)."""
        for k in active:
            self.t[k] += 1
        sel = rows if rows is not None else slice(None)
        with torch.no_grad():
            device = self.params[0].device       # the host's lr and t, moved once per step
            dtype = self.params[0].dtype
            if self.kind == "sgd":
                lr = self.lr[sel].to(device, dtype)
                for p, g in zip(self.params, grads):
                    p[sel] -= lr.view((-1,) + (1,) * (p.dim() - 1)) * g
                return
            t = torch.tensor([float(self.t[k]) for k in active], dtype=torch.float64)
            c1 = (self.lr[sel] / (1 - self.b1 ** t)).to(device, dtype)
            c2 = (1 - self.b2 ** t).sqrt().to(device, dtype)
            for j, (p, g) in enumerate(zip(self.params, grads)):
                shape = (-1,) + (1,) * (p.dim() - 1)
                m, v = self.m[j][sel], self.v[j][sel]     # views when rows is None, else copies
                m.lerp_(g, 1 - self.b1)
                v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
                if rows is not None:
                    self.m[j][rows], self.v[j][rows] = m, v
                denom = (v.sqrt() / c2.view(shape)).add_(self.eps)
                p[sel] -= c1.view(shape) * m / denom

    def coefficients(self, active: list[int], device: torch.device | str = "cpu"
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        """Count one more update for the members `active` and return, per row, the static
        update's c1 = lr/(1−β₁^t) and c2 = √(1−β₂^t) (rows not active: c1 = 0, c2 = 1)."""
        rows = len(self.t)
        c1, c2 = torch.zeros(rows, dtype=torch.float64), torch.ones(rows, dtype=torch.float64)
        for k in active:
            self.t[k] += 1
            c1[k] = float(self.lr[k]) if self.kind == "sgd" else \
                float(self.lr[k]) / (1 - self.b1 ** self.t[k])
            c2[k] = 1.0 if self.kind == "sgd" else (1 - self.b2 ** self.t[k]) ** 0.5
        dtype = self.params[0].dtype
        return c1.to(device, dtype), c2.to(device, dtype)

    def masked_step(self, grads: list[torch.Tensor], mask: torch.Tensor, c1: torch.Tensor,
                    c2: torch.Tensor) -> None:
        """The static update (module docstring) of every row, kept where `mask` (bool, one
        per row) is on: no shape depends on who steps, no value goes to the host."""
        with torch.no_grad():
            for j, (p, g) in enumerate(zip(self.params, grads)):
                shape = (-1,) + (1,) * (p.dim() - 1)
                keep = mask.view(shape)
                if self.kind == "sgd":
                    p.copy_(torch.where(keep, p - c1.view(shape) * g, p))
                    continue
                m = torch.where(keep, torch.lerp(self.m[j], g, 1 - self.b1), self.m[j])
                v = torch.where(keep, self.v[j] * self.b2 + (1 - self.b2) * g * g, self.v[j])
                self.m[j].copy_(m)
                self.v[j].copy_(v)
                update = c1.view(shape) * m / ((v.sqrt() / c2.view(shape)) + self.eps)
                p.copy_(torch.where(keep, p - update, p))

    def write_back(self, k: int, own: list[torch.Tensor], opt: torch.optim.Optimizer) -> None:
        """Member k's weights into its parameters `own` and, once it has stepped, its Adam
        state into `opt`."""
        with torch.no_grad():
            for p, s in zip(own, self.params):
                p.copy_(s[k])
        if self.t[k] == 0 or self.kind != "adam":
            return
        for j, p in enumerate(own):
            state = opt.state[p]
            state["step"] = torch.tensor(float(self.t[k]))
            state["exp_avg"] = self.m[j][k].clone()
            state["exp_avg_sq"] = self.v[j][k].clone()


def _step_count(opt: torch.optim.Optimizer) -> int:
    """The optimizer's step count t (0 before its first step)."""
    for state in opt.state.values():
        if "step" in state:
            return int(float(state["step"]))
    return 0


def _state(opt: torch.optim.Optimizer, p: torch.Tensor, key: str) -> torch.Tensor:
    return opt.state.get(p, {}).get(key, torch.zeros_like(p)).detach()


class Batch:
    """What every batch of trainers shares: the members, checked to agree on `batch_key` and
    each batchable (`unbatchable_reason` None), and the active members of a step."""

    def __init__(self, members: list, batch_key: Callable, unbatchable_reason: Callable):
        if not members:
            raise ValueError("a batch needs at least one member")
        if len({batch_key(t) for t in members}) > 1:
            raise ValueError("members differ in shape or settings (batch_key)")
        for t in members:
            why = unbatchable_reason(t)
            if why:
                raise ValueError(f"cannot batch this trainer: {why}")
        self.members = list(members)


    def __len__(self) -> int:
        return len(self.members)

    def active(self, mask: list[bool] | None) -> list[int]:
        """The members a step trains: those the mask leaves on that have not diverged."""
        return [k for k, t in enumerate(self.members)
                if (mask is None or mask[k]) and t.diverged_at is None]

    def rows(self, on: list[int]) -> torch.Tensor | None:
        """`on` as row indices into the stacks; None when it is every member (no copies)."""
        return None if len(on) == len(self.members) else torch.tensor(on)
