"""VAE latent grids: train a VAE on the 8x8 digits live, watch the latent scatter and the
decoded grid; a replay of how the latent space formed; the 1-D toy of why the ELBO is a bound;
autoencoder vs PCA on a curve. Settings -> engine/vae/ -> topics/vae/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, one function per view, and
the footer. The constants and pure computations that both the views and the claims use are in
topics/vae/compute.py, PRESETS and STEPS with their claims in topics/vae/tour.py."""
from __future__ import annotations

import functools
import math
import time

import numpy as np
import pandas as pd
import streamlit as st

from engine.vae import reads
from engine.vae import (LIKELIHOODS, curved_manifold, fit_q, kl_q_posterior, pca_reconstruct,
                        toy_elbo)
from ui import session
from ui import warm
from ui.autoplay import Autoplay
from live.controls import get_trainer, live_training, read_trainer
from live.push import live_parts, place
from ui.on_demand import on_demand
from ui.page import Live, View, topic_page, user_errors
from live.parts import Caption, Figure, Image, Metrics
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from topics.vae.compute import (
    MODELS, BETAS, LATENT_DIMS, STARTS, SPAN_CHOICES, Z_LIMIT, REPLAY_SPEEDS, digits,
    deterministic_of, dims_of, shipped_file, trainer_factory, trainer_config, span_of,
    posterior_modes, autoencoders, cached_replay_extent, delivered_rate, shipped_jobs)
from topics.vae.figures import (digit_png, grid_figure, grid_png, latent_scatter, loss_curves,
                             manifold_figure, strip_figure, toy_bars_figure,
                             toy_marginal_figure, toy_posterior_figure)
from topics.vae.brush import brush_view
from topics.vae.tour import PRESETS, STEPS
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants

STATE = StateTable([
    Control("vae_model", "VAE", "Model", kind="selectbox", options=list(MODELS),
            help="autoencoder: z = μ(x), no KL term."),
    Control("vae_beta", 1.0, "β (KL weight)", kind="select_slider", options=BETAS,
            help="The loss is recon + β·KL. 0: reconstruction only; 1: the VAE (loss = −ELBO); "
                 ">1: β-VAE."),
    Control("vae_dim", 2, "Latent dim", kind="selectbox", options=LATENT_DIMS),
    Control("vae_lik", "bernoulli", "Likelihood p(x|z)", kind="selectbox",
            options=list(LIKELIHOODS),
            help="bernoulli: summed cross-entropy; gaussian: N(decode(z), 0.1² I)."),
    Control("vae_reparam", True, "Reparameterize", kind="toggle",
            help="Off: z is sampled without a gradient path to μ and σ."),
    Control("vae_start", STARTS[0], "Start from", kind="selectbox", options=STARTS),
    Control("vae_span", "quantiles", "Grid spacing", kind="selectbox", options=SPAN_CHOICES,
            help="quantiles: Φ⁻¹(0.05 … 0.95) of the N(0, 1) prior; linear: −3 … 3; fit to "
                 "codes: ± the 99th percentile of |μ| over the test digits, the square the "
                 "scatter shows (an autoencoder has no prior, so its grid follows its codes)."),
    Control("vae_gridn", 15, "Grid size n", lo=5, hi=20, step=1),
    Control("vae_dx", 0, "Horizontal dim", kind="selectbox", options=list(range(8)),
            format_func=lambda i: f"z{i + 1}"),
    Control("vae_dy", 1, "Vertical dim", kind="selectbox", options=list(range(8)),
            format_func=lambda i: f"z{i + 1}"),
    Control("vae_z1", 0.0, "Decode at z (horizontal)", lo=-Z_LIMIT, hi=Z_LIMIT, step=0.05,
            help="Or click a point in the scatter."),
    Control("vae_z2", 0.0, "Decode at z (vertical)", lo=-Z_LIMIT, hi=Z_LIMIT, step=0.05),
    Control("vae_ia", 1, "From digit", kind="selectbox", options=list(range(10))),
    Control("vae_ib", 7, "To digit", kind="selectbox", options=list(range(10))),
    Control("vae_inth", 0, "Example #", kind="number", lo=0, hi=30, step=1,
            help="Which test example of each class."),
    Control("vae_snap_speed", 4, "Replay speed asked (snapshots per second)",
            kind="select_slider", options=REPLAY_SPEEDS),
    Control("vae_x", 0.0, "Observed x", lo=-4.0, hi=4.0, step=0.1),
    Control("vae_qm", 1.5, "q mean m", lo=-3.0, hi=3.0, step=0.01),
    Control("vae_qs", 0.5, "q std s", lo=0.05, hi=2.0, step=0.01),
    Control("vae_mnoise", 0.05, "Noise", lo=0.0, hi=0.3, step=0.01),
    Control("vae_mhidden", 16, "Autoencoder width", kind="select_slider", options=[8, 16, 32, 64]),
    Control("vae_mfit", False, "Train the autoencoders", kind="toggle",
            help="A linear and a nonlinear 2-1-2 autoencoder, full batch, ≈1.5 s on a CPU core "
                 "(cached per setting)."),
])



