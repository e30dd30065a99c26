"""Adversarial examples on a real CNN: FGSM, PGD (L-inf and L2, untargeted and targeted),
accuracy-vs-eps curves, and the linear explanation.

Pixels x live in [0, 1] (scikit-learn's 8x8 digits divided by 16). L(x, y) is the
cross-entropy of the model's logits at x against the label y. s = +1 for an untargeted
attack (y = the true class: climb its loss), s = -1 for a targeted one (y = the target
class: descend its loss). clip keeps every pixel in [lo, hi] = [0, 1].

FGSM (Goodfellow et al. 2015), one step:
    x_adv = clip(x + s * eps * sign(grad_x L(x, y)))
PGD (Madry et al. 2018), `steps` steps of size alpha from x_0 (x, or x + uniform noise in
the ball when random_start), each followed by the projection P onto the eps-ball around x
and the pixel range:
    linf:  x_{k+1} = P(x_k + s * alpha * sign(g_k))          ||x_adv - x||_inf <= eps
    l2:    x_{k+1} = P(x_k + s * alpha * g_k / ||g_k||_2)     ||x_adv - x||_2   <= eps
with g_k = grad_x L(x_k, y). Clipping to [0, 1] after the ball projection never leaves the
ball (each pixel moves towards the interval that holds x_i).
Robust accuracy at eps:  acc(eps) = mean_i [argmax_c f(attack(x_i, y_i, eps))_c == y_i].
Linear explanation: for a score w^T x the perturbation eta = eps * sign(w), with
||eta||_inf = eps, changes the score by w^T eta = eps * ||w||_1, which grows like
eps * E|w_i| * d with the dimension d although no pixel moves by more than eps.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.device import make_generator, to_numpy

PIXEL_RANGE = (0.0, 1.0)
NORMS = ("linf", "l2")


def _as_tensor(x, device: torch.device | None = None) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(x, np.float32) if not isinstance(x, torch.Tensor) else x)
    return t.to(device) if device is not None else t


def _model_device(model: nn.Module) -> torch.device:
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def _batched(x: torch.Tensor) -> torch.Tensor:
    """(n, H, W) or (n, 1, H, W) -> (n, 1, H, W)."""
    return x[:, None] if x.dim() == 3 else x


def input_gradient(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """grad_x of sum_i L(x_i, y_i) (the sum keeps each example's gradient its own)."""
    with torch.enable_grad():                      # also when called under torch.no_grad()
        x = x.detach().requires_grad_(True)
        loss = F.cross_entropy(model(x), y, reduction="sum")
        (grad,) = torch.autograd.grad(loss, x)
    return grad


def _per_example_norm(t: torch.Tensor) -> torch.Tensor:
    return t.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *([1] * (t.dim() - 1)))


def project(x_adv: torch.Tensor, x: torch.Tensor, eps: float, norm: str = "linf",
            lo: float = PIXEL_RANGE[0], hi: float = PIXEL_RANGE[1]) -> torch.Tensor:
    """P: the nearest point of the eps-ball around x (per example), then clip to [lo, hi]."""
    delta = x_adv - x
    if norm == "linf":
        delta = delta.clamp(-eps, eps)
    elif norm == "l2":
        delta = delta * (eps / _per_example_norm(delta)).clamp(max=1.0)
    else:
        raise ValueError(f"norm must be one of {NORMS}, not {norm!r}")
    return (x + delta).clamp(lo, hi)


def fgsm(model: nn.Module, x: torch.Tensor, y: torch.Tensor, eps: float, targeted: bool = False,
         lo: float = PIXEL_RANGE[0], hi: float = PIXEL_RANGE[1]) -> torch.Tensor:
    """x_adv = clip(x + s * eps * sign(grad_x L(x, y))), s = -1 if targeted (y = target)."""
    x = _batched(x)
    if eps <= 0:
        return x.detach().clone()
    s = -1.0 if targeted else 1.0
    return (x + s * eps * input_gradient(model, x, y).sign()).clamp(lo, hi).detach()


def _random_start(x: torch.Tensor, eps: float, norm: str, seed: int) -> torch.Tensor:
    g = make_generator(seed, x.device)
    if norm == "linf":
        return x + (torch.rand(x.shape, generator=g, device=x.device) * 2 - 1) * eps
    direction = torch.randn(x.shape, generator=g, device=x.device)
    radius = torch.rand((x.shape[0],) + (1,) * (x.dim() - 1), generator=g, device=x.device)
    return x + direction / _per_example_norm(direction) * eps * radius


def default_alpha(eps: float, steps: int) -> float:
    """Madry et al.'s rule of thumb: alpha = 2.5 eps / steps (the path can cross the ball)."""
    return 2.5 * eps / max(1, steps)


