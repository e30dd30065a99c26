"""Diffusion sampling: forward noising, reverse sampling (DDPM, DDIM, Langevin), classifier-free
guidance, steps vs quality, live training, and why annealing fixes Langevin's mode weights.
Settings -> engine/diffusion.py -> viz/diffusion_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use (cached: a rerun never samples twice), PRESETS and STEPS with
their claims, one function per view, the footer."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st
import torch

from engine import diffusion as D
from engine.diffusion_measures import model_of, net_of
from viz import diffusion_figures as F
from viz import session
from viz.claims import Claim
from viz.live import live_training, read_trainer
from viz.on_demand import on_demand
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.topics import ROOT
from viz.widgets import Preset, Step, export_buttons

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
LANGEVIN_CENTERS = 2

STATE = StateTable([
    Control("df_data", "mixture", "Data", kind="selectbox", options=[*D.DIFFUSION_DATA, UPLOAD]),
    Control("df_weight", 0.6, "Weight of mode 0 (mixture)", lo=0.1, hi=0.9, step=0.05),
    Control("df_sched", "linear", "Noise schedule", kind="selectbox", options=list(D.SCHEDULES)),
    Control("df_t", 250, "Diffusion time t", lo=0, hi=1000, step=1),
    Control("df_sampler", "DDIM", "Sampler", kind="selectbox", options=list(D.SAMPLERS)),
    Control("df_den", EXACT, "Denoiser", kind="selectbox", options=list(DENOISERS)),
    Control("df_n", 500, "Particles", lo=100, hi=2000, step=100),
    Control("df_steps", 50, "DDIM steps S", lo=2, hi=1000, step=1),
    Control("df_eta", 0.0, "η (DDIM noise)", lo=0.0, hi=1.0, step=0.1),
    Control("df_class", "none", "Class", kind="selectbox", options=list(CLASSES),
            help="Condition on one class (mixture: one mode)."),
    Control("df_w", 0.0, "Guidance w", lo=0.0, hi=5.0, step=0.5),
    Control("df_lsteps", 500, "Langevin steps", lo=50, hi=2000, step=50),
    Control("df_metric", "sliced Wasserstein", "Metric", kind="selectbox",
            options=list(D.METRICS)),
    Control("df_s1000", False, "Include S = 1000 (slow)", kind="checkbox"),
    Control("df_lr", 2e-3, "Learning rate", kind="select_slider",
            options=[1e-4, 3e-4, 1e-3, 2e-3, 5e-3, 1e-2]),
    Control("df_hidden", 64, "Hidden units", kind="select_slider", options=[32, 64, 128]),
    Control("df_lgap", 8.0, "Gap between modes", lo=2.0, hi=10.0, step=0.5),
    Control("df_lw", 0.8, "Weight of the left mode", lo=0.5, hi=0.95, step=0.05),
    Control("df_lnsteps", 400, "Steps", lo=100, hi=2000, step=100),
    Control("df_levels", 10, "Noise levels (annealed)", lo=2, hi=20, step=1),
])


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset) in
# the claims) and the seed; cached across sessions by their inputs.

@st.cache_data(max_entries=16, show_spinner=False)
def _dataset(name: str, weight: float, n: int, seed: int) -> D.ToyData:
    params = {"first_weight": weight} if name == "mixture" else {}
    return D.DIFFUSION_DATA[name](n=n, seed=seed, **params)


def data_of(s: Mapping[str, Any], seed: int = 0) -> D.ToyData:
    """The page's 1,000 data points (uploads are handled by the views)."""
    name = s["df_data"] if s["df_data"] != UPLOAD else "two_moons"
    return _dataset(name, float(s["df_weight"]), 1000, int(seed))


@st.cache_resource(max_entries=16, show_spinner=False)
def _exact(data_key: tuple, _data: D.ToyData, sched: str, seed: int) -> D.MixtureDenoiser:
    return D.MixtureDenoiser.from_data(_data, D.SCHEDULES[sched](), seed=seed)


def exact_of(data: D.ToyData, sched: str, seed: int = 0) -> D.MixtureDenoiser:
    """The exact denoiser ε* of the data (mixture: its Gaussians; otherwise a kernel density
    of 256 of its points)."""
    return _exact((hash(data.points.tobytes()), sched), data, sched, int(seed))


_load_model = st.cache_resource(max_entries=8, show_spinner=False)(D.load_model)


def pretrained_of(name: str):
    """(model, schedule, meta) of the shipped network for data `name`, else None."""
    if name not in D.PRETRAINED:
        return None
    return _load_model(str(WEIGHTS_DIR / f"diffusion_{name}.pt"))


