"""GAN training and mode collapse, made measurable (issue 8).

Settings -> engine/gan.py -> viz/gan_figures.py. A GAN trains live (viz.live) on a 2-D mixture,
the page counts the modes it covers (smoothed over recent checks), and two small models explain
why plain GAN training cycles (the Dirac-GAN) and why a Wasserstein critic helps (parallel
lines).

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE (the engine's keyword arguments
are derived from the table by one mapping, ENGINE_KWARGS / NETWORKS), the pure computations that
the views and the claims share, PRESETS and STEPS with their claims, one function per view,
the footer."""
from __future__ import annotations

import functools
import hashlib
import logging
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine.datasets import parse_points_csv
from engine.gan import (LIVE_DEFAULTS, LIVE_TARGET, LOSSES, OPTIMIZERS, PRETRAINED, TARGETS,
                        TRAINER_DEFAULTS, GANTrainer, dirac_gan, dirac_gan_field, load_trainer,
                        make_target, parallel_lines, trainer_config)
from engine.gan_measures import (SMOOTH_CHECKS, blob_share, export_of, frame_of,
                                 smoothed_modes, step_part)
from viz import session
from viz.claims import Claim
from viz.gan_figures import dirac_figure, live_figures, wasserstein_figure
from viz.live import live_training, read_trainer
from viz.on_demand import on_demand
from viz.page import View, topic_page
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.topics import ROOT
from viz.widgets import Preset, Step, export_buttons

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- constants
UPLOAD = "your points (CSV)"
STEPS_PER_FRAME = 50
FRAME_INTERVAL_S = 0.25   # ask for up to 4 redraws/s (the frame itself takes ~0.2 s here)
LRS = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
WIDTHS = [8, 16, 32, 64, 128, 256]
STDS = [0.02, 0.03, 0.05, 0.07, 0.1]
R1S = [0.0, 0.1, 1.0, 10.0]
GPS = [0.1, 1.0, 10.0]
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
    Control("gan_arrows", True, "Arrows: −∇ of G's loss at 60 fakes", kind="toggle",
            url=False),
    Control("gan_dirac_loss", "minimax", "Loss", kind="selectbox", options=list(DIRAC_LOSSES)),
    Control("gan_dirac_gamma", 1.0, "R1 γ", kind="select_slider",
            options=[0.0, 0.1, 0.3, 1.0, 3.0]),
    Control("gan_dirac_lr", 0.1, "Learning rate", kind="select_slider",
            options=[0.01, 0.05, 0.1, 0.2, 0.5]),
    Control("gan_dirac_steps", 300, "Iterations", lo=50, hi=1000, step=50),
    Control("gan_dirac_sim", True, "Simultaneous updates", kind="checkbox"),
    Control("gan_theta", 1.0, "θ", lo=-2.0, hi=2.0, step=0.05),
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


def build_trainer(s: Mapping[str, Any], seed: int, device=None) -> GANTrainer:
    """The GAN the settings describe, on their (mixture) target."""
    return GANTrainer(make_target(s["gan_target"], float(s["gan_std"]), seed), seed=seed,
                      device=device, **trainer_kwargs(s))


def _train(s: Mapping[str, Any], steps: int, seed: int) -> GANTrainer:
    trainer = build_trainer(s, seed)
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


def modes_at(s, steps: int) -> float:
    return worst(lambda t: t.coverage().modes_covered, s, steps)


def max_modes_at(s, steps: int) -> float:
    return worst(lambda t: t.coverage().modes_covered, s, steps, lowest=False)


def dirac_runs(s: Mapping[str, Any]) -> dict:
    """The Dirac-GAN trajectories the tab draws: without a penalty and with R1 γ."""
    loss, lr = s["gan_dirac_loss"], float(s["gan_dirac_lr"])
    steps, sim, gamma = int(s["gan_dirac_steps"]), bool(s["gan_dirac_sim"]), float(
        s["gan_dirac_gamma"])
    runs = {"γ = 0": dirac_gan(loss, lr, steps, 0.0, simultaneous=sim)}
    if gamma > 0:
        runs[f"R1 γ = {gamma:g}"] = dirac_gan(loss, lr, steps, gamma, simultaneous=sim)
    return runs