# ----------------------------------------------------------------------------- latent view
def model_controls() -> dict:
    """The controls that define the model, then the grid's (rare ones in an expander)."""
    STATE.widget("vae_model")
    ae = deterministic_of(STATE.values())
    STATE.widget("vae_beta", disabled=ae)
    STATE.widget("vae_start")
    with st.expander("Latent size, likelihood, grid"):
        STATE.widget("vae_dim")
        STATE.widget("vae_lik")
        STATE.widget("vae_reparam", disabled=ae)
        STATE.widget("vae_span")
        STATE.widget("vae_gridn")
        if int(STATE.value("vae_dim")) > 2:
            c = st.columns(2)
            STATE.widget("vae_dx", c[0])
            STATE.widget("vae_dy", c[1])
    s = STATE.values()
    _, problem = dims_of(s)
    if problem:
        st.warning(f"Showing z1 and z2: {problem}.", icon=":material/warning:")
    if s["vae_start"] == STARTS[0] and shipped_file(s) is None:
        st.caption("No shipped model for these settings: training from scratch.")
    if deterministic_of(s) and s["vae_span"] == "quantiles":
        st.caption("An autoencoder has no prior to take quantiles of: its grid spans its codes.")
    return s


def _on_pick() -> None:
    sel = st.session_state.get("vae_scatter")
    pts = (sel or {}).get("selection", {}).get("points", []) if isinstance(sel, dict) else \
        getattr(getattr(sel, "selection", None), "points", [])
    if pts:
        st.session_state["vae_z1"] = float(np.clip(round(pts[0]["x"], 2), -Z_LIMIT, Z_LIMIT))
        st.session_state["vae_z2"] = float(np.clip(round(pts[0]["y"], 2), -Z_LIMIT, Z_LIMIT))


def metric_items(view, ae: bool) -> list:
    """One row (a Metrics part: a single element while playing)."""
    h = view.history
    row = [("Epoch", f"{view.snapshot().epoch:.1f}"),
           ("Test recon (nats)", f"{h.last('test_recon'):.2f}",
            "−log p(x|z) per digit, averaged over the 359 test digits.")]
    if not ae:
        row += [("Test KL (nats)", f"{h.last('test_kl'):.2f}"),
                ("Test ELBO (nats)", f"{h.last('test_elbo'):.2f}",
                 "ELBO = −(recon + KL) per digit, one z sample each; a lower bound on "
                 "log p(x) whatever β the model was trained with.")]
    row.append(("‖∂recon/∂encoder‖", f"{h.last('enc_grad_recon'):.3g}",
                "Norm of the reconstruction term's gradient w.r.t. the encoder weights "
                "(0 when reparameterization is off)."))
    return row


AE_NOTE = ("An autoencoder has no KL term and no ELBO: it is not a probabilistic model, only a "
           "reconstruction error is defined.")


def _scatter_title(epoch: float, history, ae: bool) -> str:
    """The latent scatter's title: the epoch and, for a VAE, the test KL of the last check
    (what the tour's words point to, in the figure itself: on the projector's first screen)."""
    kl = float("nan") if ae else history.last("test_kl")
    if math.isfinite(kl):
        return f"Epoch {epoch:.1f} · test KL {kl:.2f} nats"
    return f"Latent means at epoch {epoch:.1f}"


