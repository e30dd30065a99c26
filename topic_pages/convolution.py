"""Convolution & receptive fields (issue 5): a kernel sliding over an image, the output-size
arithmetic, receptive fields of conv/pool stacks (theoretical box and effective field),
learned feature maps of a small digits CNN, and translation equivariance."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine import conv
from viz import convolution_figures as figs
from viz import session
from viz.autoplay import Autoplay
from viz.page import page_header, user_errors
from viz.render import explain, show_figure
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

TABS = ["Convolution", "Receptive field", "Feature maps", "Equivariance"]
UPLOAD = "upload (PNG/JPEG)"
CUSTOM = "custom"
IMAGE_OPTIONS = [*conv.IMAGES, UPLOAD]
KERNEL_OPTIONS = [*conv.KERNELS, CUSTOM]
SIZES = [32, 64, 128, 256, 512]
ERF_INITS = ["random (He) + ReLU", "uniform weights, linear"]
HOW = {"kind": "conv / maxpool / avgpool", "kernel": "k", "stride": "s", "padding": "p",
       "dilation": "d"}

PRESETS = {
    "Edges: Sobel x on a photo": Preset(
        {"cv_tab": "Convolution", "cv_image": "china (photo)", "cv_kernel": "sobel x",
         "cv_stride": 1, "cv_padding": 1, "cv_dilation": 1},
        "Sobel x sums to 0: flat regions go to 0 (white), vertical edges light up red/blue."),
    "Blur: Gaussian 1/16 [1 2 1]": Preset(
        {"cv_tab": "Convolution", "cv_image": "flower (photo)", "cv_kernel": "gaussian blur",
         "cv_stride": 1, "cv_padding": 1, "cv_dilation": 1},
        "The kernel sums to 1: brightness is kept, fine detail is averaged away."),
    "Stride 2 halves the output": Preset(
        {"cv_tab": "Convolution", "cv_image": "checkerboard", "cv_kernel": "laplacian",
         "cv_stride": 2, "cv_padding": 1, "cv_dilation": 1},
        "n_out = ⌊(n + 2p − k)/2⌋ + 1: about half of n in each direction."),
    "Dilation 4: a sparse 9×9 kernel": Preset(
        {"cv_tab": "Convolution", "cv_image": "shapes", "cv_kernel": "sobel x",
         "cv_stride": 1, "cv_padding": 0, "cv_dilation": 4, "cv_anim_n": 12},
        "Nine taps spread over 9×9 pixels: each edge appears doubled, 8 pixels apart."),
    "7×7 vs three 3×3": Preset(
        {"cv_tab": "Receptive field", "cv_stack": "three 3x3", "cv_rf_n": 32},
        "Three 3×3 layers see 7×7 pixels, like one 7×7 layer, with 27c² instead of 49c² weights."),
    "WaveNet dilations 1-2-4-8": Preset(
        {"cv_tab": "Receptive field", "cv_stack": "dilated 1-2-4-8 (WaveNet, k=2)", "cv_rf_n": 32},
        "Kernel 2 with dilations 1, 2, 4, 8: the field doubles per layer and reaches 16."),
    "VGG block (pooling multiplies the jump)": Preset(
        {"cv_tab": "Receptive field", "cv_stack": "VGG block", "cv_rf_n": 32},
        "After each 2×2 pool the jump doubles, so later 3×3 layers grow the field twice as fast."),
    "Effective field ≪ theoretical box": Preset(
        {"cv_tab": "Receptive field", "cv_stack": "strided 6-layer", "cv_rf_n": 64,
         "cv_erf_init": ERF_INITS[0]},
        "The gradient mass is a Gaussian-like bump far smaller than the dashed box."),
    "Learned feature maps": Preset(
        {"cv_tab": "Feature maps", "cv_digit": 0},
        "The trained CNN's first layer finds strokes and edges; deeper maps are coarser."),
    "Pooling buys (some) invariance": Preset(
        {"cv_tab": "Equivariance", "cv_image": "shapes", "cv_kernel": "sobel x", "cv_shift_y": 0,
         "cv_shift_x": 1, "cv_pool": 4},
        "Conv: shifting the input shifts the output exactly. After 4×4 max pooling a one-pixel "
        "shift changes the map much less."),
}

STEPS = [
    Step("A kernel slides", "Each output is the sum of the window times the kernel (no flip: "
         "deep-learning 'convolution' is cross-correlation). Scrub through the positions.",
         {"cv_tab": "Convolution", "cv_image": "digit (8x8)", "cv_kernel": "sobel x",
          "cv_stride": 1, "cv_padding": 0, "cv_dilation": 1}),
    Step("Kernels are feature detectors", "Sobel x answers 'is there a vertical edge here?'. "
         "Try Sobel y, Laplacian, emboss.", PRESETS["Edges: Sobel x on a photo"].settings),
    Step("Size arithmetic", "Stride divides, padding adds, dilation widens the kernel: "
         "n_out = ⌊(n + 2p − d(k−1) − 1)/s⌋ + 1.", PRESETS["Stride 2 halves the output"].settings),
    Step("Stacking grows the view", "r grows by d(k−1)·j per layer.",
         PRESETS["7×7 vs three 3×3"].settings),
    Step("Dilation grows it exponentially", "", PRESETS["WaveNet dilations 1-2-4-8"].settings),
    Step("The effective field is smaller", "Luo et al. 2016: |∂y/∂x| concentrates in the middle.",
         PRESETS["Effective field ≪ theoretical box"].settings),
    Step("What a trained CNN computes", "", PRESETS["Learned feature maps"].settings),
    Step("Equivariance and invariance", "", PRESETS["Pooling buys (some) invariance"].settings),
]


# ------------------------------------------------------------------ cached computations

@st.cache_data(max_entries=32, show_spinner=False)
def _image(name: str, rgb: bool, size: int) -> np.ndarray:
    return conv.load_image(name, grayscale=not rgb, max_side=size)


@st.cache_data(max_entries=8, show_spinner=False)
def _upload(data: bytes, rgb: bool, size: int) -> np.ndarray:
    return conv.downscale(conv.load_upload(data, grayscale=not rgb), size)


@st.cache_resource(show_spinner=False)
def _digits_cnn():
    return conv.load_digits_cnn()


@st.cache_data(show_spinner=False)
def _digits():
    return conv.load_digits()


@st.cache_data(max_entries=32, show_spinner="Back-propagating from the chosen output…")
def _erf(rows: tuple, n: int, out: tuple, init: str, samples: int, seed: int, device: str):
    specs = [conv.LayerSpec(*r) for r in rows]
    model = conv.build_cnn(specs, seed=seed, init="uniform" if init == ERF_INITS[1] else "kaiming",
                           activation=None if init == ERF_INITS[1] else "relu")
    return conv.effective_receptive_field(model, (1, n, n), out, seed, samples, device)


@st.cache_data(max_entries=4, show_spinner="Effective field of the digits CNN…")
def _digits_erf(trained: bool):
    model = _digits_cnn() if trained else conv.digits_cnn(0)
    return conv.effective_receptive_field(model[0], (1, 8, 8), (0, 0),
                                          inputs=_digits().images[:256, None])


def _clamp(key: str, hi: int, default: int = 0) -> None:
    """Keep a slider's stored value inside [0, hi] before the slider is drawn; start at
    `default` unless the URL gives a value."""
    if key not in st.session_state and key not in st.query_params:
        st.session_state[key] = min(max(default, 0), hi)
    v = st.session_state.get(key, default)
    if not isinstance(v, (int, np.integer)) or not 0 <= v <= hi:
        st.session_state[key] = min(max(int(v) if isinstance(v, (int, float)) else default, 0), hi)


# ------------------------------------------------------------------ the sliding window

SPEEDS = [0.5, 1, 2, 4]      # window positions per second while playing
# session keys: the window position (the truth; the slider "cv_pos" only edits it while
# paused), auto-play on, skip the next advance (the run that a click triggered)
AT, PLAYING, HOLD = "cv_at", "cv_playing", "cv_hold"


PLAYER = Autoplay(AT, PLAYING, HOLD)


def _move(delta: int, n_pos: int) -> None:
    """Prev / Next (wrapping around); while playing, auto-play goes on from there."""
    st.session_state[AT] = (st.session_state.get(AT, 0) + delta) % n_pos
    st.session_state[HOLD] = True


def _sliding_window(frames: conv.ConvFrames, kernel: np.ndarray) -> None:
    """CNN Explainer's view with auto-play. Play/Pause and the speed sit outside the fragment
    (they change run_every, so they rerun the page); Prev/Next, the position and the figure
    sit inside an @st.fragment(run_every=1/speed): while playing, each tick reruns only the
    fragment and moves the window one position (row-major), filling in the output; at the
    last position play stops (Play again starts from position 0).

    While playing the position is shown by a progress bar, not the slider: the browser sends
    its widget values with every tick, and a tick sent before the previous one's answer
    arrived would carry a stale slider value and move the window back."""
    n_pos = len(frames.sums)
    last = n_pos - 1
    oh, ow = frames.out_shape
    if AT in st.session_state:
        st.session_state[AT] = min(max(int(st.session_state[AT]), 0), last)
    else:
        _clamp("cv_pos", last, (oh // 2) * ow + ow // 2)   # the URL's value, else the centre
    c = st.columns([1, 3], vertical_alignment="bottom")
    playing = PLAYER.button(c[0], "cv_play", last, disabled=n_pos == 1)
    speed = c[1].select_slider("Speed (window positions per second)", SPEEDS, 2, key="cv_speed",
                               bind="query-params")

    @st.fragment(run_every=1 / speed if playing else None)
    def _window() -> None:
        pos = st.session_state.get(AT)            # None only before the slider's first draw
        running = bool(st.session_state.get(PLAYING, False)) and pos is not None
        hold = st.session_state.pop(HOLD, False)
        if running and not hold:
            pos = st.session_state[AT] = min(pos + 1, last)
            if pos == last:                       # the last output is filled in: stop
                st.session_state[PLAYING] = False
                st.rerun(scope="app")             # redraw Play and end the ticks
        nav = st.columns([1, 6, 1], vertical_alignment="bottom")
        nav[0].button("◀ Prev", key="cv_prev", on_click=_move, args=(-1, n_pos), width="stretch")
        if running:
            nav[1].progress(pos / max(last, 1), text=f"Output position {pos} (row-major)")
        else:
            if pos is not None:
                st.session_state["cv_pos"] = pos
            pos = st.session_state[AT] = min(nav[1].slider(
                "Output position (row-major)", 0, max(last, 1), key="cv_pos", disabled=n_pos == 1,
                bind="query-params",
                on_change=lambda: st.session_state.__setitem__(AT, st.session_state["cv_pos"])),
                last)
        nav[2].button("Next ▶", key="cv_next", on_click=_move, args=(1, n_pos), width="stretch")
        show_figure(figs.sliding_window_figure(frames, pos, kernel), key="cv_fig_slide")
        st.caption(f"Output {divmod(pos, ow)} = Σ products = **{frames.sums[pos]:.4f}** "
                   f"(equal to torch's F.conv2d at that position). Position {pos + 1} of {n_pos}"
                   + (f", playing at {speed:g}/s." if running else "."))

    _window()


# ------------------------------------------------------------------ page

page_header("Convolution & receptive fields",
            "A kernel sliding over a real image, how big the output is, which input pixels each "
            "output sees (the theoretical box and the much smaller effective field), what a "
            "trained CNN's channels respond to, and why shifting the input shifts the output.",
            r"\begin{gathered} y[i,j] = \sum_{a,b} x[i s + a d - p,\; j s + b d - p]\; k[a,b],"
            r"\qquad n_{out} = \left\lfloor \frac{n + 2p - d(k-1) - 1}{s} \right\rfloor + 1 \\ "
            r"r_l = r_{l-1} + d_l (k_l - 1)\, j_{l-1},\qquad j_l = j_{l-1}\, s_l \end{gathered}")
preset_picker(PRESETS, key="cv_preset", container=st.columns([2, 3])[0])

with st.sidebar:
    st.markdown("### Image and kernel")
    image_name = st.selectbox("Image", IMAGE_OPTIONS, key="cv_image", bind="query-params")
    rgb = st.toggle("Keep colour (RGB)", False, key="cv_rgb", bind="query-params",
                    help="Off: grayscale (0.299 R + 0.587 G + 0.114 B). On: the kernel runs on "
                         "each colour channel separately.")
    size = st.select_slider("Image size (longer side, px)", SIZES, 256, key="cv_size",
                            bind="query-params")
    kernel_name = st.selectbox("Kernel", KERNEL_OPTIONS, index=KERNEL_OPTIONS.index("sobel x"),
                               key="cv_kernel", bind="query-params")

image = None
if image_name == UPLOAD:
    up = st.sidebar.file_uploader("PNG or JPEG, at most 10 MB", type=["png", "jpg", "jpeg"],
                                  key="cv_upload", max_upload_size=10)
    if up is None:
        st.sidebar.info("No file yet: showing the china photo meanwhile.")
    else:
        with user_errors("use this upload (showing the china photo instead)"):
            image = _upload(up.getvalue(), rgb, size)
if image is None:
    image = _image("china (photo)" if image_name == UPLOAD else image_name, rgb, size)
gray = image if image.ndim == 2 else image @ np.array([0.299, 0.587, 0.114], np.float32)

if kernel_name == CUSTOM:
    kernel = np.asarray(st.session_state.get("cv_custom_kernel", conv.KERNELS["identity"]), np.float32)
else:
    kernel = conv.KERNELS[kernel_name]

tabs = st.tabs(TABS, key="cv_tab", bind="query-params")

# ------------------------------------------------------------------ tab 1: convolution
if tabs[0].open:
    with tabs[0]:
        c = st.columns(4)
        stride = c[0].slider("Stride s", 1, 4, 1, key="cv_stride", bind="query-params")
        padding = c[1].slider("Padding p", 0, 8, 1, key="cv_padding", bind="query-params")
        dilation = c[2].slider("Dilation d", 1, 6, 1, key="cv_dilation", bind="query-params")
        if kernel_name == CUSTOM:
            ksize = c[3].select_slider("Custom kernel size", [1, 2, 3, 5, 7], 3, key="cv_ksize",
                                       bind="query-params")
            start = np.zeros((ksize, ksize), np.float32)
            start[ksize // 2, ksize // 2] = 1
            st.caption("Type numbers into the grid (it starts as the identity): e.g. −1 all "
                       "around an 8 gives an outline detector that sums to 0.")
            edited = st.data_editor(pd.DataFrame(start), key=f"cv_kgrid_{ksize}",
                                    hide_index=True, width="content")
            with user_errors("use this kernel (every cell needs a number)"):
                kernel = conv.parse_kernel(edited.to_numpy())
                st.session_state["cv_custom_kernel"] = kernel.tolist()
        kh, kw = kernel.shape
        h, w = image.shape[:2]
        out = None
        with user_errors("convolve with these settings (the kernel does not fit the padded image)"):
            out = conv.convolve(image, kernel, stride, padding, dilation, session.device())
        cols = st.columns([3, 2, 3])
        with cols[0]:
            show_figure(figs.image_figure(image, "Input"), key="cv_fig_in")
        with cols[1]:
            show_figure(figs.kernel_figure(kernel, f"Kernel: {kernel_name}"), key="cv_fig_k")
        if out is not None:
            with cols[2]:
                show_figure(figs.image_figure(out, "Output feature map"), key="cv_fig_out")
            oh, ow = out.shape[:2]
            st.latex(rf"n_{{out}} = \left\lfloor \frac{{n + 2\cdot{padding} - {dilation}\cdot"
                     rf"({kh}-1) - 1}}{{{stride}}} \right\rfloor + 1:\quad {h} \to {oh},\;\; "
                     rf"{w} \to {ow}")
            m = st.columns(4)
            m[0].metric("Output size", f"{oh} × {ow}")
            m[1].metric("Kernel sum", f"{float(kernel.sum()):.3g}")
            m[2].metric("Output range", f"{out.min():.2f} … {out.max():.2f}")
            m[3].metric("Multiplications", f"{oh * ow * kh * kw * (1 if image.ndim == 2 else 3):,}")
            explain("Red is positive, blue negative (white = 0) when the output has both signs. "
                    "A kernel that sums to 1 keeps a flat region's brightness; one that sums to 0 "
                    "sends it to 0 and keeps only changes (edges).")
            d = st.columns(3)
            flat = out if out.ndim == 2 else out.mean(-1)
            ii, jj = np.indices(flat.shape)
            export_buttons(pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(), "value": flat.ravel()}),
                           {"image": image_name, "rgb": rgb, "size": size, "kernel": kernel.tolist(),
                            "stride": stride, "padding": padding, "dilation": dilation},
                           "convolution-output", container=d[0].container())
            d[1].download_button("Download output (PNG)", figs.png_bytes(out), "convolution-output.png",
                                 "image/png", key="cv_png", on_click="ignore", icon=":material/image:")

        st.subheader("The sliding window, number by number")
        an = st.slider("Small input for the animation (px)", 5, 12, 8, key="cv_anim_n",
                       bind="query-params")
        small = conv.downscale(gray, an)
        frames = None
        with user_errors("show the sliding window (kernel larger than this small padded input)"):
            frames = conv.conv_animation_frames(small, kernel, stride, padding, dilation)
        if frames is not None:
            _sliding_window(frames, kernel)

# ------------------------------------------------------------------ tab 2: receptive field
if tabs[1].open:
    with tabs[1]:
        c = st.columns([2, 1])
        stack = c[0].selectbox("Layer stack", list(conv.STACKS), key="cv_stack", bind="query-params")
        n = c[1].slider("Input size n", 8, 128, 32, key="cv_rf_n", bind="query-params")
        rows = st.data_editor(
            pd.DataFrame(conv.specs_table(conv.STACKS[stack])), key=f"cv_layers_{stack}",
            num_rows="dynamic", hide_index=True, width="stretch",
            column_config={"kind": st.column_config.SelectboxColumn(options=list(conv.LAYER_KINDS),
                                                                    required=True),
                           **{k: st.column_config.NumberColumn(min_value=lo, max_value=hi, step=1)
                              for k, lo, hi in [("kernel", 1, 15), ("stride", 1, 4),
                                                ("padding", 0, 16), ("dilation", 1, 16)]}})
        infos = None
        with user_errors("use this layer table (check each row; the input may be too small)"):
            specs = [conv.as_spec(r) for r in rows.to_dict("records")]
            if not specs:
                raise ValueError("add at least one layer")
            infos = conv.receptive_field(specs, n)
        if infos is not None:
            last = infos[-1]
            params = conv.conv_parameters(specs, 64, 64)
            table = pd.DataFrame([{"layer": i.name, "k": i.kernel, "s": i.stride, "p": i.padding,
                                   "d": i.dilation, "r": i.size, "j": i.jump, "start": i.start,
                                   "output size": i.out_size} for i in infos])
            table["weights (c=64)"] = [0, *params]
            m = st.columns(4)
            m[0].metric("Receptive field r", f"{last.size} × {last.size}")
            m[1].metric("Jump j", last.jump)
            m[2].metric("Output size", f"{last.out_size} × {last.out_size}")
            m[3].metric("Conv weights (c = 64)", f"{sum(params):,}",
                        help="k²·c_in·c_out per conv: three 3×3 = 27c², one 7×7 = 49c².")
            cols = st.columns([3, 2])
            cols[0].dataframe(table, hide_index=True, width="stretch")
            with cols[1]:
                show_figure(figs.rf_growth_figure(infos), key="cv_fig_growth")
            _clamp("cv_out_row", last.out_size - 1, last.out_size // 2)
            _clamp("cv_out_col", last.out_size - 1, last.out_size // 2)
            c = st.columns(2)
            hi = max(last.out_size - 1, 1)
            orow = min(c[0].slider("Output row", 0, hi, key="cv_out_row", bind="query-params",
                                   disabled=last.out_size == 1), last.out_size - 1)
            ocol = min(c[1].slider("Output column", 0, hi, key="cv_out_col", bind="query-params",
                                   disabled=last.out_size == 1), last.out_size - 1)
            region = conv.input_region(specs, (orow, ocol), n)
            fig = figs.rf_layers_figure(infos, region, conv.square_image(gray, n))
            st.session_state["cv_click_trace"] = len(fig.data) - 1

            def _clicked() -> None:
                sel = st.session_state.get("cv_rf_click") or {}
                pts = [p for p in sel.get("selection", {}).get("points", [])
                       if p.get("curve_number") == st.session_state.get("cv_click_trace")]
                if pts:
                    st.session_state["cv_out_row"] = int(round(pts[0]["y"]))
                    st.session_state["cv_out_col"] = int(round(pts[0]["x"]))

            st.caption(f"Output ({orow}, {ocol}) sees input rows {region.clip_lo[0]}–"
                       f"{region.clip_hi[0]} and columns {region.clip_lo[1]}–"
                       f"{region.clip_hi[1]} (blue); "
                       f"its {region.size}×{region.size} box (dashed) reaches "
                       f"{max(region.pad_before)} / {max(region.pad_after)} pixels into the "
                       f"padding (grey) before / after. Under the boxes: the centre square of "
                       f"the sidebar's image ({image_name}) at {n}×{n}. **Click a red dot** (last "
                       f"panel) to pick an output.")
            show_figure(fig, key="cv_rf_click", on_select=_clicked, selection_mode="points")

            st.subheader("Effective receptive field")
            c = st.columns(2)
            init = c[0].radio("Weights", ERF_INITS, key="cv_erf_init", horizontal=True,
                              bind="query-params")
            samples = c[1].slider("Random inputs averaged", 4, 64, 32, key="cv_erf_samples",
                                  bind="query-params")
            erf = None
            with user_errors("compute the effective receptive field"):
                erf = _erf(tuple((s.kind, s.kernel, s.stride, s.padding, s.dilation) for s in specs),
                           n, (orow, ocol), init, samples, session.seed(), session.device())
            if erf is not None:
                e = st.columns([3, 2])
                with e[0]:
                    show_figure(figs.erf_figure(erf, f"mean |∂y/∂x| over {erf.n_samples} inputs"),
                                key="cv_fig_erf")
                e[1].metric("2σ radius of the effective field", f"{erf.radius_2sigma:.1f} px",
                            help="Radius of the circle holding ~95% of the gradient mass.")
                e[1].caption(f"Theoretical box: {region.size}×{region.size}, half-width "
                             f"{(region.size - 1) / 2:.0f} px.")
                e[1].metric("Gradient mass inside the box", f"{erf.fraction_in_box:.0%}")
                with e[1]:
                    explain("Each output depends on every pixel in the box, but not equally: the "
                            "centre is reached by many more paths than the border, so |∂y/∂x| is "
                            "Gaussian-like (Luo et al. 2016) and its radius grows like √L, while "
                            "the box grows like L. The white circle holds ~95% of the mass.")
            export_buttons(table, {"stack": stack, "input_size": n, "layers": conv.specs_table(specs),
                                   "output": [orow, ocol]}, "convolution-layers")

# ------------------------------------------------------------------ tab 3: feature maps
if tabs[2].open:
    with tabs[2]:
        digits = _digits()
        model = _digits_cnn()
        c = st.columns([1, 2, 2])
        idx = c[0].number_input("Digit image #", 0, len(digits.labels) - 1, 0, key="cv_digit",
                                bind="query-params")
        img8 = digits.images[idx]
        maps, probs = conv.feature_maps(model, img8)
        c[0].metric("Label / prediction", f"{digits.labels[idx]} / {int(probs.argmax())}")
        with c[1]:
            show_figure(figs.image_figure(img8, "Input digit", signed=False, height=300),
                        key="cv_fig_digit")
        with c[2]:
            show_figure(figs.probabilities_figure(probs, int(digits.labels[idx])), key="cv_fig_probs")
        st.caption("A 3-conv CNN (8 → 16 → 16 channels, two 2×2 max pools) trained on the 8×8 digits "
                   "(test accuracy ≈ 99%, weights built by scripts/pretrain_convolution.py).")
        for k, fm in enumerate(maps):
            show_figure(figs.feature_maps_figure(fm), key=f"cv_fig_fm{k}")
        layer = st.selectbox("Layer to download as PNG", [fm.name for fm in maps], key="cv_fm_layer")
        chosen = maps[[fm.name for fm in maps].index(layer)]
        long = pd.concat([pd.DataFrame({"layer": fm.name, "channel": ch, "row": np.indices(fm.maps[ch].shape)[0].ravel(),
                                        "col": np.indices(fm.maps[ch].shape)[1].ravel(),
                                        "value": fm.maps[ch].ravel()})
                          for fm in maps for ch in range(fm.maps.shape[0])])
        d = st.columns(3)
        export_buttons(long, {"digit": int(idx), "label": int(digits.labels[idx])},
                       "convolution-feature-maps", container=d[0].container())
        d[1].download_button("Download layer (PNG)", figs.png_bytes(figs.tile_maps(chosen.maps), False),
                             f"convolution-{layer.replace(' ', '')}.png", "image/png",
                             key="cv_fm_png", on_click="ignore", icon=":material/image:")
        st.subheader("Effective field of the last layer: trained vs random init")
        e = st.columns(2)
        for col, trained in zip(e, (False, True)):
            erf = _digits_erf(trained)
            with col:
                show_figure(figs.erf_figure(erf, ("trained" if trained else "random init") +
                                            ": mean |∂y/∂x| over 256 digits"), key=f"cv_fig_derf{trained}")
        explain("Both nets have the same 12×12 theoretical field (larger than the 8×8 image). "
                "Training reshapes where the gradient mass sits, the box stays the same.")

# ------------------------------------------------------------------ tab 4: equivariance
if tabs[3].open:
    with tabs[3]:
        c = st.columns(3)
        dy = c[0].slider("Shift down (px)", -8, 8, 0, key="cv_shift_y", bind="query-params")
        dx = c[1].slider("Shift right (px)", -8, 8, 1, key="cv_shift_x", bind="query-params")
        pool = c[2].select_slider("Max-pool size", [1, 2, 4, 8], 4, key="cv_pool",
                                  bind="query-params")
        eq = None
        with user_errors("compute the shifted outputs (use an odd-sized kernel)"):
            eq = conv.shift_equivariance(conv.downscale(gray, 128), kernel, (dy, dx), pool,
                                         session.device())
        if eq is not None:
            m = st.columns(3)
            m[0].metric("max |conv(Tx) − T conv(x)|", f"{eq.equivariance_error:.1e}")
            m[1].metric("Change without pooling", f"{eq.change_unpooled:.2f}",
                        help="‖f(Tx) − f(x)‖ / ‖f(x)‖")
            m[2].metric(f"Change after {pool}×{pool} max pool", f"{eq.change_pooled:.2f}",
                        help="‖P f(Tx) − P f(x)‖ / ‖P f(x)‖")
            show_figure(figs.equivariance_figure(eq, pool), key="cv_fig_eq")
            explain("Top row: convolution (with circular padding) commutes with shifts, so the "
                    "difference is zero up to float rounding: translation equivariance. Bottom row: "
                    "max pooling keeps the strongest response per block, so a small shift often "
                    "leaves the pooled map unchanged: approximate invariance. A shift by a multiple "
                    "of the pool size shifts the pooled map exactly.")
            export_buttons(pd.DataFrame({"pooled": eq.pooled.ravel(), "pooled_shifted":
                                         eq.pooled_of_shifted.ravel()}),
                           {"image": image_name, "kernel": kernel.tolist(), "shift": [dy, dx],
                            "pool": pool}, "convolution-equivariance")

st.divider()
guided_steps(STEPS, key="cv_steps")
