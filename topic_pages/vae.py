"""VAE latent grids: train a VAE on the 8x8 digits live, watch the latent scatter and the
decoded grid; a replay of how the latent space formed; the 1-D toy of why the ELBO is a bound;
autoencoder vs PCA on a curve. Settings -> engine/vae.py -> viz/vae_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

import functools
import math
import time
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st
import torch

from engine import vae_measures as VM
from engine.vae import (LIKELIHOODS, VAETrainer, curved_manifold, fit_autoencoder_2d, fit_q,
                        kl_q_posterior, load_digit_data, load_shipped, pca_reconstruct,
                        shipped_name, toy_elbo, toy_z_grid, true_posterior)
from engine.weights import WeightsError
from viz import session
from viz.autoplay import Autoplay
from viz.claims import Claim
from viz.live import get_trainer, live_training, read_trainer
from viz.on_demand import on_demand
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.topics import ROOT
from viz.vae_figures import (digit_figure, grid_figure, grid_png, latent_scatter, loss_curves,
                             manifold_figure, replay_extent, strip_figure, toy_bars_figure,
                             toy_marginal_figure, toy_posterior_figure)
from viz.widgets import Preset, Step, export_buttons

# ----------------------------------------------------------------------------- constants
WEIGHTS = ROOT / "assets" / "weights"
MODELS = {"VAE": False, "autoencoder": True}          # label -> deterministic
BETAS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
LATENT_DIMS = [2, 4, 8]
STARTS = ["shipped model", "from scratch"]
SPAN_CHOICES = ["quantiles", "linear", "fit to codes"]
Z_LIMIT = 16.0                # decode sliders: the declared range (drawn over the codes' range)
REPLAY_SPEEDS = [1, 2, 4, 8]  # snapshots per second asked for while playing
CLAIM_SEEDS = (0, 1)
CLAIM_EPOCHS = 30

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


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

@st.cache_resource(show_spinner=False, max_entries=4)
def _shipped_state(name: str) -> dict | None:
    try:
        return load_shipped(WEIGHTS / name)
    except WeightsError:     # missing, stale or corrupt: train from scratch
        return None


@st.cache_data(show_spinner=False, max_entries=1)
def digits():
    return load_digit_data()


def deterministic_of(s: Mapping[str, Any]) -> bool:
    return MODELS[s["vae_model"]]


def dims_of(s: Mapping[str, Any]) -> tuple[tuple[int, int], str | None]:
    """(the two latent dims shown, why the chosen ones were replaced or None)."""
    dim = int(s["vae_dim"])
    if dim == 2:
        return (0, 1), None
    dx, dy = int(s["vae_dx"]), int(s["vae_dy"])
    if dx >= dim or dy >= dim:
        return (0, 1), f"the latent has only {dim} dims"
    if dx == dy:
        return (0, 1), "pick two different latent dimensions"
    return (dx, dy), None


def shipped_file(s: Mapping[str, Any]) -> str | None:
    """The shipped weights used for these settings (None: train from scratch)."""
    if s["vae_start"] != STARTS[0]:
        return None
    name = shipped_name(int(s["vae_dim"]), s["vae_lik"], deterministic_of(s))
    return name if name is not None and _shipped_state(name) is not None else None


def make_trainer(s: Mapping[str, Any], seed: int = 0, device: str | None = "cpu") -> VAETrainer:
    tr = VAETrainer(latent_dim=int(s["vae_dim"]), beta=float(s["vae_beta"]),
                    likelihood=s["vae_lik"], deterministic=deterministic_of(s),
                    reparam=bool(s["vae_reparam"]), seed=seed, device=device, data=digits())
    name = shipped_file(s)
    if name is not None:
        tr.load_state_dict(_shipped_state(name))
    return tr


def trainer_config(s: Mapping[str, Any], seed: int, device: str) -> dict:
    return {"model": s["vae_model"], "beta": float(s["vae_beta"]), "latent_dim": int(s["vae_dim"]),
            "likelihood": s["vae_lik"], "reparam": bool(s["vae_reparam"]),
            "start": "shipped" if shipped_file(s) else "scratch", "seed": seed, "device": device}


def span_of(s: Mapping[str, Any]) -> str:
    """The grid spacing used: an autoencoder has no prior, so its 'quantiles' of N(0, 1)
    (±1.64) would cover a sliver of its codes: its grid follows the codes instead."""
    if deterministic_of(s) and s["vae_span"] == "quantiles":
        return "fit to codes"
    return s["vae_span"]


def grid_args(s: Mapping[str, Any]) -> tuple[tuple[int, int], int, str]:
    """(dims, n, span) of the grid the settings draw (engine/vae_measures.py grid_of)."""
    return dims_of(s)[0], int(s["vae_gridn"]), span_of(s)


def grid_of(model, means: np.ndarray, s: Mapping[str, Any]):
    """The decoded grid the page draws, for the codes `means` (n, latent_dim)."""
    return VM.grid_of(model, means, *grid_args(s))


@st.cache_resource(show_spinner=False, max_entries=24)
def _trained(settings: tuple, seed: int, epochs: float) -> VAETrainer:
    s = dict(settings)
    tr = make_trainer(s, seed)
    if epochs > 0:
        tr.step(int(round(epochs * tr.steps_per_epoch)))
    return tr


def trained(s: Mapping[str, Any], seed: int = 0, epochs: float | None = None) -> VAETrainer:
    """The model of these settings: the shipped one as loaded (epochs None), or trained from
    scratch for `epochs` epochs (what Play shows at that epoch)."""
    key = tuple(sorted((k, s[k]) for k in ("vae_model", "vae_beta", "vae_dim", "vae_lik",
                                           "vae_reparam", "vae_start")))
    return _trained(key, int(seed), 0.0 if epochs is None else float(epochs))


@st.cache_data(show_spinner=False, max_entries=1)
def _digit_distance_floor() -> float:
    """90th percentile over the test digits of the pixel MSE to the nearest training digit:
    how far a real, unseen digit is from the training set."""
    d = digits()
    return float(np.percentile(_nearest_mse(d.x_test, d.x_train), 90))


def _nearest_mse(images: np.ndarray, train: np.ndarray) -> np.ndarray:
    a = torch.as_tensor(images.reshape(len(images), -1), dtype=torch.float32)
    b = torch.as_tensor(train, dtype=torch.float32)
    return (torch.cdist(a, b).pow(2) / a.shape[1]).min(1).values.numpy()


def off_digit_share(s: Mapping[str, Any], seed: int = 0, epochs: float | None = None) -> float:
    """Share of the grid's cells whose decoded image is farther (pixel MSE) from every
    training digit than 90% of the real test digits are: cells that decode to no digit (the
    latent's holes)."""
    tr = trained(s, seed, epochs)
    means = tr.snapshot().codes.means
    grid = grid_of(tr.model, means, s)
    d = _nearest_mse(grid.images.reshape(-1, 64), digits().x_train)
    return float(np.mean(d > _digit_distance_floor()))


def code_reach(s: Mapping[str, Any], seed: int = 0, epochs: float | None = None) -> float:
    """99th percentile of |μ| over the test digits and the two dims shown."""
    return VM.code_reach(trained(s, seed, epochs).snapshot().codes.means, dims_of(s)[0])


def code_centre(s: Mapping[str, Any]) -> float:
    """Largest |mean of μ| over the two dims shown (0: the cloud is centred)."""
    means = trained(s).snapshot().codes.means[:, list(dims_of(s)[0])]
    return float(np.abs(means.mean(0)).max())


def grid_spread(s: Mapping[str, Any], seed: int, epochs: float) -> float:
    """Mean over pixels of the std across grid cells: 0 when every cell decodes the same."""
    tr = trained(s, seed, epochs)
    grid = grid_of(tr.model, tr.snapshot().codes.means, s)
    return float(grid.images.reshape(-1, 64).std(0).mean())


def test_metric(s: Mapping[str, Any], name: str, seed: int, epochs: float) -> float:
    return float(trained(s, seed, epochs).history.last(name))


def worst(f, agg=max):
    """A measure of (s, seed) reduced over the claim seeds (worst case)."""
    return lambda s: agg(f(s, seed) for seed in CLAIM_SEEDS)


# ---- the 1-D ELBO toy
def fitted_q(s: Mapping[str, Any]) -> tuple[float, float]:
    return fit_q(float(s["vae_x"]), float(s["vae_qm"]), float(s["vae_qs"]))


def posterior_modes(x: float) -> np.ndarray:
    """Local maxima of the exact posterior p(z|x) on the quadrature grid."""
    z = toy_z_grid()
    p = true_posterior(x, z)
    i = np.flatnonzero((p[1:-1] > p[:-2]) & (p[1:-1] >= p[2:])) + 1
    return z[i]


def nearest_mode_gap(s: Mapping[str, Any]) -> float:
    """|fitted m − the posterior mode nearest the start m|."""
    modes = posterior_modes(float(s["vae_x"]))
    near = modes[np.argmin(np.abs(modes - float(s["vae_qm"])))]
    return abs(fitted_q(s)[0] - near)


# ---- autoencoder vs PCA
@st.cache_data(show_spinner="Training the autoencoders…", max_entries=16)
def autoencoders(noise: float, hidden: int, seed: int):
    pts = curved_manifold(300, seed, noise)
    return {"linear autoencoder": fit_autoencoder_2d(pts, linear=True, steps=300, lr=0.05,
                                                     seed=seed, device="cpu"),
            "nonlinear autoencoder": fit_autoencoder_2d(pts, hidden, steps=500, lr=0.02,
                                                        seed=seed, device="cpu")}


def ae_over_pca(s: Mapping[str, Any], seed: int, which: str) -> float:
    """Reconstruction error of the `which` autoencoder / PCA's, on the same points."""
    pca = pca_reconstruct(curved_manifold(300, seed, float(s["vae_mnoise"])), 1)
    fits = autoencoders(float(s["vae_mnoise"]), int(s["vae_mhidden"]), seed)
    return fits[which].mse / pca.mse


# ----------------------------------------------------------------------------- presets
BASE = {"vae_model": "VAE", "vae_beta": 1.0, "vae_dim": 2, "vae_lik": "bernoulli",
        "vae_reparam": True, "vae_start": STARTS[0], "vae_span": "quantiles", "vae_dx": 0,
        "vae_dy": 1, "vae_z1": 0.0, "vae_z2": 0.0}
SCRATCH = {**BASE, "vae_start": STARTS[1]}
AE = {**BASE, "vae_model": "autoencoder", "vae_span": "fit to codes"}
ELBO = {"vae_x": 0.0, "vae_qm": 1.5, "vae_qs": 0.5}
PCA = {"vae_mnoise": 0.05, "vae_mhidden": 16, "vae_mfit": True}
E = CLAIM_EPOCHS

C_SHIPPED = (Claim("largest |mean of μ| over z1, z2 (centred cloud)", code_centre, hi=0.3),
             Claim("99th percentile of |μ|", lambda s: code_reach(s), hi=3.0),
             Claim("share of grid cells decoding to no digit", lambda s: off_digit_share(s),
                   hi=0.1))
C_AE = (Claim("99th percentile of |μ| (N(0,1) quantile grid: ±1.64)",
              lambda s: code_reach(s), lo=8.0),
        Claim("share of grid cells (spanning the codes) decoding to no digit",
              lambda s: off_digit_share(s), lo=0.2))
C_SCRATCH = (Claim(f"test KL at epoch 10, worst of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: test_metric(s, "test_kl", k, 10)), hi=0.05, slow=True),
             Claim(f"test KL at epoch {E}, worst of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: test_metric(s, "test_kl", k, E), min), lo=1.0, slow=True),
             Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds",
                   worst(lambda s, k: code_reach(s, k, E), min), lo=1.5, slow=True))
C_BETA0 = (Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds {CLAIM_SEEDS}",
                 worst(lambda s, k: code_reach(s, k, E), min), lo=5.0, slow=True),)
C_BETA8 = (Claim(f"test KL at epoch {E}, worst of seeds {CLAIM_SEEDS} (nats)",
                 worst(lambda s, k: test_metric(s, "test_kl", k, E)), hi=0.01, slow=True),
           Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds",
                 worst(lambda s, k: code_reach(s, k, E)), hi=0.1, slow=True),
           Claim("pixel std across the grid's cells, worst of seeds (0: one image)",
                 worst(lambda s, k: grid_spread(s, k, E)), hi=0.02, slow=True))
