"""GAN training and mode collapse, made measurable (issue 8).

Widgets -> engine.gan -> viz.gan_figures. Trains live (viz.live) on 2-D targets, counts the
modes the generator covers, and shows the Dirac-GAN and the parallel-lines example.
"""
from __future__ import annotations

import hashlib
import logging
import math

import numpy as np
import pandas as pd
import streamlit as st

from engine.datasets import parse_points_csv
from engine.gan import (LIVE_DEFAULTS, LIVE_TARGET, LOSSES, OPTIMIZERS, PRETRAINED, SCENARIOS,
                        TARGETS, GANTrainer, Scenario, dirac_gan, dirac_gan_field, load_trainer,
                        make_target, parallel_lines, trainer_config)
from viz import session
from viz.gan_figures import dirac_figure, live_figures, wasserstein_figure
from viz.live import live_training
from viz.topics import ROOT
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

UPLOAD = "your points (CSV)"
STEPS_PER_FRAME = 50
FRAME_INTERVAL_S = 0.25   # ask for up to 4 redraws/s (the frame itself takes ~0.2 s here)
LRS = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
WIDTHS = [8, 16, 32, 64, 128, 256]
R1S = [0.0, 0.1, 1.0, 10.0]
GPS = [0.1, 1.0, 10.0]


def _widget_values(target: str, std: float, kw: dict) -> dict:
    """Widget values that make the page build a GANTrainer with keyword arguments `kw`."""
    return {"gan_target": target, "gan_std": std, "gan_loss": kw["loss"],
            "gan_opt": kw["optimizer"], "gan_lr_g": kw["lr_g"], "gan_lr_d": kw["lr_d"],
            "gan_d_steps": kw["d_steps"], "gan_latent": kw["latent_dim"],
            "gan_g_width": kw["g_hidden"][0], "gan_g_depth": len(kw["g_hidden"]),
            "gan_d_width": kw["d_hidden"][0], "gan_d_depth": len(kw["d_hidden"]),
            "gan_unroll": kw["unrolled_steps"],
            "gan_r1": kw["r1_gamma"], "gan_sn": kw["spectral_norm"],
            "gan_mbstd": kw["minibatch_std"], "gan_pack": kw["pack"], "gan_gp": kw["gp_lambda"]}


# the page's defaults: engine.gan.LIVE_DEFAULTS (2×64 networks: 50 iterations and a redraw
# in ~0.25 s on one CPU thread); the presets set their own sizes
DEFAULTS = _widget_values(*LIVE_TARGET, LIVE_DEFAULTS)


def _settings(sc: Scenario) -> dict:
    """Widget values that make the page build exactly the scenario's trainer."""
    return {**_widget_values(sc.target, sc.std, sc.kwargs), "seed": sc.seed}


log = logging.getLogger(__name__)
PRESETS = {name: Preset(_settings(sc), sc.claim) for name, sc in SCENARIOS.items()}

