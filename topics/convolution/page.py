"""Convolution & receptive fields: a kernel sliding over an image, the output-size arithmetic,
receptive fields of conv/pool stacks (the theoretical box and the effective field), learned
feature maps of a small digits CNN, and translation equivariance.
Settings -> engine/conv/ -> topics/convolution/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): one function per view and the footer. The
constants and pure computations that both the views and the claims use are in
topics/convolution/compute.py, STATE and the shared controls in topics/convolution/controls.py,
PRESETS and STEPS with their claims in topics/convolution/tour.py."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine import conv
from topics.convolution import figures as figs
from ui import session
from ui.autoplay import Autoplay
from topics.convolution.compute import (
    FM_LAYERS, DIGITS_ERF_SEEDS, image_of, gray_of, geometry, output_of,
    frames_of, out_index, erf_of, digits_erf, peak_to_mean, digits_test_accuracy,
    digits_concentration_ratio, _digits, _digits_cnn, slide_input, slide_kernel, wrap_note)
from topics.convolution.unit_detail import unit_detail
from topics.convolution.controls import (
    STATE, image_kernel_controls, geometry_controls, stack_controls)
from topics.convolution.tour import PRESETS, STEPS
from ui.page import View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.widgets import config_json, export_buttons


# ----------------------------------------------------------------------------- views
def conv_view(panel) -> None:
    with panel.controls:
        image, kernel, shown = image_kernel_controls()
        geometry_controls()
    s = STATE.values()
    stride, padding, dilation = geometry(s)
    out = None
    with panel.figure:
        with user_errors("convolve with these settings (the kernel does not fit the padded "
                         "image)"):
            out = output_of(s, image, kernel)
        if out is None:
            return
        cols = st.columns([3, 2, 3])
        with cols[0]:
            show_figure(figs.image_figure(image, "Input"), key="cv_fig_in")
        with cols[1]:
            show_figure(figs.kernel_figure(kernel, s["cv_kernel"]), key="cv_fig_k")
        with cols[2]:
            show_figure(figs.image_figure(out, "Output feature map"), key="cv_fig_out")
        (h, w), (oh, ow), (kh, kw) = image.shape[:2], out.shape[:2], kernel.shape
        m = st.columns(4)
        m[0].metric("Output size", f"{oh} × {ow}")
        m[1].metric("Kernel sum", f"{float(kernel.sum()):.3g}")
        m[2].metric("Output range", f"{out.min():.2f} … {out.max():.2f}")
        m[3].metric("Multiplications", f"{oh * ow * kh * kw * (1 if image.ndim == 2 else 3):,}")
        st.latex(rf"n_{{out}} = \left\lfloor \frac{{n + 2\cdot{padding} - {dilation}\cdot"
                 rf"({kh}-1) - 1}}{{{stride}}} \right\rfloor + 1:\quad {h} \to {oh},\;\; "
                 rf"{w} \to {ow}")
    with panel.notes:
        a = np.abs(out if out.ndim == 2 else out.mean(-1))
        st.caption(f"{(a < 0.05 * a.max()).mean():.0%} of the output is below 5% of its peak "
                   f"|y| = {a.max():.3g}.")
        explain("Red is positive, blue negative (white = 0) when the output has both signs. "
                "A kernel that sums to 1 keeps a flat region's brightness; one that sums to 0 "
                "sends it to 0 and keeps only changes (edges).")
        with st.expander("Export"):
            _output_downloads(out, {"image": shown, "rgb": s["cv_rgb"], "size": s["cv_size"],
                                    "kernel": kernel.tolist(), "stride": stride,
                                    "padding": padding, "dilation": dilation})


def _output_csv(out: np.ndarray) -> bytes:
    flat = out if out.ndim == 2 else out.mean(-1)
    ii, jj = np.indices(flat.shape)
    return pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(),
                         "value": flat.ravel()}).to_csv(index=False).encode()


def _output_downloads(out: np.ndarray, config: dict) -> None:
    """The output as CSV and PNG and the settings as JSON. The CSV (65k rows at 256 px: ~90
    ms) and the PNG are built only when their button is clicked (a callable `data`), not on
    every slider move."""
    name = "convolution-output"
    cols = st.columns(2)
    cols[0].download_button("Download data (CSV)", lambda: _output_csv(out),
                            file_name=f"{name}.csv", mime="text/csv", key=f"{name}__csv",
                            on_click="ignore", icon=":material/download:")
    cols[1].download_button("Download settings (JSON)", config_json(config, name).encode(),
                            file_name=f"{name}-config.json", mime="application/json",
                            key=f"{name}__json", on_click="ignore", icon=":material/settings:")
    st.download_button("Download output (PNG)", lambda: figs.png_bytes(out),
                       "convolution-output.png", "image/png", key="cv_png",
                       on_click="ignore", icon=":material/image:")


# ---- the sliding window: an auto-playing fragment inside the view's fragment
# session keys: the window position (the truth; the slider "cv_pos" only edits it while
# paused), auto-play on, skip the next advance (the run that a click triggered)
AT, PLAYING, HOLD = "cv_at", "cv_playing", "cv_hold"
PLAYER = Autoplay(AT, PLAYING, HOLD)


def _move(delta: int, n_pos: int) -> None:
    """Prev / Next (wrapping around); while playing, auto-play goes on from there."""
    st.session_state[AT] = (st.session_state.get(AT, 0) + delta) % n_pos
    st.session_state[HOLD] = True


def _follow_slider() -> None:
    st.session_state[AT] = st.session_state["cv_pos"]


def _sliding_window(frames: conv.ConvFrames | conv.TransposedFrames, kernel: np.ndarray,
                    controls, play_box) -> None:
    """CNN Explainer's view with auto-play. Play/Pause and the speed sit in the view (they
    change run_every, so they rerun the view); Prev/Next, the position and the figure sit in
    a keyed @st.fragment(run_every=1/speed): while playing each tick reruns only it and
    moves the window one position (row-major), filling in the output; at the last position
    play stops. The window starts at the top-left output (position 0, the Control's
    default) unless the URL or a scrub gave another.

    While playing the position is shown by a progress bar, not the slider: the browser sends
    its widget values with every tick, and a tick sent before the previous one's answer
    arrived would carry a stale slider value and move the window back."""
    n_pos = len(frames.corners)
    last = n_pos - 1
    if AT not in st.session_state:
        st.session_state[AT] = STATE["cv_pos"].coerce(STATE.value("cv_pos"), 0, last)
    st.session_state[AT] = min(max(int(st.session_state[AT]), 0), last)
    with play_box:
        playing = PLAYER.button(st, "cv_play", last, disabled=n_pos == 1)
    with controls:
        speed = STATE.widget("cv_speed")

    @st.fragment(run_every=1 / speed if playing else None, key="cv_window")
    def _window() -> None:
        pos = st.session_state[AT]
        running = PLAYER.is_playing()
        hold = st.session_state.pop(HOLD, False)
        if running and not hold:
            pos = st.session_state[AT] = min(pos + 1, last)
            if pos == last:                       # the last output is filled in: stop
                st.session_state[PLAYING] = False
                st.rerun(scope="app")             # redraw Play and end the ticks
        nav = st.columns([1, 6, 1], vertical_alignment="bottom")
        nav[0].button("◀ Prev", key="cv_prev", on_click=_move, args=(-1, n_pos),
                      width="stretch")
        if running:
            nav[1].progress(pos / max(last, 1), text=f"Output position {pos} (row-major)")
        else:
            st.session_state["cv_pos"] = pos
            pos = st.session_state[AT] = min(int(STATE.widget(
                "cv_pos", nav[1], hi=max(last, 1), disabled=n_pos == 1,
                on_change=_follow_slider)), last)
        nav[2].button("Next ▶", key="cv_next", on_click=_move, args=(1, n_pos),
                      width="stretch")
        playing = f", playing at {speed:g}/s." if running else "."
        if frames.op == "transposed":
            show_figure(figs.transposed_window_figure(frames, pos), key="cv_fig_slide")
            st.caption(f"Input {divmod(pos, frames.input.shape[1])} = "
                       f"**{frames.input.flat[pos]:.4f}** adds this multiple of the kernel to "
                       f"the output. After the last position the output (inside the dotted "
                       f"box) equals torch's F.conv_transpose2d: the gradient a convolution "
                       f"with this kernel passes back to its input. Position {pos + 1} of "
                       f"{n_pos}" + playing)
            return
        show_figure(figs.sliding_window_figure(frames, pos, kernel), key="cv_fig_slide")
        what, torch_fn = {"max": ("the largest value in the window", "F.max_pool2d"),
                          "avg": ("the mean of the window", "F.avg_pool2d")}.get(
            frames.op, ("Σ products", "F.conv2d"))
        st.caption(f"Output {divmod(pos, frames.out_shape[1])} = {what} = "
                   f"**{frames.sums[pos]:.4f}** (equal to torch's {torch_fn} at that "
                   f"position). Position {pos + 1} of {n_pos}" + playing)

    _window()


def slide_view(panel) -> None:
    with panel.controls:
        # Play heads the controls on the projector (the tour's words name it: on the first
        # screen, under the card), and follows them on a laptop
        play_box = st.container() if session.classroom() else None
        STATE.widget("cv_slide_op")
        if STATE.value("cv_slide_op") in ("max pooling", "average pooling"):
            STATE.widget("cv_slide_pool")
        image, kernel, _ = image_kernel_controls(extra=False)
        geometry_controls()
        STATE.widget("cv_anim_n")
    s = STATE.values()
    kernel = slide_kernel(s, kernel)
    frames = None
    with panel.figure:
        with user_errors("show the sliding window (kernel larger than this small padded "
                         "input)"):
            frames = frames_of(s, image, kernel)
            note = "" if frames.op == "transposed" else slide_input(s, gray_of(image),
                                                                   kernel)[-1]
            if note:
                st.info(note, icon=":material/info:")
        if frames is not None:
            _sliding_window(frames, kernel, panel.controls, play_box or panel.controls)
    with panel.notes:
        explain("The input is the image shrunk to a few pixels so every number fits. Left: "
                "the padded input (dotted: the image inside its zero padding) with the window "
                "of the current output; middle: the products window × kernel; right: the "
                "output, filled in up to the current position. A pooling layer moves the same "
                "window without weights: it keeps the largest value (max) or the mean (average) "
                "of each window. A transposed convolution runs the other way: each input value "
                "spreads a scaled copy of the kernel onto the output, where the copies add up; "
                "it is how a convolution's gradient reaches its input.")


def rf_view(panel) -> None:
    with panel.controls:
        specs, infos = stack_controls()
        image_name = STATE.widget("cv_image")
    if infos is None:
        return
    s = STATE.values()
    n = int(s["cv_rf_n"])
    orow, ocol = out_index(s, specs)
    last = infos[-1]
    params = conv.conv_parameters(specs, 64, 64)
    region = conv.input_region(specs, (orow, ocol), n)
    with panel.figure:
        m = st.columns(4)
        m[0].metric("Receptive field r", f"{last.size} × {last.size}")
        m[1].metric("Jump j", last.jump)
        m[2].metric("Output size", f"{last.out_size} × {last.out_size}")
        m[3].metric("Conv weights (c = 64)", f"{sum(params):,}",
                    help="k²·c_in·c_out per conv: three 3×3 = 27c², one 7×7 = 49c².")
        gray = gray_of(image_of(s))
        fig = figs.rf_layers_figure(infos, region, conv.square_image(gray, n))
        st.session_state["cv_click_trace"] = len(fig.data) - 1
        show_figure(fig, key="cv_rf_click", on_select=_clicked, selection_mode="points")
        st.caption(f"Output ({orow}, {ocol}) sees input rows {region.clip_lo[0]}–"
                   f"{region.clip_hi[0]} and columns {region.clip_lo[1]}–{region.clip_hi[1]} "
                   f"(blue); its {region.size}×{region.size} box (dashed) reaches "
                   f"{max(region.pad_before)} / {max(region.pad_after)} pixels into the padding "
                   f"(grey) before / after. Under the boxes: the centre square of the image "
                   f"({image_name}) at {n}×{n}. **Click a red dot** (last panel) to pick an "
                   f"output.")
    with panel.notes:
        table = pd.DataFrame([{"layer": i.name, "k": i.kernel, "s": i.stride, "p": i.padding,
                               "d": i.dilation, "r": i.size, "j": i.jump, "start": i.start,
                               "output size": i.out_size} for i in infos])
        table["weights (c=64)"] = [0, *params]
        cols = st.columns([3, 2])
        cols[0].dataframe(table, hide_index=True, width="stretch")
        with cols[1]:
            show_figure(figs.rf_growth_figure(infos), key="cv_fig_growth")
        with st.expander("Export"):
            export_buttons(table, {"stack": s["cv_stack"], "input_size": n,
                                   "layers": conv.specs_table(specs), "output": [orow, ocol]},
                           "convolution-layers")


def _clicked() -> None:
    sel = st.session_state.get("cv_rf_click") or {}
    pts = [p for p in sel.get("selection", {}).get("points", [])
           if p.get("curve_number") == st.session_state.get("cv_click_trace")]
    if pts:
        st.session_state["cv_out_row"] = int(round(pts[0]["y"]))
        st.session_state["cv_out_col"] = int(round(pts[0]["x"]))


def erf_view(panel) -> None:
    with panel.controls:
        specs, infos = stack_controls()
        STATE.widget("cv_erf_init")
        STATE.widget("cv_erf_samples")
    if infos is None:
        return
    s = STATE.values()
    erf = None
    with panel.figure:
        with user_errors("compute the effective receptive field"):
            erf = erf_of(s, specs, session.seed())
        if erf is None:
            return
        mass, area = conv.central_mass(erf)
        half = (erf.region.size - 1) / 2
        # the numbers on the figure, under its title: the figure takes the whole width
        show_figure(figs.erf_figure(erf, f"mean |∂y/∂x| over {erf.n_samples} inputs",
                                    erf_readout(erf.radius_2sigma, half, mass, area)),
                    key="cv_fig_erf")
        st.caption(f"White circle: ~95% of the gradient mass. Dashed: the theoretical box "
                   f"({erf.region.size}×{erf.region.size}). The central half is the square "
                   f"around the centre with half the box's half-width: {area:.0%} of the "
                   f"box's pixels, so a flat field would put {area:.0%} of the mass there.")
    with panel.notes:
        explain("Each output depends on every pixel in the box, but not equally: the centre "
                "is reached by many more paths than the border, so |∂y/∂x| is Gaussian-like "
                "(Luo et al. 2016) and its radius grows like √L while the box grows like L. "
                "The white circle holds ~95% of the mass. With few layers (three 3×3) the "
                "two are still about the same size; the gap opens with depth.")


def erf_readout(radius: float, half: float, mass: float, area: float) -> str:
    """The effective field's numbers, two lines under its title."""
    return (f"2σ radius <b>{radius:.1f} px</b> · half-width of the box <b>{half:g} px</b><br>"
            f"mass in the central half <b>{mass:.0%}</b> (a flat field: {area:.0%})")


