"""Autoregressive models: an image or a sound generated one value at a time, each conditioned
on the ones before. Masked convolutions (type A and B) and their receptive field, with the
PixelCNN's blind spot and the two-stack fix; causal dilated 1-D convolutions (WaveNet); a
PixelCNN trained live on scikit-learn's 8 × 8 digits, its bits per pixel against independent
pixels, samples drawn pixel by pixel and one pixel's predictive distribution; a VQ-VAE with
its codebook usage and a PixelCNN prior over its code grid.
Settings -> engine/autoregressive/ -> topics/autoregressive/figures.py.

The constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py. The live view's `draw(view, tick)` builds its
frame with `live_parts(train_frame_parts, view, **inputs)`: pure, plain values in, parts out."""
from __future__ import annotations

import functools
import math

import numpy as np
import streamlit as st

from engine.autoregressive import kernel_mask
from engine.autoregressive.reads import predictive_of, samples_of
from live.controls import live_training
from live.parts import Caption, Figure, Metrics
from live.push import live_parts, place
from topics.autoregressive import figures as figs
from engine.autoregressive.vqvae import code_grid_bits
from topics.autoregressive.compute import (BETAS, CODEBOOK_SIZES, HIDDEN, KERNELS, LEVELS, LRS,
                                           MAX_BLOCKS, MAX_LAYERS, MAX_SIZE, MODES, RATES_KHZ,
                                           SCHEDULES, STACK_NAMES, TEMPERATURES, TEST_DIGITS,
                                           VQ_STEPS, baseline_bits, build_trainer, causal_args,
                                           causal_of, field_args, field_of, trainer_args,
                                           vq_args, vq_of)
from topics.autoregressive.compute import (PROMPTS, SAMPLE_SEEDS, SHIPPED, VOWELS,
                                           WAVE_LENGTH, WAVE_NAMES, WAVE_PARAMS,
                                           WAVE_RATE_KHZ, gated_gain, pretrained_bytes,
                                           shipped_name, shipped_trainer, trajectory_of,
                                           wave_args, wave_error, wave_of)
from engine.autoregressive.pretrained import PIXELCNN
from engine.autoregressive.wavenet import HARMONICS, PERIOD
from engine.autoregressive.wavenet import SCHEDULES as SCHEDULES_1D
from engine.autoregressive.wavenet import field_of as field_of_1d
from engine.weights import WeightsError
from ui.live_keys import live_keys
from ui.render import metrics
from topics.autoregressive.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

SHIPPED_USED = "au__shipped_used"   # session: the live trainer started from shipped weights

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("au_stack", "pixelcnn", "Stack", kind="segmented", options=tuple(STACK_NAMES),
            format_func=lambda v: STACK_NAMES[v]),
    Control("au_k", 3, "Kernel size k", kind="select_slider", options=KERNELS),
    Control("au_layers", 3, "Layers L", lo=0, hi=MAX_LAYERS, step=1),
    Control("au_size", 11, "Image size", lo=5, hi=MAX_SIZE, step=1),
    Control("au_row", 6, "Output pixel: row", lo=0, hi=MAX_SIZE - 1, step=1, url=False),
    Control("au_col", 5, "Output pixel: column", lo=0, hi=MAX_SIZE - 1, step=1, url=False),
    Control("au_sched", "1,2,4,8", "Dilations", kind="selectbox", options=tuple(SCHEDULES)),
    Control("au_k1", 2, "Taps per layer", kind="segmented", options=(2, 3)),
    Control("au_len", 32, "Sequence length T", lo=8, hi=128, step=4),
    Control("au_rate", 16, "Sample rate (kHz)", kind="select_slider", options=RATES_KHZ),
    Control("au_levels", 4, "Grey levels Q", kind="select_slider", options=LEVELS),
    Control("au_hidden", 32, "Channels", kind="select_slider", options=HIDDEN),
    Control("au_blocks", 4, "Type-B layers", lo=0, hi=MAX_BLOCKS, step=1),
    Control("au_lr", 0.01, "Learning rate (Adam)", kind="select_slider", options=LRS),
    Control("au_cond", False, "Condition on the class", kind="toggle"),
    Control("au_gated", False, "Gated layers (tanh ⊙ σ)", kind="toggle"),
    Control("au_mode", "free", "Draw", kind="segmented", options=tuple(MODES),
            format_func=lambda v: MODES[v]),
    Control("au_temp", 1.0, "Temperature", kind="select_slider", options=TEMPERATURES),
    Control("au_digit", 0, "Test digit", lo=0, hi=TEST_DIGITS, step=1),
    Control("au_prow", 3, "Pixel: row", lo=0, hi=7, step=1),
    Control("au_pcol", 2, "Pixel: column", lo=0, hi=7, step=1),
    Control("au_codes", 16, "Codebook size K", kind="select_slider", options=CODEBOOK_SIZES),
    Control("au_beta", 0.25, "Commitment weight β", kind="select_slider", options=BETAS),
    Control("au_vqsteps", 200, "Training steps", kind="select_slider", options=VQ_STEPS),
    Control("au_model", "plain", "Shipped model", kind="segmented", options=tuple(SHIPPED),
            format_func=lambda v: SHIPPED[v]),
    Control("au_sseed", 0, "Sample seed", lo=0, hi=SAMPLE_SEEDS - 1, step=1),
    Control("au_wnet", "dilated", "WaveNet", kind="segmented", options=tuple(WAVE_NAMES),
            format_func=lambda v: WAVE_NAMES[v]),
    Control("au_vowel", 0, "Held-out vowel", lo=0, hi=VOWELS - 1, step=1),
    Control("au_prompt", 48, "Prompt (samples given)", kind="select_slider", options=PROMPTS),
])


