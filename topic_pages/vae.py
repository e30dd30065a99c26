"""VAE latent grids: train a VAE on the 8x8 digits live, watch the latent scatter and the
decoded grid; the 1-D toy of why the ELBO is a bound; autoencoder vs PCA on a curve."""
from __future__ import annotations


import numpy as np
import pandas as pd
import streamlit as st
import torch

from engine.vae import (LIKELIHOODS, SPANS, VAETrainer, curved_manifold, decode_point,
                        fit_autoencoder_2d, fit_q, interpolate, kl_q_posterior, latent_grid,
                        load_digit_data, pca_reconstruct, reconstruction_mse, toy_elbo)
from scripts.pretrain_vae import shipped_name
from viz import session
from viz.autoplay import Autoplay
from viz.live import live_training, rerun_page
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.topics import ROOT
from viz.vae_figures import (digit_figure, grid_figure, grid_png, latent_scatter, loss_curves,
                             manifold_figure, replay_extent, strip_figure, toy_bars_figure,
                             toy_marginal_figure, toy_posterior_figure)
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

WEIGHTS = ROOT / "assets" / "weights"
MODELS = {"VAE": False, "autoencoder": True}          # label -> deterministic
BETAS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
LATENT_DIMS = [2, 4, 8]
STARTS = ["shipped model", "from scratch"]
Q = "query-params"

SCRATCH = {"vae_start": "from scratch"}
BASE = {"vae_model": "VAE", "vae_beta": 1.0, "vae_dim": 2, "vae_lik": "bernoulli",
        "vae_reparam": True, "vae_start": "shipped model", "vae_span": "quantiles", "vae_dx": 0,
        "vae_dy": 1}
PRESETS = {
    "Shipped VAE (β = 1)": Preset(BASE, "A VAE trained for 120 epochs: the test digits fill a "
                                        "centred, roughly round cloud and every grid cell decodes to "
                                        "a digit-like image. Press Play to keep training."),
    "Autoencoder: holes in the latent": Preset(
        {**BASE, "vae_model": "autoencoder"},
        "No KL term: clusters drift apart and far from 0, and grid cells between clusters decode "
        "to smudges (compare the grid with the VAE's)."),
    "Train a VAE from scratch": Preset(
        {**BASE, **SCRATCH}, "Press Play. For the first ~15 epochs the KL stays near 0: every "
                             "code sits on the prior and the grid is one average blob. Then the "
                             "codes split by digit and the grid turns into digits (~30 epochs, "
                             "a few seconds). Then open *Replay* below and press its Play."),
    "β = 0: no pull to the prior": Preset(
        {**BASE, **SCRATCH, "vae_beta": 0.0},
        "Press Play: with β = 0 only reconstruction counts; the cloud spreads far beyond the "
        "N(0, 1) quantile grid, like an autoencoder."),
    "β = 8: posterior collapse": Preset(
        {**BASE, **SCRATCH, "vae_beta": 8.0},
        "Press Play: the KL weight wins, the codes crowd at 0 and the grid shows a few blurry "
        "average digits."),
    "Reparameterization off": Preset(
        {**BASE, **SCRATCH, "vae_reparam": False},
        "z is sampled off the autograd graph: the encoder's gradient from the reconstruction "
        "term is exactly 0 (see the metric), so only KL trains the encoder and the codes collapse to 0."),
    "8-D latent: traverse two dims": Preset(
        {**BASE, **SCRATCH, "vae_dim": 8},
        "Press Play: the scatter shows two chosen coordinates of an 8-D code, the grid varies "
        "those two with the other six at 0."),
}
STEPS = [
    Step("The classic picture", "Each grid cell decodes the latent point at its N(0, 1) quantile "
         "coordinates: since the prior is N(0, I), equal-probability cells tile the space the "
         "decoder was trained to use.", BASE),
    Step("Train it yourself", "From scratch, press Play. Watch the left panel: random codes become "
         "a centred cloud with one region per digit; the grid follows.", {**BASE, **SCRATCH}),
    Step("Take the KL away", "A plain autoencoder reconstructs better (lower reconstruction "
         "curve) but its latent has holes: decode a point between clusters.",
         {**BASE, "vae_model": "autoencoder"}),
    Step("Turn β up", "β weights the KL term. Large β pulls every q(z|x) onto the prior: "
         "less information in z, blurrier digits.", {**BASE, **SCRATCH, "vae_beta": 8.0}),
    Step("Why reparameterize", "Sampling z = μ + σ·ε keeps z a differentiable function of the "
         "encoder outputs. Switch it off and the reconstruction gradient to the encoder is 0.",
         {**BASE, **SCRATCH, "vae_reparam": False}),
]