def frame_parts(view, read, dims, n: int, span, z, ae: bool, classroom: bool) -> dict:
    """One live frame as parts (live/parts.py; pure, so the frame route can build it too):
    the latent scatter (click to decode, when paused), the decoded grid, the digit decoded at
    z, the loss curves, the spread caption (more than 2 latent dims) and the metrics row."""
    codes = view.snapshot().codes
    frame = read(functools.partial(reads.frame_of, means=codes.means, dims=dims, n=n, span=span,
                                   z=z))
    h = view.history
    parts = {
        "vae_scatter": Figure(_projector_legend(latent_scatter(
            codes.means[:, list(dims)], codes.labels, grid=frame.grid,
            picked=(z[dims[0]], z[dims[1]]), dims=dims,
            title=_scatter_title(view.snapshot().epoch, h, ae)), classroom),
            on_select=_on_pick, selection_mode="points"),
        "vae_gridfig": Figure(grid_figure(frame.grid)),
        "vae_digit": Image(digit_png(frame.decoded),
                           f"Decoded at z = ({z[dims[0]]:.2f}, {z[dims[1]]:.2f})"),
        "vae_curves": Figure(loss_curves({k: h.as_arrays(k) for k in h.values
                                          if not (ae and k.endswith(("kl", "elbo")))},
                                         frame.steps_per_epoch))}
    if len(z) > 2:
        spread = codes.means.std(0)
        parts["vae_spread"] = Caption(
            "Spread (std) of μ over the test digits, per latent dim: " + ", ".join(
                f"z{i + 1} **{v:.2f}**" for i, v in enumerate(spread)) + ". Dims near 0 are "
            "unused (their q(z|x) sits on the prior); traverse the spread-out ones.")
    parts["vae_metrics"] = Metrics(metric_items(view, ae))
    if ae:
        parts["vae_ae_note"] = Caption(AE_NOTE)
    return parts


def latent_view(panel) -> None:
    with panel.controls:
        s = model_controls()
    seed, device = session.seed(), session.device()
    dims, _ = dims_of(s)
    ae = deterministic_of(s)

    def draw(view, tick) -> None:
        """The live frame. The decode sliders live here, beside the image they decode: moving
        one reruns this fragment only (not the controls, the notes or the trainer's handle),
        and a click on the scatter moves them within the same fragment."""
        codes = view.snapshot().codes
        left, right = st.columns(2)
        mid = st.container()
        a, b = st.columns([1, 3])
        with a:
            digit = st.container()
            # the decode sliders span the codes (±4 covers a VAE; an autoencoder's reach ±12)
            reach = float(math.ceil(max(4.0, reads.code_reach(codes.means, dims))))
            z = np.zeros(codes.means.shape[1], np.float32)
            z[list(dims)] = [STATE.widget(key, lo=-reach, hi=reach,
                                          label=f"Decode at z{d + 1}")
                             for key, d in (("vae_z1", dims[0]), ("vae_z2", dims[1]))]
        parts = live_parts(frame_parts, view, dims=dims, n=int(s["vae_gridn"]),
                           span=span_of(s), z=z, ae=ae, classroom=session.classroom())
        for box, slots in ((left, ["vae_scatter"]), (right, ["vae_gridfig"]),
                           (digit, ["vae_digit"]), (b, ["vae_curves"]),
                           (mid, ["vae_spread", "vae_metrics", "vae_ae_note"])):
            with box:
                for slot in slots:
                    if slot in parts:
                        place(parts, slot)

    with panel.figure, user_errors("train the VAE"):
        live_training("vae_live", trainer_factory(s, seed, device), draw,
                      trainer_config(s, seed, device), steps_per_frame=60,
                      max_steps_per_frame=400)
    with panel.notes:
        st.latex(r"\mathrm{KL}\big(\mathcal N(\mu,\sigma^2)\,\|\,\mathcal N(0,1)\big) = "
                 r"\tfrac12\textstyle\sum_j\big(\mu_j^2 + \sigma_j^2 - 1 - \log\sigma_j^2\big)")
        explain("**Reading the picture.** The loss is recon + β·KL. The reconstruction term "
                "pulls codes apart so the decoder can tell digits apart; the KL term pulls "
                "every q(z|x) toward N(0, I). At β = 1 the loss is −ELBO and the balance gives "
                "a centred, round cloud without holes, so every grid cell decodes to something "
                "digit-like; the price is blur. For β < 1 the training loss is not −ELBO "
                "(it no longer bounds log p(x)); the ELBO shown is always the β = 1 quantity.")
        _export(s, seed, device, dims)


