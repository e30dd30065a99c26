"""The VAE page's computations of the settings dict s (topics/vae/page.py): the shipped and
trained models, the decoded grid, the 1-D ELBO toy, autoencoder vs PCA, and the measurements
the claims read (each also shown on the page). Shared by the views and the claims."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import streamlit as st
import torch

from engine.vae import reads
from engine.vae import (VAETrainer, curved_manifold, decode_point, fit_autoencoder_2d, fit_q,
                        pca_reconstruct, shipped_name, toy_elbo, toy_z_grid, true_posterior)
from engine.vae import LatentGrid
from engine.vae.shipped import SHIPPED
from engine.weights import WeightsError
from ui.topics import ROOT
from ui.lesson_measures import lesson_measure

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
UNSEEN_PERCENTILE = 90        # a grid cell decodes to no digit: farther from every training
                              # digit than this percentile of the real test digits are

# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def _shipped_state(name: str) -> dict | None:
    """The shipped file's trainer state (cached per process by engine/vae/reads.py), or
    None when it is missing, stale or corrupt (then the page trains from scratch)."""
    try:
        return reads.shipped_state(str(WEIGHTS / name))
    except WeightsError:
        return None


def latent_extent(means: np.ndarray, grid: LatentGrid | None = None, floor: float = 3.5) -> float:
    """Half-width of a symmetric square view holding 99 % of the points and the grid."""
    r = float(np.percentile(np.abs(means), 99)) if means.size else floor
    if grid is not None and grid.zx.size:
        r = max(r, float(np.abs(grid.zx).max()), float(np.abs(grid.zy).max()))
    return 1.08 * max(r, floor if np.isfinite(r) else floor)


def replay_extent(frames: list[np.ndarray]) -> float:
    """One half-width for every frame of a replay: the largest latent_extent of the frames
    (each (n, 2)), so the axes do not move while the points do and every frame keeps 99 % of
    its points in view."""
    return max((latent_extent(f) for f in frames), default=latent_extent(np.zeros((0, 2))))


def digits():
    """The 8x8 digits (read once per process; shared, read-only)."""
    return reads.digit_data()


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


def shipped_jobs():
    """ui/warm.py's jobs: read every shipped file once per server process (a preset that
    switches to another shipped model then finds it read)."""
    return [functools.partial(_shipped_state, name) for name in SHIPPED]


def shipped_file(s: Mapping[str, Any]) -> str | None:
    """The shipped weights used for these settings (None: train from scratch)."""
    if s["vae_start"] != STARTS[0]:
        return None
    name = shipped_name(int(s["vae_dim"]), s["vae_lik"], deterministic_of(s))
    return name if name is not None and _shipped_state(name) is not None else None


def trainer_factory(s: Mapping[str, Any], seed: int = 0, device: str | None = "cpu"
                    ) -> functools.partial:
    """The trainer factory of these settings: engine.vae.reads.build_trainer bound to
    plain values (the settings, seed, device and the shipped file's path, checked here), so
    it pickles and runs in a worker process without any Streamlit session."""
    name = shipped_file(s)
    return functools.partial(reads.build_trainer, int(s["vae_dim"]), float(s["vae_beta"]),
                             s["vae_lik"], deterministic_of(s), bool(s["vae_reparam"]),
                             int(seed), device, None if name is None else str(WEIGHTS / name))


def make_trainer(s: Mapping[str, Any], seed: int = 0, device: str | None = "cpu") -> VAETrainer:
    return trainer_factory(s, seed, device)()


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
    """(dims, n, span) of the grid the settings draw (engine/vae/reads.py grid_of)."""
    return dims_of(s)[0], int(s["vae_gridn"]), span_of(s)


def grid_of(model, means: np.ndarray, s: Mapping[str, Any]):
    """The decoded grid the page draws, for the codes `means` (n, latent_dim)."""
    return reads.grid_of(model, means, *grid_args(s))


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
    """UNSEEN_PERCENTILE-th percentile over the test digits of the pixel MSE to the nearest training digit:
    how far a real, unseen digit is from the training set."""
    d = digits()
    return float(np.percentile(_nearest_mse(d.x_test, d.x_train), UNSEEN_PERCENTILE))


def _nearest_mse(images: np.ndarray, train: np.ndarray) -> np.ndarray:
    a = torch.as_tensor(images.reshape(len(images), -1), dtype=torch.float32)
    b = torch.as_tensor(train, dtype=torch.float32)
    return (torch.cdist(a, b).pow(2) / a.shape[1]).min(1).values.numpy()


@lesson_measure(trains=True)
def off_digit_share(s: Mapping[str, Any], seed: int = 0, epochs: float | None = None) -> float:
    """Share of the grid's cells whose decoded image is farther (pixel MSE) from every
    training digit than UNSEEN_PERCENTILE% of the real test digits are: cells that decode to no digit (the
    latent's holes)."""
    tr = trained(s, seed, epochs)
    means = tr.snapshot().codes.means
    grid = grid_of(tr.model, means, s)
    d = _nearest_mse(grid.images.reshape(-1, 64), digits().x_train)
    return float(np.mean(d > _digit_distance_floor()))


def _decode_at(s: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(z, means): the point the decode sliders pick (the other dims at 0, as the page
    decodes it) and the test digits' codes of the shipped model."""
    tr = trained(s)
    means = tr.snapshot().codes.means
    z = np.zeros(means.shape[1], np.float32)
    z[list(dims_of(s)[0])] = [float(s["vae_z1"]), float(s["vae_z2"])]
    return z, means


@lesson_measure
def decoded_point_distance(s: Mapping[str, Any]) -> float:
    """Pixel MSE from the image decoded at the sliders' z to the nearest training digit, over
    the UNSEEN_PERCENTILE-th percentile of the test digits' (above 1: no digit)."""
    z, _ = _decode_at(s)
    image = decode_point(trained(s).model, z).reshape(1, -1)
    return float(_nearest_mse(image, digits().x_train)[0] / _digit_distance_floor())


@lesson_measure
def nearest_code_distance(s: Mapping[str, Any]) -> float:
    """Distance from the sliders' z to the nearest test digit's code (in the dims shown)."""
    z, means = _decode_at(s)
    dims = list(dims_of(s)[0])
    return float(np.linalg.norm(means[:, dims] - z[dims], axis=1).min())


@lesson_measure(trains=True)
def code_reach(s: Mapping[str, Any], seed: int = 0, epochs: float | None = None) -> float:
    """99th percentile of |μ| over the test digits and the two dims shown."""
    return reads.code_reach(trained(s, seed, epochs).snapshot().codes.means, dims_of(s)[0])


@lesson_measure
def code_centre(s: Mapping[str, Any]) -> float:
    """Largest |mean of μ| over the two dims shown (0: the cloud is centred)."""
    means = trained(s).snapshot().codes.means[:, list(dims_of(s)[0])]
    return float(np.abs(means.mean(0)).max())


@lesson_measure(trains=True)
def grid_spread(s: Mapping[str, Any], seed: int, epochs: float) -> float:
    """Mean over pixels of the std across grid cells: 0 when every cell decodes the same."""
    tr = trained(s, seed, epochs)
    grid = grid_of(tr.model, tr.snapshot().codes.means, s)
    return float(grid.images.reshape(-1, 64).std(0).mean())


def test_metric(s: Mapping[str, Any], name: str, seed: int, epochs: float) -> float:
    return float(trained(s, seed, epochs).history.last(name))


def peak_metric(s: Mapping[str, Any], name: str, seed: int, epochs: float) -> float:
    """Largest logged value of metric `name` over the first `epochs` epochs of training from
    scratch (the loss curve's peak, not only its last point)."""
    return float(max(trained(s, seed, epochs).history.values.get(name, [math.nan])))


def worst(f, agg=max):
    """A measure of (s, seed) reduced over the claim seeds (worst case)."""
    return lambda s: agg(f(s, seed) for seed in CLAIM_SEEDS)


# ---- the 1-D ELBO toy
def fitted_q(s: Mapping[str, Any]) -> tuple[float, float]:
    return fit_q(float(s["vae_x"]), float(s["vae_qm"]), float(s["vae_qs"]))


@lesson_measure
def fitted_mean(s: Mapping[str, Any]) -> float:
    """q's mean m after Fit q from the settings' (m, s)."""
    return float(fitted_q(s)[0])


@lesson_measure
def fitted_gap(s: Mapping[str, Any]) -> float:
    """log p(x) − ELBO after Fit q (nats)."""
    return float(toy_elbo(float(s["vae_x"]), *fitted_q(s)).gap)


def posterior_modes(x: float) -> np.ndarray:
    """Local maxima of the exact posterior p(z|x) on the quadrature grid."""
    z = toy_z_grid()
    p = true_posterior(x, z)
    i = np.flatnonzero((p[1:-1] > p[:-2]) & (p[1:-1] >= p[2:])) + 1
    return z[i]


@lesson_measure
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


@lesson_measure(trains=True)
def ae_over_pca(s: Mapping[str, Any], seed: int, which: str) -> float:
    """Reconstruction error of the `which` autoencoder / PCA's, on the same points."""
    pca = pca_reconstruct(curved_manifold(300, seed, float(s["vae_mnoise"])), 1)
    fits = autoencoders(float(s["vae_mnoise"]), int(s["vae_mhidden"]), seed)
    return fits[which].mse / pca.mse


# ---- the replay
@st.cache_data(show_spinner=False, max_entries=8)
def cached_replay_extent(key: tuple, _frames: list[np.ndarray]) -> float:
    return replay_extent(_frames)


def delivered_rate(times: list[float]) -> float | None:
    """Snapshots per second actually shown: ticks over the last few seconds."""
    if len(times) < 3:
        return None
    span = times[-1] - times[0]
    return (len(times) - 1) / span if span > 0 else None


# ----------------------------------------------------------------------------- brushing
@dataclass(frozen=True)
class BrushData:
    """What the brushing tab draws: the test digits, their encoder means and their decoded
    means decode(μ(x)), at the trainer's current iteration."""
    steps: int
    means: np.ndarray      # (n, latent_dim) μ(x) of the test digits
    labels: np.ndarray     # (n,) their digit labels
    images: np.ndarray     # (n, 8, 8) the test digits
    decoded: np.ndarray    # (n, 8, 8) decode(μ(x))


@torch.no_grad()
def brush_data_of(trainer) -> BrushData:
    """read_trainer fn (runs next to the trainer): encode the test digits to μ(x) and decode
    μ(x), in one batch each."""
    d = trainer.data
    model = trainer.model
    dev = next(model.parameters()).device
    x = torch.as_tensor(d.x_test, dtype=torch.float32, device=dev)        # (n, 64)
    mu, _ = model.encode(x)                                                # (n, latent_dim)
    dec = model.decode(mu)                                                 # (n, 64)
    side = int(round(math.sqrt(x.shape[1])))
    return BrushData(int(trainer.steps), mu.cpu().numpy(), np.asarray(d.y_test),
                     np.asarray(d.x_test).reshape(-1, side, side),
                     dec.cpu().numpy().reshape(-1, side, side))