def maps_view(panel) -> None:
    digits = _digits()
    model = _digits_cnn()
    with panel.controls:
        idx = int(STATE.widget("cv_digit"))
        img8 = digits.images[idx]
        maps, probs = conv.feature_maps(model, img8)
        st.metric("Label / prediction", f"{digits.labels[idx]} / {int(probs.argmax())}")
        show_figure(figs.image_figure(img8, "Input digit", signed=False, height=240),
                    key="cv_fig_digit")
    with panel.figure:
        event = show_figure(figs.feature_maps_figure(maps), key="cv_fig_maps",
                            on_select="rerun", selection_mode="points")
        st.caption("One colour scale per layer (its title gives the range); hover a pixel "
                   "for its channel and value, **click it** to see how it is computed.")
        unit_detail(model, img8, maps, event, idx)
    with panel.notes:
        c = st.columns([2, 3])
        with c[0]:
            show_figure(figs.probabilities_figure(probs, int(digits.labels[idx])),
                        key="cv_fig_probs")
        c[1].caption("A 3-conv CNN (8 → 16 → 16 channels, two 2×2 max pools) trained on the "
                     f"8×8 digits (held-out accuracy {digits_test_accuracy(None):.1%}, weights "
                     "built by scripts/pretrain_convolution.py).")
        st.subheader("Effective field of the last layer: trained vs random init")
        st.caption("Each: mean |∂y/∂x| of the last layer's output (0, 0) over 256 digits.")
        runs = {"trained": (None, "trained", "trained"),
                **{f"seed{k}": (k, f"random init (seed {k})", f"random, seed {k}")
                   for k in DIGITS_ERF_SEEDS}}
        e = st.columns(len(runs))
        for col, (key, (seed, name, title)) in zip(e, runs.items()):
            erf = digits_erf(seed)
            with col:
                show_figure(figs.erf_figure(erf, title), key=f"cv_fig_derf_{key}")
                st.metric(f"Peak / mean ({name})", f"{peak_to_mean(erf):.2f}")
        explain("All three nets have the same 12×12 theoretical field (larger than the 8×8 "
                "image). Training does not change the box; it concentrates where the "
                "gradient mass sits (a higher peak over the mean) - a modest change, "
                f"{digits_concentration_ratio(None):.2f}× the most concentrated random init's.")
        with st.expander("Export"):
            layer = STATE.widget("cv_fm_layer")
            chosen = maps[FM_LAYERS.index(layer)] if layer in FM_LAYERS else maps[0]
            long = pd.concat([pd.DataFrame({
                "layer": fm.name, "channel": ch, "row": np.indices(fm.maps[ch].shape)[0].ravel(),
                "col": np.indices(fm.maps[ch].shape)[1].ravel(), "value": fm.maps[ch].ravel()})
                for fm in maps for ch in range(fm.maps.shape[0])])
            export_buttons(long, {"digit": idx, "label": int(digits.labels[idx])},
                           "convolution-feature-maps")
            st.download_button("Download layer (PNG)",
                               figs.png_bytes(figs.tile_maps(chosen.maps), False),
                               f"convolution-{layer.replace(' ', '')}.png", "image/png",
                               key="cv_fm_png", on_click="ignore", icon=":material/image:")