def pgd(model: nn.Module, x: torch.Tensor, y: torch.Tensor, eps: float, alpha: float | None = None,
        steps: int = 10, norm: str = "linf", random_start: bool = True, seed: int = 0,
        targeted: bool = False, lo: float = PIXEL_RANGE[0], hi: float = PIXEL_RANGE[1]) -> torch.Tensor:
    """Projected gradient descent on the loss (ascent when untargeted); see the module
    docstring. alpha defaults to 2.5 eps / steps."""
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, not {norm!r}")
    x = _batched(x).detach()
    if eps <= 0 or steps <= 0:
        return x.clone()
    alpha = default_alpha(eps, steps) if alpha is None else float(alpha)
    s = -1.0 if targeted else 1.0
    x_adv = project(_random_start(x, eps, norm, seed), x, eps, norm, lo, hi) if random_start \
        else x.clone()
    for _ in range(int(steps)):
        g = input_gradient(model, x_adv, y)
        step = g.sign() if norm == "linf" else g / _per_example_norm(g)
        x_adv = project(x_adv + s * alpha * step, x, eps, norm, lo, hi).detach()
    return x_adv


# --------------------------------------------------------------------------------------
# Attack settings as data, and a registry name -> attack
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AttackSpec:
    kind: str = "pgd"            # a key of ATTACKS
    steps: int = 10              # PGD iterations (FGSM: one step)
    norm: str = "linf"           # "linf" | "l2" (FGSM: linf only)
    random_start: bool = True
    alpha_ratio: float = 0.25    # alpha = alpha_ratio * eps (PGD)
    seed: int = 0

    def __post_init__(self):
        if self.kind not in ATTACKS:
            raise ValueError(f"attack must be one of {sorted(ATTACKS)}, not {self.kind!r}")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, not {self.norm!r}")
        if self.kind == "fgsm" and self.norm != "linf":
            raise ValueError("FGSM is an L-inf attack (sign of the gradient)")


def _run_fgsm(model, x, y, eps, spec: AttackSpec, targeted: bool):
    return fgsm(model, x, y, eps, targeted=targeted)


def _run_pgd(model, x, y, eps, spec: AttackSpec, targeted: bool):
    return pgd(model, x, y, eps, alpha=spec.alpha_ratio * eps, steps=spec.steps, norm=spec.norm,
               random_start=spec.random_start, seed=spec.seed, targeted=targeted)


ATTACKS: dict[str, Callable[..., torch.Tensor]] = {"fgsm": _run_fgsm, "pgd": _run_pgd}


def attack(model: nn.Module, x: torch.Tensor, y: torch.Tensor, eps: float,
           spec: AttackSpec = AttackSpec(), targeted: bool = False) -> torch.Tensor:
    """Run the attack `spec` names (model in eval mode, no parameter gradients kept)."""
    was_training = model.training
    model.eval()
    try:
        return ATTACKS[spec.kind](model, x, y, float(eps), spec, targeted)
    finally:
        model.train(was_training)