STEPS = [
    Step("The original (saturating) loss",
         "With min_G E log(1 − D(G(z))), once D confidently rejects the fakes the generator's "
         "gradient σ(f)∇f vanishes. Press **Play** and watch the arrows shrink and the badge "
         "stay low.", PRESETS["minimax loss collapses on the ring"].settings),
    Step("Non-saturating loss on narrow modes",
         "−log D(G(z)) has a strong gradient where D rejects fakes. G moves towards what D "
         "currently likes; the mode histogram shows modes filling and emptying.",
         PRESETS["non-saturating: partial coverage, modes come and go"].settings),
    Step("Wider modes: all covered",
         "Same GAN, σ = 0.05: D's gradient now reaches every mode. Count the modes after 800 "
         "iterations.", PRESETS["non-saturating covers the ring (σ = 0.05)"].settings),
    Step("A Wasserstein critic is no automatic cure",
         "WGAN-GP with one critic step and a large learning rate: the samples travel as one "
         "blob. Then try the remedies (more D steps, unrolling, PacGAN) and compare the "
         "histograms.", PRESETS["WGAN-GP at lr 1e-3: one blob hops"].settings),
    Step("WGAN-GP done the standard way",
         "5 critic steps per G step, lr = 3e-4 and a gradient penalty λ = 1 (under "
         "Remedies): the fakes spread over the ring, 8 of 8 modes from about iteration 300.",
         PRESETS["WGAN-GP covers the ring"].settings),
    Step("A weak D: one blob hops",
         "D with a single hidden layer: the fakes travel as one blob to wherever D likes "
         "them best, and D chases them. The mode histogram shows one bright cell jumping.",
         PRESETS["one-layer D: one blob hops"].settings),
    Step("Unrolling D cures it",
         "Same GAN, but G is trained against D unrolled 5 Adam steps ahead: moving the blob "
         "no longer pays, and the fakes spread over the ring (>= 7 of 8 modes after 1,250 "
         "iterations; each iteration is ~4x slower).",
         PRESETS["unrolled D (k=5) covers the ring"].settings),
    Step("Why plain GANs cycle: the Dirac-GAN",
         "Open the **Dirac-GAN** tab: with one parameter each, the plain GAN spirals away from "
         "the equilibrium; the R1 penalty (γ > 0) makes it converge.",
         {"gan_dirac_loss": "minimax", "gan_dirac_gamma": 1.0, "gan_dirac_sim": True}),
]


def _controls() -> dict:
    """The training widgets (all bound to the URL); returns their values."""
    c = st.columns(4)
    c[0].selectbox("Target", [*TARGETS, UPLOAD], key="gan_target", bind="query-params")
    c[1].select_slider("Mode std", [0.02, 0.03, 0.05, 0.07, 0.1], value=0.05, key="gan_std",
                       bind="query-params", help="Standard deviation of each Gaussian mode.")
    c[2].selectbox("Loss", list(LOSSES), index=1, key="gan_loss", bind="query-params")
    c[3].selectbox("Optimizer", list(OPTIMIZERS), key="gan_opt", bind="query-params",
                   help="Adam with β = (0.5, 0.999); RMSprop with PyTorch's α = 0.99.")
    c = st.columns(4)
    c[0].select_slider("lr G", LRS, value=1e-3, key="gan_lr_g", bind="query-params",
                       format_func=lambda v: f"{v:g}")
    c[1].select_slider("lr D", LRS, value=1e-3, key="gan_lr_d", bind="query-params",
                       format_func=lambda v: f"{v:g}")
    c[2].slider("D steps per G step", 1, 10, 1, key="gan_d_steps", bind="query-params")
    c[3].slider("Latent dim", 1, 16, 2, key="gan_latent", bind="query-params")
    c = st.columns(5)
    c[0].select_slider("G width", WIDTHS, value=DEFAULTS["gan_g_width"], key="gan_g_width",
                       bind="query-params")
    c[1].slider("G hidden layers", 1, 3, DEFAULTS["gan_g_depth"], key="gan_g_depth",
                bind="query-params")
    c[2].select_slider("D width", WIDTHS, value=DEFAULTS["gan_d_width"], key="gan_d_width",
                       bind="query-params")
    c[3].slider("D hidden layers", 1, 3, DEFAULTS["gan_d_depth"], key="gan_d_depth",
                bind="query-params")
    with c[4].popover("Remedies", icon=":material/healing:", width="stretch"):
        st.slider("Unrolled D steps", 0, 10, 0, key="gan_unroll", bind="query-params",
                  help="Metz et al. 2016: G's loss against D after k differentiable "
                       "updates by D's own optimizer (Adam from its current moments), "
                       "gradients through the unroll; k extra D passes per G step.")
        st.select_slider("R1 penalty γ", R1S, value=0.0, key="gan_r1", bind="query-params",
                         help="(γ/2)·E‖∇D(x_real)‖² added to D's loss.")
        st.select_slider("WGAN-GP penalty λ", GPS, value=10.0, key="gan_gp",
                         bind="query-params", format_func=lambda v: f"{v:g}",
                         help="λ·E(‖∇D(x̂)‖ − 1)² on interpolates x̂ (loss wgan-gp only).")
        st.checkbox("Spectral norm on D", key="gan_sn", bind="query-params")
        st.checkbox("Minibatch std feature", key="gan_mbstd", bind="query-params")
        st.slider("PacGAN pack", 1, 4, 1, key="gan_pack", bind="query-params",
                  help="D judges `pack` samples at once.")
    return {k: st.session_state.get(k, v) for k, v in DEFAULTS.items()}