def _export(s, seed, device, dims) -> None:
    """Outside the live fragment, and only when asked for (ui.on_demand)."""
    with st.expander("Export"):
        on_demand("vae_export", lambda: _export_files(s, seed, device, dims))


def _export_files(s, seed, device, dims) -> None:
    """The export's files, read under the trainer's lock (live.controls.read_trainer)."""
    out = read_trainer("vae_live", functools.partial(reads.export_of, dims=dims,
                                                      n=int(s["vae_gridn"]), span=span_of(s)))
    codes, steps, mse, grid = out.codes, out.steps, out.test_pixel_mse, out.grid
    frame = pd.DataFrame(codes.means,
                         columns=[f"mu_z{i + 1}" for i in range(codes.means.shape[1])])
    frame.insert(0, "label", codes.labels)
    frame.insert(0, "test_index", np.arange(len(frame)))
    for i in range(codes.logvars.shape[1]):
        frame[f"logvar_z{i + 1}"] = codes.logvars[:, i]
    export_buttons(frame, {**trainer_config(s, seed, device), "grid_n": s["vae_gridn"],
                           "span": span_of(s), "dims": list(dims), "steps": steps,
                           "test_pixel_mse": mse}, "vae-latent")
    st.download_button("Download grid (PNG)", grid_png(grid),
                       file_name="vae-grid.png", mime="image/png", key="vae_png",
                       icon=":material/image:", on_click="ignore")


# ----------------------------------------------------------------------------- replay view
REPLAY_FRAGMENT = "vae_replay_player"
# session keys: the snapshot shown (the truth; the slider "vae_snap" only edits it while
# paused), replay on, skip the next advance (the run that Play triggered), tick times
SNAP_AT, SNAP_PLAYING, SNAP_HOLD = "vae_snap_at", "vae_snap_playing", "vae_snap_hold"
SNAP_TICKS = "vae_snap_ticks"
PLAYER = Autoplay(SNAP_AT, SNAP_PLAYING, SNAP_HOLD)


def _projector_legend(fig, classroom: bool):
    """Classroom fonts make the 11-entry legend under the scatter four rows tall, leaving the
    plot ~150 px: on a projector the legend goes to the right, one entry per line."""
    if classroom:
        fig.update_layout(legend=dict(orientation="v", yref="paper", y=1.0, yanchor="top",
                                      x=1.02, xanchor="left"))
    return fig


def _scrub() -> None:
    """The slider moved: show that snapshot (only while paused: see Autoplay)."""
    if not st.session_state.get(SNAP_PLAYING, False):
        st.session_state[SNAP_AT] = st.session_state["vae_snap"]