def dirac_ratio(s, run: str = "γ = 0") -> float:
    """Distance to (0, 0) at the end / at the start (> 1: spirals out)."""
    d = next(tr for name, tr in dirac_runs(s).items() if name.startswith(run)).distance
    return float(d[-1] / d[0])


# ----------------------------------------------------------------------------- presets
RING = {**DEFAULTS, "gan_target": "ring of 8", "gan_std": 0.05}
BIG = settings_of("ring of 8", 0.05, TRAINER_DEFAULTS)       # 2×128 networks
COLLAPSE = {**BIG, **settings_of("ring of 8", 0.05, {**TRAINER_DEFAULTS, "d_hidden": (128,)})}
UNROLLED = {**COLLAPSE, "gan_unroll": 5}
D_STEPS5 = {**COLLAPSE, "gan_d_steps": 5}
GRID = settings_of("5x5 grid", 0.05, TRAINER_DEFAULTS)
MOONS = settings_of("two moons", 0.05, {**TRAINER_DEFAULTS, "g_hidden": (8,)})
DIRAC_MINIMAX = {"gan_dirac_loss": "minimax", "gan_dirac_gamma": 1.0, "gan_dirac_lr": 0.1,
                 "gan_dirac_steps": 300, "gan_dirac_sim": True}
DIRAC_NS = {**DIRAC_MINIMAX, "gan_dirac_loss": "nonsaturating", "gan_dirac_steps": 1000}
DIRAC_HINGE = {**DIRAC_MINIMAX, "gan_dirac_loss": "hinge", "gan_dirac_steps": 1000}
WASSERSTEIN = {"gan_theta": 1.0}

COLLAPSE_AT, CURE_AT, DEEP_AT, DSTEPS_AT = 1250, 1500, 1250, 1000


C_COLLAPSE = (
    Claim(f"modes covered at iteration {COLLAPSE_AT:,} (worst of seeds 0, 1)",
          lambda s: max_modes_at(s, COLLAPSE_AT), hi=1, slow=True),
    Claim(f"share of samples within 1 of their median at {COLLAPSE_AT:,} (one blob)",
          lambda s: worst(blob_share, s, COLLAPSE_AT), lo=0.8, slow=True),
    Claim(f"share of samples within 3σ of a mode at {COLLAPSE_AT:,} (the blob sits between "
          "modes)", lambda s: worst(lambda t: t.coverage().high_quality_fraction, s,
                                     COLLAPSE_AT, lowest=False), hi=0.2, slow=True),
)
C_UNROLLED = (Claim(f"modes covered at iteration {CURE_AT:,} (worst of seeds 0, 1)",
                    lambda s: modes_at(s, CURE_AT), lo=7, slow=True),
              Claim(f"share of samples within 1 of their median at {CURE_AT:,} (no blob)",
                    lambda s: worst(blob_share, s, CURE_AT, lowest=False), hi=0.3,
                    slow=True))
C_DEEP = (Claim(f"modes covered at iteration {DEEP_AT:,} (worst of seeds 0, 1)",
                lambda s: modes_at(s, DEEP_AT), lo=7, slow=True),)
C_DSTEPS = (Claim(f"modes covered at iteration {DSTEPS_AT:,} (worst of seeds 0, 1)",
                  lambda s: modes_at(s, DSTEPS_AT), lo=7, slow=True),)
C_DIRAC_MINIMAX = (Claim("γ = 0: distance after 300 it. / start distance (spirals out)",
                         dirac_ratio, lo=1.2),
                   Claim("R1 γ = 1: distance to (0, 0) after 300 it.",
                         lambda s: dirac_runs(s)["R1 γ = 1"].distance[-1], hi=1e-3))
