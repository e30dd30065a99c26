"""The diffusion page's computations of the settings dict s (topics/diffusion/page.py): the
data, the exact and shipped denoisers, reverse runs and their metrics, Langevin, schedules, the
forward noising, and the measurements the claims read (each also shown on the page); cached
across sessions by their inputs. Shared by the views and the claims."""
from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np
import streamlit as st
import torch

from engine import diffusion
from ui.topics import ROOT
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
LIM = 3.5
UPLOAD = "upload CSV"
EXACT, PRETRAINED, TRAINED = "exact", "pretrained network", "network from the Train tab"
DENOISERS = (EXACT, PRETRAINED, TRAINED)
CLASSES = ("none", *[str(k) for k in range(8)])
WEIGHTS_DIR = ROOT / "assets" / "weights"
SHOWN = 200              # particles drawn in the animation (all are measured)
FWD_SHOWN = 500          # points of x₀ and of x_t drawn on the Forward tab (SVG nodes)
FRAMES, FIELD_RES = 20, 11   # animation frames and drift-arrow grid: figure JSON < 300 KB
NEAR = 0.15              # "on the data": within 0.15 of a point of a dense sample of it


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset) in
# the claims) and the seed; cached across sessions by their inputs.

@st.cache_data(max_entries=16, show_spinner=False)
def _dataset(name: str, weight: float, n: int, seed: int) -> diffusion.ToyData:
    params = {"first_weight": weight} if name == "mixture" else {}
    return diffusion.DIFFUSION_DATA[name](n=n, seed=seed, **params)


def data_of(s: Mapping[str, Any], seed: int = 0) -> diffusion.ToyData:
    """The page's 1,000 data points (uploads are handled by the views)."""
    name = s["df_data"] if s["df_data"] != UPLOAD else "two_moons"
    return _dataset(name, float(s["df_weight"]), 1000, int(seed))


@st.cache_resource(max_entries=16, show_spinner=False)
def _exact(data_key: tuple, _data: diffusion.ToyData, sched: str, seed: int) -> diffusion.MixtureDenoiser:
    return diffusion.MixtureDenoiser.from_data(_data, diffusion.SCHEDULES[sched](), seed=seed)


def exact_of(data: diffusion.ToyData, sched: str, seed: int = 0) -> diffusion.MixtureDenoiser:
    """The exact denoiser ε* of the data (mixture: its Gaussians; otherwise a kernel density
    of 256 of its points)."""
    return _exact((hash(data.points.tobytes()), sched), data, sched, int(seed))


_load_model = st.cache_resource(max_entries=8, show_spinner=False)(diffusion.load_model)


def pretrained_of(name: str):
    """(model, schedule, meta) of the shipped network for data `name`, else None."""
    if name not in diffusion.PRETRAINED:
        return None
    return _load_model(str(WEIGHTS_DIR / f"diffusion_{name}.pt"))


def class_of(s: Mapping[str, Any], exact: diffusion.MixtureDenoiser) -> int | None:
    c = None if s["df_class"] == "none" else int(s["df_class"])
    return c if c is not None and c < exact.num_classes else None


def eps_of(s: Mapping[str, Any], exact: diffusion.MixtureDenoiser, model=None):
    """ε(x, t) of the chosen denoiser, guided by w when a class is chosen:
    ε̂ = (1 + w) ε(x, c) − w ε(x)."""
    c = class_of(s, exact)
    if model is not None:
        cond, unc = diffusion.network_eps(model, c), diffusion.network_eps(model)
    else:
        cond, unc = (lambda x, t_, c_=c: exact.eps(x, t_, c_)), exact.eps
    return unc if c is None else diffusion.guidance(cond, unc, float(s["df_w"]))


def reference_of(data: diffusion.ToyData, exact: diffusion.MixtureDenoiser, c: int | None,
                 seed: int = 0) -> np.ndarray:
    """What the samples are compared with: the data, or only class c's part of it (for a
    mixture: 2,000 exact samples of its component c)."""
    if data.centers is not None:
        if c is None:
            return exact.sample(2000, seed + 1)
        one = diffusion.MixtureDenoiser(data.centers[c:c + 1], data.std)
        return one.sample(2000, seed + 1)
    if c is None or data.labels is None:
        return data.points
    return data.points[data.labels == c]


