"""Diffusion sampling: forward noising, reverse sampling (DDPM, DDIM, Langevin), classifier-free
guidance, steps vs quality, live training, and why annealing fixes Langevin's mode weights.
Settings -> engine/diffusion/ -> topics/diffusion/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, the footer. The
constants and pure computations that both the views and the claims use (cached: a rerun never
samples twice) are in topics/diffusion/compute.py, PRESETS and STEPS with their claims in
topics/diffusion/tour.py."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine import diffusion
from engine.diffusion.reads import build_trainer, model_of, net_of
from topics.diffusion import figures as figs
from ui import session
from ui import warm
from topics.diffusion.compute import (
    LIM, UPLOAD, EXACT, PRETRAINED, TRAINED, DENOISERS, CLASSES, SHOWN, FWD_SHOWN, REVERSE_KEYS,
    COARSE_STEPS, COARSE_N, data_of, exact_of, pretrained_of, class_of, eps_of, reference_of,
    _run_and_measure, reverse_of, langevin_of, schedule_of, schedule_table, noised_of, _density,
    _coarse_quality, warm_jobs)
from topics.diffusion.tour import PRESETS, STEPS
from live.controls import live_training, read_trainer
from live.push import live_parts, place
from ui.on_demand import on_demand
from ui.page import Live, View, topic_page, user_errors
from live.parts import Figure
from ui.render import explain, show_figure
from ui.state import Control, StateTable

SUMMARY_HEIGHT = 260     # px: the chart beside the reverse animation, the metrics under it
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants

STATE = StateTable([
    Control("df_data", "mixture", "Data", kind="selectbox", options=[*diffusion.DIFFUSION_DATA, UPLOAD]),
    Control("df_weight", 0.6, "Weight of mode 0 (mixture)", lo=0.1, hi=0.9, step=0.05),
    Control("df_sched", "linear", "Noise schedule", kind="selectbox", options=list(diffusion.SCHEDULES)),
    Control("df_t", 250, "Diffusion time t", lo=0, hi=1000, step=1),
    Control("df_sampler", "DDIM", "Sampler", kind="selectbox", options=list(diffusion.SAMPLERS)),
    Control("df_den", EXACT, "Denoiser", kind="selectbox", options=list(DENOISERS)),
    Control("df_n", 500, "Particles", lo=100, hi=2000, step=100),
    Control("df_steps", 50, "DDIM steps S", lo=2, hi=1000, step=1),
    Control("df_eta", 0.0, "η (DDIM noise)", lo=0.0, hi=1.0, step=0.1),
    Control("df_class", "none", "Class", kind="selectbox", options=list(CLASSES),
            help="Condition on one class (mixture: one mode)."),
    Control("df_w", 0.0, "Guidance w", lo=0.0, hi=5.0, step=0.5),
    Control("df_lsteps", 500, "Langevin steps", lo=50, hi=2000, step=50),
    Control("df_metric", "sliced Wasserstein", "Metric", kind="selectbox",
            options=list(diffusion.METRICS)),
    Control("df_s1000", False, "Include S = 1000 (slow)", kind="checkbox"),
    Control("df_lr", 2e-3, "Learning rate", kind="select_slider",
            options=[1e-4, 3e-4, 1e-3, 2e-3, 5e-3, 1e-2]),
    Control("df_hidden", 64, "Hidden units", kind="select_slider", options=[32, 64, 128]),
    Control("df_lgap", 8.0, "Gap between modes", lo=2.0, hi=10.0, step=0.5),
    Control("df_lw", 0.8, "Weight of the left mode", lo=0.5, hi=0.95, step=0.05),
    Control("df_lnsteps", 400, "Steps", lo=100, hi=2000, step=100),
    Control("df_levels", 10, "Noise levels (annealed)", lo=2, hi=20, step=1),
])


# ----------------------------------------------------------------------------- views
def data_controls() -> tuple[diffusion.ToyData, dict]:
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
                data = diffusion.parse_points_csv(up.getvalue().decode("utf-8", errors="replace"))
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
    xt = noised_of(data.points, t, schedule, session.seed())
    with panel.figure:
        left, right = st.columns([1, 1.3])
        with left:
            every = max(1, -(-len(xt) // FWD_SHOWN))     # a stride: ordered data stays whole
            show_figure(figs.forward_scatter(data.points[::every], xt[::every], t, ab, LIM),
                        key="df_fig_fwd")
        with right:
            show_figure(figs.schedule_curves(schedule_table(), t), key="df_fig_sched")
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


def sampler_setup(s, network: bool, n_samples: int) -> str:
    """The run the Reverse tab shows, in words: sampler, its steps, what gives ε (the chosen
    network, or the exact denoiser when there is none), sample count."""
    sampler = s["df_sampler"]
    if sampler == "DDPM":
        sampler += f", {schedule_of(s['df_sched']).T} steps"
    elif sampler == "DDIM":
        sampler += f", {s['df_steps']} steps, η = {s['df_eta']:g}"
    else:                                       # the Langevin samplers: the exact score
        return f"{sampler}, {s['df_lsteps']} steps, exact score, {n_samples} samples"
    return f"{sampler}, {s['df_den'] if network else 'exact denoiser'}, {n_samples} samples"


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
        setup = sampler_setup(s, model is not None, len(res.samples))
        st.caption(f"{setup}, {shown} drawn. Drag the slider under the plot or press ▶ "
                   "(noise → data).")
        # the final samples' summary beside the animation, both charts on one row: the
        # figure fills the projector's first screen with the numbers next to it
        left, right = st.columns([1.5, 1])
        with left:
            show_figure(figs.reverse_animation(res.frames[:, :shown], res.times, hl, run.grid,
                                               run.field, LIM, run.time_label),
                        key="df_fig_anim")
        with right:
            if data.centers is not None:
                truth = exact.weights if c is None else np.eye(len(exact.weights))[c]
                mw = diffusion.mode_weights(res.samples, data.centers)
                show_figure(figs.weight_bars({"samples": mw, "truth": truth}),
                            key="df_fig_bars", height=SUMMARY_HEIGHT)
            else:
                gx, gy, dens = _density(data, s["df_sched"], seed, c)
                show_figure(figs.samples_over_density(res.samples, gx, gy, dens, LIM),
                            key="df_fig_final", height=SUMMARY_HEIGHT)
            _reverse_metrics(m, c)
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


def _reverse_metrics(m: dict, c: int | None) -> None:
    """The final samples against the reference (the data, or class c alone)."""
    st.caption("Samples compared with " + ("the data" if c is None else f"**class {c} alone**"))
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
                st.session_state["df_sq"] = (sq_id, diffusion.steps_vs_quality(
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
        show_figure(figs.steps_quality(sq.steps, sq.etas, sq.distance, sq.metric),
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


def train_frame_parts(view, read, points: np.ndarray) -> dict:
    """One live frame of the Train tab as parts (live/parts.py; pure, so the frame route can
    build it too): the current net's samples over the data, and the loss curve."""
    return {"df_fig_train_samples": Figure(figs.samples_vs_data(
                view.snapshot().samples, points, LIM, "Model samples (DDIM, 25 steps)")),
            "df_fig_loss": Figure(
                figs.loss_curve(*view.history.as_arrays("loss")))}


