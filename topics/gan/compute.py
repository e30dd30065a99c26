"""The GAN page's settings table and its computations (topics/gan/page.py): the widget ->
GANTrainer mapping (ENGINE_KWARGS / NETWORKS, used both ways), STATE, trained GANs, the
Dirac-GAN runs, and the measurements the claims read (each also shown on the page). Shared by
the views and the claims."""
from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np

from engine.gan import (LIVE_DEFAULTS, LIVE_TARGET, LOSSES, OPTIMIZERS, TARGETS, GANTrainer,
                        dirac_gan, discriminator_vs_critic, generator_loss_curves,
                        make_target)
from ui.state import Control, StateTable
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
UPLOAD = "your points (CSV)"
STEPS_PER_FRAME = 50
FRAME_INTERVAL_S = 0.25   # ask for up to 4 redraws/s (the frame itself takes ~0.2 s here)
LRS = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
WIDTHS = [8, 16, 32, 64, 128, 256]
STDS = [0.02, 0.03, 0.05, 0.07, 0.1]
R1S = [0.0, 0.1, 1.0, 10.0]
GPS = [0.1, 1.0, 10.0]
G_LOSS_AT = [0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99]   # verdicts the G-losses tab can mark
CLAIM_SEEDS = (0, 1)      # training claims hold on both seeds (worst case)
# the Dirac-GAN tab offers the losses whose equilibrium is (θ, ψ) = (0, 0), each with what it
# does there (measured in the claims below); LSGAN's D(0) = 0 cannot score the real point 1,
# and WGAN-GP's penalty pins |ψ| = 1: neither has (0, 0) as its equilibrium
DIRAC_LOSSES = {
    "minimax": "Minimax: simultaneous updates spiral out (the equilibrium is a centre and each "
               "explicit step moves outward); R1 damps the rotation and converges.",
    "nonsaturating": "Non-saturating: −log σ(f) pushes θ harder when ψθ < 0, which adds "
                     "damping: the run converges slowly even without a penalty; R1 converges "
                     "much faster.",
    "hinge": "Hinge: the linear G loss keeps the rotation undamped: the run circles at about "
             "its start distance; R1 converges.",
    "wgan-clip": "WGAN with weight clipping: ψ is kept in [−1, 1], which caps the critic's "
                 "slope but does not damp the rotation: even with several critic steps per "
                 "generator step θ keeps oscillating around 0.",
}


def _fmt_lr(v: float) -> str:
    return f"{v:g}"


# One mapping from widgets to GANTrainer keyword arguments, used both ways (trainer_kwargs
# builds the trainer from settings; settings_of turns an engine configuration into settings).
ENGINE_KWARGS = {"gan_loss": "loss", "gan_opt": "optimizer", "gan_lr_g": "lr_g",
                 "gan_lr_d": "lr_d", "gan_d_steps": "d_steps", "gan_latent": "latent_dim",
                 "gan_unroll": "unrolled_steps", "gan_r1": "r1_gamma",
                 "gan_sn": "spectral_norm", "gan_mbstd": "minibatch_std", "gan_pack": "pack",
                 "gan_gp": "gp_lambda"}
NETWORKS = {"g_hidden": ("gan_g_width", "gan_g_depth"),
            "d_hidden": ("gan_d_width", "gan_d_depth")}