def _target(cfg: dict, seed: int):
    """The ToyData to train on, and a fingerprint of uploaded points (None otherwise)."""
    if cfg["gan_target"] != UPLOAD:
        return make_target(cfg["gan_target"], cfg["gan_std"], seed), None
    up = st.file_uploader("CSV with two numeric columns (x1, x2)", type=["csv", "txt"],
                          key="gan_upload")
    text = st.text_area("... or paste points, one 'x1,x2' per line", key="gan_points",
                        height=100)
    raw = up.getvalue() if up is not None else (text or "").encode()
    if not raw.strip():
        st.info("Upload or paste at least 10 points; showing the ring of 8 until then.")
        return make_target("ring of 8", cfg["gan_std"], seed), None
    try:
        data = parse_points_csv(raw)
    except ValueError as exc:
        st.error(f"Could not use these points: {exc}. Showing the ring of 8 instead.",
                 icon=":material/error:")
        return make_target("ring of 8", cfg["gan_std"], seed), None
    st.caption(f"Using your {len(data.points):,} points.")
    return data, hashlib.sha1(raw).hexdigest()[:12]


def _draw(trainer: GANTrainer, tick) -> None:
    snap = trainer.snapshot()
    cov = snap.coverage
    if trainer.pretrained is not None:
        offline = int(trainer.pretrained.get("steps", 0))
        st.info((f"**Pretrained snapshot**: these settings trained offline for {offline:,} "
                 f"iterations, shown so the first picture is a trained GAN. **Play** "
                 f"continues training it live; **Reset** starts from scratch."
                 if trainer.steps == offline else
                 f"Continued from a **pretrained snapshot** ({offline:,} iterations trained "
                 f"offline). **Reset** starts from scratch."), icon=":material/history:")
    m = st.columns(4)
    if cov is not None:
        m[0].metric("Modes covered", f"{cov.modes_covered} / {cov.n_modes}",
                    help="A mode is covered if >= 1% of 2,000 samples lie within 3σ of it.")
        m[1].metric("High-quality samples", f"{cov.high_quality_fraction:.0%}",
                    help="Share of samples within 3σ of some mode.")
        m[2].metric("KL(modes ‖ uniform)",
                    "–" if math.isnan(cov.reverse_kl) else f"{cov.reverse_kl:.2f}",
                    help=f"0 = samples spread evenly; log k = {math.log(cov.n_modes):.2f} "
                         f"= all on one mode.")
    else:
        m[0].metric("Modes covered", "n/a", help="This target is not a mixture of modes.")
    ld, lg = trainer.history.last("loss_d"), trainer.history.last("loss_g")
    m[3].metric("L_D / L_G", "–" if math.isnan(ld) and math.isnan(lg) else f"{ld:.3f} / {lg:.3f}",
                help="Mean over the last chunk of iterations.")
    figs = live_figures(trainer, snap, show_arrows=st.session_state.get("gan_arrows", True))
    show_figure(figs["gan_fig_samples"], key="gan_fig_samples")
    cols = st.columns(2)
    if "gan_fig_hist" in figs:
        with cols[0]:
            show_figure(figs["gan_fig_hist"], key="gan_fig_hist")
    with cols[1]:
        show_figure(figs["gan_fig_curves"], key="gan_fig_curves")


@st.cache_data(max_entries=4)
def _pretrained_bytes(name: str) -> bytes | None:
    path = ROOT / "assets" / "weights" / f"gan_{name}.pt"
    return path.read_bytes() if path.exists() else None


def _make_trainer(target, seed: int, kwargs: dict, cfg: dict, upload_id) -> GANTrainer:
    """A fresh GANTrainer; the first time a session builds the default GAN (no upload), the
    shipped pretrained snapshot of exactly these settings instead. Reset then builds fresh."""
    spec = PRETRAINED["default"]
    wanted = trainer_config(spec.target, spec.std, spec.seed, spec.kwargs)
    mine = trainer_config(cfg["gan_target"], cfg["gan_std"], seed, kwargs)
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
    trainer = st.session_state.get("gan__trainer")
    if trainer is not None and trainer.diverged_at is None:
        trainer.step(1, part=part)


