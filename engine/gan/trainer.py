"""GANTrainer: alternating D / G updates on 2-D points, with the remedies against mode collapse,
and what the page draws from it (critic grid, generator field, snapshot).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from engine.datasets import ToyData
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy
from engine.gan.losses import LOSSES, gradient_penalty, r1_penalty
from engine.gan.measures import Coverage, mode_coverage
from engine.gan.nets import OPTIMIZERS, UNROLL_UPDATES, Discriminator, _unroll_state, mlp
from engine.gan.targets import data_box
from engine.series import thin_older_half
from engine.training import TrainerBase


@dataclass(frozen=True)
class CriticGrid:
    xs: np.ndarray       # (res,)
    ys: np.ndarray       # (res,)
    values: np.ndarray   # (res, res) [iy, ix]: σ(D) for classifier losses, D for critics
    kind: str            # "D(x) = P(real)" or "critic D(x)"


@dataclass(frozen=True)
class GANSnapshot:
    step: int
    real: np.ndarray            # (m, 2) real points (fixed subset)
    fake: np.ndarray            # (m, 2) generated points (fixed latent codes)
    arrows_at: np.ndarray       # (a, 2) fakes that get an arrow
    arrows: np.ndarray          # (a, 2) −∇_x loss_G at those fakes (direction they move)
    critic: CriticGrid
    coverage: Coverage | None   # None when the target has no modes (moons, spiral, upload)
    diverged_at: int | None


@dataclass
class _Eval:
    """The coverage checks: iteration and samples per mode. Bounded like History: past
    MAX_CHECKS the older half is thinned (a GAN left playing checks ~4 times a second)."""
    steps: list[int] = field(default_factory=list)
    hists: list[list[int]] = field(default_factory=list)
    MAX_CHECKS: ClassVar[int] = 4_000

    def add(self, step: int, hist: list[int]) -> None:
        if self.steps and self.steps[-1] == step:
            self.hists[-1] = hist
            return
        self.steps.append(step)
        self.hists.append(hist)
        if len(self.steps) > self.MAX_CHECKS:
            thin_older_half(self.steps, self.hists)


class GANTrainer(TrainerBase):
    """A GAN on 2-D points following engine.training's trainer protocol.

    One iteration = `d_steps` updates of D on  L_D(r, f) [+ λ·GP] [+ r1_gamma·R1]  followed by
    `g_steps` updates of G on  L_G(f), with r = D(x_real), f = D(G(z)), z ~ N(0, I_latent_dim),
    the pair (L_D, L_G) from LOSSES[loss]. Remedies (keyword arguments):
      unrolled_steps k: G's loss is taken against D_k, D after k differentiable updates on
        L_D by D's optimizer rule (Adam from opt_d's moments; `unroll_optimizer`, `unroll_lr`
        override it, default lr_d) (Metz et al. 2016; gradients flow through the unroll);
      r1_gamma γ: + (γ/2) E‖∇D(x_real)‖²;  gp_lambda λ for "wgan-gp";  clip c for "wgan-clip";
      spectral_norm: W / σ(W) in every layer of D;  pack: PacGAN;  minibatch_std.
    Every `eval_every` iterations the mode coverage of G on `eval_n` fixed latent codes is logged.
    `dtype` (float32; float64 for exact comparisons, engine/gan/batched.py) is the dtype of the
    weights, the data and every draw.

    On engine.training.TrainerBase: `_iteration` is one iteration (D's then G's updates);
    step(n) logs and returns the mean L_D, L_G over the call's updates, and ends at the first
    iteration whose losses are NaN/inf (diverged_at = that iteration). step(n, part="d"/"g")
    runs only D's or G's updates (the page's Step D / Step G) without counting an iteration.
    State: "G", "D", "opt_g", "opt_d" (deep-copied), steps, diverged_at, history, "evals"
    (the mode history) and "gen" (the sampling RNG).
    """

    batched = "engine.gan.batched"   # a class steps its trainers as one batch
    dtype: torch.dtype = torch.float32      # a trainer pickled before it had a dtype

    def __init__(self, target: ToyData, loss: str = "nonsaturating",
                 g_hidden: tuple[int, ...] = (128, 128), d_hidden: tuple[int, ...] = (128, 128),
                 latent_dim: int = 2, lr_g: float = 1e-3, lr_d: float = 1e-3,
                 optimizer: str = "adam", betas: tuple[float, float] = (0.5, 0.999),
                 d_steps: int = 1, g_steps: int = 1, batch_size: int = 256, seed: int = 0,
                 device: str | torch.device | None = None, *, unrolled_steps: int = 0,
                 unroll_lr: float | None = None, unroll_optimizer: str | None = None,
                 r1_gamma: float = 0.0,
                 spectral_norm: bool = False, minibatch_std: bool = False, pack: int = 1,
                 gp_lambda: float = 10.0, clip: float = 0.01, eval_every: int = 50,
                 eval_n: int = 2000, n_sigma: float = 3.0, dtype: torch.dtype = torch.float32):
        if loss not in LOSSES:
            raise KeyError(f"unknown loss {loss!r}; choose one of {list(LOSSES)}")
        if optimizer not in OPTIMIZERS:
            raise KeyError(f"unknown optimizer {optimizer!r}; choose one of {list(OPTIMIZERS)}")
        if min(d_steps, g_steps, batch_size, latent_dim, pack) < 1 or unrolled_steps < 0:
            raise ValueError("d_steps, g_steps, batch_size, latent_dim and pack must be >= 1")
        super().__init__()
        self.device = resolve_device(device)
        self.dtype = dtype
        self.target = target
        self.loss_name, self.loss = loss, LOSSES[loss]
        self.latent_dim, self.batch_size = int(latent_dim), int(batch_size)
        self.d_steps, self.g_steps = int(d_steps), int(g_steps)
        self.unrolled_steps, self.r1_gamma = int(unrolled_steps), float(r1_gamma)
        self.unroll_optimizer = unroll_optimizer or optimizer
        if self.unroll_optimizer not in UNROLL_UPDATES:
            raise KeyError(f"unknown unroll optimizer {self.unroll_optimizer!r}; choose one of "
                           f"{list(UNROLL_UPDATES)}")
        self.unroll_lr = float(unroll_lr if unroll_lr is not None else lr_d)
        self.betas = (float(betas[0]), float(betas[1]))
        self.gp_lambda, self.clip = float(gp_lambda), float(clip)
        self.eval_every, self.n_sigma = int(eval_every), float(n_sigma)
        self.seed = int(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.G = mlp(self.latent_dim, tuple(g_hidden), 2, nn.ReLU)
            self.D = Discriminator(tuple(d_hidden), pack, minibatch_std, spectral_norm)
        self.G.to(self.device, self.dtype)
        self.D.to(self.device, self.dtype)
        self.opt_g = OPTIMIZERS[optimizer](self.G.parameters(), lr_g, betas)
        self.opt_d = OPTIMIZERS[optimizer](self.D.parameters(), lr_d, betas)
        self.gen = make_generator(self.seed + 1, self.device)
        self.real = torch.as_tensor(target.points, dtype=self.dtype, device=self.device)
        g_eval = make_generator(self.seed + 2, "cpu")
        self.z_eval = torch.randn(int(eval_n), self.latent_dim, generator=g_eval).to(self.device,
                                                                                    self.dtype)
        rng = numpy_rng(self.seed + 3)
        self.show_idx = rng.choice(len(target.points), min(600, len(target.points)), replace=False)
        self.box = data_box(target.points)
        self.evals = _Eval()
        self._ld: list[torch.Tensor] = []     # this step(n) call's L_D and L_G values
        self._lg: list[torch.Tensor] = []
        self.pretrained: dict | None = None   # set by load_trainer: where the state came from
        self._evaluate()

    # ---- sampling -------------------------------------------------------------------
    def _real_batch(self) -> torch.Tensor:
        idx = torch.randint(len(self.real), (self.batch_size,), generator=self.gen,
                            device=self.device)
        return self.real[idx]

    def _z(self, n: int | None = None) -> torch.Tensor:
        return torch.randn(n or self.batch_size, self.latent_dim, generator=self.gen,
                           device=self.device, dtype=self.dtype)

    @torch.no_grad()
    def sample(self, n: int = 1000, seed: int | None = None) -> np.ndarray:
        """n generated points (n, 2); with `seed`, from fresh seeded latent codes."""
        if seed is None:
            z = self._z(n)
        else:
            z = torch.randn(n, self.latent_dim, generator=make_generator(seed, "cpu"))
        return to_numpy(self.G(z.to(self.device, self.dtype)))

    # ---- updates ----------------------------------------------------------------------
    def _d_objective(self, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
        if self.D.rowwise:                    # one forward for both: the same r and f
            r, f = self.D(torch.cat([real, fake])).split([len(real), len(fake)])
        else:
            r, f = self.D(real), self.D(fake)
        loss = self.loss.d_loss(r, f)
        if self.loss_name == "wgan-gp":
            m = min(len(real), len(fake))
            eps = torch.rand(m, 1, generator=self.gen, device=self.device, dtype=self.dtype)
            loss = loss + self.gp_lambda * gradient_penalty(self.D, real[:m], fake[:m], eps)
        if self.r1_gamma > 0:
            loss = loss + self.r1_gamma * r1_penalty(self.D, real)
        return loss

    def d_step(self) -> float:
        """One update of D on a fresh real batch and fresh fakes; returns L_D."""
        real = self._real_batch()
        with torch.no_grad():
            fake = self.G(self._z())
        self.opt_d.zero_grad(set_to_none=True)
        loss = self._d_objective(real, fake)
        loss.backward()
        self.opt_d.step()
        if self.loss_name == "wgan-clip":
            with torch.no_grad():
                for p in self.D.parameters():
                    p.clamp_(-self.clip, self.clip)
        return loss.detach()

    def unrolled_params(self, fake: torch.Tensor) -> dict[str, torch.Tensor]:
        """D's parameters after `unrolled_steps` differentiable updates on L_D by D's own
        optimizer rule (UNROLL_UPDATES[unroll_optimizer], from opt_d's current state, as Metz
        et al. 2016 unroll Adam), each on a fresh real batch and the same `fake` = G(z), which
        enters with its graph: G's gradient then sees how D would react to it. D itself is not
        changed."""
        named = list(self.D.named_parameters())
        shapes = [p.shape for _, p in named]
        sizes = [p.numel() for _, p in named]
        state = _unroll_state(self.opt_d, [p for _, p in named])
        flat = torch.cat([p.detach().reshape(-1) for _, p in named]).requires_grad_(True)
        update = UNROLL_UPDATES[self.unroll_optimizer]
        # one forward on [real; fake] unless D mixes rows (minibatch std, packing)
        joint = not self.D.minibatch_std and self.D.pack == 1

        def as_params(vec: torch.Tensor) -> dict[str, torch.Tensor]:
            return {n: v.view(s) for (n, _), v, s in zip(named, vec.split(sizes), shapes)}

        for _ in range(self.unrolled_steps):
            real, params = self._real_batch(), as_params(flat)
            if joint:
                r, f = functional_call(self.D, params, (torch.cat([real, fake]),)).split(
                    [len(real), len(fake)])
            else:
                r = functional_call(self.D, params, (real,))
                f = functional_call(self.D, params, (fake,))
            (grad,) = torch.autograd.grad(self.loss.d_loss(r, f), flat, create_graph=True)
            flat, state = update(flat, grad, state, self.unroll_lr, self.betas)
        return as_params(flat)

    def g_step(self) -> float:
        """One update of G on fresh latent codes; returns L_G."""
        fake = self.G(self._z())
        if self.unrolled_steps:
            f = functional_call(self.D, self.unrolled_params(fake), (fake,))
        else:
            f = self.D(fake)
        loss = self.loss.g_loss(f)
        grads = torch.autograd.grad(loss, list(self.G.parameters()))
        for p, g in zip(self.G.parameters(), grads):
            p.grad = g
        self.opt_g.step()
        return loss.detach()

    def _updates(self, part: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        ld = [self.d_step() for _ in range(self.d_steps)] if part in ("both", "d") else []
        lg = [self.g_step() for _ in range(self.g_steps)] if part in ("both", "g") else []
        self._ld += ld
        self._lg += lg
        return ld, lg

    def _iteration(self) -> dict[str, float]:
        ld, lg = self._updates("both")
        if self.steps % self.eval_every == 0:
            self._evaluate()
        return {"loss_d": float(ld[-1]) if len(ld) == 1 else float(torch.stack(ld).mean()),
                "loss_g": float(lg[-1]) if len(lg) == 1 else float(torch.stack(lg).mean())}

    def _call_means(self) -> dict[str, float]:
        """Mean L_D and L_G over the current call's updates (float32, as torch.stack().mean())."""
        metrics: dict[str, float] = {}
        if self._ld:
            metrics["loss_d"] = float(torch.stack(self._ld).mean())
        if self._lg:
            metrics["loss_g"] = float(torch.stack(self._lg).mean())
        return metrics

    def _log(self, metrics: dict[str, float]) -> None:
        self.history.log(self.steps, self._call_means())

    def step(self, n: int = 1, part: str = "both") -> dict[str, float]:
        """n iterations; part="d" or "g" runs only D's or G's updates (the page's Step D/G)."""
        if part not in ("both", "d", "g"):
            raise ValueError(f"part must be 'both', 'd' or 'g', not {part!r}")
        self._ld, self._lg = [], []
        if part == "both":
            super().step(n)
            return self._call_means()
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            self._updates(part)
        metrics = self._call_means()
        if metrics:
            if self._diverged(metrics):
                self.diverged_at = self.steps
            self.history.log(self.steps, metrics)
        self._evaluate()
        return metrics

    # ---- measurements -------------------------------------------------------------------
    @torch.no_grad()
    def coverage(self) -> Coverage | None:
        t = self.target
        if t.centers is None or t.std is None:
            return None
        fake = to_numpy(self.G(self.z_eval))
        if not np.isfinite(fake).all():
            return None
        return mode_coverage(fake, t.centers, t.std, self.n_sigma)

    def _evaluate(self) -> None:
        cov = self.coverage()
        if cov is None:
            return
        self.history.log(self.steps, {"modes": cov.modes_covered,
                                      "high_quality": cov.high_quality_fraction,
                                      "reverse_kl": cov.reverse_kl})
        self.evals.add(self.steps, cov.histogram.tolist())

    def mode_history(self) -> tuple[np.ndarray, np.ndarray]:
        """(steps (T,), histograms (T, k)) of the mode counts on the fixed eval codes."""
        k = 0 if self.target.centers is None else len(self.target.centers)
        return (np.asarray(self.evals.steps, dtype=np.int64),
                np.asarray(self.evals.hists, dtype=np.int64).reshape(len(self.evals.steps), k))

    def _grid(self, box, res: int) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
        x0, x1, y0, y1 = box
        xs, ys = np.linspace(x0, x1, res), np.linspace(y0, y1, res)
        xx, yy = np.meshgrid(xs, ys)
        pts = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=self.dtype,
                              device=self.device)
        return xs, ys, pts

    @torch.no_grad()
    def critic_grid(self, box=None, res: int = 50) -> CriticGrid:
        """D on a res×res grid over `box`: σ(D) = P(real) for classifier losses, raw D for
        critics (Wasserstein, hinge)."""
        xs, ys, pts = self._grid(box or self.box, res)
        ctx = self.G(self.z_eval[: self.batch_size])
        v = self.D.pointwise(pts, ctx)
        if not self.loss.critic:
            return CriticGrid(xs, ys, to_numpy(torch.sigmoid(v)).reshape(res, res),
                              "D(x) = P(real)")
        return CriticGrid(xs, ys, to_numpy(v).reshape(res, res), "critic D(x)")

    def fake_gradients(self, x: np.ndarray | torch.Tensor) -> np.ndarray:
        """−∇_x L_G(D(x)) at each point x (n, 2): the direction a fake sample at x is pushed
        (the gradient reaching G's output; pointwise D, see Discriminator.pointwise)."""
        pts = torch.as_tensor(np.asarray(x), dtype=self.dtype, device=self.device)
        pts = pts.detach().requires_grad_(True)
        with torch.no_grad():
            ctx = self.G(self.z_eval[: self.batch_size])
        f = self.D.pointwise(pts, ctx)
        # per-sample loss: L_G is a mean, so scale by n to get each sample's own gradient
        (grad,) = torch.autograd.grad(self.loss.g_loss(f) * len(pts), pts)
        return to_numpy(-grad)


    def snapshot(self, res: int = 40, n_arrows: int = 60) -> GANSnapshot:
        with torch.no_grad():
            fake = to_numpy(self.G(self.z_eval[:600]))
        finite = np.isfinite(fake).all()
        at = fake[:n_arrows] if finite else np.zeros((0, 2), np.float32)
        arrows = self.fake_gradients(at) if finite and len(at) else np.zeros((0, 2), np.float32)
        cov = self.coverage() if finite else None
        return GANSnapshot(self.steps, self.target.points[self.show_idx], fake, at, arrows,
                           self.critic_grid(res=res), cov, self.diverged_at)

    # ---- state (TrainerBase.state_dict / load_state_dict) ----------------------------
    def _modules(self) -> dict[str, nn.Module]:
        return {"G": self.G, "D": self.D}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt_g": self.opt_g, "opt_d": self.opt_d}

    def _extra_state(self) -> dict:
        return {"evals": {"steps": list(self.evals.steps), "hists": list(self.evals.hists)},
                "gen": self.gen.get_state()}

    def _load_extra_state(self, state: dict) -> None:
        self.evals = _Eval(list(state["evals"]["steps"]), list(state["evals"]["hists"]))
        if "gen" in state:
            self.gen.set_state(state["gen"])