C_REPARAM = (Claim(f"‖∂recon/∂encoder‖ at epoch {E}, worst of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: test_metric(s, "enc_grad_recon", k, E)), lo=0, hi=0,
                   slow=True),
             Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds",
                   worst(lambda s, k: code_reach(s, k, E)), hi=0.05, slow=True))
C_ELBO = (Claim("gap log p(x) − ELBO at the start (m = 1.5, s = 0.5)",
                lambda s: toy_elbo(s["vae_x"], s["vae_qm"], s["vae_qs"]).gap, lo=1.0),
          Claim("fitted m (lands on the tallest mode, 0)", lambda s: fitted_q(s)[0],
                lo=-0.05, hi=0.05),
          Claim("|fitted m − the posterior mode nearest the start (1.72)|", nearest_mode_gap,
                lo=1.5),
          Claim("gap after Fit q (a Gaussian cannot cover 3 modes)",
                lambda s: toy_elbo(s["vae_x"], *fitted_q(s)).gap, lo=0.1, hi=0.4))
C_PCA = (Claim("nonlinear autoencoder error / PCA's, worst of seeds",
               worst(lambda s, k: ae_over_pca(s, k, "nonlinear autoencoder")), hi=0.5,
               slow=True),
         Claim("linear autoencoder error / PCA's, worst of seeds (same line)",
               worst(lambda s, k: ae_over_pca(s, k, "linear autoencoder")), lo=0.99, hi=1.05,
               slow=True))

