"""GAN training and mode collapse, made measurable.

Settings -> engine/gan/ -> topics/gan/figures.py. A GAN trains live (live.controls) on a 2-D mixture,
the page counts the modes it covers (smoothed over recent checks), and two small models explain
why plain GAN training cycles (the Dirac-GAN) and why a Wasserstein critic helps (parallel
lines).

The page skeleton (docs/ADDING_A_PAGE.md): one function per view and the footer. The constants
and STATE (the engine's keyword arguments are derived from the table by one mapping,
ENGINE_KWARGS / NETWORKS) and the pure computations that the views and the claims share are in
topics/gan/compute.py, PRESETS and STEPS with their claims in topics/gan/tour.py."""
from __future__ import annotations

import functools
import hashlib
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine.datasets import parse_points_csv
from engine.gan import (LOSSES, OPTIMIZERS, PRETRAINED, TARGETS, dirac_gan_field, parallel_lines,
                        trainer_config)
from engine.gan.manifold import manifold_of
from engine.gan.reads import (SMOOTH_CHECKS, build_trainer, coverage_table_of, export_of,
                                 frame_of, smoothed_modes, step_part)
from ui import session
from ui.claims import format_number
from topics.gan.compute import (
    DEFAULTS, DIRAC_LOSSES, FRAME_INTERVAL_S, G_LOSS_AT, GPS, LRS, R1S, STDS, STEPS_PER_FRAME,
    UPLOAD, WIDTHS, critic_view_of, dirac_runs, fmt_lr, g_loss_curves_of, g_loss_slope,
    oc_value, trainer_kwargs)
from topics.gan.figures import (critic_figure, dirac_figure, g_losses_figure, live_figures,
                                manifold_figure, wasserstein_figure)
from topics.gan.summary import (coverage_badges, losses_line, manifold_badges, pretrained_note,
                                shares_line, summary_html)
from topics.gan.tour import PRESETS, STEPS
from live.controls import live_training, read_trainer
from live.push import live_parts, place_all
from ui.on_demand import on_demand
from ui.page import Live, View, topic_page
from live.parts import Figure, Html
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.topics import ROOT
from ui.widgets import export_buttons


# ----------------------------------------------------------------------------- state
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
            format_func=fmt_lr),
    Control("gan_lr_d", DEFAULTS["gan_lr_d"], "lr D", kind="select_slider", options=LRS,
            format_func=fmt_lr),
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
            options=GPS, format_func=fmt_lr,
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


# ----------------------------------------------------------------------------- train view
def _target(s: Mapping[str, Any], seed: int):
    """What to train on (a TARGETS name, or the uploaded points as ToyData), and a
    fingerprint of uploaded points (None otherwise)."""
    if s["gan_target"] != UPLOAD:
        return s["gan_target"], None
    up = st.file_uploader("CSV with two numeric columns (x1, x2)", type=["csv", "txt"],
                          key="gan_upload")
    text = st.text_area("... or paste points, one 'x1,x2' per line", key="gan_points",
                        height=100)
    raw = up.getvalue() if up is not None else (text or "").encode()
    if not raw.strip():
        st.info("Upload or paste at least 10 points; showing the ring of 8 until then.")
        return "ring of 8", None
    try:
        data = parse_points_csv(raw)
    except ValueError as exc:
        st.error(f"Could not use these points: {exc}. Showing the ring of 8 instead.",
                 icon=":material/error:")
        return "ring of 8", None
    st.caption(f"Using your {len(data.points):,} points.")
    return data, hashlib.sha1(raw).hexdigest()[:12]