def class_of(s: Mapping[str, Any], exact: D.MixtureDenoiser) -> int | None:
    c = None if s["df_class"] == "none" else int(s["df_class"])
    return c if c is not None and c < exact.num_classes else None


def eps_of(s: Mapping[str, Any], exact: D.MixtureDenoiser, model=None):
    """ε(x, t) of the chosen denoiser, guided by w when a class is chosen:
    ε̂ = (1 + w) ε(x, c) − w ε(x)."""
    c = class_of(s, exact)
    if model is not None:
        cond, unc = D.network_eps(model, c), D.network_eps(model)
    else:
        cond, unc = (lambda x, t_, c_=c: exact.eps(x, t_, c_)), exact.eps
    return unc if c is None else D.guidance(cond, unc, float(s["df_w"]))


def reference_of(data: D.ToyData, exact: D.MixtureDenoiser, c: int | None,
                 seed: int = 0) -> np.ndarray:
    """What the samples are compared with: the data, or only class c's part of it (for a
    mixture: 2,000 exact samples of its component c)."""
    if data.centers is not None:
        if c is None:
            return exact.sample(2000, seed + 1)
        one = D.MixtureDenoiser(data.centers[c:c + 1], data.std)
        return one.sample(2000, seed + 1)
    if c is None or data.labels is None:
        return data.points
    return data.points[data.labels == c]


@st.cache_data(max_entries=32, show_spinner=False)
def _reverse(key: tuple, seed: int) -> tuple[D.ReverseRun, dict[str, float]]:
    s = dict(key)
    data = data_of(s, seed)
    exact = exact_of(data, s["df_sched"], seed)
    model, schedule = None, exact.schedule
    if s["df_den"] == PRETRAINED and pretrained_of(s["df_data"]) is not None:
        model, schedule, _ = pretrained_of(s["df_data"])
    return _run_and_measure(s, data, exact, model, schedule, seed)


def _run_and_measure(s, data, exact, model, schedule, seed: int):
    c = class_of(s, exact)
    setup = D.ReverseSetup(eps_of(s, exact, model), exact, schedule, n=int(s["df_n"]),
                           steps=int(s["df_steps"]), eta=float(s["df_eta"]),
                           langevin_steps=int(s["df_lsteps"]), seed=seed, record=FRAMES)
    run = D.reverse_run(s["df_sampler"], setup, LIM, res=FIELD_RES)
    x = run.result.samples
    ok = np.isfinite(x).all(1)
    ref = reference_of(data, exact, c, seed)
    out = {"sw": D.sliced_wasserstein(x[ok], ref, seed=seed) if ok.any() else np.inf,
           "mmd": D.mmd_rbf(x[ok][:1000], ref[:1000]) if ok.any() else np.inf,
           "nonfinite": float((~ok).sum()),
           "outside": float((np.abs(x) > LIM).any(1).mean()),
           "spread": float(x[ok].std(0).mean() / ref.std(0).mean()) if ok.any() else np.inf,
           "offset": float(np.linalg.norm(x[ok].mean(0) - ref.mean(0))) if ok.any() else np.inf}
    if data.centers is not None:
        out.update({f"w{k}": float(v) for k, v in enumerate(D.mode_weights(x, data.centers))})
    return run, out


REVERSE_KEYS = ("df_data", "df_weight", "df_sched", "df_sampler", "df_den", "df_n", "df_steps",
                "df_eta", "df_class", "df_w", "df_lsteps")


def reverse_of(s: Mapping[str, Any], seed: int = 0) -> tuple[D.ReverseRun, dict[str, float]]:
    """One reverse run with the exact or the shipped denoiser, and its measurements: sliced
    Wasserstein and MMD² to the data (or to class c alone), spread (std of the samples / std
    of the reference), offset (distance between their means), share outside the plot, and for
    a mixture the share of samples nearest each mode."""
    return _reverse(tuple((k, s[k]) for k in REVERSE_KEYS), int(seed))