def train_view(panel) -> None:
    with panel.controls:
        data, s = data_controls()
        STATE.widget("df_lr")
        STATE.widget("df_hidden")
        s = STATE.values()
    seed, device = session.seed(), session.device()
    data_id = hash(data.points.tobytes())
    points, labels = data.points, data.labels
    # a pure factory over plain values (it may run in a worker process); data_id: the
    # Reverse tab samples with the trained net only on this data
    make = functools.partial(build_trainer, points, labels, s["df_sched"], int(s["df_hidden"]),
                             float(s["df_lr"]), seed, device, data_id)

    def _draw(view, tick):
        parts = live_parts(train_frame_parts, view, points=points)
        a, b = st.columns(2)
        with a:
            place(parts, "df_fig_train_samples")
        with b:
            place(parts, "df_fig_loss")

    with panel.figure:
        live_training("df_train", make, _draw,
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
            show_figure(figs.langevin_compare({"plain Langevin": plain, "annealed Langevin": ann},
                                           gx, marg, float(s["df_lgap"])), key="df_fig_lang")
        with right:
            show_figure(figs.weight_bars({"plain": diffusion.mode_weights(plain, centers),
                                       "annealed": diffusion.mode_weights(ann, centers),
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



VIEWS = [View("forward", "Forward", forward_view),
         View("reverse", "Reverse", reverse_view),
         View("quality", "Steps vs quality", quality_view),
         View("train", "Train", train_view,
              live=Live("df_train", train_max=10_000)),
         View("langevin", "Langevin", langevin_view)]

if __name__ == "__main__":
    _seed = session.seed()
    warm.start("diffusion", (_seed,), lambda: warm_jobs(
        [STATE.resolve(x.settings) for x in [*PRESETS.values(), *STEPS]
         if x.view in ("reverse", "langevin")], _seed))
    topic_page("diffusion", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"x_t=\sqrt{\bar\alpha_t}\,x_0+\sqrt{1-\bar\alpha_t}\,\varepsilon,\qquad "
                       r"\varepsilon^*(x_t,t)=-\sqrt{1-\bar\alpha_t}\,\nabla_x\log q_t(x_t)")