page_header("VAE latent grids",
            "a VAE trains on 8×8 digits in front of you; on the left, where the encoder puts each "
            "test digit in the 2-D latent space, on the right the digits the decoder draws on a "
            "grid over that space.",
            r"\log p(x) \;\ge\; \mathrm{ELBO} = \mathbb{E}_{q(z|x)}[\log p(x|z)]"
            r" - \beta\,\mathrm{KL}\big(q(z|x)\,\|\,\mathcal N(0,I)\big),\quad "
            r"z = \mu + \sigma\odot\varepsilon")

top = st.columns([2, 3])
preset_picker(PRESETS, key="vae_preset", container=top[0])
with top[1]:
    guided_steps(STEPS, key="vae_steps")


@st.cache_resource(show_spinner=False)
def _shipped_state(name: str) -> dict | None:
    path = WEIGHTS / name
    return torch.load(path, weights_only=True, map_location="cpu") if path.exists() else None


@st.cache_data(show_spinner=False)
def _digits():
    return load_digit_data()


# ------------------------------------------------------------------ replay of the snapshots

REPLAY_SPEEDS = [1, 2, 4, 8]          # snapshots per second while playing
REPLAY_FRAGMENT = "vae_replay_player"
# session keys: the snapshot shown (the truth; the slider "vae_snap" only edits it while
# paused), replay on, skip the next advance (the run that Play triggered)
SNAP_AT, SNAP_PLAYING, SNAP_HOLD = "vae_snap_at", "vae_snap_playing", "vae_snap_hold"


PLAYER = Autoplay(SNAP_AT, SNAP_PLAYING, SNAP_HOLD)


def _scrub() -> None:
    """The slider moved: show that snapshot. Only while paused: while playing the slider is
    not drawn, yet the browser still sends its last value with the first tick, which would
    otherwise jump the replay to where the slider was before Play."""
    if not st.session_state.get(SNAP_PLAYING, False):
        st.session_state[SNAP_AT] = st.session_state["vae_snap"]


def _replay(trainer: VAETrainer, labels: np.ndarray, dims: tuple[int, int]) -> None:
    """The trainer's snapshots of the test means (trainer.snapshots: (step, means)) as an
    animation. Play/Pause and the speed sit outside an @st.fragment(run_every=1/speed) that
    draws the snapshot: while playing, each tick reruns only the fragment and shows the next
    snapshot; at the last one play stops. The axes span replay_extent of all snapshots, the
    same for every frame, so the points move and the frame does not.

    While playing the position is a progress bar, not the slider: the browser sends its widget
    values with every tick, and a tick sent before the previous one's answer arrived would
    carry a stale slider value and move the replay back (as on the convolution page)."""
    if len(trainer.snapshots) < 2:
        st.session_state[SNAP_PLAYING] = False
        st.caption("Train a little (Play or Step) to record snapshots of the latent means.")
        return
    last = len(trainer.snapshots) - 1
    st.session_state[SNAP_AT] = min(max(int(st.session_state.get(SNAP_AT, last)), 0), last)
    c = st.columns([1, 3], vertical_alignment="bottom")
    playing = PLAYER.button(c[0], "vae_snap_play", last)
    speed = c[1].select_slider("Replay speed (snapshots per second)", REPLAY_SPEEDS, 4,
                               key="vae_snap_speed", bind=Q)

    @st.fragment(run_every=1 / speed if playing else None, key=REPLAY_FRAGMENT)
    def _frame() -> None:
        snaps = trainer.snapshots                 # grows while the model trains
        end = len(snaps) - 1
        pos = min(st.session_state[SNAP_AT], end)
        running = bool(st.session_state.get(SNAP_PLAYING, False))
        if running and not st.session_state.pop(SNAP_HOLD, False):
            pos = st.session_state[SNAP_AT] = min(pos + 1, end)
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
        epoch = step / trainer.steps_per_epoch
        show_figure(latent_scatter(means[:, list(dims)], labels, dims=dims,
                                   title=f"Latent means at epoch {epoch:.1f}",
                                   extent=replay_extent([m[:, list(dims)] for _, m in snaps])),
                    key="vae_replay")
        st.caption(f"Snapshot {pos + 1} of {end + 1}: iteration {step:,}, epoch {epoch:.1f}"
                   + (f", playing at {speed:g}/s." if running else "."))

    _frame()


tab_latent, tab_elbo, tab_pca = st.tabs(["Latent space", "Why the ELBO", "Autoencoder vs PCA"])