def replay_view(panel) -> None:
    s = STATE.values()
    seed, device = session.seed(), session.device()
    dims, _ = dims_of(s)
    get_trainer("vae_live", trainer_factory(s, seed, device),      # the handle exists
                trainer_config(s, seed, device))
    rep = read_trainer("vae_live", reads.replay_of)
    labels = digits().y_test
    with panel.controls:
        st.caption(f"The model of the *Latent space* tab ({s['vae_model']}, "
                   f"{'shipped' if shipped_file(s) else 'trained here'}, iteration "
                   f"{rep.steps:,}): {len(rep.snapshots)} snapshots of the test "
                   "digits' codes.")
        speed = STATE.widget("vae_snap_speed")
    snaps = rep.snapshots
    if len(snaps) < 2:
        st.session_state[SNAP_PLAYING] = False
        with panel.figure:
            st.info("Train a little in the *Latent space* tab (Play or Step) to record "
                    "snapshots of the latent means.", icon=":material/info:")
        return
    last = len(snaps) - 1
    st.session_state[SNAP_AT] = min(max(int(st.session_state.get(SNAP_AT, last)), 0), last)
    with panel.controls:
        playing = PLAYER.button(st, "vae_snap_play", last)
    if not playing:
        st.session_state[SNAP_TICKS] = []
    extent = cached_replay_extent((len(snaps), snaps[-1][0], hash(snaps[-1][1].tobytes()), dims),
                            [m[:, list(dims)] for _, m in snaps])

    @st.fragment(run_every=1 / speed if playing else None, key=REPLAY_FRAGMENT)
    def _frame() -> None:
        end = len(snaps) - 1
        pos = min(st.session_state[SNAP_AT], end)
        running = bool(st.session_state.get(SNAP_PLAYING, False))
        if running and not st.session_state.pop(SNAP_HOLD, False):
            pos = st.session_state[SNAP_AT] = min(pos + 1, end)
            ticks = (st.session_state.get(SNAP_TICKS) or [])[-8:] + [time.monotonic()]
            st.session_state[SNAP_TICKS] = ticks
            if pos == end:                        # the last snapshot is shown: stop
                st.session_state[SNAP_PLAYING] = False
                st.rerun(scope="app")             # redraw Play and end the ticks
        if running:
            st.progress(pos / end, text=f"Snapshot {pos + 1} of {end + 1}")
        else:
            st.session_state["vae_snap"] = pos
            pos = st.session_state[SNAP_AT] = st.slider("Snapshot", 0, end, key="vae_snap",
                                                        on_change=_scrub)
        step, means = snaps[pos]
        epoch = step / rep.steps_per_epoch
        show_figure(latent_scatter(means[:, list(dims)], labels, dims=dims,
                                   title=f"Latent means at epoch {epoch:.1f}", extent=extent),
                    key="vae_replay")
        rate = delivered_rate(st.session_state.get(SNAP_TICKS) or [])
        st.caption(f"Snapshot {pos + 1} of {end + 1}: iteration {step:,}, epoch {epoch:.1f}"
                   + (f"; asked {speed:g}/s, delivering {rate:.1f}/s (each frame is a "
                      "round trip to the server)." if running and rate else "."))

    with panel.figure:
        _frame()
    with panel.notes:
        explain("Every snapshot holds the encoder means of the 359 test digits, recorded every "
                "24 iterations while training (at most 80, older ones thinned). The axes are "
                "fixed for the whole replay (they hold 99% of every frame's points), so the "
                "points move and the frame does not.")
        _interpolation()


def _interpolation() -> None:
    st.markdown("**Interpolate between two test digits**")
    data = digits()
    ic = st.columns([1, 1, 1, 4])
    da = STATE.widget("vae_ia", ic[0])
    db = STATE.widget("vae_ib", ic[1])
    nth = STATE.widget("vae_inth", ic[2])
    pool_a, pool_b = data.x_test[data.y_test == da], data.x_test[data.y_test == db]
    xa, xb = pool_a[min(int(nth), len(pool_a) - 1)], pool_b[min(int(nth), len(pool_b) - 1)]
    strip = read_trainer("vae_live", functools.partial(reads.interpolation_of, x_a=xa, x_b=xb,
                                                        steps=8))
    with ic[3]:
        show_figure(strip_figure(np.concatenate([xa.reshape(1, 8, 8), strip,
                                                 xb.reshape(1, 8, 8)]),
                                 "input · decoded path from μ(a) to μ(b) · input",
                                 ["a"] + [f"t={t:.2f}" for t in np.linspace(0, 1, 8)] + ["b"]),
                    key="vae_strip")


# ----------------------------------------------------------------------------- ELBO view
def _fit() -> None:
    m, s = fit_q(st.session_state.get("vae_x", 0.0), st.session_state.get("vae_qm", 1.5),
                 st.session_state.get("vae_qs", 0.5))
    st.session_state["vae_qm"] = float(np.clip(round(m, 2), -3.0, 3.0))
    st.session_state["vae_qs"] = float(np.clip(round(s, 2), 0.05, 2.0))