PRESETS = {
    "Shipped VAE (β = 1)": Preset(
        BASE, "A VAE trained for 120 epochs: the test digits fill a centred, roughly round "
              "cloud (99% within |z| < 3) and the N(0, 1) quantile grid decodes to digits "
              "(under 10% of its cells are farther from every training digit than a real "
              "unseen digit is). Press Play to keep training.", "latent", C_SHIPPED),
    "Autoencoder: holes in the latent": Preset(
        AE, "No KL term and no prior: the codes spread to |z| ≈ 12, off-centre, in clusters "
            "with empty space between and around them. The grid spans the same square as the "
            "scatter (±12): over 20% of its cells fall where no code lies and decode to smudges "
            "that are no digit (farther from every training digit than 90% of real test "
            "digits are), against under 10% for the VAE's grid.", "latent", C_AE),
    "Train a VAE from scratch": Preset(
        SCRATCH, "Press Play. For the first ~10 epochs the KL stays near 0 (≤ 0.05 nats on "
                 "seeds 0 and 1): every code sits on the prior and the grid is one average "
                 "blob. Then the codes split by digit and the grid turns into digits (by epoch "
                 "30: KL ≥ 1 nat, codes out to |z| ≈ 2). Then open the *Replay* tab.",
        "latent", C_SCRATCH),
    "β = 0: no pull to the prior": Preset(
        {**SCRATCH, "vae_beta": 0.0},
        "Press Play: with β = 0 only reconstruction counts; by epoch 30 the cloud spreads to "
        "|z| > 5 (99th percentile), far beyond the N(0, 1) quantile grid (±1.64), like an "
        "autoencoder.", "latent", C_BETA0),
    "β = 8: posterior collapse": Preset(
        {**SCRATCH, "vae_beta": 8.0},
        "Press Play: the KL weight wins. By epoch 30 the test KL is below 0.01 nats, every "
        "code sits at 0 (|μ| < 0.1) and every grid cell decodes to the same average blob: "
        "z carries no information about the digit.", "latent", C_BETA8),
    "Reparameterization off": Preset(
        {**SCRATCH, "vae_reparam": False},
        "z is sampled off the autograd graph: the encoder's gradient from the reconstruction "
        "term is exactly 0 (see the metric), so only KL trains the encoder and the codes "
        "collapse to 0.", "latent", C_REPARAM),
    "8-D latent: traverse two dims": Preset(
        {**SCRATCH, "vae_dim": 8},
        "Press Play: the scatter shows two chosen coordinates of an 8-D code, the grid varies "
        "those two with the other six at 0.", "latent"),
    "ELBO: Fit q finds a local optimum": Preset(
        ELBO, "At x = 0 the posterior has three modes (−1.72, 0, 1.72). Press *Fit q*: from "
              "m = 1.5 it lands at m = 0.00, the tallest mode, not the nearest one (1.72); "
              "the gap shrinks from 15 to about 0.2 nats but stays positive.", "elbo", C_ELBO),
}