# ============================================================================ Latent space
with tab_latent:
    c = st.columns(6)
    model_name = c[0].selectbox("Model", list(MODELS), key="vae_model", bind=Q,
                                help="autoencoder: z = μ(x), no KL term.")
    deterministic = MODELS[model_name]
    beta = c[1].select_slider("β (KL weight)", BETAS, value=1.0, key="vae_beta", bind=Q,
                              disabled=deterministic,
                              help="0: reconstruction only; 1: the VAE (loss = −ELBO); >1: β-VAE.")
    dim = c[2].selectbox("Latent dim", LATENT_DIMS, key="vae_dim", bind=Q)
    lik = c[3].selectbox("Likelihood p(x|z)", list(LIKELIHOODS), key="vae_lik", bind=Q,
                         help="bernoulli: summed cross-entropy; gaussian: N(decode(z), 0.1² I).")
    reparam = c[4].toggle("Reparameterize", value=True, key="vae_reparam", bind=Q,
                          disabled=deterministic,
                          help="Off: z is sampled without a gradient path to μ and σ.")
    start = c[5].selectbox("Start from", STARTS, key="vae_start", bind=Q)

    g = st.columns(5)
    span = g[0].selectbox("Grid spacing", list(SPANS), key="vae_span", bind=Q,
                          help="quantiles: Φ⁻¹(0.05 … 0.95); linear: −3 … 3.")
    grid_n = g[1].slider("Grid size n", 5, 20, 15, key="vae_gridn", bind=Q)
    dx = g[2].selectbox("Horizontal dim", list(range(dim)), index=0, key="vae_dx", bind=Q,
                        format_func=lambda i: f"z{i + 1}", disabled=dim == 2)
    dy = g[3].selectbox("Vertical dim", list(range(dim)), index=1, key="vae_dy", bind=Q,
                        format_func=lambda i: f"z{i + 1}", disabled=dim == 2)
    if dim == 2:
        dx, dy = 0, 1
    if dx == dy:
        st.warning("Pick two different latent dimensions; showing z1 and z2.")
        dx, dy = 0, 1
    dims = (int(dx), int(dy))

    shipped = shipped_name(dim, lik, deterministic)
    use_shipped = start == STARTS[0] and shipped is not None and _shipped_state(shipped) is not None
    if start == STARTS[0] and not use_shipped:
        g[4].caption("No shipped model for these settings: training from scratch.")
    config = {"model": model_name, "beta": float(beta), "latent_dim": int(dim), "likelihood": lik,
              "reparam": bool(reparam), "start": "shipped" if use_shipped else "scratch",
              "seed": session.seed(), "device": session.device()}

    def make_trainer() -> VAETrainer:
        tr = VAETrainer(latent_dim=dim, beta=beta, likelihood=lik, deterministic=deterministic,
                        reparam=reparam, seed=session.seed(), device=session.device(),
                        data=_digits())
        if use_shipped:
            tr.load_state_dict(_shipped_state(shipped))
        return tr

    def _on_pick() -> None:
        sel = st.session_state.get("vae_scatter")
        pts = (sel or {}).get("selection", {}).get("points", []) if isinstance(sel, dict) else \
            getattr(getattr(sel, "selection", None), "points", [])
        if pts:
            st.session_state["vae_z1"] = float(np.clip(round(pts[0]["x"], 2), -4, 4))
            st.session_state["vae_z2"] = float(np.clip(round(pts[0]["y"], 2), -4, 4))

    def draw(trainer: VAETrainer, tick) -> None:
        codes = trainer.snapshot().codes
        grid = latent_grid(trainer.model, grid_n, span, dims=dims)
        z = np.zeros(trainer.model.latent_dim, np.float32)
        z[list(dims)] = [st.session_state.get("vae_z1", 0.0), st.session_state.get("vae_z2", 0.0)]
        left, right = st.columns(2)
        with left:
            show_figure(latent_scatter(codes.means[:, list(dims)], codes.labels, grid=grid,
                                       picked=(z[dims[0]], z[dims[1]]), dims=dims),
                        key="vae_scatter", selection_mode="points",
                        on_select=rerun_page(_on_pick))   # the z sliders sit outside the fragment
        with right:
            show_figure(grid_figure(grid), key="vae_gridfig")
        if trainer.model.latent_dim > 2:
            spread = codes.means.std(0)
            st.caption("Spread (std) of μ over the test digits, per latent dim: " + ", ".join(
                f"z{i + 1} **{v:.2f}**" for i, v in enumerate(spread)) + ". Dims near 0 are unused "
                "(their q(z|x) sits on the prior); traverse the spread-out ones.")
        h = trainer.history
        m = st.columns(5)
        m[0].metric("Epoch", f"{trainer.steps / trainer.steps_per_epoch:.1f}")
        m[1].metric("Test recon (nats)", f"{h.last('test_recon'):.2f}")
        m[2].metric("Test KL (nats)", f"{h.last('test_kl'):.2f}")
        m[3].metric("Test ELBO (nats)", f"{h.last('test_elbo'):.2f}",
                    help="Per digit, averaged over the 359 test digits; one z sample each.")
        m[4].metric("‖∂recon/∂encoder‖", f"{h.last('enc_grad_recon'):.3g}",
                    help="Norm of the reconstruction term's gradient w.r.t. the encoder weights "
                         "(0 when reparameterization is off).")
        a, b = st.columns([1, 3])
        with a:
            show_figure(digit_figure(decode_point(trainer.model, z),
                                     f"z = ({z[dims[0]]:.2f}, {z[dims[1]]:.2f})"), key="vae_decoded")
        with b:
            show_figure(loss_curves({k: h.as_arrays(k) for k in h.values}, trainer.steps_per_epoch),
                        key="vae_curves")

    st.latex(r"\mathrm{KL}\big(\mathcal N(\mu,\sigma^2)\,\|\,\mathcal N(0,1)\big) = "
             r"\tfrac12\textstyle\sum_j\big(\mu_j^2 + \sigma_j^2 - 1 - \log\sigma_j^2\big)")
    zc = st.columns(2)
    zc[0].slider(f"Decode at z{dims[0] + 1}", -4.0, 4.0, 0.0, 0.05, key="vae_z1", bind=Q,
                 help="Or click a point in the scatter.")
    zc[1].slider(f"Decode at z{dims[1] + 1}", -4.0, 4.0, 0.0, 0.05, key="vae_z2", bind=Q)
    with user_errors("train the VAE"):
        trainer = live_training("vae_live", make_trainer, draw, config, steps_per_frame=60,
                                max_steps_per_frame=400)

        st.subheader("Interpolate between two test digits")
        data = _digits()
        ic = st.columns([1, 1, 1, 4])
        da = ic[0].selectbox("From digit", list(range(10)), index=1, key="vae_ia", bind=Q)
        db = ic[1].selectbox("To digit", list(range(10)), index=7, key="vae_ib", bind=Q)
        nth = ic[2].number_input("Example #", 0, 30, 0, key="vae_inth", bind=Q,
                                 help="Which test example of each class.")
        pool_a, pool_b = data.x_test[data.y_test == da], data.x_test[data.y_test == db]
        xa, xb = pool_a[min(int(nth), len(pool_a) - 1)], pool_b[min(int(nth), len(pool_b) - 1)]
        strip = interpolate(trainer.model, xa, xb, 8)
        with ic[3]:
            show_figure(strip_figure(np.concatenate([xa.reshape(1, 8, 8), strip, xb.reshape(1, 8, 8)]),
                                     "input · decoded path from μ(a) to μ(b) · input",
                                     ["a"] + [f"t={t:.2f}" for t in np.linspace(0, 1, 8)] + ["b"]),
                        key="vae_strip")

        with st.expander("Replay: how the latent space formed", expanded=False):
            _replay(trainer, data.y_test, dims)

        codes = trainer.snapshot().codes
        frame = pd.DataFrame(codes.means, columns=[f"mu_z{i + 1}" for i in range(codes.means.shape[1])])
        frame.insert(0, "label", codes.labels)
        frame.insert(0, "test_index", np.arange(len(frame)))
        for i in range(codes.logvars.shape[1]):
            frame[f"logvar_z{i + 1}"] = codes.logvars[:, i]
        ex = st.columns([2, 1])
        export_buttons(frame, {**config, "grid_n": grid_n, "span": span, "dims": list(dims),
                               "steps": trainer.steps,
                               "test_pixel_mse": reconstruction_mse(trainer.model, data.x_test)},
                       "vae-latent", container=ex[0])
        ex[1].download_button("Download grid (PNG)",
                              grid_png(latent_grid(trainer.model, grid_n, span, dims=dims)),
                              file_name="vae-grid.png", mime="image/png", key="vae_png",
                              icon=":material/image:", on_click="ignore")
    explain("**Reading the picture.** The loss has two parts: the reconstruction term pulls codes "
            "apart so the decoder can tell digits apart; the KL term pulls every q(z|x) toward "
            "N(0, I). Their balance gives a centred, round cloud without holes, so every grid "
            "cell decodes to something digit-like. The price is blur: VAE digits are smoother "
            "than an autoencoder's reconstructions.")