# ----------------------------------------------------------------------------- masks
def _pixel_controls() -> None:
    """Row and column within the image; a value the image no longer holds is said."""
    s = STATE.values()
    size = int(s["au_size"])
    if int(s["au_row"]) >= size or int(s["au_col"]) >= size:
        st.info(f"Pixel ({s['au_row']}, {s['au_col']}) lies outside the {size} × {size} "
                f"image: it moves to the nearest pixel inside.")
    STATE.widget("au_row", hi=size - 1)
    STATE.widget("au_col", hi=size - 1)


def masks_view(panel) -> None:
    with panel.controls:
        STATE.widget("au_stack")
        STATE.widget("au_k")
        STATE.widget("au_layers")
        STATE.widget("au_size")
        _pixel_controls()
    s = STATE.values()
    stack, size, k, layers, row, col = field_args(s)
    row, col = min(row, size - 1), min(col, size - 1)
    with panel.figure:
        if layers < 1:
            st.info("With 0 layers nothing reaches the output: choose at least 1 layer.")
            return
        try:
            f = field_of(stack, size, k, layers, row, col)
        except ValueError as err:
            st.warning(f"{err}.")
            return
        if f["reached"] == 0:
            st.info(f"Pixel ({row}, {col}) comes first in raster order: no pixel comes "
                    "before it, so nothing reaches it and the model can only predict it from "
                    "its biases. Choose a later pixel.")
        left, right = st.columns([3, 2])
        with left:
            show_figure(figs.field_figure(
                f["routes"], f["blind"], f["window"], row, col,
                f"{f['reached']} pixels reach ({row}, {col}); blind spot "
                f"{f['blind_count']}"), key="au_fig_field")
        with right:
            show_figure(figs.masks_figure(kernel_mask(k, "A").numpy(),
                                          kernel_mask(k, "B").numpy()), key="au_fig_masks")
    with panel.notes:
        kind = ("a type-A masked layer, then type-B ones" if stack == "pixelcnn" else
                "two stacks: a vertical one over the rows above (shifted down one row) that "
                "feeds a horizontal one over the pixels to the left")
        explain(f"{layers} layer{'s' if layers > 1 else ''} of {k} × {k} kernels, {kind}. "
                "Shading: d out[r, c] / d x for the real layers with every weight 1, which "
                "counts the routes from each input pixel to the red output pixel (notes 004, "
                "Fig. 10.8); white pixels have no route. Crosses: the blind spot, pixels "
                "before the target in raster order, within the reach of a dense stack of the "
                f"same size ({layers * (k // 2)} pixels each way), that no route reaches: "
                f"here {f['blind_count']}. Away from the borders a PixelCNN stack of 3 × 3 "
                "kernels misses L(L − 1)/2 pixels above and to the right, because an up-step "
                "moves one column right at most and a step along the row only left. Pixels "
                f"at or after the target that reach it: {f['leak']} (causal).")