STEPS = [
    Step("The classic picture", "Each grid cell decodes the latent point at its N(0, 1) "
         "quantile coordinates: since the prior is N(0, I), equal-probability cells tile the "
         "space the decoder was trained to use, and they decode to digits.", BASE, "latent",
         C_SHIPPED),
    Step("Train it yourself", "From scratch, press Play. Watch the left panel: codes start "
         "on the prior (KL ≈ 0 for ~10 epochs), then spread into a centred cloud with one "
         "region per digit; the grid follows.", SCRATCH, "latent", C_SCRATCH),
    Step("Watch it form again", "The *Replay* tab plays the stored snapshots of the test "
         "digits' codes on fixed axes (the shipped model: 80 snapshots over 120 epochs).",
         BASE, "replay"),
    Step("Take the KL away", "A plain autoencoder has no prior: its codes spread to |z| ≈ 12 "
         "and its grid, spanning them, falls into the empty space between and around the "
         "clusters (over 20% of the cells decode to no digit). It has no ELBO either: only a "
         "reconstruction error.", AE, "latent", C_AE),
    Step("Turn β up", "β weights the KL term. At β = 8 it wins completely: KL → 0, every "
         "q(z|x) is the prior and all cells decode to one average blob (posterior "
         "collapse).", {**SCRATCH, "vae_beta": 8.0}, "latent", C_BETA8),
    Step("Why reparameterize", "Sampling z = μ + σ·ε keeps z a differentiable function of "
         "the encoder outputs. Switch it off and the reconstruction gradient to the encoder "
         "is exactly 0.", {**SCRATCH, "vae_reparam": False}, "latent", C_REPARAM),
    Step("Why the ELBO is a bound", "log p(x) = ELBO + KL(q ‖ p(z|x)) and KL ≥ 0. With a "
         "three-mode posterior a Gaussian q cannot close the gap: Fit q lands on one mode (at "
         "these settings the tallest, m = 0, not the nearest) and the gap stays ≈ 0.2 nats.",
         ELBO, "elbo", C_ELBO),
    Step("Autoencoder vs PCA", "Through a 1-D code, a linear autoencoder finds PCA's line "
         "(same error); a nonlinear one bends along the arc and its error is less than half "
         "of PCA's.", PCA, "pca", C_PCA),
]


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