def frame_parts(view, read, show_arrows: bool, setup: str = "") -> dict:
    """One live frame as parts (live/parts.py; pure, so the frame route can build it too):
    the samples figure, ONE summary element (pretrained note, coverage badges, losses:
    topics/gan/summary.py) and one figure of the histories. What does not change per frame (the
    arrows toggle, the explanation) is drawn outside the fragment."""
    snap = view.snapshot()
    frame = read(frame_of)
    cov = snap.coverage
    figs = live_figures(frame, snap, view.history, show_arrows=show_arrows, setup=setup)
    badges = coverage_badges(cov, smoothed_modes(view.history) if cov is not None else 0.0,
                             SMOOTH_CHECKS, frame.eval_every)
    summary = summary_html(badges, losses_line(view.history.last("loss_d"),
                                               view.history.last("loss_g")),
                           pretrained_note(frame.pretrained_steps, view.steps))
    return {"gan_fig_samples": Figure(figs["gan_fig_samples"]),
            "gan_summary": Html(summary, markdown=True),
            "gan_fig_curves": Figure(figs["gan_fig_curves"])}


def gan_setup(s: Mapping[str, Any]) -> str:
    """The GAN being trained, in words: target, mode σ, networks (layers × width), loss."""
    target = s["gan_target"] if s["gan_target"] == UPLOAD else \
        f"{s['gan_target']}, σ = {s['gan_std']:g}"
    return (f"{target} · G {s['gan_g_depth']}×{s['gan_g_width']}, "
            f"D {s['gan_d_depth']}×{s['gan_d_width']} · {s['gan_loss']} loss")


def _draw(view, tick) -> None:
    place_all(live_parts(frame_parts, view, show_arrows=bool(STATE.value("gan_arrows")),
                         setup=gan_setup(STATE.values())))


@st.cache_data(max_entries=4, show_spinner=False)
def _pretrained_bytes(name: str) -> bytes | None:
    path = ROOT / "assets" / "weights" / f"gan_{name}.pt"
    return path.read_bytes() if path.exists() else None


PRETRAINED_USED = "gan__pretrained_used"


def _factory(target, s: Mapping[str, Any], seed: int, kwargs: dict, upload_id):
    """(the trainer factory, whether it starts from the pretrained snapshot). Session state
    and the snapshot's bytes are read here, in the page: the factory is a pure
    functools.partial of engine.gan.reads.build_trainer over plain values (it may run in a
    worker process). The first time a session builds the default GAN (no upload) it is the
    shipped snapshot of exactly these settings; after that (Reset) a fresh one."""
    spec = PRETRAINED["default"]
    wanted = trainer_config(spec.target, spec.std, spec.seed, spec.kwargs)
    mine = trainer_config(s["gan_target"], s["gan_std"], seed, kwargs)
    use = upload_id is None and mine == wanted and not st.session_state.get(PRETRAINED_USED)
    return functools.partial(build_trainer, target, float(s["gan_std"]), int(seed),
                             session.device(), kwargs,
                             _pretrained_bytes("default") if use else None), use


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
    hist = pd.DataFrame(read_trainer("gan", coverage_table_of))
    st.download_button("Download coverage history (CSV)", hist.to_csv(index=False).encode(),
                       file_name="gan-coverage.csv", mime="text/csv", key="gan_cov_csv",
                       icon=":material/download:", on_click="ignore")


def _train_controls() -> None:
    """The training controls. The two expanders draw their 15 widgets only while open (their
    values live in the URL and the session meanwhile, like a closed tab's widgets): every
    element on the page is re-rendered by the browser on each playing frame, and
    these were a third of the page's elements."""
    STATE.widget("gan_target")
    STATE.widget("gan_std")
    STATE.widget("gan_loss")
    with st.expander("Networks and optimizer", key="gan_more_net", on_change="rerun") as net:
        if net.open:
            c = st.columns(2)
            for i, key in enumerate(("gan_g_width", "gan_g_depth", "gan_d_width", "gan_d_depth",
                                     "gan_lr_g", "gan_lr_d")):
                STATE.widget(key, c[i % 2])
            for key in ("gan_d_steps", "gan_latent", "gan_opt"):
                STATE.widget(key)
    with st.expander("Remedies", key="gan_more_fix", on_change="rerun") as fix:
        if fix.open:
            for key in ("gan_unroll", "gan_r1", "gan_gp", "gan_sn", "gan_mbstd", "gan_pack"):
                STATE.widget(key)
    STATE.widget("gan_arrows")      # outside the live fragment: a toggle reruns the page
    c = st.columns(2)
    c[0].button("Step D", key="gan_step_d", on_click=_step_part, args=("d",),
                width="stretch", help="One update of the discriminator only.")
    c[1].button("Step G", key="gan_step_g", on_click=_step_part, args=("g",),
                width="stretch", help="One update of the generator only.")