# ----------------------------------------------------------------------------- causal 1-D
def causal_view(panel) -> None:
    with panel.controls:
        for key in ("au_sched", "au_k1", "au_len", "au_rate"):
            STATE.widget(key)
    s = STATE.values()
    length, k, dilations = causal_args(s)
    c = causal_of(length, k, dilations)
    reached = int((c["routes"][0] > 0).sum())
    ms = c["size"] / float(s["au_rate"])
    with panel.figure:
        if c["size"] > length:
            st.warning(f"The field ({c['size']} samples) is longer than the sequence "
                       f"({length}): only {reached} samples exist before the last one, the "
                       "rest is the zero padding. Lengthen the sequence to see all of it.")
        show_figure(figs.causal_figure(
            c["routes"], k, dilations,
            f"Dilations {', '.join(map(str, dilations))}: the last output reads "
            f"{c['size']} samples ({ms:.2f} ms at {s['au_rate']:g} kHz)"),
            key="au_fig_causal")
    with panel.notes:
        explain(f"A stack of causal convolutions with {k} taps; layer l reads its input d_l "
                "samples apart (its dilation) and only from the past: (k − 1) d_l zeros are "
                "padded on the left. The coloured samples are those with a route to the last "
                "output (found by autograd), so the bottom row is its receptive field: "
                f"1 + (k − 1) Σ d_l = {c['size']} samples. Doubling dilations 1, 2, 4, 8 "
                "reach 2^L samples with L layers, plain ones only L + 1 (notes 004, "
                "Fig. 10.3; WaveNet stacks several such blocks, Fig. 10.4).")


# ----------------------------------------------------------------------------- PixelCNN
def train_frame_parts(view, read, mode: str, temperature: float, digit: int, prow: int,
                      pcol: int, setup: str) -> dict:
    """One live frame of the PixelCNN tab as parts (pure: the frame route may build it): the
    samples drawn pixel by pixel from the model as it is now, the bits per pixel with the
    baseline, and one pixel's predictive distribution."""
    snap = view.snapshot()
    smp = read(functools.partial(samples_of, mode=mode, temperature=temperature))
    pred = read(functools.partial(predictive_of, index=digit, row=prow, col=pcol))
    what = "Completions" if smp.given_rows else "Samples"
    steps, bits = view.history.as_arrays("bits")
    out = {"au_fig_samples": Figure(figs.samples_figure(
               smp.images, smp.given_rows, smp.labels, snap.levels,
               f"{what}, iteration {snap.steps}, T = {temperature:g}")),
           "au_fig_bits": Figure(figs.bits_pixel_figure(
               steps, bits, snap.steps, snap.test_bits, snap.baseline_bits, pred.digit,
               pred.row, pred.col, pred.probs, pred.truth)),
           "au_metrics": Metrics([
               ("Test bits/pixel", f"{snap.test_bits:.3f}",
                "−mean log₂ p(x_i | x_<i) over the 359 test digits' pixels"),
               ("Independent pixels", f"{snap.baseline_bits:.3f}",
                "the same, each pixel its own histogram of the training digits"),
               (f"p(true level) at ({pred.row}, {pred.col})",
                f"{pred.probs[pred.truth]:.3f}", "given the test digit's earlier pixels")]),
           "au_caption": Caption(setup)}
    if view.diverged_at is not None or not math.isfinite(snap.test_bits):
        out["au_caption"] = Caption(f"{setup} Training diverged at iteration "
                                    f"{view.diverged_at}: press Reset, or lower the learning "
                                    "rate.")
    elif snap.pretrained is not None:
        out["au_caption"] = Caption(f"{setup} Started from the shipped model "
                                    f"({snap.pretrained:,} iterations trained offline by "
                                    "scripts/pretrain_autoregressive.py); Play trains on, "
                                    "Reset starts from scratch.")
    elif snap.steps >= 100 and snap.test_bits > snap.baseline_bits:
        out["au_caption"] = Caption(f"{setup} After {snap.steps} iterations the model is "
                                    "still worse than independent pixels: the learning rate "
                                    "is too high (or too low) to learn. Lower it and Reset.")
    return out