C_DIRAC_NS = (Claim("γ = 0: distance after 1,000 it. / start distance (converges slowly)",
                    dirac_ratio, hi=0.4),
              Claim("R1 γ = 1: distance to (0, 0) after 1,000 it.",
                    lambda s: dirac_runs(s)["R1 γ = 1"].distance[-1], hi=1e-6))
C_DIRAC_HINGE = (Claim("γ = 0: distance after 1,000 it. / start distance (circles)",
                       dirac_ratio, lo=0.9, hi=1.1),
                 Claim("R1 γ = 1: distance to (0, 0) after 1,000 it.",
                       lambda s: dirac_runs(s)["R1 γ = 1"].distance[-1], hi=1e-6))
C_WASSERSTEIN = (Claim("JSD at θ = 1 (log 2 = 0.6931)",
                       lambda s: parallel_lines(np.array([s["gan_theta"]])).jsd[0],
                       lo=0.6931, hi=0.6932),
                 Claim("W₁ at θ = 1", lambda s: parallel_lines(np.array([s["gan_theta"]])).w1[0],
                       lo=1.0, hi=1.0))

PRESETS: dict[str, Preset] = {
    "Collapse: one-layer D, one blob": Preset(
        COLLAPSE, "A discriminator with a single hidden layer (as in Metz et al. 2016), no "
                  "remedy, ring of 8 at σ = 0.05: the generated samples form **one blob** "
                  "(over 80% of them within 1 of their median, a disc that holds 1/6 of the ring) that travels around the ring "
                  f"to wherever D currently likes fakes best. At iteration {COLLAPSE_AT:,} at "
                  "most 1 of the 8 modes is covered (seeds 0 and 1), and fewer than 1 in 5 "
                  "samples even lies within 3σ of a mode: the blob is wider than a mode and "
                  "mostly sits between them. The mode histogram shows a single cell jumping. "
                  "The three cures below change one setting each.", "train", C_COLLAPSE),
    "Cure 1: unroll D (k = 5)": Preset(
        UNROLLED, "The same GAN, one setting changed: G's loss is taken against D unrolled 5 "
                  "Adam steps ahead, with gradients through the unroll (Metz et al. 2016). G "
                  "sees how D would answer a move of the whole blob, so the fakes spread "
                  f"instead: at iteration {CURE_AT:,} at least 7 of the 8 modes are covered "
                  "(seeds 0 and 1). Each iteration costs 5 extra D passes, so it trains ~4× "
                  "slower.", "train", C_UNROLLED),
    "Cure 2: a two-layer D": Preset(
        BIG, "The same GAN, one setting changed: D gets a second hidden layer (2×128). D can "
             "now model each mode, its gradient reaches every mode, and at iteration "
             f"{DEEP_AT:,} at least 7 of the 8 modes are covered (seeds 0 and 1).", "train",
        C_DEEP),
    "Cure 3: 5 D steps per G step": Preset(
        D_STEPS5, "The same one-layer GAN, one setting changed: D takes 5 steps per G step, "
                  "so it is close to its optimum when G moves and the blob cannot outrun it: "
                  f"at iteration {DSTEPS_AT:,} at least 7 of the 8 modes are covered (seeds 0 "
                  "and 1).", "train", C_DSTEPS),
    "25-mode grid": Preset(
        GRID, "A 5×5 grid of Gaussians: many more modes to cover. Press Play and watch the "
              "badge and the 25-row mode histogram.", "train"),
    "Tiny generator on moons": Preset(
        MOONS, "A generator with one hidden layer of 8 ReLUs is piecewise linear in its 2-D "
               "latent code: press Play and see its samples follow the curved moons with a few "
               "straight pieces.", "train"),
    "Dirac-GAN: minimax spirals out, R1 converges": Preset(
        DIRAC_MINIMAX, "Simultaneous gradient steps on the minimax loss: without a penalty the "
                       "distance to the equilibrium (0, 0) grows (×1.3 after 300 iterations); "
                       "with R1 γ = 1 it falls below 0.001.", "dirac", C_DIRAC_MINIMAX),
    "Dirac-GAN: non-saturating converges slowly": Preset(
        DIRAC_NS, "The non-saturating loss damps the rotation by itself: without a penalty the "
                  "distance shrinks to under 40% of its start in 1,000 iterations; R1 γ = 1 "
                  "reaches (0, 0) to 1e-6.", "dirac", C_DIRAC_NS),
    "Dirac-GAN: hinge circles": Preset(
        DIRAC_HINGE, "The hinge loss's linear G loss keeps the rotation undamped: the run "
                     "circles the equilibrium at its start distance (within 10% after 1,000 "
                     "iterations); R1 γ = 1 converges.", "dirac", C_DIRAC_HINGE),
}