def _export(trainer: GANTrainer, config: dict) -> None:
    fake = trainer.sample(2000, seed=trainer.seed + 7)
    real = trainer.target.points[trainer.show_idx]
    samples = pd.DataFrame({"kind": ["generated"] * len(fake) + ["real"] * len(real),
                            "x1": np.r_[fake[:, 0], real[:, 0]],
                            "x2": np.r_[fake[:, 1], real[:, 1]]})
    export_buttons(samples, config, "gan-samples")
    steps, hists = trainer.mode_history()
    hist = pd.DataFrame(hists, columns=[f"mode_{j}" for j in range(hists.shape[1])])
    hist.insert(0, "iteration", steps)
    for name in ("modes", "high_quality", "reverse_kl"):
        hist[name] = trainer.history.as_arrays(name)[1][: len(steps)] if len(steps) else []
    st.download_button("Download coverage history (CSV)", hist.to_csv(index=False).encode(),
                       file_name="gan-coverage.csv", mime="text/csv", key="gan_cov_csv",
                       icon=":material/download:", on_click="ignore")


def train_tab() -> None:
    preset_picker(PRESETS, key="gan_preset")
    cfg = _controls()
    seed = session.seed()
    target, upload_id = _target(cfg, seed)
    remedies = dict(unrolled_steps=int(cfg["gan_unroll"]), r1_gamma=float(cfg["gan_r1"]),
                    spectral_norm=bool(cfg["gan_sn"]), minibatch_std=bool(cfg["gan_mbstd"]),
                    pack=int(cfg["gan_pack"]))
    kwargs = dict(loss=cfg["gan_loss"], optimizer=cfg["gan_opt"],
                  g_hidden=(int(cfg["gan_g_width"]),) * int(cfg["gan_g_depth"]),
                  d_hidden=(int(cfg["gan_d_width"]),) * int(cfg["gan_d_depth"]), latent_dim=int(cfg["gan_latent"]),
                  lr_g=float(cfg["gan_lr_g"]), lr_d=float(cfg["gan_lr_d"]),
                  d_steps=int(cfg["gan_d_steps"]), gp_lambda=float(cfg["gan_gp"]),
                  **remedies)
    config = {**kwargs, "target": cfg["gan_target"], "std": cfg["gan_std"],
              "upload": upload_id, "seed": seed, "device": session.device()}
    st.latex(LOSSES[cfg["gan_loss"]].formula)
    cols = st.columns([1, 1, 4], vertical_alignment="bottom")
    cols[0].button("Step D", key="gan_step_d", on_click=_step_part, args=("d",),
                   width="stretch", help="One update of the discriminator only.")
    cols[1].button("Step G", key="gan_step_g", on_click=_step_part, args=("g",),
                   width="stretch", help="One update of the generator only.")
    cols[2].toggle("Arrows: −∇ of G's loss at 60 fakes", value=True, key="gan_arrows")
    trainer = None
    with user_errors("build the GAN with these settings"):
        trainer = live_training(
            "gan", lambda: _make_trainer(target, seed, kwargs, cfg, upload_id),
            _draw, config=config, steps_per_frame=STEPS_PER_FRAME, max_steps_per_frame=500,
            interval_s=FRAME_INTERVAL_S)
    explain("**Reading the picture.** Grey: real samples; purple: generated samples; the "
            "background is D (blue = judged real). Black strokes show where each fake is "
            "pushed, −∇ₓ L_G. Circles mark each mode's 3σ disc: green when at least 1% of "
            "2,000 generated samples fall in it (covered), red dotted when not.")
    if trainer is not None:
        with st.expander("Export", icon=":material/download:"):
            st.caption(f"As of iteration {trainer.steps:,} (pause to refresh).")
            _export(trainer, config)