def pixelcnn_view(panel) -> None:
    with panel.controls:
        STATE.widget("au_mode")
        STATE.widget("au_temp")
        STATE.widget("au_digit")
        STATE.widget("au_prow")
        STATE.widget("au_pcol")
        with st.expander("Model and learning rate"):
            for key in ("au_levels", "au_cond", "au_gated", "au_hidden", "au_blocks",
                        "au_lr"):
                STATE.widget(key)
        if float(STATE.values()["au_temp"]) == 0:
            st.info("Temperature 0 takes the most likely level at every pixel instead of "
                    "drawing one: no randomness is left, so an unconditional model draws the "
                    "same digit every time.")
    s = STATE.values()
    seed, device = session.seed(), session.device()
    levels, hidden, blocks, lr, cond, gated = trainer_args(s)
    temperature = float(s["au_temp"])
    shipped = shipped_name(s) if seed == PIXELCNN["plain"]["seed"] else None
    # the shipped state at the session's first build only: never after Reset, nor for a slide
    # or a tour that asks for a fresh trainer (it trains from iteration 0)
    fresh = st.session_state.get(live_keys("au_train").reset_asked)
    use = shipped is not None and not fresh and not st.session_state.get(SHIPPED_USED)
    make = functools.partial(build_trainer, levels, hidden, blocks, lr, cond, gated, seed,
                             device, pretrained_bytes(shipped) if use and shipped else None)
    setup = (f"{levels} grey levels, a 5 × 5 type-A layer and {blocks} 3 × 3 type-B "
             f"{'gated ' if gated else ''}layers of {hidden} channels"
             f"{', class-conditional' if cond else ''}, Adam at {lr:g}, minibatches of 64, "
             f"seed {seed}.")

    def draw(view, tick) -> None:
        parts = live_parts(train_frame_parts, view, mode=str(s["au_mode"]),
                           temperature=temperature, digit=int(s["au_digit"]),
                           prow=int(s["au_prow"]), pcol=int(s["au_pcol"]), setup=setup)
        left, right = st.columns(2)
        with left:
            place(parts, "au_fig_samples")
        with right:
            place(parts, "au_fig_bits")
        place(parts, "au_metrics")
        place(parts, "au_caption")

    with panel.figure:
        with user_errors("train the PixelCNN"):
            live_training("au_train", make, draw,
                          config={"levels": levels, "hidden": hidden, "blocks": blocks,
                                  "lr": lr, "conditional": cond, "gated": gated,
                                  "seed": seed, "device": device},
                          steps_per_frame=10, max_steps_per_frame=100)
    if use:              # built now from the shipped state (or kept): Reset starts fresh
        st.session_state[SHIPPED_USED] = True
    with panel.notes:
        explain("The PixelCNN gives every pixel a softmax over the Q grey levels, computed "
                "from the pixels before it in raster order only (the masks of the first tab), "
                "so p(x) = Π p(x_i | x_<i) and the training loss is the exact negative "
                "log-likelihood, here in bits per pixel. The baseline treats the 64 pixels as "
                "independent: each gets the histogram of its own training values. Samples are "
                "drawn one pixel at a time (64 forward passes), each from the distribution the "
                "model gives at that pixel; the bars show it for one pixel of a test digit "
                "(notes 004, Fig. 10.9, there over 256 levels). Completion copies the upper "
                "half of ten test digits and draws the lower half. With the class as a "
                "condition, sample i is drawn for class i (Fig. 10.10).")