def settings_of(target: str, std: float, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The widget values that build a GANTrainer with keyword arguments `kwargs` (every
    hidden layer of a network has the same width)."""
    out = {"gan_target": target, "gan_std": std}
    out.update({key: kwargs[kw] for key, kw in ENGINE_KWARGS.items()})
    for kw, (width, depth) in NETWORKS.items():
        out[width], out[depth] = kwargs[kw][0], len(kwargs[kw])
    return out


DEFAULTS = settings_of(*LIVE_TARGET, LIVE_DEFAULTS)

STATE = StateTable([
    Control("gan_target", DEFAULTS["gan_target"], "Target", kind="selectbox",
            options=[*TARGETS, UPLOAD]),
    Control("gan_std", DEFAULTS["gan_std"], "Mode std σ", kind="select_slider", options=STDS,
            help="Standard deviation of each Gaussian mode."),
    Control("gan_loss", DEFAULTS["gan_loss"], "Loss", kind="selectbox", options=list(LOSSES)),
    Control("gan_opt", DEFAULTS["gan_opt"], "Optimizer", kind="selectbox",
            options=list(OPTIMIZERS),
            help="Adam with β = (0.5, 0.999); RMSprop with PyTorch's α = 0.99."),
    Control("gan_lr_g", DEFAULTS["gan_lr_g"], "lr G", kind="select_slider", options=LRS,
            format_func=_fmt_lr),
    Control("gan_lr_d", DEFAULTS["gan_lr_d"], "lr D", kind="select_slider", options=LRS,
            format_func=_fmt_lr),
    Control("gan_d_steps", DEFAULTS["gan_d_steps"], "D steps per G step", lo=1, hi=10, step=1),
    Control("gan_latent", DEFAULTS["gan_latent"], "Latent dim", lo=1, hi=16, step=1),
    Control("gan_g_width", DEFAULTS["gan_g_width"], "G width", kind="select_slider",
            options=WIDTHS),
    Control("gan_g_depth", DEFAULTS["gan_g_depth"], "G hidden layers", lo=1, hi=3, step=1),
    Control("gan_d_width", DEFAULTS["gan_d_width"], "D width", kind="select_slider",
            options=WIDTHS),
    Control("gan_d_depth", DEFAULTS["gan_d_depth"], "D hidden layers", lo=1, hi=3, step=1),
    Control("gan_unroll", DEFAULTS["gan_unroll"], "Unrolled D steps", lo=0, hi=10, step=1,
            help="Metz et al. 2016: G's loss against D after k differentiable updates by D's "
                 "own optimizer (Adam from its current moments), gradients through the "
                 "unroll; k extra D passes per G step."),
    Control("gan_r1", DEFAULTS["gan_r1"], "R1 penalty γ", kind="select_slider", options=R1S,
            help="(γ/2)·E‖∇D(x_real)‖² added to D's loss."),
    Control("gan_gp", DEFAULTS["gan_gp"], "WGAN-GP penalty λ", kind="select_slider",
            options=GPS, format_func=_fmt_lr,
            help="λ·E(‖∇D(x̂)‖ − 1)² on interpolates x̂ (loss wgan-gp only)."),
    Control("gan_sn", DEFAULTS["gan_sn"], "Spectral norm on D", kind="checkbox"),
    Control("gan_mbstd", DEFAULTS["gan_mbstd"], "Minibatch std feature", kind="checkbox"),
    Control("gan_pack", DEFAULTS["gan_pack"], "PacGAN pack", lo=1, hi=4, step=1,
            help="D judges `pack` samples at once."),
    Control("gan_arrows", True, "Arrows −∇ L_G", kind="toggle", url=False,
            help="Black strokes at 60 generated samples: −∇ₓ of G's loss, where each is "
                 "pushed."),
    Control("gan_dirac_loss", "minimax", "Loss", kind="selectbox", options=list(DIRAC_LOSSES)),
    Control("gan_dirac_gamma", 1.0, "R1 γ", kind="select_slider",
            options=[0.0, 0.1, 0.3, 1.0, 3.0]),
    Control("gan_dirac_lr", 0.1, "Learning rate", kind="select_slider",
            options=[0.01, 0.05, 0.1, 0.2, 0.5]),
    Control("gan_dirac_steps", 300, "Iterations", lo=50, hi=1000, step=50),
    Control("gan_dirac_sim", True, "Simultaneous updates", kind="checkbox"),
    Control("gan_dirac_nd", 1, "Critic steps n_d per G step (alternating)", lo=1, hi=5, step=1),
    Control("gan_theta", 1.0, "θ", lo=-2.0, hi=2.0, step=0.05),
    Control("gan_oc_gap", 4.0, "Distance between the Gaussians", kind="select_slider",
            options=[0.5, 1.0, 2.0, 4.0, 8.0],
            help="Fake data N(0, 1), real data N(distance, 1)."),
    Control("gan_gl_at", 0.01, "Mark D(G(z)) =", kind="select_slider", options=G_LOSS_AT,
            help="D's verdict on a fake: near 0 early in training, when D rejects it easily."),
])
assert set(ENGINE_KWARGS) | {k for pair in NETWORKS.values() for k in pair} <= set(STATE)


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page trains and draws exactly what the claims measure.

def trainer_kwargs(s: Mapping[str, Any]) -> dict[str, Any]:
    """GANTrainer keyword arguments of the settings (the inverse of settings_of)."""
    out = {kw: type(STATE[key].default)(s[key]) for key, kw in ENGINE_KWARGS.items()}
    for kw, (width, depth) in NETWORKS.items():
        out[kw] = (int(s[width]),) * int(s[depth])
    return out


def gan_of(s: Mapping[str, Any], seed: int, device=None) -> GANTrainer:
    """The GAN the settings describe, on their (mixture) target, built here for a claim's
    measurement (the live tab builds its trainer with engine.gan.reads.build_trainer)."""
    return GANTrainer(make_target(s["gan_target"], float(s["gan_std"]), seed), seed=seed,
                      device=device, **trainer_kwargs(s))


def _train(s: Mapping[str, Any], steps: int, seed: int) -> GANTrainer:
    trainer = gan_of(s, seed)
    trainer.step(steps)
    return trainer


@functools.lru_cache(maxsize=16)
def _trained_run(key: tuple, steps: int, seed: int) -> GANTrainer:
    return _train(dict(key), steps, seed)


def trained(s: Mapping[str, Any], steps: int, seed: int) -> GANTrainer:
    """The page's GAN for these settings after `steps` iterations from scratch (a claim's
    measurement: what Play shows at that iteration with the sidebar seed = `seed`)."""
    key = tuple(sorted((k, v) for k, v in s.items() if k in set(ENGINE_KWARGS) | {
        "gan_target", "gan_std", *[x for pair in NETWORKS.values() for x in pair]}))
    return _trained_run(key, int(steps), int(seed))


def worst(measure, s, steps: int, lowest: bool = True) -> float:
    """A training claim, on every seed of CLAIM_SEEDS: the least favourable value."""
    values = [measure(trained(s, steps, seed)) for seed in CLAIM_SEEDS]
    return min(values) if lowest else max(values)


@lesson_measure(trains=True)
def modes_at(s, steps: int) -> float:
    return worst(lambda t: t.coverage().modes_covered, s, steps)


@lesson_measure(trains=True)
def max_modes_at(s, steps: int) -> float:
    return worst(lambda t: t.coverage().modes_covered, s, steps, lowest=False)


def dirac_runs(s: Mapping[str, Any]) -> dict:
    """The Dirac-GAN trajectories the tab draws: without a penalty and with R1 γ."""
    loss, lr = s["gan_dirac_loss"], float(s["gan_dirac_lr"])
    steps, sim, gamma = int(s["gan_dirac_steps"]), bool(s["gan_dirac_sim"]), float(
        s["gan_dirac_gamma"])
    nd = int(s["gan_dirac_nd"])
    runs = {"γ = 0": dirac_gan(loss, lr, steps, 0.0, d_steps=nd, simultaneous=sim)}
    if gamma > 0:
        runs[f"R1 γ = {gamma:g}"] = dirac_gan(loss, lr, steps, gamma, d_steps=nd,
                                              simultaneous=sim)
    return runs


@lesson_measure
def dirac_ratio(s, run: str = "γ = 0") -> float:
    """Distance to (0, 0) at the end / at the start (> 1: spirals out)."""
    d = _dirac_run(s, run).distance
    return float(d[-1] / d[0])


def g_loss_curves_of(s: Mapping[str, Any]):
    """The G-losses tab: both generator losses on a grid of D(G(z)) in (0, 1), the marked
    verdict included."""
    d = np.unique(np.concatenate([np.linspace(0.001, 0.999, 400), [float(s["gan_gl_at"])]]))
    return generator_loss_curves(d)


@lesson_measure
def g_loss_slope(s, loss: str) -> float:
    """|∂L_G/∂f| (f: D's logit) of `loss` at the marked verdict D(G(z)) = gan_gl_at."""
    c = g_loss_curves_of(s)
    return float(abs(c.slope[loss][np.searchsorted(c.d, float(s["gan_gl_at"]))]))


def critic_view_of(s: Mapping[str, Any]):
    """The Optimal D vs critic tab: fake data N(0, 1), real N(gap, 1), on x from −4 to gap + 4
    (the fake and the real mean on the grid)."""
    gap = float(s["gan_oc_gap"])
    x = np.unique(np.concatenate([np.linspace(-4.0, gap + 4.0, 801), [0.0, gap]]))
    return discriminator_vs_critic(x, gap, 0.0)


@lesson_measure
def oc_value(s, what: str = "d_slope", at: str = "fake") -> float:
    """|value| of `what` (d_star, d_slope, critic_slope) at the fake or the real mean."""
    c = critic_view_of(s)
    i = int(np.searchsorted(c.x, 0.0 if at == "fake" else float(s["gan_oc_gap"])))
    return float(abs(getattr(c, what)[i]))


def _dirac_run(s, run: str):
    return next(tr for name, tr in dirac_runs(s).items() if name.startswith(run))


@lesson_measure
def dirac_theta_swing(s, run: str = "γ = 0", last: int = 200) -> float:
    """max |θ| over the last `last` iterations: how far the generator still swings."""
    return float(np.abs(_dirac_run(s, run).theta[-int(last):]).max())


@lesson_measure
def dirac_min_distance(s, run: str = "γ = 0", last: int = 200) -> float:
    """The smallest distance to (0, 0) over the last `last` iterations (> 0: a cycle that
    never reaches the equilibrium)."""
    return float(_dirac_run(s, run).distance[-int(last):].min())