def dirac_tab() -> None:
    st.latex(r"p_{data}=\delta_0,\quad p_\theta=\delta_\theta,\quad D_\psi(x)=\psi x,"
             r"\qquad \dot\theta=-\partial_\theta L_G,\ \ \dot\psi=-\partial_\psi L_D")
    c = st.columns(5)
    loss = c[0].selectbox("Loss", list(LOSSES), index=0, key="gan_dirac_loss",
                          bind="query-params")
    gamma = c[1].select_slider("R1 γ", [0.0, 0.1, 0.3, 1.0, 3.0], value=1.0,
                               key="gan_dirac_gamma", bind="query-params")
    lr = c[2].select_slider("Learning rate", [0.01, 0.05, 0.1, 0.2, 0.5], value=0.1,
                            key="gan_dirac_lr", bind="query-params")
    steps = c[3].slider("Iterations", 50, 1000, 300, step=50, key="gan_dirac_steps",
                        bind="query-params")
    simultaneous = c[4].checkbox("Simultaneous updates", value=True, key="gan_dirac_sim",
                                 bind="query-params")
    runs = {"γ = 0": dirac_gan(loss, lr, steps, 0.0, simultaneous=simultaneous)}
    if gamma > 0:
        runs[f"R1 γ = {gamma:g}"] = dirac_gan(loss, lr, steps, gamma, simultaneous=simultaneous)
    show_figure(dirac_figure(dirac_gan_field(loss, gamma, 2.0, 15), runs, 2.0),
                key="gan_fig_dirac")
    m = st.columns(len(runs))
    for col, (name, tr) in zip(m, runs.items()):
        col.metric(f"Distance to (0, 0) after {len(tr.distance) - 1} it. ({name})",
                   f"{tr.distance[-1]:.3f}", f"{tr.distance[-1] - tr.distance[0]:+.3f}",
                   delta_color="inverse")
    explain("The field drawn is the R1 one (γ from the slider); the γ = 0 trajectory follows "
            "the plain field. Without a penalty the equilibrium (0, 0) is a centre: "
            "alternating updates circle it, simultaneous ones spiral out. R1 adds −γψ to ψ's "
            "update, which damps the rotation (Mescheder, Geiger & Nowozin 2018).")


def wasserstein_tab() -> None:
    st.latex(r"P_0=(0,U[-1,1]),\ P_\theta=(\theta,U[-1,1]):\quad "
             r"JSD(P_0\|P_\theta)=\log 2\ (\theta\neq 0),\qquad W_1=|\theta|")
    theta = st.slider("θ", -2.0, 2.0, 1.0, 0.05, key="gan_theta", bind="query-params")
    lines = parallel_lines(np.round(np.linspace(-2, 2, 81), 6))
    show_figure(wasserstein_figure(lines, theta), key="gan_fig_wasserstein")
    now = parallel_lines(np.array([theta]))
    c = st.columns(2)
    c[0].metric("JSD at this θ", f"{now.jsd[0]:.4f}", help="log 2 ≈ 0.6931 whenever θ ≠ 0")
    c[1].metric("W₁ at this θ", f"{now.w1[0]:.4f}")
    explain("The supports do not overlap for θ ≠ 0, so the JSD is stuck at log 2 and its "
            "gradient in θ is zero: a generator trained on it gets no signal. W₁ = |θ| falls "
            "steadily to 0, which is why a Wasserstein critic keeps pulling the generator "
            "towards the data.")


page_header("GAN mode collapse",
            "a GAN trains live on a 2-D mixture; the badge counts how many modes it covers, and "
            "the presets make it collapse or cure it.",
            r"\min_G\max_D\ \mathbb{E}_{x}\log D(x)+\mathbb{E}_{z}\log\bigl(1-D(G(z))\bigr),"
            r"\qquad D^*=\frac{p_{data}}{p_{data}+p_g}")
guided_steps(STEPS, key="gan_tour")
tabs = st.tabs(["Train a GAN", "Dirac-GAN", "Why Wasserstein"])
with tabs[0]:
    train_tab()
with tabs[1]:
    with user_errors("compute the Dirac-GAN"):
        dirac_tab()
with tabs[2]:
    wasserstein_tab()