# ----------------------------------------------------------------------------- VQ-VAE
def vqvae_view(panel) -> None:
    with panel.controls:
        for key in ("au_codes", "au_beta", "au_vqsteps", "au_levels"):
            STATE.widget(key)
    s = STATE.values()
    levels, codes, beta, steps = vq_args(s)
    with panel.figure:
        with st.spinner(f"Training the VQ-VAE for {steps} steps (cached afterwards)…"):
            r = vq_of(levels, codes, beta, steps)
        used = int((r.usage > 0).sum())
        left, right = st.columns(2)
        with left:
            rows = np.concatenate([r.originals, r.reconstructions, r.samples])
            show_figure(figs.samples_figure(rows, 0, -np.ones(len(rows), dtype=int), levels,
                                            f"{steps} steps: digits, decoded, samples"),
                        key="au_fig_vq")
        with right:
            show_figure(figs.usage_figure(r.usage, f"{used} of {codes} codes used"),
                        key="au_fig_usage")
    uniform, entropy = code_grid_bits(r.usage)
    with panel.notes:
        explain(f"The encoder maps a digit to a 4 × 4 grid of 8-dimensional vectors; each is "
                f"replaced by the nearest of K = {codes} codebook vectors, and the decoder "
                "draws the digit back from them (bottom row: its most likely level per pixel). "
                "The nearest-neighbour step has no gradient: the straight-through estimator "
                "copies the decoder's gradient to the encoder, and the loss adds "
                f"‖sg(z_e) − z_q‖² (moves the codes) and β‖z_e − sg(z_q)‖², β = {beta:g}. "
                f"{codes - used} codes are never used (dead: no vector is ever nearest to "
                f"them). Given its codes a test pixel costs {r.recon_bits:.3f} bits, "
                f"independent pixels {baseline_bits(s):.3f}; the code grid itself costs "
                f"{uniform:.0f} bits at log₂ K per code, {entropy:.1f} at the codes' "
                f"frequencies and {r.prior_bits:.1f} under a PixelCNN prior over the grid "
                "(a K-way softmax per code, raster order). Bottom row: code grids drawn from "
                "that prior, decoded: the VQ-VAE's samples (notes 004, Fig. 10.11-10.12).")


# ----------------------------------------------------------------------------- sampling
PIXEL_CLICK = "au_fig_pixel"


def _pixel_clicked() -> None:
    """A click on a pixel of the test digit picks that pixel (row and column sliders)."""
    sel = st.session_state.get(PIXEL_CLICK) or {}
    pts = [p for p in sel.get("selection", {}).get("points", []) if p.get("curve_number") == 1]
    if pts:
        row, col = int(round(pts[0]["y"])), int(round(pts[0]["x"]))
        if 0 <= row < 8 and 0 <= col < 8:
            st.session_state["au_prow"], st.session_state["au_pcol"] = row, col


def sampling_view(panel) -> None:
    with panel.controls:
        for key in ("au_model", "au_temp", "au_sseed", "au_digit", "au_prow", "au_pcol"):
            STATE.widget(key)
    s = STATE.values()
    name, temperature = str(s["au_model"]), float(s["au_temp"])
    digit, row, col = int(s["au_digit"]), int(s["au_prow"]), int(s["au_pcol"])
    with panel.figure:
        try:
            trainer = shipped_trainer(name)
        except WeightsError as err:
            st.error(f"The shipped {SHIPPED[name]} cannot be read: {err}")
            return
        snap = trainer.snapshot()
        t = trajectory_of(name, temperature, int(s["au_sseed"]))
        pred = predictive_of(trainer, digit, row, col)
        left, right = st.columns(2)
        with left:
            show_figure(figs.sampling_figure(
                t["image"], t["probs"], snap.levels,
                f"One digit, pixel by pixel (T = {temperature:g}): press ▶ Play"),
                key="au_fig_steps")
        with right:
            show_figure(figs.pixel_figure(
                pred.digit, row, col, pred.probs, pred.truth,
                f"Test digit {digit} (a {pred.label}): click a pixel"),
                key=PIXEL_CLICK, on_select=_pixel_clicked, selection_mode="points")
        metrics([("Test bits/pixel", f"{snap.test_bits:.3f}",
                  f"the shipped {SHIPPED[name]}, {snap.steps:,} iterations"),
                 ("Independent pixels", f"{snap.baseline_bits:.3f}", "bits/pixel"),
                 (f"p(true level) at ({row}, {col})", f"{pred.probs[pred.truth]:.0%}",
                  "given the test digit's pixels before it"),
                 ("Gated minus plain", f"{-gated_gain(s):+.3f}",
                  "bits/pixel of the two shipped models, same settings and iterations")])
    with panel.notes:
        explain("Left: a digit drawn by the shipped PixelCNN (4 grey levels, trained offline "
                f"for {snap.steps:,} iterations). ▶ Play walks through the 64 draws in raster "
                "order; at each one the bars are the model's distribution for that pixel given "
                "every pixel drawn before it, and the red bar the level drawn from it (at "
                "temperature 0: the most likely one). Right: the same for a real test digit; "
                "click any pixel (or use the sliders) to see what the model expects there from "
                "the pixels above and to the left, the red bar being the true level (notes 004, "
                "Fig. 10.9, there 256 levels of a colour channel). The gated model replaces "
                "each ReLU layer by tanh(f) ⊙ σ(g), the gated PixelCNN's unit, with twice the "
                "filters per layer.")