def _metrics(view, ae: bool) -> None:
    h = view.history
    m = st.columns(4 if ae else 5)
    m[0].metric("Epoch", f"{view.snapshot().epoch:.1f}")
    m[1].metric("Test recon (nats)", f"{h.last('test_recon'):.2f}",
                help="−log p(x|z) per digit, averaged over the 359 test digits.")
    if not ae:
        m[2].metric("Test KL (nats)", f"{h.last('test_kl'):.2f}")
        m[3].metric("Test ELBO (nats)", f"{h.last('test_elbo'):.2f}",
                    help="ELBO = −(recon + KL) per digit, one z sample each; a lower bound on "
                         "log p(x) whatever β the model was trained with.")
    m[-1].metric("‖∂recon/∂encoder‖", f"{h.last('enc_grad_recon'):.3g}",
                 help="Norm of the reconstruction term's gradient w.r.t. the encoder weights "
                      "(0 when reparameterization is off).")
    if ae:
        st.caption("An autoencoder has no KL term and no ELBO: it is not a probabilistic "
                   "model, only a reconstruction error is defined.")


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
            reach = float(math.ceil(max(4.0, VM.code_reach(codes.means, dims))))
            z = np.zeros(codes.means.shape[1], np.float32)
            z[list(dims)] = [STATE.widget(key, lo=-reach, hi=reach,
                                          label=f"Decode at z{d + 1}")
                             for key, d in (("vae_z1", dims[0]), ("vae_z2", dims[1]))]
        frame = read_trainer("vae_live", functools.partial(
            VM.frame_of, means=codes.means, dims=dims, n=int(s["vae_gridn"]),
            span=span_of(s), z=z))
        with left:
            show_figure(latent_scatter(codes.means[:, list(dims)], codes.labels, grid=frame.grid,
                                       picked=(z[dims[0]], z[dims[1]]), dims=dims),
                        key="vae_scatter", selection_mode="points", on_select=_on_pick)
        with right:
            show_figure(grid_figure(frame.grid), key="vae_gridfig")
        with digit:
            show_figure(digit_figure(frame.decoded,
                                     f"z = ({z[dims[0]]:.2f}, {z[dims[1]]:.2f})"),
                        key="vae_decoded")
        with b:
            h = view.history
            show_figure(loss_curves({k: h.as_arrays(k) for k in h.values
                                     if not (ae and k.endswith(("kl", "elbo")))},
                                    frame.steps_per_epoch), key="vae_curves")
        with mid:
            if len(z) > 2:
                spread = codes.means.std(0)
                st.caption("Spread (std) of μ over the test digits, per latent dim: " + ", ".join(
                    f"z{i + 1} **{v:.2f}**" for i, v in enumerate(spread)) + ". Dims near 0 "
                    "are unused (their q(z|x) sits on the prior); traverse the spread-out ones.")
            _metrics(view, ae)

    with panel.figure, user_errors("train the VAE"):
        live_training("vae_live", lambda: make_trainer(s, seed, device), draw,
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
    """Outside the live fragment, and only when asked for (viz.on_demand)."""
    with st.expander("Export"):
        on_demand("vae_export", lambda: _export_files(s, seed, device, dims))


def _export_files(s, seed, device, dims) -> None:
    """The export's files, read under the trainer's lock (viz.live.read_trainer)."""
    out = read_trainer("vae_live", functools.partial(VM.export_of, dims=dims,
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


def _scrub() -> None:
    """The slider moved: show that snapshot (only while paused: see Autoplay)."""
    if not st.session_state.get(SNAP_PLAYING, False):
        st.session_state[SNAP_AT] = st.session_state["vae_snap"]


@st.cache_data(show_spinner=False, max_entries=8)
def _replay_extent(key: tuple, _frames: list[np.ndarray]) -> float:
    return replay_extent(_frames)


def delivered_rate(times: list[float]) -> float | None:
    """Snapshots per second actually shown: ticks over the last few seconds."""
    if len(times) < 3:
        return None
    span = times[-1] - times[0]
    return (len(times) - 1) / span if span > 0 else None


def replay_view(panel) -> None:
    s = STATE.values()
    seed, device = session.seed(), session.device()
    dims, _ = dims_of(s)
    get_trainer("vae_live", lambda: make_trainer(s, seed, device),      # the handle exists
                trainer_config(s, seed, device))
    rep = read_trainer("vae_live", VM.replay_of)
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
    extent = _replay_extent((len(snaps), snaps[-1][0], hash(snaps[-1][1].tobytes()), dims),
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
    strip = read_trainer("vae_live", functools.partial(VM.interpolation_of, x_a=xa, x_b=xb,
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
            show_figure(toy_posterior_figure(toy), key="vae_post")
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


VIEWS = [View("latent", "Latent space", latent_view),
         View("replay", "Replay & interpolation", replay_view),
         View("elbo", "Why the ELBO", elbo_view),
         View("pca", "Autoencoder vs PCA", pca_view)]

if __name__ == "__main__":
    topic_page("vae", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\log p(x) \ge \mathbb{E}_{q}[\log p(x|z)] - \mathrm{KL}(q\,\|\,p)"
                       r";\;\; \text{loss} = \text{recon} + \beta\,\mathrm{KL}")