@torch.no_grad()
def predict(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(_batched(x)).argmax(1)


# --------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RobustnessCurve:
    eps: np.ndarray          # (k,)
    accuracy: np.ndarray     # (k,) accuracy under the attack at each eps
    attack: str              # e.g. "PGD-10 (linf)"
    n: int                   # number of test examples


def attack_label(spec: AttackSpec) -> str:
    if spec.kind == "fgsm":
        return "FGSM"
    return f"PGD-{spec.steps}" + (" (L2)" if spec.norm == "l2" else "")


def robust_accuracy(model: nn.Module, images, labels, eps_list: Sequence[float],
                    spec: AttackSpec = AttackSpec()) -> RobustnessCurve:
    """acc(eps) for every eps in eps_list on (images, labels) (pixels in [0, 1])."""
    dev = _model_device(model)
    x = _batched(_as_tensor(images, dev))
    y = torch.as_tensor(np.asarray(labels), dtype=torch.long, device=dev)
    acc = []
    for eps in eps_list:
        x_adv = attack(model, x, y, float(eps), spec)
        acc.append(float((predict(model, x_adv) == y).float().mean()))
    return RobustnessCurve(np.asarray(eps_list, np.float64), np.asarray(acc, np.float64),
                           attack_label(spec), int(len(y)))


@dataclass(frozen=True)
class AttackResult:
    image: np.ndarray            # (H, W) the clean image
    adversarial: np.ndarray      # (H, W) the attacked image
    perturbation: np.ndarray     # (H, W) adversarial - image
    probs_before: np.ndarray     # (10,) softmax at the clean image
    probs_after: np.ndarray      # (10,) softmax at the attacked image
    label: int                   # true class
    target: int | None           # the class a targeted attack aims at
    pred_before: int
    pred_after: int
    eps: float
    linf: float                  # ||perturbation||_inf
    l2: float                    # ||perturbation||_2

    @property
    def success(self) -> bool:
        """Untargeted: the prediction is no longer the label; targeted: it is the target."""
        if self.target is None:
            return self.pred_after != self.label
        return self.pred_after == self.target


def attack_one(model: nn.Module, image, label: int, eps: float, spec: AttackSpec = AttackSpec(),
               target: int | None = None) -> AttackResult:
    """Attack one (H, W) image; with target set, push it towards that class."""
    dev = _model_device(model)
    x = _as_tensor(image, dev)[None, None]
    yy = torch.tensor([label if target is None else target], device=dev)
    x_adv = attack(model, x, yy, eps, spec, targeted=target is not None)
    with torch.no_grad():
        p = torch.softmax(model(torch.cat([x, x_adv])), 1)
    delta = (x_adv - x)[0, 0]
    return AttackResult(to_numpy(x[0, 0]), to_numpy(x_adv[0, 0]), to_numpy(delta),
                        to_numpy(p[0]), to_numpy(p[1]), int(label), target,
                        int(p[0].argmax()), int(p[1].argmax()), float(eps),
                        float(delta.abs().max()), float(delta.norm()))


@dataclass(frozen=True)
class TargetedSweep:
    target: int
    eps: np.ndarray             # (k,)
    success_rate: np.ndarray    # (k,) share of images (not already of class target) that the
                                # attack sends to `target`
    n: int


def targeted_success(model: nn.Module, images, labels, target: int, eps_list: Sequence[float],
                     spec: AttackSpec = AttackSpec()) -> TargetedSweep:
    """How often a targeted attack reaches `target`, over the images of the other classes."""
    dev = _model_device(model)
    keep = np.asarray(labels) != target
    x = _batched(_as_tensor(np.asarray(images)[keep], dev))
    t = torch.full((x.shape[0],), int(target), dtype=torch.long, device=dev)
    rate = []
    for eps in eps_list:
        x_adv = attack(model, x, t, float(eps), spec, targeted=True)
        rate.append(float((predict(model, x_adv) == t).float().mean()))
    return TargetedSweep(int(target), np.asarray(eps_list, np.float64), np.asarray(rate),
                         int(x.shape[0]))


# --------------------------------------------------------------------------------------
# The linear explanation
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinearEffect:
    dims: np.ndarray            # (k,) input dimensions d
    eps: float
    worst_change: np.ndarray    # (k,) eps * ||w||_1: the score change of eta = eps sign(w)
    random_change: np.ndarray   # (k,) |w^T eta| for a random-sign eta of the same size (mean)
    expected: np.ndarray        # (k,) eps * d * E|w_i| = eps * d * sqrt(2/pi) sigma_w
    score_std: np.ndarray       # (k,) std of w^T x over random inputs x in [0, 1]^d


def worst_linear_perturbation(w: torch.Tensor, eps: float) -> tuple[torch.Tensor, float]:
    """argmax_{||eta||_inf <= eps} w^T eta = eps * sign(w) (a corner of the cube: a linear
    function peaks at a vertex), and its value eps * ||w||_1."""
    eta = eps * torch.sign(w)
    return eta, float(w @ eta)


def linear_model_effect(dims: Sequence[int] | int, eps: float, sigma_w: float = 1.0,
                        seed: int = 0, random_draws: int = 64) -> LinearEffect:
    """For w ~ N(0, sigma_w^2 I_d): the worst-case change eps * ||w||_1 of the score w^T x
    under ||eta||_inf <= eps, a random sign perturbation's |w^T eta| (~ eps * sigma_w * sqrt(d)),
    the closed form eps * d * sigma_w * sqrt(2/pi), and the spread of w^T x over x ~ U[0,1]^d
    (sigma_w * sqrt(d/12)) for scale."""
    dims = np.atleast_1d(np.asarray(dims, dtype=np.int64))
    g = make_generator(seed, "cpu")
    worst, rand, spread = [], [], []
    for d in dims:
        w = torch.randn(int(d), generator=g, dtype=torch.float64) * sigma_w
        worst.append(worst_linear_perturbation(w, eps)[1])
        signs = torch.randint(0, 2, (random_draws, int(d)), generator=g, dtype=torch.float64) * 2 - 1
        rand.append(float((eps * signs @ w).abs().mean()))
        xs = torch.rand(random_draws, int(d), generator=g, dtype=torch.float64)
        spread.append(float((xs @ w).std()))
    expected = eps * dims * sigma_w * math.sqrt(2 / math.pi)
    return LinearEffect(dims, float(eps), np.asarray(worst), np.asarray(rand),
                        expected.astype(np.float64), np.asarray(spread))