# ----------------------------------------------------------------------------- WaveNet
def wavenet_view(panel) -> None:
    with panel.controls:
        for key in ("au_wnet", "au_vowel", "au_prompt"):
            STATE.widget(key)
    s = STATE.values()
    name = str(s["au_wnet"])
    vowel, prompt = wave_args(s)
    with panel.figure:
        try:
            with st.spinner("Generating the waveform one sample at a time…"):
                w = wave_of(name, vowel, prompt)
            errors = {n: wave_error(n) for n in WAVE_NAMES}
        except WeightsError as err:
            st.error(f"The shipped WaveNet cannot be read: {err}")
            return
        dil = SCHEDULES_1D[name]
        show_figure(figs.wave_figure(
            w["real"], w["made"], prompt, WAVE_RATE_KHZ,
            f"{WAVE_NAMES[name]}: {prompt} samples given, {WAVE_LENGTH - prompt} generated"),
            key="au_fig_wave")
        metrics([("Field", f"{field_of_1d(dil)} samples",
                  f"{field_of_1d(dil) / WAVE_RATE_KHZ:.2f} ms at {WAVE_RATE_KHZ:g} kHz"),
                 ("One-step error, dilated", f"{errors['dilated']:.3f}",
                  "held-out mean squared error / the signal's variance"),
                 ("One-step error, undilated", f"{errors['undilated']:.3f}",
                  "the same weights count, field 6 samples"),
                 ("Generated error", f"{w['error']:.2f}",
                  "the continuation against the real vowel, / its variance")])
    with panel.notes:
        explain(f"A made-up vowel: one period of {PERIOD} samples ({PERIOD / WAVE_RATE_KHZ:.1f} "
                f"ms at {WAVE_RATE_KHZ:g} kHz) made of {HARMONICS} harmonics whose strengths "
                "are drawn afresh for each vowel, repeated under a slow swell, plus a little "
                "noise. No fixed short filter can predict a timbre it has not seen; one period "
                "back the wave nearly repeats. Both WaveNets have five gated causal layers "
                f"with 2 taps and {WAVE_PARAMS:,} weights each; the dilated one reads 32 past "
                "samples (more than a period), the undilated one 6. Each was trained offline "
                "on fresh vowels to predict the next sample (mean squared error; WaveNet "
                "proper uses a 256-way softmax). The blue curve after the shaded prompt is "
                "generated one sample at a time, each prediction fed back as the next input "
                "(notes 004, Fig. 10.4, there real speech).")


VIEWS = [View("masks", "Masks & receptive field", masks_view),
         View("causal", "Causal 1-D (WaveNet)", causal_view),
         View("wavenet", "WaveNet on a vowel", wavenet_view),
         View("pixelcnn", "PixelCNN", pixelcnn_view, live=Live("au_train", train_max=5_000)),
         View("sampling", "Sampling pixel by pixel", sampling_view),
         View("vqvae", "VQ-VAE", vqvae_view)]

if __name__ == "__main__":
    topic_page("autoregressive", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"p(\mathbf x)=\prod_{i=1}^{n} p(x_i\mid x_1,\dots,x_{i-1})")