# ============================================================================ Why the ELBO
with tab_elbo:
    st.markdown("A 1-D model where everything is exact: z ~ N(0, 1), x = g(z) + 0.5·noise with "
                "g(z) = z³ − 3z. The fold in g makes p(x) bimodal and the posterior p(z|x) "
                "multimodal; a Gaussian q can cover only one mode.")
    ec = st.columns(4)
    x_obs = ec[0].slider("Observed x", -4.0, 4.0, 0.0, 0.1, key="vae_x", bind=Q)
    qm = ec[1].slider("q mean m", -3.0, 3.0, 1.5, 0.01, key="vae_qm", bind=Q)
    qs = ec[2].slider("q std s", 0.05, 2.0, 0.5, 0.01, key="vae_qs", bind=Q)

    def _fit() -> None:
        m, s = fit_q(st.session_state["vae_x"], st.session_state["vae_qm"], st.session_state["vae_qs"])
        st.session_state["vae_qm"] = float(np.clip(round(m, 2), -3.0, 3.0))
        st.session_state["vae_qs"] = float(np.clip(round(s, 2), 0.05, 2.0))

    ec[3].button("Fit q (maximise the ELBO)", key="vae_fitq", on_click=_fit, width="stretch",
                 help="Gradient ascent on the ELBO from the current (m, s): lands on the "
                      "posterior mode nearest the start.")
    with user_errors("compute the ELBO"):
        toy = toy_elbo(x_obs, qm, qs)
        a, b, c3 = st.columns([1, 1, 1])
        with a:
            show_figure(toy_marginal_figure(toy), key="vae_px")
        with b:
            show_figure(toy_posterior_figure(toy), key="vae_post")
        with c3:
            show_figure(toy_bars_figure(toy), key="vae_bars")
        kl = kl_q_posterior(x_obs, qm, qs)
        st.markdown(f"log p(x) = **{toy.log_px:.4f}**, ELBO = **{toy.elbo:.4f}**, gap = "
                    f"**{toy.gap:.4f}**; KL(q ‖ p(z|x)) by quadrature = **{kl:.4f}**.")
    explain("ELBO = E_q[log p(x, z)] + H(q) = log p(x) − KL(q ‖ p(z|x)). Since KL ≥ 0 the ELBO "
            "is a lower bound, tight only when q is the true posterior. Maximising it over q "
            "(press *Fit q*) shrinks the gap; with a multimodal posterior a Gaussian q settles on "
            "one mode (KL(q‖p) is mode-seeking) and the gap stays positive.")