def elbo_view(panel) -> None:
    with panel.controls:
        STATE.widget("vae_x")
        STATE.widget("vae_qm")
        STATE.widget("vae_qs")
        st.button("Fit q (maximise the ELBO)", key="vae_fitq", on_click=_fit, width="stretch",
                  help="Gradient ascent on the ELBO from the current (m, s). It stops at a "
                       "local optimum, which need not be the posterior mode nearest the start.")
    s = STATE.values()
    x, qm, qs = float(s["vae_x"]), float(s["vae_qm"]), float(s["vae_qs"])
    with panel.figure, user_errors("compute the ELBO"):
        toy = toy_elbo(x, qm, qs)
        a, b, c = st.columns(3)
        with a:
            show_figure(toy_marginal_figure(toy), key="vae_px")
        with b:
            show_figure(toy_posterior_figure(toy, posterior_modes(x)), key="vae_post")
        with c:
            show_figure(toy_bars_figure(toy), key="vae_bars")
        kl = kl_q_posterior(x, qm, qs)
        modes = ", ".join(f"{m:.2f}" for m in posterior_modes(x))
        st.markdown(f"log p(x) = **{toy.log_px:.4f}**, ELBO = **{toy.elbo:.4f}**, gap = "
                    f"**{toy.gap:.4f}**; KL(q ‖ p(z|x)) by quadrature = **{kl:.4f}**. "
                    f"Posterior modes at z = {modes}.")
    with panel.notes:
        st.markdown("A 1-D model where everything is exact: z ~ N(0, 1), x = g(z) + 0.5·noise "
                    "with g(z) = z³ − 3z. The fold in g makes p(x) bimodal and the posterior "
                    "p(z|x) multimodal; a Gaussian q can cover only one mode.")
        explain("ELBO = E_q[log p(x, z)] + H(q) = log p(x) − KL(q ‖ p(z|x)). Since KL ≥ 0 the "
                "ELBO is a lower bound, tight only when q is the true posterior. Maximising it "
                "over q (press *Fit q*) shrinks the gap; with a multimodal posterior a Gaussian "
                "q settles on one mode (KL(q‖p) is mode-seeking: which one depends on the "
                "start and on the modes' heights) and the gap stays positive.")


# ----------------------------------------------------------------------------- PCA view
def pca_view(panel) -> None:
    with panel.controls:
        STATE.widget("vae_mnoise")
        STATE.widget("vae_mhidden")
        STATE.widget("vae_mfit")
    s = STATE.values()
    seed = session.seed()
    with panel.figure, user_errors("fit the autoencoders"):
        pts = curved_manifold(300, seed, float(s["vae_mnoise"]))
        recons = {"PCA (top direction)": pca_reconstruct(pts, 1)}
        if s["vae_mfit"]:
            recons.update(autoencoders(float(s["vae_mnoise"]), int(s["vae_mhidden"]), seed))
        else:
            st.caption("Switch on *Train the autoencoders* to add them to the picture.")
        show_figure(manifold_figure(pts, recons), key="vae_manifold")
    with panel.notes:
        st.markdown("Points near a curve in the plane, squeezed through a **1-D** code. PCA "
                    "(= a linear autoencoder) can only keep a straight line; a small nonlinear "
                    "autoencoder bends its line along the data.")
        explain("A linear autoencoder with squared error learns the same subspace as PCA (its "
                "line lies on PCA's); the nonlinear one follows the arc and its error drops "
                "well below.")


VIEWS = [View("latent", "Latent space", latent_view,
              live=Live("vae_live", train_max=3_000)),
         View("brush", "Brush the codes", lambda panel: brush_view(panel, STATE.values())),
         View("replay", "Replay & interpolation", replay_view),
         View("elbo", "Why the ELBO", elbo_view),
         View("pca", "Autoencoder vs PCA", pca_view)]

if __name__ == "__main__":
    warm.start("vae", (), shipped_jobs)       # the presets' shipped models, read in advance
    topic_page("vae", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\log p(x) \ge \mathbb{E}_{q}[\log p(x|z)] - \mathrm{KL}(q\,\|\,p)"
                       r";\;\; \text{loss} = \text{recon} + \beta\,\mathrm{KL}")