@st.cache_data(max_entries=32, show_spinner=False)
def _reverse(key: tuple, seed: int) -> tuple[diffusion.ReverseRun, dict[str, float]]:
    s = dict(key)
    data = data_of(s, seed)
    exact = exact_of(data, s["df_sched"], seed)
    model, schedule = None, exact.schedule
    if s["df_den"] == PRETRAINED and pretrained_of(s["df_data"]) is not None:
        model, schedule, _ = pretrained_of(s["df_data"])
    return _run_and_measure(s, data, exact, model, schedule, seed)


def _run_and_measure(s, data, exact, model, schedule, seed: int):
    c = class_of(s, exact)
    setup = diffusion.ReverseSetup(eps_of(s, exact, model), exact, schedule, n=int(s["df_n"]),
                           steps=int(s["df_steps"]), eta=float(s["df_eta"]),
                           langevin_steps=int(s["df_lsteps"]), seed=seed, record=FRAMES)
    run = diffusion.reverse_run(s["df_sampler"], setup, LIM, res=FIELD_RES)
    x = run.result.samples
    ok = np.isfinite(x).all(1)
    ref = reference_of(data, exact, c, seed)
    out = {"sw": diffusion.sliced_wasserstein(x[ok], ref, seed=seed) if ok.any() else np.inf,
           "mmd": diffusion.mmd_rbf(x[ok][:1000], ref[:1000]) if ok.any() else np.inf,
           "nonfinite": float((~ok).sum()),
           "outside": float((np.abs(x) > LIM).any(1).mean()),
           "spread": float(x[ok].std(0).mean() / ref.std(0).mean()) if ok.any() else np.inf,
           "offset": float(np.linalg.norm(x[ok].mean(0) - ref.mean(0))) if ok.any() else np.inf}
    if data.centers is not None:
        out.update({f"w{k}": float(v) for k, v in enumerate(diffusion.mode_weights(x, data.centers))})
    return run, out


REVERSE_KEYS = ("df_data", "df_weight", "df_sched", "df_sampler", "df_den", "df_n", "df_steps",
                "df_eta", "df_class", "df_w", "df_lsteps")


def reverse_of(s: Mapping[str, Any], seed: int = 0) -> tuple[diffusion.ReverseRun, dict[str, float]]:
    """One reverse run with the exact or the shipped denoiser, and its measurements: sliced
    Wasserstein and MMD² to the data (or to class c alone), spread (std of the samples / std
    of the reference), offset (distance between their means), share outside the plot, and for
    a mixture the share of samples nearest each mode."""
    return _reverse(tuple((k, s[k]) for k in REVERSE_KEYS), int(seed))


@st.cache_data(max_entries=8, show_spinner=False)
def _dense(name: str) -> np.ndarray:
    return diffusion.DIFFUSION_DATA[name](n=20000, seed=12345).points


@lesson_measure
def near_share(s: Mapping[str, Any], seed: int = 0) -> float:
    """Share of the samples within NEAR of a dense sample (20,000 points) of the data: 1 for
    samples on the data, lower when the sampler leaves them blurred off it."""
    x = reverse_of(s, seed)[0].result.samples
    d = torch.cdist(torch.as_tensor(x, dtype=torch.float64),
                    torch.as_tensor(_dense(s["df_data"]), dtype=torch.float64)).min(1).values
    return float((d <= NEAR).double().mean())