def equi_view(panel) -> None:
    with panel.controls:
        image, kernel, shown = image_kernel_controls(extra=False)
        c = st.columns(2)
        STATE.widget("cv_shift_y", c[0], label="Shift down")
        STATE.widget("cv_shift_x", c[1], label="Shift right")
        STATE.widget("cv_pool")
    s = STATE.values()
    dy, dx, pool = int(s["cv_shift_y"]), int(s["cv_shift_x"]), int(s["cv_pool"])
    eq = None
    with panel.figure:
        with user_errors("compute the shifted outputs (use an odd-sized kernel)"):
            eq = conv.shift_equivariance(conv.downscale(gray_of(image), 128), kernel, (dy, dx),
                                         pool, session.device())
        if eq is None:
            return
        note = wrap_note(eq.conv_of_shifted.shape[-2:], dy, dx)
        if note:
            st.info(note, icon=":material/sync:")
        m = st.columns(3)
        m[0].metric("max |conv(Tx) − T conv(x)|", f"{eq.equivariance_error:.1e}")
        m[1].metric("Change without pooling", f"{eq.change_unpooled:.2f}",
                    help="‖f(Tx) − f(x)‖ / ‖f(x)‖")
        m[2].metric(f"Change after {pool}×{pool} max pool", f"{eq.change_pooled:.2f}",
                    help="‖P f(Tx) − P f(x)‖ / ‖P f(x)‖")
        show_figure(figs.equivariance_figure(eq, pool), key="cv_fig_eq")
    with panel.notes:
        explain("Top row: convolution (with circular padding) commutes with shifts, so the "
                "difference is zero up to float rounding: translation equivariance. Bottom "
                "row: max pooling keeps the strongest response per block, so a small shift "
                "often leaves the pooled map unchanged: approximate invariance. A shift by a "
                "multiple of the pool size shifts the pooled map exactly.")
        with st.expander("Export"):
            export_buttons(pd.DataFrame({"pooled": eq.pooled.ravel(),
                                         "pooled_shifted": eq.pooled_of_shifted.ravel()}),
                           {"image": shown, "kernel": kernel.tolist(), "shift": [dy, dx],
                            "pool": pool}, "convolution-equivariance")


SLUG = "convolution"
VIEWS = [View("conv", "Convolution", conv_view),
         View("slide", "Sliding window", slide_view),
         View("rf", "Receptive field", rf_view),
         View("erf", "Effective field", erf_view),
         View("maps", "Feature maps", maps_view),
         View("equi", "Equivariance", equi_view)]

if __name__ == "__main__":
    topic_page("convolution", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"y[i,j] = \sum_{a,b} x[i s + a d - p,\; j s + b d - p]\; k[a,b],"
                       r"\quad r_l = r_{l-1} + d_l (k_l - 1)\, j_{l-1}")