STEPS = [
    Step("Mode collapse: one blob",
         "Press **Play**. The fakes (purple) gather into one blob that travels around the ring; "
         "the mode histogram below shows one bright cell jumping from mode to mode. At "
         f"iteration {COLLAPSE_AT:,} at most 1 of 8 modes is covered.", COLLAPSE, "train",
         C_COLLAPSE),
    Step("Cure: unroll D",
         "One setting changed: G now plays against D five steps ahead. Moving the whole blob "
         "no longer pays, and the fakes spread: at least 7 of 8 modes at iteration "
         f"{CURE_AT:,}.", UNROLLED, "train", C_UNROLLED),
    Step("Cure: a stronger D",
         "Back to the collapsing GAN, with D given a second hidden layer instead: it now "
         f"models every mode, and at iteration {DEEP_AT:,} at least 7 of 8 are covered.",
         BIG, "train", C_DEEP),
    Step("Why plain GANs cycle: the Dirac-GAN",
         "One parameter each: data at 0, G = θ, D(x) = ψx. With the minimax loss the plain "
         "updates spiral away from the equilibrium (0, 0); the R1 penalty (γ = 1) converges.",
         DIRAC_MINIMAX, "dirac", C_DIRAC_MINIMAX),
    Step("The loss matters",
         "The non-saturating loss damps the rotation by itself and converges slowly without "
         "any penalty; R1 makes it fast. (Try *hinge*: it circles.)", DIRAC_NS, "dirac",
         C_DIRAC_NS),
    Step("Why Wasserstein",
         "Two parallel lines: for every θ ≠ 0 the JSD is log 2 (no gradient), while W₁ = |θ| "
         "points the generator home.", WASSERSTEIN, "wasserstein", C_WASSERSTEIN),
]


# ----------------------------------------------------------------------------- train view
def _target(s: Mapping[str, Any], seed: int):
    """The ToyData to train on, and a fingerprint of uploaded points (None otherwise)."""
    if s["gan_target"] != UPLOAD:
        return make_target(s["gan_target"], s["gan_std"], seed), None
    up = st.file_uploader("CSV with two numeric columns (x1, x2)", type=["csv", "txt"],
                          key="gan_upload")
    text = st.text_area("... or paste points, one 'x1,x2' per line", key="gan_points",
                        height=100)
    raw = up.getvalue() if up is not None else (text or "").encode()
    if not raw.strip():
        st.info("Upload or paste at least 10 points; showing the ring of 8 until then.")
        return make_target("ring of 8", s["gan_std"], seed), None
    try:
        data = parse_points_csv(raw)
    except ValueError as exc:
        st.error(f"Could not use these points: {exc}. Showing the ring of 8 instead.",
                 icon=":material/error:")
        return make_target("ring of 8", s["gan_std"], seed), None
    st.caption(f"Using your {len(data.points):,} points.")
    return data, hashlib.sha1(raw).hexdigest()[:12]