# ============================================================================ AE vs PCA
with tab_pca:
    st.markdown("Points near a curve in the plane, squeezed through a **1-D** code. PCA (= a "
                "linear autoencoder) can only keep a straight line; a small nonlinear "
                "autoencoder bends its line along the data.")
    pc = st.columns(3)
    noise = pc[0].slider("Noise", 0.0, 0.3, 0.05, 0.01, key="vae_mnoise", bind=Q)
    hidden = pc[1].select_slider("Autoencoder width", [8, 16, 32, 64], value=16, key="vae_mhidden", bind=Q)
    pc[2].toggle("Train the autoencoders", key="vae_mfit", bind=Q,
                 help="A linear and a nonlinear 2-1-2 autoencoder, full batch, ≈1.5 s on a CPU "
                      "core (cached per setting).")

    @st.cache_data(show_spinner="Training the autoencoders…", max_entries=16)
    def _autoencoders(noise: float, hidden: int, seed: int):
        pts = curved_manifold(300, seed, noise)
        return {"linear autoencoder": fit_autoencoder_2d(pts, linear=True, steps=300, lr=0.05,
                                                         seed=seed, device="cpu"),
                "nonlinear autoencoder": fit_autoencoder_2d(pts, hidden, steps=500, lr=0.02,
                                                            seed=seed, device="cpu")}

    with user_errors("fit the autoencoders"):
        pts = curved_manifold(300, session.seed(), float(noise))
        recons = {"PCA (top direction)": pca_reconstruct(pts, 1)}
        if st.session_state.get("vae_mfit"):
            recons.update(_autoencoders(float(noise), int(hidden), session.seed()))
        else:
            st.caption("Switch on *Train the autoencoders* to add them to the picture.")
        show_figure(manifold_figure(pts, recons), key="vae_manifold")
    explain("A linear autoencoder with squared error learns the same subspace as PCA (its line "
            "lies on PCA's); the nonlinear one follows the arc and its error drops well below.")
