"""Convolution & receptive fields: a kernel sliding over an image, the output-size arithmetic,
receptive fields of conv/pool stacks (the theoretical box and the effective field), learned
feature maps of a small digits CNN, and translation equivariance.
Settings -> engine/conv.py -> viz/convolution_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import conv
from viz import convolution_figures as figs
from viz import session
from viz.autoplay import Autoplay
from viz.claims import Claim
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, config_json, export_buttons

# ----------------------------------------------------------------------------- constants
UPLOAD = "upload (PNG/JPEG)"
CUSTOM = "custom"
IMAGE_OPTIONS = [*conv.IMAGES, UPLOAD]
KERNEL_OPTIONS = [*conv.KERNELS, CUSTOM]
SIZES = [32, 64, 128, 256, 512]
SPEEDS = [0.5, 1, 2, 4]                  # window positions per second while playing
ERF_INITS = ["random (He) + ReLU", "uniform weights, linear"]
FM_LAYERS = ["conv1 + ReLU", "conv2 + ReLU", "maxpool1", "conv3 + ReLU", "maxpool2"]
DIGITS_ERF_SEEDS = (0, 1)                # random inits the trained net's field is compared with
N_DIGITS = 1797
MAX_OUT = 127                            # largest output index (input size n <= 128)


def centre_of(stack: str, n: int) -> int:
    """Index of the centre output of `stack` on an n x n input ((out - 1) // 2)."""
    return (conv.receptive_field(conv.STACKS[stack], n)[-1].out_size - 1) // 2


STATE = StateTable([
    Control("cv_image", "china (photo)", "Image", kind="selectbox", options=IMAGE_OPTIONS),
    Control("cv_kernel", "sobel x", "Kernel", kind="selectbox", options=KERNEL_OPTIONS),
    Control("cv_rgb", False, "Keep colour (RGB)", kind="toggle",
            help="Off: grayscale (0.299 R + 0.587 G + 0.114 B). On: the kernel runs on each "
                 "colour channel separately."),
    Control("cv_size", 256, "Image size (longer side, px)", kind="select_slider", options=SIZES),
    Control("cv_ksize", 3, "Custom kernel size", kind="select_slider", options=[1, 2, 3, 5, 7]),
    Control("cv_stride", 1, "Stride s", lo=1, hi=4, step=1),
    Control("cv_padding", 1, "Padding p", lo=0, hi=8, step=1),
    Control("cv_dilation", 1, "Dilation d", lo=1, hi=6, step=1),
    Control("cv_anim_n", 8, "Small input for the animation (px)", lo=5, hi=12, step=1),
    Control("cv_speed", 2, "Speed (positions per second)", kind="select_slider", options=SPEEDS),
    # ranges that depend on other widgets (drawn with STATE.widget(key, hi=...)) are not
    # URL-bound: a new range is a new widget to Streamlit, and a new URL-bound widget takes
    # the URL's value over the one a preset just set (notes/pages2.md)
    Control("cv_pos", 0, "Output position (row-major)", lo=0, hi=10_000, step=1, url=False),
    Control("cv_stack", "three 3x3", "Layer stack", kind="selectbox", options=list(conv.STACKS)),
    Control("cv_rf_n", 32, "Input size n", lo=8, hi=128, step=1),
    Control("cv_out_row", centre_of("three 3x3", 32), "Output row", lo=0, hi=MAX_OUT, step=1,
            url=False),
    Control("cv_out_col", centre_of("three 3x3", 32), "Output column", lo=0, hi=MAX_OUT,
            step=1, url=False),
    Control("cv_erf_init", ERF_INITS[0], "Weights", kind="radio", options=ERF_INITS),
    Control("cv_erf_samples", 32, "Random inputs averaged", lo=4, hi=64, step=1),
    Control("cv_digit", 0, "Digit image #", kind="number", lo=0, hi=N_DIGITS - 1, step=1),
    Control("cv_fm_layer", FM_LAYERS[0], "Layer to download as PNG", kind="selectbox",
            options=FM_LAYERS, url=False),
    Control("cv_shift_y", 0, "Shift down (px)", lo=-8, hi=8, step=1),
    Control("cv_shift_x", 1, "Shift right (px)", lo=-8, hi=8, step=1),
    Control("cv_pool", 4, "Max-pool size", kind="select_slider", options=[1, 2, 4, 8]),
])


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

@st.cache_data(max_entries=32, show_spinner=False)
def _image(name: str, rgb: bool, size: int) -> np.ndarray:
    return conv.load_image(name, grayscale=not rgb, max_side=size)


@st.cache_data(max_entries=8, show_spinner=False)
def _upload(data: bytes, rgb: bool, size: int) -> np.ndarray:
    return conv.downscale(conv.load_upload(data, grayscale=not rgb), size)


def image_of(s: Mapping[str, Any]) -> np.ndarray:
    """The chosen built-in image (an upload is handled by the view; until a file comes, and
    in the claims, the china photo stands in)."""
    name = "china (photo)" if s["cv_image"] == UPLOAD else s["cv_image"]
    return _image(name, bool(s["cv_rgb"]), int(s["cv_size"]))


def gray_of(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else image @ np.array([0.299, 0.587, 0.114], np.float32)


def kernel_of(s: Mapping[str, Any]) -> np.ndarray:
    if s["cv_kernel"] == CUSTOM:
        return np.asarray(st.session_state.get("cv_custom_kernel", conv.KERNELS["identity"]),
                          np.float32)
    return conv.KERNELS[s["cv_kernel"]]


def geometry(s: Mapping[str, Any]) -> tuple[int, int, int]:
    return int(s["cv_stride"]), int(s["cv_padding"]), int(s["cv_dilation"])


def output_of(s: Mapping[str, Any], image: np.ndarray | None = None,
              kernel: np.ndarray | None = None) -> np.ndarray:
    image = image_of(s) if image is None else image
    kernel = kernel_of(s) if kernel is None else kernel
    return conv.convolve(image, kernel, *geometry(s), session.device())


def frames_of(s: Mapping[str, Any], image: np.ndarray | None = None,
              kernel: np.ndarray | None = None) -> conv.ConvFrames:
    image = image_of(s) if image is None else image
    kernel = kernel_of(s) if kernel is None else kernel
    small = conv.downscale(gray_of(image), int(s["cv_anim_n"]))
    return conv.conv_animation_frames(small, kernel, *geometry(s))


def specs_of(s: Mapping[str, Any]) -> list[conv.LayerSpec]:
    return list(conv.STACKS[s["cv_stack"]])


def infos_of(s: Mapping[str, Any], specs=None) -> list[conv.RFInfo]:
    return conv.receptive_field(specs_of(s) if specs is None else specs, int(s["cv_rf_n"]))


def out_index(s: Mapping[str, Any], specs=None) -> tuple[int, int]:
    """The chosen output (row, col), clamped into this stack's output."""
    last = infos_of(s, specs)[-1].out_size - 1
    return min(int(s["cv_out_row"]), last), min(int(s["cv_out_col"]), last)


@st.cache_data(max_entries=32, show_spinner="Back-propagating from the chosen output…")
def _erf(rows: tuple, n: int, out: tuple, init: str, samples: int, seed: int, device: str):
    specs = [conv.LayerSpec(*r) for r in rows]
    uniform = init == ERF_INITS[1]
    model = conv.build_cnn(specs, seed=seed, init="uniform" if uniform else "kaiming",
                           activation=None if uniform else "relu")
    return conv.effective_receptive_field(model, (1, n, n), out, seed, samples, device)


def erf_of(s: Mapping[str, Any], specs=None, seed: int = 0) -> conv.ERF:
    specs = specs_of(s) if specs is None else specs
    rows = tuple((x.kind, x.kernel, x.stride, x.padding, x.dilation) for x in specs)
    return _erf(rows, int(s["cv_rf_n"]), out_index(s, specs), s["cv_erf_init"],
                int(s["cv_erf_samples"]), int(seed), session.device())


@st.cache_resource(show_spinner=False)
def _digits_cnn():
    return conv.load_digits_cnn()


@st.cache_data(show_spinner=False)
def _digits():
    return conv.load_digits()


@st.cache_data(max_entries=4, show_spinner="Effective field of the digits CNN…")
def digits_erf(seed: int | None) -> conv.ERF:
    """ERF of output (0, 0) of the digits CNN's last layer over 256 digits: the shipped
    trained net (seed None) or a random init with `seed`."""
    model = _digits_cnn() if seed is None else conv.digits_cnn(seed)
    return conv.effective_receptive_field(model[0], (1, 8, 8), (0, 0),
                                          inputs=_digits().images[:256, None])


def peak_to_mean(erf: conv.ERF) -> float:
    """max / mean of the ERF heatmap over the image: 1 is a flat field."""
    return float(erf.heatmap.max() / erf.heatmap.mean())


def equivariance_of(s: Mapping[str, Any]) -> conv.Equivariance:
    return conv.shift_equivariance(conv.downscale(gray_of(image_of(s)), 128), kernel_of(s),
                                   (int(s["cv_shift_y"]), int(s["cv_shift_x"])),
                                   int(s["cv_pool"]), session.device())


# ---- measurements the claims use (also shown on the page)
def near_zero_share(s) -> float:
    """Share of output pixels with |y| < 5% of max |y|."""
    y = np.abs(output_of(s))
    return float((y < 0.05 * y.max()).mean())


def brightness_change(s) -> float:
    """|mean(output) − mean(input)| away from the one-pixel padded border."""
    x, y = image_of(s), output_of(s)
    return float(abs(y[1:-1, 1:-1].mean() - x[1:-1, 1:-1].mean()))


def detail_ratio(s) -> float:
    """Mean |neighbour difference| of the output / of the input (1 = as detailed)."""
    def tv(z):
        return np.abs(np.diff(z, axis=0)).mean() + np.abs(np.diff(z, axis=1)).mean()
    return float(tv(output_of(s)) / tv(image_of(s)))


def size_ratio(s) -> float:
    """Output rows / input rows."""
    return output_of(s).shape[0] / image_of(s).shape[0]


def shrink(s) -> float:
    """Input width − output width."""
    return float(image_of(s).shape[1] - output_of(s).shape[1])


def field(s) -> float:
    return float(infos_of(s)[-1].size)


def weights_per_c2(s) -> float:
    """Conv weights of the stack / c² (k² c_in c_out per conv, c_in = c_out = c)."""
    return sum(conv.conv_parameters(specs_of(s), 64, 64)) / 64 ** 2


def field_growth(s) -> list[int]:
    sizes = [i.size for i in infos_of(s)]
    return [b - a for a, b in zip(sizes, sizes[1:])]


def erf_ratio(s) -> float:
    """2σ radius of the effective field / half-width (r − 1)/2 of the theoretical box."""
    e = erf_of(s)
    return e.radius_2sigma / ((e.region.size - 1) / 2)


def central_mass(s) -> float:
    return conv.central_mass(erf_of(s))[0]


def digits_concentration_ratio(_s) -> float:
    """Peak/mean of the trained net's field over the most concentrated random init's."""
    return peak_to_mean(digits_erf(None)) / max(peak_to_mean(digits_erf(k))
                                                for k in DIGITS_ERF_SEEDS)


def digits_test_accuracy(_s) -> float:
    _, test = conv.digits_split(0.2, 0)
    return conv.digits_accuracy(_digits_cnn(), test.images, test.labels)


def predicted_right(s) -> float:
    d = _digits()
    _, probs = conv.feature_maps(_digits_cnn(), d.images[int(s["cv_digit"])])
    return float(int(probs.argmax()) == int(d.labels[int(s["cv_digit"])]))


# ----------------------------------------------------------------------------- presets
PHOTO = {"cv_rgb": False, "cv_size": 256}
SOBEL = {**PHOTO, "cv_image": "china (photo)", "cv_kernel": "sobel x", "cv_stride": 1,
         "cv_padding": 1, "cv_dilation": 1}
BLUR = {**PHOTO, "cv_image": "flower (photo)", "cv_kernel": "gaussian blur", "cv_stride": 1,
        "cv_padding": 1, "cv_dilation": 1}
STRIDE = {**PHOTO, "cv_image": "checkerboard", "cv_kernel": "laplacian", "cv_stride": 2,
          "cv_padding": 1, "cv_dilation": 1}
DILATE = {**PHOTO, "cv_image": "shapes", "cv_kernel": "sobel x", "cv_stride": 1,
          "cv_padding": 0, "cv_dilation": 4}
SLIDE = {**PHOTO, "cv_image": "digit (8x8)", "cv_kernel": "sobel x", "cv_stride": 1,
         "cv_padding": 0, "cv_dilation": 1, "cv_anim_n": 8, "cv_pos": 0}


def rf_setting(stack: str, n: int = 32, **extra) -> dict:
    """A receptive-field setting that puts the chosen output at the stack's centre."""
    c = centre_of(stack, n)
    return {"cv_stack": stack, "cv_rf_n": n, "cv_out_row": c, "cv_out_col": c, **extra}


SEVEN = rf_setting("three 3x3")
WAVENET = rf_setting("dilated 1-2-4-8 (WaveNet, k=2)")
VGG = rf_setting("VGG block")
ERF_DEEP = rf_setting("3x3 x 12 (deep)", 64, cv_erf_init=ERF_INITS[0], cv_erf_samples=32)
ERF_STRIDED = rf_setting("strided 6-layer", 64, cv_erf_init=ERF_INITS[0], cv_erf_samples=32)
MAPS = {"cv_digit": 0}
EQUI = {**PHOTO, "cv_image": "shapes", "cv_kernel": "sobel x", "cv_shift_y": 0,
        "cv_shift_x": 1, "cv_pool": 4}

C_SOBEL = (Claim("Sobel x kernel sum", lambda s: float(kernel_of(s).sum()), lo=0, hi=0),
           Claim("share of output pixels below 5% of the peak (flat regions → 0)",
                 near_zero_share, lo=0.6))
C_BLUR = (Claim("Gaussian kernel sum", lambda s: float(kernel_of(s).sum()), lo=1, hi=1),
          Claim("|mean brightness change| (border excluded)", brightness_change, hi=0.005),
          Claim("neighbour differences: output / input", detail_ratio, hi=0.8))
C_STRIDE = (Claim("output rows / input rows", size_ratio, lo=0.45, hi=0.55),)
C_DILATE = (Claim("pixels lost across the image: d(k − 1) = 8", shrink, lo=8, hi=8),)
C_SEVEN = (Claim("receptive field of three 3×3", field, lo=7, hi=7),
           Claim("weights / c² of three 3×3 (one 7×7: 49)", weights_per_c2, lo=27, hi=27))
C_WAVENET = (Claim("receptive field after 4 layers", field, lo=16, hi=16),
             Claim("growth of r per layer 1, 2, 4, 8: the last one",
                   lambda s: field_growth(s)[-1], lo=8, hi=8))
C_VGG = (Claim("growth of r per 3×3 layer after the first pool (jump 2)",
               lambda s: field_growth(s)[3], lo=4, hi=4),
         Claim("growth of r per 3×3 layer before it (jump 1)",
               lambda s: field_growth(s)[0], lo=2, hi=2),
         Claim("receptive field of the block", field, lo=16, hi=16))
C_ERF = (Claim("2σ radius / half-width of the 25×25 box", erf_ratio, hi=0.65),
         Claim("gradient mass in the central half of the box (a quarter of its area)",
               central_mass, lo=0.8))
C_ERF_STRIDED = (Claim("gradient mass in the central half of the 29×29 box",
                       central_mass, lo=0.5, hi=0.6),)
C_MAPS = (Claim("test accuracy of the digits CNN", digits_test_accuracy, lo=0.95),
          Claim("digit #0 predicted right", predicted_right, lo=1, hi=1),
          Claim("peak/mean of the field: trained / most concentrated random init",
                digits_concentration_ratio, lo=1.2))
C_EQUI = (Claim("max |conv(Tx) − T conv(x)|", lambda s: equivariance_of(s).equivariance_error,
                hi=1e-5),
          Claim("change after 4×4 pool / change without pooling",
                lambda s: equivariance_of(s).change_pooled / equivariance_of(s).change_unpooled,
                hi=0.7))

PRESETS = {
    "Edges: Sobel x on a photo": Preset(
        SOBEL, "Sobel x sums to 0: flat regions go to 0 (white; about three quarters of the "
               "output is below 5% of its peak), vertical edges light up red/blue.",
        "conv", C_SOBEL),
    "Blur: Gaussian 1/16 [1 2 1]": Preset(
        BLUR, "The kernel sums to 1: the mean brightness is kept (it changes by < 0.005); "
              "fine detail is averaged away (neighbour differences drop to about 0.76 of the "
              "input's).", "conv", C_BLUR),
    "Stride 2 halves the output": Preset(
        STRIDE, "n_out = ⌊(n + 2p − k)/2⌋ + 1 = ⌊(128 + 2 − 3)/2⌋ + 1 = 64: half of n in each "
                "direction.", "conv", C_STRIDE),
    "Dilation 4: a sparse 9×9 kernel": Preset(
        DILATE, "Nine taps spread over d(k − 1) + 1 = 9 pixels: with p = 0 the output is "
                "8 pixels narrower than the input (128 → 120), as a dense 9×9 kernel would "
                "make it, with 9 weights instead of 81.", "conv", C_DILATE),
    "7×7 vs three 3×3": Preset(
        SEVEN, "Three 3×3 layers see 7×7 pixels, like one 7×7 layer, with 27c² instead of "
               "49c² weights.", "rf", C_SEVEN),
    "WaveNet dilations 1-2-4-8": Preset(
        WAVENET, "Kernel 2 with dilations 1, 2, 4, 8: the field grows by 1, 2, 4, 8 and "
                 "reaches 16 after four layers.", "rf", C_WAVENET),
    "VGG block (pooling multiplies the jump)": Preset(
        VGG, "Before the first 2×2 pool each 3×3 layer adds 2 to r; after it the jump is 2 "
             "and each 3×3 layer adds 4: r = 16 after the block.", "rf", C_VGG),
    "Effective field ≪ theoretical box": Preset(
        ERF_DEEP, "Twelve 3×3 layers: the box is 25×25, but the gradient mass is a "
                  "Gaussian-like bump: its 2σ radius is about 0.6 of the box's half-width, "
                  "and the central half of the box (about a quarter of its area) holds about "
                  "85% of the mass.", "erf", C_ERF),
    "Learned feature maps": Preset(
        MAPS, "The trained CNN (test accuracy > 95%) gets digit #0 right; deeper maps are "
              "coarser (8×8 → 4×4 → 2×2). Below: its last layer's effective field is more "
              "concentrated than a random init's (peak/mean ≥ 1.2× theirs).", "maps", C_MAPS),
    "Pooling buys (some) invariance": Preset(
        EQUI, "Conv: shifting the input shifts the output exactly (error < 1e-5). After 4×4 "
              "max pooling a one-pixel shift changes the map much less than without pooling.",
        "equi", C_EQUI),
}

STEPS = [
    Step("A kernel slides",
         "Each output is the sum of the window times the kernel (no flip: deep-learning "
         "'convolution' is cross-correlation). Press Play: the window starts at the top-left "
         "output and fills in the output row by row; the caption checks each sum against "
         "torch's F.conv2d.", SLIDE, "slide"),
    Step("Kernels are feature detectors",
         "Sobel x answers 'is there a vertical edge here?': it sums to 0, so flat regions go "
         "to 0 and about three quarters of the output is below 5% of its peak. Try Sobel y, "
         "Laplacian, emboss.", SOBEL, "conv", C_SOBEL),
    Step("Size arithmetic",
         "Stride divides, padding adds, dilation widens the kernel: "
         "n_out = ⌊(n + 2p − d(k−1) − 1)/s⌋ + 1. Stride 2 on the 128-pixel checkerboard "
         "gives 64.", STRIDE, "conv", C_STRIDE),
    Step("Stacking grows the view",
         "r grows by d(k−1)·j per layer: three 3×3 layers reach 7×7 pixels with 27c² weights "
         "instead of one 7×7's 49c².", SEVEN, "rf", C_SEVEN),
    Step("Dilation grows it exponentially",
         "WaveNet's kernel-2 layers with dilations 1, 2, 4, 8 add 1, 2, 4, 8 pixels: the "
         "field doubles per layer (16 after four) while the number of weights grows only "
         "linearly.", WAVENET, "rf", C_WAVENET),
    Step("The effective field is smaller",
         "Luo et al. 2016: |∂y/∂x| concentrates in the middle of the box. In this strided "
         "6-layer stack the box is 29×29, yet the central half of the box (27% of its pixels) "
         "holds over half of the gradient mass. Choose the preset *Effective field ≪ "
         "theoretical box* for a deeper stack, where the gap is larger.",
         ERF_STRIDED, "erf", C_ERF_STRIDED),
    Step("What a trained CNN computes",
         "Each feature map is one channel: the first layer responds to strokes at full "
         "resolution, the pooled layers answer coarser questions on 4×4 and 2×2 grids. The "
         "net is right on over 95% of the held-out digits.", MAPS, "maps", C_MAPS[:2]),
    Step("Equivariance and invariance",
         "Convolution commutes with shifts (the difference map is zero up to float "
         "rounding). Max pooling keeps the strongest response per block, so after a small "
         "shift the pooled map changes much less: approximate invariance.", EQUI, "equi",
         C_EQUI),
]


# ----------------------------------------------------------------------------- shared controls
def image_kernel_controls(extra: bool = True) -> tuple[np.ndarray, np.ndarray, str]:
    """Image and kernel (and, in an expander, size, colour, the custom grid and the upload).
    Returns (image, kernel, image name as shown)."""
    name = STATE.widget("cv_image")
    kernel_name = STATE.widget("cv_kernel")
    s = STATE.values()
    image = None
    with st.expander("Image size, colour, upload, custom kernel",
                     expanded=name == UPLOAD or kernel_name == CUSTOM):
        if extra:
            STATE.widget("cv_rgb")
        STATE.widget("cv_size")
        if name == UPLOAD:
            up = st.file_uploader("PNG or JPEG, at most 10 MB", type=["png", "jpg", "jpeg"],
                                  key="cv_upload", max_upload_size=10)
            if up is None:
                st.info("No file yet: showing the china photo meanwhile.")
            else:
                with user_errors("use this upload (showing the china photo instead)"):
                    image = _upload(up.getvalue(), bool(s["cv_rgb"]), int(s["cv_size"]))
        kernel = kernel_of(s)
        if kernel_name == CUSTOM:
            kernel = _custom_kernel()
    shown = name
    if image is None:
        image = image_of(STATE.values())
        shown = "china (photo)" if name == UPLOAD else name
    return image, kernel, shown


def _custom_kernel() -> np.ndarray:
    ksize = STATE.widget("cv_ksize")
    start = np.zeros((ksize, ksize), np.float32)
    start[ksize // 2, ksize // 2] = 1
    st.caption("Type numbers into the grid (it starts as the identity): e.g. −1 all around "
               "an 8 gives an outline detector that sums to 0.")
    edited = st.data_editor(pd.DataFrame(start), key=f"cv_kgrid_{ksize}", hide_index=True,
                            width="content")
    kernel = kernel_of({"cv_kernel": CUSTOM})
    with user_errors("use this kernel (every cell needs a number)"):
        kernel = conv.parse_kernel(edited.to_numpy())
        st.session_state["cv_custom_kernel"] = kernel.tolist()
    return kernel


def geometry_controls() -> None:
    c = st.columns(3)
    STATE.widget("cv_stride", c[0], label="Stride")
    STATE.widget("cv_padding", c[1], label="Padding")
    STATE.widget("cv_dilation", c[2], label="Dilation")


def _recentre() -> None:
    """A new stack or input size: choose its centre output (a stale index would be clamped
    to a corner)."""
    s = STATE.values()
    with user_errors("find the centre output"):
        c = centre_of(s["cv_stack"], int(s["cv_rf_n"]))
        st.session_state["cv_out_row"] = st.session_state["cv_out_col"] = c


def stack_controls() -> tuple[list[conv.LayerSpec] | None, list[conv.RFInfo] | None]:
    """Stack, input size, the editable layer table and the chosen output (clamped into this
    stack's output). Returns (specs, infos), None where the table is unusable."""
    stack = STATE.widget("cv_stack", on_change=_recentre)
    STATE.widget("cv_rf_n", on_change=_recentre)
    n = int(STATE.value("cv_rf_n"))
    specs = infos = None
    with st.expander("Edit the layers"):
        rows = st.data_editor(
            pd.DataFrame(conv.specs_table(conv.STACKS[stack])), key=f"cv_layers_{stack}",
            num_rows="dynamic", hide_index=True, width="stretch",
            column_config={"kind": st.column_config.SelectboxColumn(
                options=list(conv.LAYER_KINDS), required=True),
                **{k: st.column_config.NumberColumn(min_value=lo, max_value=hi, step=1)
                   for k, lo, hi in [("kernel", 1, 15), ("stride", 1, 4), ("padding", 0, 16),
                                     ("dilation", 1, 16)]}})
    with user_errors("use this layer table (check each row; the input may be too small)"):
        specs = [conv.as_spec(r) for r in rows.to_dict("records")]
        if not specs:
            raise ValueError("add at least one layer")
        infos = conv.receptive_field(specs, n)
    if infos is None:
        return None, None
    out = infos[-1].out_size
    c = st.columns(2)
    for col, key, label in ((c[0], "cv_out_row", "Output row"), (c[1], "cv_out_col", "Column")):
        STATE.widget(key, col, hi=max(out - 1, 1), disabled=out == 1, label=label)
    return specs, infos


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
            show_figure(figs.kernel_figure(kernel, f"Kernel: {s['cv_kernel']}"), key="cv_fig_k")
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


def _sliding_window(frames: conv.ConvFrames, kernel: np.ndarray, controls) -> None:
    """CNN Explainer's view with auto-play. Play/Pause and the speed sit in the view (they
    change run_every, so they rerun the view); Prev/Next, the position and the figure sit in
    a keyed @st.fragment(run_every=1/speed): while playing each tick reruns only it and
    moves the window one position (row-major), filling in the output; at the last position
    play stops. The window starts at the top-left output (position 0, the Control's
    default) unless the URL or a scrub gave another.

    While playing the position is shown by a progress bar, not the slider: the browser sends
    its widget values with every tick, and a tick sent before the previous one's answer
    arrived would carry a stale slider value and move the window back."""
    n_pos = len(frames.sums)
    last = n_pos - 1
    ow = frames.out_shape[1]
    if AT not in st.session_state:
        st.session_state[AT] = STATE["cv_pos"].coerce(STATE.value("cv_pos"), 0, last)
    st.session_state[AT] = min(max(int(st.session_state[AT]), 0), last)
    with controls:
        playing = PLAYER.button(st, "cv_play", last, disabled=n_pos == 1)
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
        show_figure(figs.sliding_window_figure(frames, pos, kernel), key="cv_fig_slide")
        st.caption(f"Output {divmod(pos, ow)} = Σ products = **{frames.sums[pos]:.4f}** "
                   f"(equal to torch's F.conv2d at that position). Position {pos + 1} of "
                   f"{n_pos}" + (f", playing at {speed:g}/s." if running else "."))

    _window()


def slide_view(panel) -> None:
    with panel.controls:
        image, kernel, _ = image_kernel_controls(extra=False)
        geometry_controls()
        STATE.widget("cv_anim_n")
    s = STATE.values()
    frames = None
    with panel.figure:
        with user_errors("show the sliding window (kernel larger than this small padded "
                         "input)"):
            frames = frames_of(s, image, kernel)
        if frames is not None:
            _sliding_window(frames, kernel, panel.controls)
    with panel.notes:
        explain("The input is the image shrunk to a few pixels so every number fits. Left: "
                "the padded input (dotted: the image inside its zero padding) with the window "
                "of the current output; middle: the products window × kernel; right: the "
                "output, filled in up to the current position.")


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
        e = st.columns([3, 1.3])
        with e[0]:
            show_figure(figs.erf_figure(erf, f"mean |∂y/∂x| over {erf.n_samples} inputs"),
                        key="cv_fig_erf")
        e[1].metric("2σ radius of the effective field", f"{erf.radius_2sigma:.1f} px",
                    help="Radius of the circle holding ~95% of the gradient mass (white).")
        e[1].metric("Half-width of the box", f"{half:g} px",
                    help=f"Theoretical box: {erf.region.size}×{erf.region.size} (dashed).")
        e[1].metric("Mass in the central half", f"{mass:.0%}",
                    help="The square around the centre with half the box's half-width. A "
                         f"field flat over the box would put {area:.0%} there (its share of "
                         "the box's pixels).")
        e[1].caption(f"That square is {area:.0%} of the box's pixels: a flat field would put "
                     f"{area:.0%} of the mass there.")
    with panel.notes:
        explain("Each output depends on every pixel in the box, but not equally: the centre "
                "is reached by many more paths than the border, so |∂y/∂x| is Gaussian-like "
                "(Luo et al. 2016) and its radius grows like √L while the box grows like L. "
                "The white circle holds ~95% of the mass. With few layers (three 3×3) the "
                "two are still about the same size; the gap opens with depth.")


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
        for k, fm in enumerate(maps):
            show_figure(figs.feature_maps_figure(fm), key=f"cv_fig_fm{k}")
    with panel.notes:
        c = st.columns([2, 3])
        with c[0]:
            show_figure(figs.probabilities_figure(probs, int(digits.labels[idx])),
                        key="cv_fig_probs")
        c[1].caption("A 3-conv CNN (8 → 16 → 16 channels, two 2×2 max pools) trained on the "
                     f"8×8 digits (held-out accuracy {digits_test_accuracy(None):.1%}, weights "
                     "built by scripts/pretrain_convolution.py).")
        st.subheader("Effective field of the last layer: trained vs random init")
        runs = {"trained": (None, "trained"),
                **{f"seed{k}": (k, f"random init (seed {k})") for k in DIGITS_ERF_SEEDS}}
        e = st.columns(len(runs))
        for col, (key, (seed, name)) in zip(e, runs.items()):
            erf = digits_erf(seed)
            with col:
                show_figure(figs.erf_figure(erf, f"{name}: over 256 digits"),
                            key=f"cv_fig_derf_{key}")
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
VIEWS = [View(key, title, draw) for key, title, draw in [
    ("conv", "Convolution", conv_view),
    ("slide", "Sliding window", slide_view),
    ("rf", "Receptive field", rf_view),
    ("erf", "Effective field", erf_view),
    ("maps", "Feature maps", maps_view),
    ("equi", "Equivariance", equi_view)]]

if __name__ == "__main__":
    topic_page("convolution", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"y[i,j] = \sum_{a,b} x[i s + a d - p,\; j s + b d - p]\; k[a,b],"
                       r"\quad r_l = r_{l-1} + d_l (k_l - 1)\, j_{l-1}")