def _badges(view, frame, cov) -> None:
    m = st.columns(4)
    if cov is not None:
        m[0].metric(f"Modes covered (mean of last {SMOOTH_CHECKS} checks)",
                    f"{smoothed_modes(view.history):.1f} / {cov.n_modes}",
                    help="A mode is covered if >= 1% of 2,000 samples lie within 3σ of it; "
                         f"checked every {frame.eval_every} iterations, averaged over the "
                         f"last {SMOOTH_CHECKS} checks (one check can jump by several modes).")
        m[1].metric("Modes covered now", f"{cov.modes_covered} / {cov.n_modes}",
                    help="At the latest check only.")
        m[2].metric("High-quality samples", f"{cov.high_quality_fraction:.0%}",
                    help="Share of all samples within 3σ of some mode.")
        kl = ("–" if math.isnan(cov.reverse_kl) or cov.high_quality_fraction < 0.05
              else f"{cov.reverse_kl:.2f}")
        m[3].metric("KL(near-mode samples ‖ uniform)", kl,
                    help="Only the high-quality samples: how unevenly they share the modes, "
                         f"0 = evenly, log k = {math.log(cov.n_modes):.2f} = all on one mode. "
                         "'–' while fewer than 5% of the samples are near any mode: it then "
                         "says nothing about coverage.")
    else:
        m[0].metric("Modes covered", "n/a", help="This target is not a mixture of modes.")
    ld, lg = view.history.last("loss_d"), view.history.last("loss_g")
    st.caption("L_D / L_G (mean over the last chunk): "
               + ("–" if math.isnan(ld) and math.isnan(lg) else f"{ld:.3f} / {lg:.3f}"))


def _draw(view, tick) -> None:
    """One live frame: the view's snapshot and the GANFrame read next to the trainer."""
    snap = view.snapshot()
    frame = read_trainer("gan", frame_of)
    offline = frame.pretrained_steps
    if offline is not None:
        st.caption((f"**Pretrained snapshot**: these settings trained offline for {offline:,} "
                    f"iterations, shown so the first picture is a trained GAN. **Play** "
                    f"continues training it live; **Reset** starts from scratch."
                    if view.steps == offline else
                    f"Continued from a **pretrained snapshot** ({offline:,} iterations trained "
                    f"offline). **Reset** starts from scratch."))
    box = st.container()
    arrows = STATE.widget("gan_arrows")     # in the live fragment: toggling redraws this only
    figs = live_figures(frame, snap, view.history, show_arrows=arrows)
    with box:
        show_figure(figs["gan_fig_samples"], key="gan_fig_samples")
    _badges(view, frame, snap.coverage)
    cols = st.columns(2)
    if "gan_fig_hist" in figs:
        with cols[0]:
            show_figure(figs["gan_fig_hist"], key="gan_fig_hist")
    with cols[1]:
        show_figure(figs["gan_fig_curves"], key="gan_fig_curves")


@st.cache_data(max_entries=4, show_spinner=False)
def _pretrained_bytes(name: str) -> bytes | None:
    path = ROOT / "assets" / "weights" / f"gan_{name}.pt"
    return path.read_bytes() if path.exists() else None


def _make_trainer(target, seed: int, kwargs: dict, s: Mapping[str, Any],
                  upload_id) -> GANTrainer:
    """A fresh GANTrainer; the first time a session builds the default GAN (no upload), the
    shipped pretrained snapshot of exactly these settings instead. Reset then builds fresh."""
    spec = PRETRAINED["default"]
    wanted = trainer_config(spec.target, spec.std, spec.seed, spec.kwargs)
    mine = trainer_config(s["gan_target"], s["gan_std"], seed, kwargs)
    if upload_id is None and mine == wanted and not st.session_state.get("gan__pretrained_used"):
        st.session_state["gan__pretrained_used"] = True
        blob = _pretrained_bytes("default")
        if blob is not None:
            try:
                trainer, stored = load_trainer(blob, session.device())
                if stored == wanted:
                    return trainer
            except Exception:  # noqa: BLE001 - a stale or damaged file: train from scratch
                log.exception("could not load the pretrained GAN snapshot")
    return GANTrainer(target, seed=seed, device=session.device(), **kwargs)