def _live_gan(panel, draw) -> tuple[Any, dict, Mapping[str, Any]]:
    """The training controls and the live GAN (key "gan") drawn by `draw`: the Train and
    the Manifold tab show the same trainer, built from the same settings (one config, so
    switching tabs keeps the run). Returns (the frame's view or None, the config, the
    settings)."""
    with panel.controls:
        _train_controls()
        s = STATE.values()
        seed = session.seed()
        target, upload_id = _target(s, seed)
    kwargs = trainer_kwargs(s)
    config = {**kwargs, "target": s["gan_target"], "std": s["gan_std"],
              "upload": upload_id, "seed": seed, "device": session.device()}
    factory, pretrained = _factory(target, s, seed, kwargs, upload_id)
    with panel.figure:
        view = live_training(
            "gan", factory, draw, config=config, steps_per_frame=STEPS_PER_FRAME,
            max_steps_per_frame=500, interval_s=FRAME_INTERVAL_S)
    if pretrained:       # built now from the snapshot (or kept): later builds start fresh
        st.session_state[PRETRAINED_USED] = True
    return view, config, s


def train_view(panel) -> None:
    view, config, s = _live_gan(panel, _draw)
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


# ----------------------------------------------------------------------------- manifold
def manifold_parts(view, read, show_arrows: bool, setup: str = "") -> dict:
    """One live frame of the Manifold tab as parts (pure, like frame_parts): the latent grid
    through G over D (engine.gan.manifold.manifold_of, read next to the trainer) and ONE
    summary element with the grid's shares per mode."""
    m = read(manifold_of)
    summary = summary_html(manifold_badges(m), shares_line(m.shares),
                           pretrained_note(read(frame_of).pretrained_steps, view.steps))
    return {"gan_fig_manifold": Figure(manifold_figure(m, setup, show_arrows=show_arrows)),
            "gan_manifold_summary": Html(summary.replace("gan-summary", "gan-manifold"),
                                         markdown=True)}


def _draw_manifold(view, tick) -> None:
    place_all(live_parts(manifold_parts, view, show_arrows=bool(STATE.value("gan_arrows")),
                         setup=gan_setup(STATE.values())))


def manifold_view(panel) -> None:
    _live_gan(panel, _draw_manifold)
    with panel.notes:
        explain("**Reading the map.** Left: the latent plane z = (z₁, z₂) from −2.5 to 2.5 "
                "(with more latent dimensions, the slice where the others are 0), each point "
                "coloured by the mode its image G(z) lands in (within 3σ), light grey where it "
                "lands near no mode. Right: the same grid lines carried through G (purple) "
                "over the real data (grey), each mode's 3σ circle in its colour, and D's "
                "verdict behind (blue = judged real). Black strokes: −∇ₓ L_G at the grid's "
                "nodes, where D pulls a fake sample there. The shares weight each node by the "
                "prior N(0, I), so they estimate how much of G's output each mode receives; "
                "the folded share is the prior mass where G turns the plane over (its "
                "Jacobian's sign flips). A collapsed generator squeezes the whole grid into "
                "one small region; a healthy one tears the plane into one patch per mode.")