@st.cache_data(max_entries=8, show_spinner=False)
def _dense(name: str) -> np.ndarray:
    return D.DIFFUSION_DATA[name](n=20000, seed=12345).points


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
    two = D.two_mode_gap(gap=gap, first_weight=lw)
    den = D.MixtureDenoiser(two.centers, two.std, two.weights)
    x0 = D.numpy_rng(seed).uniform(-gap, gap, (1000, 2))
    step = D.langevin_step_size(den) * 2
    plain = D.langevin(lambda x: den.score(x, 0), x0, step, n_steps, seed).samples
    sig = D.geometric_sigmas(gap, two.std / 5, levels)
    ann = D.annealed_langevin(lambda x, sg: den.score_sigma(x, sg), sig, x0,
                              D.annealed_step(sig), max(1, n_steps // levels), seed).samples
    gx, _, dens = D.density_grid(den, -gap, gap, 200)
    marg = dens.sum(0) * (gx[1] - gx[0])
    return two.centers, two.weights, plain, ann, gx, marg


def langevin_weights(s: Mapping[str, Any], which: str, seed: int = 0) -> float:
    """Share of `which` ('plain' | 'annealed') particles in the left mode."""
    centers, _, plain, ann, _, _ = langevin_of(float(s["df_lgap"]), float(s["df_lw"]),
                                               int(s["df_lnsteps"]), int(s["df_levels"]), seed)
    return float(D.mode_weights(plain if which == "plain" else ann, centers)[0])


@st.cache_resource(max_entries=4, show_spinner=False)
def schedule_of(name: str) -> D.Schedule:
    """The schedule `name` with T = 1000 (built once per server: every rerun reads it)."""
    return D.SCHEDULES[name]()


@st.cache_data(max_entries=1, show_spinner=False)
def schedule_table() -> dict[str, dict[str, np.ndarray]]:
    """ᾱ_t and SNR(t) of every schedule over t = 1..T (the Forward tab's curves)."""
    return {n: {"alpha_bar": schedule_of(n).alpha_bars.numpy(),
                "snr": schedule_of(n).snr().numpy()} for n in D.SCHEDULES}


def schedule_alpha_bar(name: str, t: int) -> float:
    return float(schedule_of(name).alpha_bar(t))


def measure(key: str, **changes):
    """A claim's measure: reverse_of(settings with `changes`)[1][key]."""
    return lambda s: reverse_of({**s, **changes})[1][key]


# ----------------------------------------------------------------------------- presets
MIX = {"df_data": "mixture", "df_weight": 0.6, "df_sched": "linear", "df_den": EXACT,
       "df_class": "none", "df_w": 0.0, "df_n": 500, "df_eta": 0.0}
DDPM = {**MIX, "df_sampler": "DDPM"}
MOONS10 = {**MIX, "df_data": "two_moons", "df_sampler": "DDIM", "df_steps": 10}
MOONS10_NOISY = {**MOONS10, "df_eta": 1.0}
GUIDED = {**MIX, "df_sampler": "DDIM", "df_steps": 50, "df_class": "0", "df_w": 3.0}
GUIDED_NET = {**GUIDED, "df_den": PRETRAINED}
SWISS = {**MIX, "df_data": "swiss_roll", "df_sampler": "DDIM", "df_steps": 50,
         "df_den": PRETRAINED}
LANGEVIN = {"df_lgap": 8.0, "df_lw": 0.8, "df_lnsteps": 400, "df_levels": 10}
FORWARD = {"df_t": 500, "df_sched": "linear"}

C_FORWARD = (Claim("ᾱ₅₀₀ of the linear schedule", lambda s: schedule_alpha_bar("linear", 500),
                   lo=0.078, hi=0.079),
             Claim("ᾱ₁₀₀₀ of the linear schedule (pure noise)",
                   lambda s: schedule_alpha_bar("linear", 1000), hi=1e-4),
             Claim("ᾱ₅₀₀: cosine / linear (cosine keeps more signal)",
                   lambda s: schedule_alpha_bar("cosine", 500) / schedule_alpha_bar("linear",
                                                                                    500),
                   lo=5.0))
C_DDPM = tuple(Claim(f"share of samples at mode {k} (truth {w})", measure(f"w{k}"),
                     lo=w - 0.06, hi=w + 0.06) for k, w in enumerate((0.6, 0.2, 0.2)))
C_DDIM10 = (Claim(f"share of samples within {NEAR} of the moons", near_share, lo=0.85),)
C_DDIM10_NOISY = (
    Claim("10 steps: sliced W, η = 1 / η = 0 (η = 1 a little worse)",
          lambda s: measure("sw")(s) / measure("sw", df_eta=0.0)(s), lo=1.02, hi=1.5),
    Claim(f"10 steps: share off the moons (> {NEAR}), η = 1 / η = 0",
          lambda s: (1 - near_share(s)) / (1 - near_share({**s, "df_eta": 0.0})), lo=1.15),
    Claim("50 steps: sliced W, η = 1 / η = 0 (about the same)",
          lambda s: measure("sw", df_steps=50)(s) / measure("sw", df_steps=50, df_eta=0.0)(s),
          lo=0.8, hi=1.1))
C_GUIDED = (
    Claim("share of samples nearest mode 0", measure("w0"), lo=0.99),
    Claim("spread of the samples / spread of mode 0, w = 3 (tighter)", measure("spread"),
          hi=0.8),
    Claim("the same at w = 0 (the class as it is)", measure("spread", df_w=0.0),
          lo=0.85, hi=1.1),
    Claim("distance of the samples' mean from mode 0's centre, w = 3 (pushed away from the "
          "other modes)", measure("offset"), lo=0.15, hi=0.4),
    Claim("share of samples outside the plot", measure("outside"), hi=0.0))
C_GUIDED_NET = (
    Claim("spread of the samples / spread of mode 0, network, w = 3", measure("spread"),
          lo=2.0),
    Claim("share of samples outside the plot, network, w = 3", measure("outside"), lo=0.05),
    Claim("spread at w = 0 with the same network", measure("spread", df_w=0.0), hi=1.2))
C_SWISS = (Claim("sliced W to the data: shipped network / exact denoiser",
                 lambda s: measure("sw")(s) / measure("sw", df_den=EXACT)(s), hi=1.5),)
C_LANGEVIN = (Claim("plain Langevin: share in the left mode (truth 0.8)",
                    lambda s: langevin_weights(s, "plain"), hi=0.6),
              Claim("annealed Langevin: share in the left mode (truth 0.8)",
                    lambda s: langevin_weights(s, "annealed"), lo=0.74, hi=0.86))

PRESETS = {
    "DDPM, 1000 steps, exact denoiser": Preset(
        DDPM, "Ancestral sampling with the exact ε*: the shares of samples at the three modes "
              "match the truth 0.6 / 0.2 / 0.2 (each within 0.06 with 500 particles).",
        "reverse", C_DDPM),
    "DDIM, 10 deterministic steps (η = 0)": Preset(
        MOONS10, "Ten deterministic steps already give the moons: over 85% of the samples lie "
                 f"within {NEAR} of the data, and the trajectories are smooth curves.",
        "reverse", C_DDIM10),
    "DDIM, 10 noisy steps (η = 1)": Preset(
        MOONS10_NOISY, "The same 10 steps with η = 1 (DDPM-like noise): a little blurrier "
                       "(sliced W up by 2-50%, more samples off the moons). The gap is small "
                       "in 2-D, and with 50 steps both are about equal (within 10%). The *Steps vs "
                       "quality* tab draws the whole curve.", "reverse", C_DDIM10_NOISY),
    "Guidance w = 3 on class 0": Preset(
        GUIDED, "Classifier-free guidance (1+w)ε(x,c) − wε(x) with the exact denoiser, "
                "compared with mode 0 alone: every sample lands in mode 0, the cloud is "
                "tighter (spread < 0.8 × the mode's) and pushed 0.15-0.4 away from the other "
                "modes: guidance sharpens and exaggerates the class, it does not sample it.",
        "reverse", C_GUIDED),
    "Guidance w = 3 with the trained network": Preset(
        GUIDED_NET, "The same guidance with the shipped network: (1+w) multiplies the "
                    "network's errors where it is inaccurate (away from the data), and the "
                    "samples scatter past the mode (spread > 2 × the mode's, over 5% leave the "
                    "plot). At w = 0 the same network samples mode 0 fine.", "reverse",
        C_GUIDED_NET),
    "Trained network on the Swiss roll": Preset(
        SWISS, "A 3-layer MLP learned ε on the Swiss roll (scripts/pretrain_diffusion.py): its "
               "samples are within 1.5× the sliced Wasserstein distance of the exact (kernel "
               "density) denoiser's.", "reverse", C_SWISS),
    "Plain Langevin misweights modes": Preset(
        LANGEVIN, "Langevin follows the score only: particles stay in the basin they start in, "
                  "so the left mode gets under 0.6 of them instead of its weight 0.8. Annealed "
                  "Langevin starts from the smoothed data and recovers 0.8 (within 0.06).",
        "langevin", C_LANGEVIN),
}

STEPS = [
    Step("Noise the data",
         "x_t = √ᾱ_t x₀ + √(1−ᾱ_t) ε: at t = 500 the linear schedule keeps ᾱ = 0.079 of the "
         "signal's power, and by t = 1000 the data is pure N(0, I) (ᾱ < 10⁻⁴). The cosine "
         "schedule destroys signal more slowly (over 5× more left at t = 500).", FORWARD,
         "forward", C_FORWARD),
    Step("Sample back with DDPM",
         "1000 ancestral steps with the exact denoiser recover the mixture and its weights "
         "0.6 / 0.2 / 0.2.", DDPM, "reverse", C_DDPM),
    Step("Fewer steps: DDIM",
         "10 deterministic DDIM steps: the moons are there already. Choose the preset *η = 1* "
         "next to compare the noisy variant, and open *Steps vs quality* for the whole curve.",
         MOONS10, "reverse", C_DDIM10),
    Step("Guidance",
         "Conditioning on class 0 puts every sample in mode 0; guidance w = 3 then makes the "
         "cloud tighter than the mode and pushes it away from the other classes.",
         GUIDED, "reverse", C_GUIDED),
    Step("Langevin needs annealing",
         "Plain Langevin cannot tell a mode's weight across a gap: the left mode (weight 0.8) "
         "gets under 0.6 of the particles. Annealed Langevin recovers the weight.",
         LANGEVIN, "langevin", C_LANGEVIN),
]


# ----------------------------------------------------------------------------- views
def data_controls() -> tuple[D.ToyData, dict]:
    """Data, mode weight and schedule (every view shares them); an upload where chosen."""
    name = STATE.widget("df_data")
    if name == "mixture":
        STATE.widget("df_weight")
    STATE.widget("df_sched")
    s = STATE.values()
    data = None
    if name == UPLOAD:
        up = st.file_uploader("CSV with columns x, y (and optionally class 0..9)",
                              type=["csv"], key="df_upload")
        if up is not None:
            with user_errors("read the CSV"):
                data = D.parse_points_csv(up.getvalue().decode("utf-8", errors="replace"))
                st.caption(f"{len(data.points)} points, centred and scaled to unit spread.")
        if data is None:
            st.warning("No valid CSV yet: showing the two-moons data instead.")
    return (data if data is not None else data_of(s, session.seed())), s


def forward_view(panel) -> None:
    with panel.controls:
        data, _ = data_controls()
        t = STATE.widget("df_t")
        s = STATE.values()
        schedule = schedule_of(s["df_sched"])
        ab = schedule.alpha_bar(t)
        st.metric("ᾱ_t", f"{ab:.4g}")
        c = st.columns(2)
        c[0].metric("√ᾱ_t (signal)", f"{np.sqrt(ab):.3f}")
        c[1].metric("√(1−ᾱ_t) (noise)", f"{np.sqrt(1 - ab):.3f}")
        st.metric("SNR = ᾱ/(1−ᾱ)", "∞" if t == 0 else f"{ab / (1 - ab):.3g}")
    noise = torch.randn(len(data.points), 2, generator=torch.Generator().manual_seed(
        session.seed()))
    xt = D.q_sample(torch.as_tensor(data.points), t, noise, schedule).numpy()
    with panel.figure:
        left, right = st.columns([1, 1.3])
        with left:
            every = max(1, -(-len(xt) // FWD_SHOWN))     # a stride: ordered data stays whole
            show_figure(F.forward_scatter(data.points[::every], xt[::every], t, ab, LIM),
                        key="df_fig_fwd")
        with right:
            show_figure(F.schedule_curves(schedule_table(), t), key="df_fig_sched")
    with panel.notes:
        explain("Each forward step is q(x_t|x_{t−1}) = N(√(1−β_t) x_{t−1}, β_t I); composed, "
                "q(x_t|x₀) = N(√ᾱ_t x₀, (1−ᾱ_t) I) with ᾱ_t = Π_{s≤t}(1−β_s). The linear DDPM "
                "schedule (β from 10⁻⁴ to 0.02, T = 1000) gives ᾱ₁₀₀ ≈ 0.897, ᾱ₅₀₀ ≈ 0.0786 "
                "and ᾱ₁₀₀₀ ≈ 4.04·10⁻⁵; the cosine schedule keeps more signal in the middle.")


def _model_for(s, data_name: str, data_id) -> tuple[Any, str]:
    """(network or None, what the caption says about it)."""
    if s["df_den"] == PRETRAINED:
        loaded = pretrained_of(data_name)
        if loaded is None:
            st.warning("No pretrained network for this data: using the exact denoiser.")
            return None, ""
        model, model_sched, meta = loaded
        note = (f"Pretrained EpsMLP ({meta.get('steps')} steps on the default '{data_name}' "
                f"data, {model_sched.name} schedule).")
        if data_name == "mixture" and abs(s["df_weight"] - 0.6) > 1e-9:
            note += " It was trained with weight 0.6 on mode 0, not the slider's value."
        if not model.num_classes:
            note += " It is unconditional: class and guidance do not change it."
        if model_sched.name != s["df_sched"]:
            note += f" The network samples with its own ({model_sched.name}) schedule."
        return model, note
    if s["df_den"] == TRAINED:
        net = read_trainer("df_train", net_of)
        if net is not None and net.steps > 0 and net.data_id == data_id:
            return model_of(net), f"Network from the Train tab after {net.steps} iterations."
        st.warning("Train a network on this data on the Train tab first: using the exact "
                   "denoiser.")
    return None, ""


def reverse_controls(sampler_box) -> None:
    with sampler_box:
        sampler = STATE.widget("df_sampler")
        STATE.widget("df_den")
        if sampler == "DDIM":
            STATE.widget("df_steps")
            STATE.widget("df_eta")
        if "Langevin" in sampler:
            STATE.widget("df_lsteps")
        c = st.columns(2)
        STATE.widget("df_class", c[0])
        STATE.widget("df_w", c[1])
        STATE.widget("df_n")


def reverse_view(panel) -> None:
    with panel.controls:
        data, _ = data_controls()
        reverse_controls(st.container())
        s = STATE.values()
    seed = session.seed()
    data_name = s["df_data"]
    data_id = hash(data.points.tobytes())
    with panel.controls:
        model, note = _model_for(s, data_name, data_id)
        exact = exact_of(data, s["df_sched"], seed)
        c = class_of(s, exact)
        if s["df_class"] != "none" and c is None:
            st.warning(f"This data has classes 0..{exact.num_classes - 1}: sampling "
                       f"unconditionally.")
        if s["df_w"] > 0 and c is None:
            st.info("Guidance needs a class: pick one to see w act.")
        if model is not None and "Langevin" in s["df_sampler"]:
            st.info("The Langevin samplers use the exact score of the data.")
        if note:
            st.caption(note)
    run = None
    with panel.figure, user_errors("run the sampler"):
        with st.spinner(f"Sampling with {s['df_sampler']}..."):
            if s["df_den"] == TRAINED and model is not None:          # session's own network
                run, m = _run_and_measure(s, data, exact, *model, seed)
            elif data_name == UPLOAD:
                run, m = _run_and_measure({**s, "df_den": EXACT}, data, exact, None,
                                          exact.schedule, seed)
            else:
                run, m = reverse_of(s, seed)
        res = run.result
        shown = min(SHOWN, len(res.samples))
        hl = np.arange(0, shown, max(1, shown // 6))[:6]
        left, right = st.columns([1.5, 1])
        with left:
            st.caption("Drag the slider under the plot or press ▶ (noise → data).")
            show_figure(F.reverse_animation(res.frames[:, :shown], res.times, hl, run.grid,
                                            run.field, LIM, run.time_label), key="df_fig_anim")
        with right:
            st.caption("Compared with " + ("the data" if c is None else
                                           f"**class {c} alone** (its own mode)"))
            k = st.columns(2)
            k[0].metric("Sliced W", f"{m['sw']:.3f}",
                        help="Sliced Wasserstein distance of the samples to the reference.")
            k[1].metric("MMD² (RBF)", f"{m['mmd']:.4f}")
            k = st.columns(2)
            k[0].metric("Spread ratio", f"{m['spread']:.2f}",
                        help="Mean std of the samples over that of the reference: < 1 "
                             "tighter, > 1 wider.")
            k[1].metric("Outside the plot", f"{m['outside']:.0%}",
                        help=f"Share of samples with a coordinate beyond ±{LIM}.")
            if m["nonfinite"]:
                st.warning(f"{int(m['nonfinite'])} samples are not finite.")
            if data.centers is not None:
                truth = exact.weights if c is None else np.eye(len(exact.weights))[c]
                mw = D.mode_weights(res.samples, data.centers)
                show_figure(F.weight_bars({"samples": mw, "truth": truth}),
                            key="df_fig_bars")
            else:
                gx, gy, dens = _density(data, s["df_sched"], seed, c)
                show_figure(F.samples_over_density(res.samples, gx, gy, dens, LIM),
                            key="df_fig_final")
    with panel.notes:
        if run is not None:
            _reverse_export(s, run, m)
        explain("DDPM: x_{t−1} = (1/√α_t)(x_t − β_t/√(1−ᾱ_t) ε_θ) + σ_t z with σ_t² = β_t, and "
                "no noise in the last step. DDIM jumps along a sub-sequence of S steps: "
                "x_{t−1} = √ᾱ_{t−1} x̂₀ + √(1−ᾱ_{t−1}−σ²) ε_θ + σz, x̂₀ = (x_t − √(1−ᾱ_t) ε_θ)"
                "/√ᾱ_t, σ = η√((1−ᾱ_{t−1})/(1−ᾱ_t))√(1−ᾱ_t/ᾱ_{t−1}); η = 0 is deterministic. "
                "The **exact** denoiser is ε* of the true mixture (for non-mixture data: of a "
                "kernel density of 256 data points), so any error left is the sampler's; the "
                "network adds its own. With a class c the metrics compare with class c alone "
                "(its own mode), not with the whole data. Guidance (1+w)ε(x,c) − wε(x) "
                "samples ∝ p(x|c)·(p(x|c)/p(x))^w: tighter than the class and pushed away "
                "from the other classes.")


@st.cache_data(max_entries=16, show_spinner=False)
def _density_cached(data_key: tuple, _data, sched: str, seed: int, c):
    return D.density_grid(exact_of(_data, sched, seed), -LIM, LIM, 70, 0, c)


def _density(data, sched: str, seed: int, c):
    return _density_cached((hash(data.points.tobytes()), sched, seed, c), data, sched, seed, c)


def _reverse_export(s, run, m) -> None:
    with st.expander("Export", icon=":material/download:"):
        on_demand("df_export", lambda: _reverse_files(s, run, m))


def _reverse_files(s, run, m) -> None:
    res = run.result
    shown = min(SHOWN, len(res.samples))
    traj = pd.DataFrame({"frame": np.repeat(np.arange(len(res.times)), shown),
                         "time": np.repeat(res.times, shown),
                         "particle": np.tile(np.arange(shown), len(res.times)),
                         "x1": res.frames[:, :shown, 0].ravel(),
                         "x2": res.frames[:, :shown, 1].ravel()})
    final = pd.DataFrame({"frame": "final", "time": 0, "particle": np.arange(len(res.samples)),
                          "x1": res.samples[:, 0], "x2": res.samples[:, 1]})
    export_buttons(pd.concat([final, traj]), {
        **{k: s[k] for k in REVERSE_KEYS}, "sliced_wasserstein": m["sw"],
        "mmd2": m["mmd"]}, "diffusion-samples")


COARSE_STEPS, COARSE_N = (2, 5, 10, 20), 300


@st.cache_data(max_entries=16, show_spinner=False)
def _coarse_quality(key: tuple, _eps, _schedule, _reference, metric: str, seed: int):
    """DDIM quality for a few small S on 300 samples: cheap enough for first paint (~0.1 s);
    `key` identifies the unhashable denoiser, schedule and reference."""
    return D.steps_vs_quality(_eps, _schedule, _reference, COARSE_STEPS, (0.0, 1.0),
                              n=COARSE_N, seed=seed, metric=metric)


def quality_view(panel) -> None:
    with panel.controls:
        data, _ = data_controls()
        STATE.widget("df_den")
        STATE.widget("df_metric")
        STATE.widget("df_s1000")
        go_ = st.button("Compute", key="df_sq_run", type="primary",
                        icon=":material/play_arrow:", width="stretch")
    s = STATE.values()
    seed = session.seed()
    exact = exact_of(data, s["df_sched"], seed)
    model = None
    if s["df_den"] == PRETRAINED and pretrained_of(s["df_data"]) is not None:
        model = pretrained_of(s["df_data"])[0]
    c = class_of(s, exact)
    s_list = (2, 5, 10, 20, 50, 100, 250) + ((1000,) if s["df_s1000"] else ())
    sq_id = (s["df_data"], s["df_weight"], s["df_sched"], s["df_den"], s["df_metric"], s_list,
             seed, s["df_class"], s["df_w"])
    with panel.figure:
        if go_:
            bar = st.progress(0.0, text="Running DDIM for each S and η...")
            with user_errors("compute the table"):
                ref = reference_of(data, exact, c, seed)
                st.session_state["df_sq"] = (sq_id, D.steps_vs_quality(
                    eps_of(s, exact, model), exact.schedule, ref, s_list, (0.0, 1.0), n=1000,
                    seed=seed, metric=s["df_metric"], progress=lambda f: bar.progress(f)))
            bar.empty()
        stored = st.session_state.get("df_sq")
        if stored is None:
            # progressive: a coarse first look at once, the full table behind Compute
            sq = _coarse_quality(sq_id, eps_of(s, exact, model), exact.schedule,
                                 reference_of(data, exact, c, seed), s["df_metric"], seed)
            st.caption(f"First look: S = {', '.join(map(str, COARSE_STEPS))} with "
                       f"{COARSE_N} samples each. Press **Compute** for S = 2 … 250 "
                       "(and 1,000) with 1,000 samples.")
        else:
            if stored[0] != sq_id:
                st.caption("Settings changed since this table was computed: press Compute "
                           "again.")
            sq = stored[1]
        show_figure(F.steps_quality(sq.steps, sq.etas, sq.distance, sq.metric),
                    key="df_fig_sq")
    with panel.notes:
        table = pd.DataFrame(sq.distance, index=[f"η = {e:g}" for e in sq.etas],
                             columns=[f"S = {v}" for v in sq.steps])
        st.dataframe(table.style.format("{:.3f}"))
        explain("The DDIM paper (CIFAR-10 FID, S = 10/20/50/100/1000): η = 0 gives "
                "13.36/6.84/4.67/4.16/4.04, η = 1 gives 41.07/18.36/8.01/5.78/4.73. In 2-D "
                "the gap is much smaller: with the exact denoiser on the moons, S = 10 gives "
                "sliced W ≈ 0.15 (η = 0) vs 0.16 (η = 1), and from S = 50 on the two are about "
                "equal.")


def train_view(panel) -> None:
    with panel.controls:
        data, s = data_controls()
        STATE.widget("df_lr")
        STATE.widget("df_hidden")
        s = STATE.values()
    seed, device = session.seed(), session.device()
    data_id = hash(data.points.tobytes())
    schedule = D.SCHEDULES[s["df_sched"]]()
    points, labels = data.points, data.labels

    def _make():
        trainer = D.DiffusionTrainer(points, labels, schedule, hidden=int(s["df_hidden"]),
                                     lr=float(s["df_lr"]), seed=seed, device=device)
        trainer.data_id = data_id          # the Reverse tab samples with it only on this data
        return trainer

    def _draw(view, tick):
        snap = view.snapshot()
        a, b = st.columns(2)
        with a:
            show_figure(F.samples_vs_data(snap.samples, points, LIM,
                                          "Current net's samples (DDIM, 25 steps)"),
                        key="df_fig_train_samples")
        with b:
            show_figure(F.loss_curve(*view.history.as_arrays("loss")), key="df_fig_loss")

    with panel.figure:
        live_training("df_train", _make, _draw,
                      config={"data": s["df_data"], "w0": s["df_weight"], "n": len(points),
                              "sched": s["df_sched"], "lr": s["df_lr"],
                              "hidden": s["df_hidden"], "seed": seed, "device": device,
                              "data_id": data_id},
                      steps_per_frame=100, max_steps_per_frame=500)
    with panel.notes:
        explain("Each iteration draws a batch of data, t ~ U{1..T} and ε ~ N(0, I), and "
                "minimises ‖ε − ε_θ(√ᾱ_t x₀ + √(1−ᾱ_t) ε, t, c)‖². The class token c is "
                "dropped 10% of the time, so one network is both conditional and unconditional "
                "(classifier-free guidance). Pick 'network from the Train tab' on the Reverse "
                "tab to sample with it.")


def langevin_view(panel) -> None:
    with panel.controls:
        STATE.widget("df_lgap")
        STATE.widget("df_lw")
        STATE.widget("df_lnsteps")
        STATE.widget("df_levels")
    s = STATE.values()
    centers, truth, plain, ann, gx, marg = langevin_of(
        float(s["df_lgap"]), float(s["df_lw"]), int(s["df_lnsteps"]), int(s["df_levels"]),
        session.seed())
    with panel.figure:
        if not (np.isfinite(plain).all() and np.isfinite(ann).all()):
            st.warning("Some particles diverged (non-finite); they are left out of the plots.")
        left, right = st.columns([1.6, 1])
        with left:
            show_figure(F.langevin_compare({"plain Langevin": plain, "annealed Langevin": ann},
                                           gx, marg, float(s["df_lgap"])), key="df_fig_lang")
        with right:
            show_figure(F.weight_bars({"plain": D.mode_weights(plain, centers),
                                       "annealed": D.mode_weights(ann, centers),
                                       "truth": truth},
                                      ["left mode", "right mode"], "Mode weights"),
                        key="df_fig_lang_bars")
    with panel.notes:
        explain("Langevin dynamics x ← x + α∇log p(x) + √(2α) z samples p only in the long "
                "run. Between two modes separated by a gap the score points to the nearest "
                "mode and is blind to the mixing weight, so particles keep the split of their "
                "start (uniform here: about half each). Annealed Langevin starts with the data "
                "smoothed by a large σ, where the modes overlap and the weights are visible, "
                "then lowers σ (σ₁ > … > σ_L, step α_i ∝ σ_i²) and recovers them.")



def views(*specs: tuple[str, str, Any]) -> list[View]:
    return [View(key, title, draw) for key, title, draw in specs]


VIEWS = views(("forward", "Forward", forward_view),
              ("reverse", "Reverse", reverse_view),
              ("quality", "Steps vs quality", quality_view),
              ("train", "Train", train_view),
              ("langevin", "Langevin", langevin_view))

if __name__ == "__main__":
    topic_page("diffusion", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"x_t=\sqrt{\bar\alpha_t}\,x_0+\sqrt{1-\bar\alpha_t}\,\varepsilon,\qquad "
                       r"\varepsilon^*(x_t,t)=-\sqrt{1-\bar\alpha_t}\,\nabla_x\log q_t(x_t)")