def _step_part(part: str) -> None:
    """One update of D or G alone, next to the trainer and under its lock (never beside a
    live tick)."""
    read_trainer("gan", functools.partial(step_part, part=part))


def _export(view, config: dict) -> None:
    data = read_trainer("gan", export_of)
    fake, real = data.fake, data.real
    st.caption(f"As of iteration {data.steps:,}.")
    samples = pd.DataFrame({"kind": ["generated"] * len(fake) + ["real"] * len(real),
                            "x1": np.r_[fake[:, 0], real[:, 0]],
                            "x2": np.r_[fake[:, 1], real[:, 1]]})
    export_buttons(samples, config, "gan-samples")
    frame = read_trainer("gan", frame_of)
    steps, hists = frame.mode_steps, frame.mode_hists
    hist = pd.DataFrame(hists, columns=[f"mode_{j}" for j in range(hists.shape[1])])
    hist.insert(0, "iteration", steps)
    for name in ("modes", "high_quality", "reverse_kl"):
        hist[name] = view.history.as_arrays(name)[1][: len(steps)] if len(steps) else []
    st.download_button("Download coverage history (CSV)", hist.to_csv(index=False).encode(),
                       file_name="gan-coverage.csv", mime="text/csv", key="gan_cov_csv",
                       icon=":material/download:", on_click="ignore")


def _train_controls() -> None:
    STATE.widget("gan_target")
    STATE.widget("gan_std")
    STATE.widget("gan_loss")
    with st.expander("Networks and optimizer"):
        c = st.columns(2)
        STATE.widget("gan_g_width", c[0])
        STATE.widget("gan_g_depth", c[1])
        STATE.widget("gan_d_width", c[0])
        STATE.widget("gan_d_depth", c[1])
        STATE.widget("gan_lr_g", c[0])
        STATE.widget("gan_lr_d", c[1])
        STATE.widget("gan_d_steps")
        STATE.widget("gan_latent")
        STATE.widget("gan_opt")
    with st.expander("Remedies"):
        STATE.widget("gan_unroll")
        STATE.widget("gan_r1")
        STATE.widget("gan_gp")
        STATE.widget("gan_sn")
        STATE.widget("gan_mbstd")
        STATE.widget("gan_pack")
    c = st.columns(2)
    c[0].button("Step D", key="gan_step_d", on_click=_step_part, args=("d",),
                width="stretch", help="One update of the discriminator only.")
    c[1].button("Step G", key="gan_step_g", on_click=_step_part, args=("g",),
                width="stretch", help="One update of the generator only.")


def train_view(panel) -> None:
    with panel.controls:
        _train_controls()
        s = STATE.values()
        seed = session.seed()
        target, upload_id = _target(s, seed)
    kwargs = trainer_kwargs(s)
    config = {**kwargs, "target": s["gan_target"], "std": s["gan_std"],
              "upload": upload_id, "seed": seed, "device": session.device()}
    view = None
    with panel.figure:
        view = live_training(
            "gan", lambda: _make_trainer(target, seed, kwargs, s, upload_id),
            _draw, config=config, steps_per_frame=STEPS_PER_FRAME, max_steps_per_frame=500,
            interval_s=FRAME_INTERVAL_S)
    with panel.notes:
        st.latex(LOSSES[s["gan_loss"]].formula)
        explain("**Reading the picture.** Grey: real samples; purple: generated samples; the "
                "background is D (blue = judged real). Black strokes show where each fake is "
                "pushed, −∇ₓ L_G. Circles mark each mode's 3σ disc: green when at least 1% of "
                "2,000 generated samples fall in it (covered), red dotted when not. The badge "
                f"averages the covered modes over the last {SMOOTH_CHECKS} checks (every 50 "
                "iterations); *now* is the latest check alone. The KL number looks only at the "
                "samples near some mode (the high-quality share).")
        if view is not None:
            with st.expander("Export", icon=":material/download:"):
                st.caption("Samples and coverage history of the trainer as it is when you "
                           "press the button (outside the live frame: press Pause first).")
                on_demand("gan_export", lambda: _export(view, config))


