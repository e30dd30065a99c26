"""Diffusion sampling: forward noising, reverse sampling (DDPM, DDIM, Langevin), guidance,
steps vs quality, live training, and why annealing fixes Langevin's mode weights."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from engine import diffusion as D
from viz import diffusion_figures as F
from viz import session
from viz.live import live_training
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.topics import ROOT
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

LIM = 3.5
UPLOAD = "upload CSV"
DENOISERS = ("exact", "pretrained network", "network from the Train tab")
CLASSES = ("none", *[str(k) for k in range(8)])
WEIGHTS_DIR = ROOT / "assets" / "weights"
_load_model = st.cache_resource(D.load_model)

PRESETS = {
    "DDPM, 1000 steps, exact denoiser": Preset(
        {"df_data": "mixture", "df_weight": 0.6, "df_sampler": "DDPM", "df_den": "exact",
         "df_class": "none", "df_w": 0.0},
        "Ancestral sampling with the exact ε*: the mode-weight bars match the truth (0.6/0.2/0.2)."),
    "DDIM, 10 deterministic steps (η = 0)": Preset(
        {"df_data": "two_moons", "df_sampler": "DDIM", "df_steps": 10, "df_eta": 0.0,
         "df_den": "exact", "df_class": "none", "df_w": 0.0},
        "Ten deterministic steps already give sharp moons: the paths are smooth curves."),
    "DDIM, 10 noisy steps (η = 1)": Preset(
        {"df_data": "two_moons", "df_sampler": "DDIM", "df_steps": 10, "df_eta": 1.0,
         "df_den": "exact", "df_class": "none", "df_w": 0.0},
        "Same 10 steps with η = 1 (DDPM-like noise): the samples are blurred. Few steps favour η = 0."),
    "Guidance w = 3 on class 0": Preset(
        {"df_data": "mixture", "df_weight": 0.6, "df_sampler": "DDIM", "df_steps": 50,
         "df_eta": 0.0, "df_den": "pretrained network", "df_class": "0", "df_w": 3.0},
        "Classifier-free guidance (1+w)ε(x,c) − wε(x): all samples land in mode 0, tighter than the data."),
    "Trained network on the Swiss roll": Preset(
        {"df_data": "swiss_roll", "df_sampler": "DDIM", "df_steps": 50, "df_eta": 0.0,
         "df_den": "pretrained network", "df_class": "none", "df_w": 0.0},
        "A 3-layer MLP learned ε; compare with the exact (kernel-density) denoiser."),
    "Plain Langevin misweights modes": Preset(
        {"df_data": "mixture", "df_weight": 0.8, "df_sampler": "Langevin", "df_den": "exact",
         "df_class": "none", "df_w": 0.0},
        "Langevin follows the score only: particles stay in the basin they start in, so mode 0 "
        "gets far less than its weight 0.8. Try 'annealed Langevin'."),
}

STEPS = [
    Step("Noise the data", "Forward tab: move t. x_t = √ᾱ_t x₀ + √(1−ᾱ_t) ε: by t = 1000 the "
         "data is pure N(0, I). The cosine schedule destroys signal more slowly.", {"df_t": 500}),
    Step("Sample back with DDPM", "Reverse tab: 1000 ancestral steps with the exact denoiser "
         "recover the mixture and its weights.", PRESETS["DDPM, 1000 steps, exact denoiser"].settings),
    Step("Fewer steps: DDIM", "Reverse tab: 10 deterministic DDIM steps. Then set η = 1 and "
         "compare; the Steps vs quality tab draws the whole curve.",
         PRESETS["DDIM, 10 deterministic steps (η = 0)"].settings),
    Step("Guidance", "Pick a class and raise w: samples concentrate on that class.",
         PRESETS["Guidance w = 3 on class 0"].settings),
    Step("Langevin needs annealing", "Langevin tab: plain Langevin cannot tell a mode's weight "
         "across a gap; annealed Langevin recovers it.", {}),
]

page_header("Diffusion sampling",
            "2-D data is noised step by step, then sampled back from pure noise with DDPM, DDIM "
            "and Langevin dynamics, using an exact mixture denoiser or a small trained network.",
            r"x_t=\sqrt{\bar\alpha_t}\,x_0+\sqrt{1-\bar\alpha_t}\,\varepsilon,\qquad "
            r"\varepsilon^*(x_t,t)=-\sqrt{1-\bar\alpha_t}\,\nabla_x\log q_t(x_t)")

device, seed = session.device(), session.seed()
top = st.columns([2, 2, 2, 2])
preset_picker(PRESETS, key="df_preset", container=top[0])
data_name = top[1].selectbox("Data", [*D.DIFFUSION_DATA, UPLOAD], key="df_data",
                             bind="query-params")
first_weight = top[2].slider("Weight of mode 0 (mixture)", 0.1, 0.9, 0.6, 0.05, key="df_weight",
                             bind="query-params", disabled=data_name != "mixture")
sched_name = top[3].selectbox("Noise schedule", list(D.SCHEDULES), key="df_sched",
                              bind="query-params")
guided_steps(STEPS, key="df_tour")


@st.cache_data(max_entries=16)
def _dataset(name: str, weight: float, n: int, seed_: int) -> D.ToyData:
    params = {"first_weight": weight} if name == "mixture" else {}
    return D.DIFFUSION_DATA[name](n=n, seed=seed_, **params)


data = None
if data_name == UPLOAD:
    up = st.file_uploader("CSV with columns x, y (and optionally class 0..9)", type=["csv"],
                          key="df_upload")
    if up is not None:
        with user_errors("read the CSV"):
            data = D.parse_points_csv(up.getvalue().decode("utf-8", errors="replace"))
            st.caption(f"{len(data.points)} points, centred and scaled to unit spread.")
    if data is None:
        st.warning("No valid CSV yet: showing the two-moons data instead.")
if data is None:
    data = _dataset(data_name if data_name != UPLOAD else "two_moons", first_weight, 1000, seed)
data_id = hash(data.points.tobytes())
schedule = D.SCHEDULES[sched_name]()
exact = D.MixtureDenoiser.from_data(data, schedule, device=device, seed=seed)
num_classes = int(exact.num_classes)

tabs = st.tabs(["Forward", "Reverse", "Steps vs quality", "Train", "Langevin"])

# ---------------------------------------------------------------- Forward
with tabs[0]:
    t = st.slider("Diffusion time t", 0, schedule.T, 250, key="df_t", bind="query-params")
    noise = torch.randn(len(data.points), 2, generator=torch.Generator().manual_seed(seed))
    xt = D.q_sample(torch.as_tensor(data.points), t, noise, schedule).numpy()
    ab = schedule.alpha_bar(t)
    c = st.columns(4)
    c[0].metric("ᾱ_t", f"{ab:.4g}")
    c[1].metric("√ᾱ_t (signal)", f"{np.sqrt(ab):.3f}")
    c[2].metric("√(1−ᾱ_t) (noise)", f"{np.sqrt(1 - ab):.3f}")
    c[3].metric("SNR = ᾱ/(1−ᾱ)", "∞" if t == 0 else f"{ab / (1 - ab):.3g}")
    left, right = st.columns([1, 1.4])
    with left:
        show_figure(F.forward_scatter(data.points, xt, t, ab, LIM), key="df_fig_fwd")
    with right:
        curves = {n: {"alpha_bar": s.alpha_bars.numpy(), "snr": s.snr().numpy()}
                  for n, s in ((n, f()) for n, f in D.SCHEDULES.items())}
        show_figure(F.schedule_curves(curves, t), key="df_fig_sched")
    explain("Each forward step is q(x_t|x_{t−1}) = N(√(1−β_t) x_{t−1}, β_t I); composed, "
            "q(x_t|x₀) = N(√ᾱ_t x₀, (1−ᾱ_t) I) with ᾱ_t = Π_{s≤t}(1−β_s). The linear DDPM "
            "schedule (β from 10⁻⁴ to 0.02, T = 1000) gives ᾱ₁₀₀ ≈ 0.897, ᾱ₅₀₀ ≈ 0.0786 and "
            "ᾱ₁₀₀₀ ≈ 4.04·10⁻⁵; the cosine schedule keeps more signal in the middle.")

# ---------------------------------------------------------------- Reverse
with tabs[1]:
    r = st.columns(4)
    sampler = r[0].selectbox("Sampler", list(D.SAMPLERS), key="df_sampler", bind="query-params")
    den_name = r[1].selectbox("Denoiser", DENOISERS, key="df_den", bind="query-params")
    n = r[2].slider("Particles", 100, 2000, 500, 100, key="df_n", bind="query-params")
    steps = r[3].slider("DDIM steps S", 2, 1000, 50, key="df_steps", bind="query-params",
                        disabled=sampler != "DDIM")
    r = st.columns(4)
    eta = r[0].slider("η (DDIM noise)", 0.0, 1.0, 0.0, 0.1, key="df_eta", bind="query-params",
                      disabled=sampler != "DDIM")
    cls = r[1].selectbox("Class", CLASSES, key="df_class", bind="query-params",
                         help="Condition on one class (mixture: one mode).")
    w = r[2].slider("Guidance w", 0.0, 5.0, 0.0, 0.5, key="df_w", bind="query-params")
    lsteps = r[3].slider("Langevin steps", 50, 2000, 500, 50, key="df_lsteps",
                         bind="query-params", disabled="Langevin" not in sampler)

    c = None if cls == "none" else int(cls)
    if c is not None and c >= num_classes:
        st.warning(f"This data has classes 0..{num_classes - 1}: sampling unconditionally.")
        c = None
    if w > 0 and c is None:
        st.info("Guidance needs a class: pick one to see w act.")
    model, model_sched, model_note = None, schedule, ""
    if den_name == "pretrained network":
        if data_name in D.PRETRAINED:
            model, model_sched, meta = _load_model(
                str(WEIGHTS_DIR / f"diffusion_{data_name}.pt"), device)
            model_note = (f"Pretrained EpsMLP ({meta.get('steps')} steps on the default "
                          f"'{data_name}' data, linear schedule).")
            if data_name == "mixture" and abs(first_weight - 0.6) > 1e-9:
                model_note += " It was trained with weight 0.6 on mode 0, not the slider's value."
        else:
            st.warning("No pretrained network for this data: using the exact denoiser.")
    elif den_name == "network from the Train tab":
        tr = st.session_state.get("df_train__trainer")
        if tr is not None and tr.steps > 0 and getattr(tr, "data_id", None) == data_id:
            model, model_sched = tr.model, tr.schedule
            model_note = f"Network from the Train tab after {tr.steps} iterations."
        else:
            st.warning("Train a network on this data on the Train tab first: using the exact "
                       "denoiser.")
    if model is not None and "Langevin" in sampler:
        st.info("The Langevin samplers use the exact score of the data.")
    if model is not None and model_sched.name != schedule.name:
        model_note += f" The network samples with its own ({model_sched.name}) schedule."
    if model_note:
        st.caption(model_note)
    if model is not None:
        cond, unc = D.network_eps(model, c), D.network_eps(model)
    else:
        cond = (lambda x, t_, c_=c: exact.eps(x, t_, c_))
        unc = exact.eps
    eps_fn = unc if c is None else D.guidance(cond, unc, w)
    setup = D.ReverseSetup(eps_fn, exact, model_sched if model is not None else schedule, n=n,
                           steps=steps, eta=eta, langevin_steps=lsteps, seed=seed, device=device)
    run = None
    model_tag = st.session_state["df_train__trainer"].steps if den_name == DENOISERS[2] and \
        model is not None else None
    run_key = (data_id, sched_name, sampler, den_name, model_tag, n, steps,
               eta, c, w, lsteps, seed, device)
    if st.session_state.get("df__run_key") == run_key:     # reruns from other tabs' widgets
        run, sw, mmd = st.session_state["df__run"]
    else:
        with user_errors("run the sampler"), st.spinner(f"Sampling with {sampler}..."):
            new_run = D.reverse_run(sampler, setup, LIM)
            ref = exact.sample(2000, seed + 1) if data.centers is not None else data.points
            sw = D.sliced_wasserstein(new_run.result.samples, ref, seed=seed)
            mmd = D.mmd_rbf(new_run.result.samples[:1000], ref[:1000])
            st.session_state["df__run"], st.session_state["df__run_key"] = (new_run, sw, mmd), run_key
            run = new_run
    if run is not None:
        res = run.result
        shown = min(300, n)
        hl = np.arange(0, shown, max(1, shown // 6))[:6]
        show_figure(F.reverse_animation(res.frames[:, :shown], res.times, hl, run.grid,
                                        run.field, LIM, run.time_label), key="df_fig_anim")
        m = st.columns(3)
        m[0].metric("Sliced Wasserstein to data", f"{sw:.3f}")
        m[1].metric("MMD² (RBF)", f"{mmd:.4f}")
        m[2].metric("Non-finite samples", int((~np.isfinite(res.samples).all(1)).sum()))
        left, right = st.columns([1, 1])
        gx, gy, dens = D.density_grid(exact, -LIM, LIM, 70, 0, c)
        with left:
            show_figure(F.samples_over_density(res.samples, gx, gy, dens, LIM), key="df_fig_final")
        with right:
            if data.centers is not None:
                truth = exact.weights if c is None else np.eye(len(exact.weights))[c]
                mw = D.mode_weights(res.samples, data.centers)
                show_figure(F.weight_bars({"samples": mw, "truth": truth}), key="df_fig_bars")
            else:
                st.info("Mode weights need a mixture (choose 'mixture' or 'ring'); the sliced "
                        "Wasserstein distance and MMD above compare with the data.")
        traj = pd.DataFrame({"frame": np.repeat(np.arange(len(res.times)), shown),
                             "time": np.repeat(res.times, shown),
                             "particle": np.tile(np.arange(shown), len(res.times)),
                             "x1": res.frames[:, :shown, 0].ravel(),
                             "x2": res.frames[:, :shown, 1].ravel()})
        final = pd.DataFrame({"frame": "final", "time": 0, "particle": np.arange(n),
                              "x1": res.samples[:, 0], "x2": res.samples[:, 1]})
        export_buttons(pd.concat([final, traj]), {
            "data": data_name, "mode0_weight": first_weight, "schedule": sched_name,
            "sampler": sampler, "denoiser": den_name, "particles": n, "ddim_steps": steps,
            "eta": eta, "class": cls, "guidance_w": w, "langevin_steps": lsteps,
            "sliced_wasserstein": sw, "mmd2": mmd}, "diffusion-samples")
    explain("DDPM: x_{t−1} = (1/√α_t)(x_t − β_t/√(1−ᾱ_t) ε_θ) + σ_t z with σ_t² = β_t, and no "
            "noise in the last step. DDIM jumps along a sub-sequence of S steps: "
            "x_{t−1} = √ᾱ_{t−1} x̂₀ + √(1−ᾱ_{t−1}−σ²) ε_θ + σz, x̂₀ = (x_t − √(1−ᾱ_t) ε_θ)/√ᾱ_t, "
            "σ = η√((1−ᾱ_{t−1})/(1−ᾱ_t))√(1−ᾱ_t/ᾱ_{t−1}); η = 0 is deterministic. The **exact** "
            "denoiser is ε* of the true mixture (for non-mixture data: of a kernel density of "
            "256 data points), so any error left is the sampler's; the network adds its own.")

# ---------------------------------------------------------------- Steps vs quality
with tabs[2]:
    q = st.columns([2, 2, 1])
    metric = q[0].selectbox("Metric", list(D.METRICS), key="df_metric", bind="query-params")
    with_1000 = q[1].checkbox("Include S = 1000 (slow)", key="df_s1000")
    go_ = q[2].button("Compute", key="df_sq_run", type="primary", icon=":material/play_arrow:")
    s_list = (2, 5, 10, 20, 50, 100, 250) + ((1000,) if with_1000 else ())
    sq_id = (data_name, first_weight, sched_name, den_name, metric, s_list, seed, cls, w)
    if go_:
        bar = st.progress(0.0, text="Running DDIM for each S and η...")
        with user_errors("compute the table"):
            ref = exact.sample(1000, seed + 1) if data.centers is not None else data.points
            st.session_state["df_sq"] = (sq_id, D.steps_vs_quality(
                eps_fn, setup.schedule, ref, s_list, (0.0, 1.0), n=1000, seed=seed,
                metric=metric, device=device, progress=lambda f: bar.progress(f)))
        bar.empty()
    stored = st.session_state.get("df_sq")
    if stored is None:
        st.info("Press **Compute** to sample with DDIM for S = 2 … 250 steps, η = 0 and η = 1 "
                "(the denoiser, class and guidance of the Reverse tab).")
    else:
        if stored[0] != sq_id:
            st.caption("Settings changed since this table was computed: press Compute again.")
        sq = stored[1]
        show_figure(F.steps_quality(sq.steps, sq.etas, sq.distance, sq.metric), key="df_fig_sq")
        table = pd.DataFrame(sq.distance, index=[f"η = {e:g}" for e in sq.etas],
                             columns=[f"S = {s}" for s in sq.steps])
        st.dataframe(table.style.format("{:.3f}"))
    explain("The DDIM paper (CIFAR-10 FID, S = 10/20/50/100/1000): η = 0 gives "
            "13.36/6.84/4.67/4.16/4.04, η = 1 gives 41.07/18.36/8.01/5.78/4.73. With few steps "
            "the deterministic sampler is much better; with all steps both converge.")

# ---------------------------------------------------------------- Train
with tabs[3]:
    tc = st.columns(2)
    lr = tc[0].select_slider("Learning rate", [1e-4, 3e-4, 1e-3, 2e-3, 5e-3, 1e-2], 2e-3,
                             key="df_lr", bind="query-params")
    hidden = tc[1].select_slider("Hidden units", [32, 64, 128], 64, key="df_hidden",
                                 bind="query-params")
    train_points, train_labels = data.points, data.labels

    def _make():
        trainer = D.DiffusionTrainer(train_points, train_labels, schedule, hidden=hidden, lr=lr,
                                     seed=seed, device=device)
        trainer.data_id = data_id          # the Reverse tab samples with it only on this data
        return trainer

    def _draw(trainer, tick):
        snap = trainer.snapshot()
        a, b = st.columns(2)
        with a:
            show_figure(F.loss_curve(*trainer.history.as_arrays("loss")), key="df_fig_loss")
        with b:
            show_figure(F.samples_vs_data(snap.samples, train_points, LIM,
                                          "Samples of the current net (DDIM, 25 steps)"),
                        key="df_fig_train_samples")

    live_training("df_train", _make, _draw,
                  config={"data": data_name, "w0": first_weight, "n": len(train_points),
                          "sched": sched_name, "lr": lr, "hidden": hidden, "seed": seed,
                          "device": device, "data_id": data_id},
                  steps_per_frame=100, max_steps_per_frame=500)
    explain("Each iteration draws a batch of data, t ~ U{1..T} and ε ~ N(0, I), and minimises "
            "‖ε − ε_θ(√ᾱ_t x₀ + √(1−ᾱ_t) ε, t, c)‖². The class token c is dropped 10% of the "
            "time, so one network is both conditional and unconditional (classifier-free "
            "guidance). Pick 'network from the Train tab' on the Reverse tab to sample with it.")

# ---------------------------------------------------------------- Langevin
with tabs[4]:
    lc = st.columns(4)
    gap = lc[0].slider("Gap between modes", 2.0, 10.0, 8.0, 0.5, key="df_lgap", bind="query-params")
    lw = lc[1].slider("Weight of the left mode", 0.5, 0.95, 0.8, 0.05, key="df_lw",
                      bind="query-params")
    ln = lc[2].slider("Steps", 100, 2000, 400, 100, key="df_lnsteps", bind="query-params")
    levels = lc[3].slider("Noise levels (annealed)", 2, 20, 10, key="df_levels",
                          bind="query-params")

    @st.cache_data(max_entries=8)
    def _langevin_demo(gap_, lw_, ln_, levels_, seed_, device_):
        two = D.two_mode_gap(gap=gap_, first_weight=lw_)
        den = D.MixtureDenoiser(two.centers, two.std, two.weights, device=device_)
        x0 = D.numpy_rng(seed_).uniform(-gap_, gap_, (1000, 2))
        step = D.langevin_step_size(den) * 2
        plain = D.langevin(lambda x: den.score(x, 0), x0, step, ln_, seed_, device_).samples
        sig = D.geometric_sigmas(gap_, two.std / 5, levels_)
        ann = D.annealed_langevin(lambda x, s: den.score_sigma(x, s), sig, x0,
                                  D.annealed_step(sig), max(1, ln_ // levels_), seed_,
                                  device_).samples
        gx, _, dens = D.density_grid(den, -gap_, gap_, 200)
        marg = dens.sum(0) * (gx[1] - gx[0])
        return two.centers, two.weights, plain, ann, gx, marg

    centers, truth, plain, ann, gx, marg = _langevin_demo(gap, lw, ln, levels, seed, device)
    if not (np.isfinite(plain).all() and np.isfinite(ann).all()):
        st.warning("Some particles diverged (non-finite); they are left out of the plots.")
    show_figure(F.langevin_compare({"plain Langevin": plain, "annealed Langevin": ann}, gx,
                                   marg, gap), key="df_fig_lang")
    show_figure(F.weight_bars({"plain": D.mode_weights(plain, centers),
                               "annealed": D.mode_weights(ann, centers), "truth": truth},
                              ["left mode", "right mode"], "Mode weights after sampling"),
                key="df_fig_lang_bars")
    explain("Langevin dynamics x ← x + α∇log p(x) + √(2α) z samples p only in the long run. "
            "Between two modes separated by a gap the score points to the nearest mode and "
            "is blind to the mixing weight, so particles keep the split of their start "
            "(uniform here: about half each). Annealed Langevin starts with the data smoothed "
            "by a large σ, where the modes overlap and the weights are visible, then lowers σ "
            "(σ₁ > … > σ_L, step α_i ∝ σ_i²) and recovers them.")