@st.cache_data(max_entries=8, show_spinner=False)
def langevin_of(gap: float, lw: float, n_steps: int, levels: int, seed: int = 0):
    """Plain and annealed Langevin on two modes (weights lw, 1 − lw) from uniform starts."""
    two = diffusion.two_mode_gap(gap=gap, first_weight=lw)
    den = diffusion.MixtureDenoiser(two.centers, two.std, two.weights)
    x0 = diffusion.numpy_rng(seed).uniform(-gap, gap, (1000, 2))
    step = diffusion.langevin_step_size(den) * 2
    plain = diffusion.langevin(lambda x: den.score(x, 0), x0, step, n_steps, seed).samples
    sig = diffusion.geometric_sigmas(gap, two.std / 5, levels)
    ann = diffusion.annealed_langevin(lambda x, sg: den.score_sigma(x, sg), sig, x0,
                              diffusion.annealed_step(sig), max(1, n_steps // levels), seed).samples
    gx, _, dens = diffusion.density_grid(den, -gap, gap, 200)
    marg = dens.sum(0) * (gx[1] - gx[0])
    return two.centers, two.weights, plain, ann, gx, marg


@lesson_measure
def langevin_weights(s: Mapping[str, Any], which: str, seed: int = 0) -> float:
    """Share of `which` ('plain' | 'annealed') particles in the left mode."""
    centers, _, plain, ann, _, _ = langevin_of(float(s["df_lgap"]), float(s["df_lw"]),
                                               int(s["df_lnsteps"]), int(s["df_levels"]), seed)
    return float(diffusion.mode_weights(plain if which == "plain" else ann, centers)[0])


@st.cache_resource(max_entries=4, show_spinner=False)
def schedule_of(name: str) -> diffusion.Schedule:
    """The schedule `name` with T = 1000 (built once per server: every rerun reads it)."""
    return diffusion.SCHEDULES[name]()


@st.cache_data(max_entries=1, show_spinner=False)
def schedule_table() -> dict[str, dict[str, np.ndarray]]:
    """ᾱ_t and SNR(t) of every schedule over t = 1..T (the Forward tab's curves)."""
    return {n: {"alpha_bar": schedule_of(n).alpha_bars.numpy(),
                "snr": schedule_of(n).snr().numpy()} for n in diffusion.SCHEDULES}


def schedule_alpha_bar(name: str, t: int) -> float:
    return float(schedule_of(name).alpha_bar(t))


def measure(key: str, **changes):
    """A claim's measure: reverse_of(settings with `changes`)[1][key]."""
    return lambda s: reverse_of({**s, **changes})[1][key]




@st.cache_data(max_entries=16, show_spinner=False)
def _density_cached(data_key: tuple, _data, sched: str, seed: int, c):
    return diffusion.density_grid(exact_of(_data, sched, seed), -LIM, LIM, 70, 0, c)


def _density(data, sched: str, seed: int, c):
    return _density_cached((hash(data.points.tobytes()), sched, seed, c), data, sched, seed, c)


COARSE_STEPS, COARSE_N = (2, 5, 10, 20), 300


@st.cache_data(max_entries=16, show_spinner=False)
def _coarse_quality(key: tuple, _eps, _schedule, _reference, metric: str, seed: int):
    """DDIM quality for a few small S on 300 samples: cheap enough for first paint (~0.1 s);
    `key` identifies the unhashable denoiser, schedule and reference."""
    return diffusion.steps_vs_quality(_eps, _schedule, _reference, COARSE_STEPS, (0.0, 1.0),
                              n=COARSE_N, seed=seed, metric=metric)


def noised_of(points: np.ndarray, t: int, schedule: diffusion.Schedule, seed: int) -> np.ndarray:
    """x_t ~ q(x_t|x₀) = N(√ᾱ_t x₀, (1−ᾱ_t) I) for every point x₀, the noise drawn from `seed`
    (the Forward tab)."""
    noise = torch.randn(len(points), 2, generator=torch.Generator().manual_seed(seed))
    return diffusion.q_sample(torch.as_tensor(points), t, noise, schedule).numpy()


def warm_jobs(settings: list[Mapping[str, Any]], seed: int = 0):
    """The cached computations the Reverse and Langevin views draw for each of `settings`
    (the presets' and tour steps' full settings), for ui/warm.py to fill in the background
    once per server process: a preset then costs its drawing, not a cold sampler run
    (0.3-0.6 s each)."""
    for s in settings:
        if "df_lgap" in s:
            yield functools.partial(langevin_of, float(s["df_lgap"]), float(s["df_lw"]),
                                    int(s["df_lnsteps"]), int(s["df_levels"]), seed)
        if s.get("df_data", UPLOAD) != UPLOAD:
            yield functools.partial(reverse_of, s, seed)
            yield functools.partial(_warm_density, s, seed)


def _warm_density(s: Mapping[str, Any], seed: int) -> None:
    data = data_of(s, seed)
    if data.centers is None:          # the Reverse view draws the density beside the samples
        _density(data, s["df_sched"], seed, class_of(s, exact_of(data, s["df_sched"], seed)))