# ----------------------------------------------------------------------------- Dirac view
def dirac_view(panel) -> None:
    with panel.controls:
        loss = STATE.widget("gan_dirac_loss")
        STATE.widget("gan_dirac_gamma")
        STATE.widget("gan_dirac_lr")
        STATE.widget("gan_dirac_steps")
        STATE.widget("gan_dirac_sim")
        st.caption(DIRAC_LOSSES[loss])
    s = STATE.values()
    runs = dirac_runs(s)
    with panel.figure:
        show_figure(dirac_figure(dirac_gan_field(loss, float(s["gan_dirac_gamma"]), 2.0, 15),
                                 runs, 2.0), key="gan_fig_dirac")
        m = st.columns(len(runs))
        for col, (name, tr) in zip(m, runs.items()):
            col.metric(f"Distance to (0, 0) after {len(tr.distance) - 1} it. ({name})",
                       f"{tr.distance[-1]:.3f}", f"{tr.distance[-1] - tr.distance[0]:+.3f}",
                       delta_color="inverse")
    with panel.notes:
        st.latex(r"p_{data}=\delta_0,\quad p_\theta=\delta_\theta,\quad D_\psi(x)=\psi x,"
                 r"\qquad \dot\theta=-\partial_\theta L_G,\ \ \dot\psi=-\partial_\psi L_D")
        explain("The field drawn is the R1 one (γ from the slider); the γ = 0 trajectory "
                "follows the plain field. For the minimax loss the equilibrium (0, 0) is a "
                "centre: alternating updates circle it, simultaneous ones spiral out; R1 adds "
                "−γψ to ψ's update, which damps the rotation (Mescheder, Geiger & Nowozin 2018). "
                "Only losses whose equilibrium is (0, 0) are offered: with LSGAN's targets "
                "D(real) = 1 cannot be met by D(0) = ψ·0 = 0, and WGAN-GP's penalty pins "
                "|ψ| = 1, so neither has (0, 0) as its equilibrium.")


# ----------------------------------------------------------------------------- Wasserstein
def wasserstein_view(panel) -> None:
    with panel.controls:
        theta = STATE.widget("gan_theta")
        now = parallel_lines(np.array([theta]))
        st.metric("JSD at this θ", f"{now.jsd[0]:.4f}", help="log 2 ≈ 0.6931 whenever θ ≠ 0")
        st.metric("W₁ at this θ", f"{now.w1[0]:.4f}")
    with panel.figure:
        lines = parallel_lines(np.round(np.linspace(-2, 2, 81), 6))
        show_figure(wasserstein_figure(lines, theta), key="gan_fig_wasserstein")
    with panel.notes:
        st.latex(r"P_0=(0,U[-1,1]),\ P_\theta=(\theta,U[-1,1]):\quad "
                 r"JSD(P_0\|P_\theta)=\log 2\ (\theta\neq 0),\qquad W_1=|\theta|")
        explain("The supports do not overlap for θ ≠ 0, so the JSD is stuck at log 2 and its "
                "gradient in θ is zero: a generator trained on it gets no signal. W₁ = |θ| "
                "falls steadily to 0, which is why a Wasserstein critic keeps pulling the "
                "generator towards the data.")



def views(*specs: tuple[str, str, Any]) -> list[View]:
    return [View(key, title, draw) for key, title, draw in specs]


VIEWS = views(("train", "Train a GAN", train_view),
              ("dirac", "Dirac-GAN", dirac_view),
              ("wasserstein", "Why Wasserstein", wasserstein_view))

if __name__ == "__main__":
    topic_page("gan", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\min_G\max_D\ \mathbb{E}_{x}\log D(x)+\mathbb{E}_{z}"
                       r"\log\bigl(1-D(G(z))\bigr)")