# ----------------------------------------------------------------------------- Dirac view
def dirac_view(panel) -> None:
    with panel.controls:
        loss = STATE.widget("gan_dirac_loss")
        STATE.widget("gan_dirac_gamma")
        STATE.widget("gan_dirac_lr")
        STATE.widget("gan_dirac_steps")
        STATE.widget("gan_dirac_sim")
        if not STATE.value("gan_dirac_sim"):
            STATE.widget("gan_dirac_nd")
        st.caption(DIRAC_LOSSES[loss])
    s = STATE.values()
    runs = dirac_runs(s)
    with panel.figure:
        show_figure(dirac_figure(dirac_gan_field(loss, float(s["gan_dirac_gamma"]), 2.0, 15),
                                 runs, 2.0), key="gan_fig_dirac")
        m = st.columns(len(runs))
        for col, (name, tr) in zip(m, runs.items()):
            col.metric(f"Distance to (0, 0) after {len(tr.distance) - 1} it. ({name})",
                       format_number(float(tr.distance[-1])),    # 1e-6 must not read 0.000
                       f"{tr.distance[-1] - tr.distance[0]:+.3f}",
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



# ----------------------------------------------------------------------------- G losses
def g_losses_view(panel) -> None:
    with panel.controls:
        STATE.widget("gan_gl_at")
    s = STATE.values()
    at = float(s["gan_gl_at"])
    with panel.figure:
        show_figure(g_losses_figure(g_loss_curves_of(s), at), key="gan_fig_glosses")
        m = st.columns(2)
        for col, (name, label) in zip(m, (("minimax", "minimax"),
                                          ("nonsaturating", "non-saturating"))):
            col.metric(f"Signal to G at D(G(z)) = {at:g} ({label})",
                       format_number(g_loss_slope(s, name)))
    with panel.notes:
        st.latex(r"\text{minimax: } \min_G \log(1-D(G(z))),\qquad "
                 r"\text{non-saturating: } \min_G -\log D(G(z))")
        explain("Both losses have the same fixed point, but not the same slope. Early in "
                "training D rejects the fakes, D(G(z)) ≈ 0: there log(1 − D) is flat, and "
                "through D's sigmoid it passes back only |∂L/∂f| = D, almost nothing, while "
                "−log D is steep and passes 1 − D ≈ 1. The trainer uses these same loss "
                "functions (the Loss control of the Train tab).")


# ----------------------------------------------------------------------------- D* vs critic
def critic_view(panel) -> None:
    with panel.controls:
        STATE.widget("gan_oc_gap")
    s = STATE.values()
    with panel.figure:
        show_figure(critic_figure(critic_view_of(s)), key="gan_fig_critic")
        m = st.columns(3)
        m[0].metric("D* at the fake mean", format_number(oc_value(s, "d_star")))
        m[1].metric("|dD*/dx| at the fake mean", format_number(oc_value(s, "d_slope")))
        m[2].metric("|f′| at the fake mean", format_number(oc_value(s, "critic_slope")))
    with panel.notes:
        st.latex(r"D^*(x)=\frac{p_r(x)}{p_r(x)+p_f(x)},\qquad "
                 r"f^*=\arg\max_{\|f\|_L\le 1}\ \mathbb{E}_r f-\mathbb{E}_f f,\quad "
                 r"f^{*\prime}(x)=\operatorname{sign}\bigl(F_f(x)-F_r(x)\bigr)")
        explain("Both are optimal, in closed form, for fake data N(0, 1) and real data "
                "N(distance, 1). Once the two barely overlap, D* is 0 on the fakes and 1 on "
                "the real data, flat in between: its slope at the fakes, the gradient a "
                "generator trained against it receives, vanishes. The Wasserstein critic is a "
                "straight line of slope 1 wherever the two distributions' CDFs differ, so it "
                "points the fakes towards the data however far apart they are.")


VIEWS = [View("train", "Train a GAN", train_view,
              live=Live("gan", train_max=5_000)),
         View("manifold", "Manifold", manifold_view, live=Live("gan", train_max=5_000)),
         View("dirac", "Dirac-GAN", dirac_view),
         View("wasserstein", "Why Wasserstein", wasserstein_view),
         View("glosses", "Generator losses", g_losses_view),
         View("critic", "Optimal D vs critic", critic_view)]

if __name__ == "__main__":
    topic_page("gan", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\min_G\max_D\ \mathbb{E}_{x}\log D(x)+\mathbb{E}_{z}"
                       r"\log\bigl(1-D(G(z))\bigr)")
