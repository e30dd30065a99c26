"""The convolution page's computations of the settings dict s (topics/convolution/page.py):
the image, kernel and output, the sliding-window frames, receptive and effective fields, the
digits CNN, equivariance, and the measurements the claims read (each also shown on the page).
Shared by the views and the claims."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine import conv
from ui import session
from ui.lesson_measures import lesson_measure

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


# the sliding window's operation: label -> None (the kernel) or a pooling of engine.conv
SLIDE_OPS = {"convolution": None, "max pooling": "max", "average pooling": "avg",
             "transposed convolution": "transposed"}
ANIM_MAX = 12          # the sliding window's largest input (every number must stay readable)


def slide_input(s: Mapping[str, Any], gray: np.ndarray, kernel: np.ndarray
                ) -> tuple[np.ndarray, int, int, int, str]:
    """(small input, stride, padding, dilation, note) for the sliding window. The geometry is
    shared with the Convolution tab, where the input is large; on the small input a dilated
    kernel can span more than the padded input, d(k − 1) + 1 > n + 2p, and there is no
    output. Then the input grows (up to ANIM_MAX px, and no larger than the image), then the
    dilation shrinks, then the padding grows, until the window fits; `note` says what changed
    ("" when nothing did)."""
    stride, pad, dil = geometry(s)
    want = int(s["cv_anim_n"])
    k = int(max(np.shape(kernel)))

    def span(d: int) -> int:
        return d * (k - 1) + 1

    small = first = conv.downscale(gray, want)
    if span(dil) > min(small.shape[:2]) + 2 * pad:
        small = conv.downscale(gray, max(want, min(ANIM_MAX, span(dil) - 2 * pad)))
    n = int(min(small.shape[:2]))
    d, p = dil, pad
    while d > 1 and span(d) > n + 2 * p:
        d -= 1
    if span(d) > n + 2 * p:
        p = -(-(span(d) - n) // 2)
    size = "×".join(map(str, small.shape[:2]))
    changed = ([f"the input is {size} px (not {'×'.join(map(str, first.shape[:2]))})"]
               if small.shape != first.shape else [])
    changed += [f"the dilation is {d} (not {dil})"] if d != dil else []
    changed += [f"the padding is {p} (not {pad})"] if p != pad else []
    note = ("" if not changed else f"A {k}×{k} kernel with dilation {dil} spans {span(dil)} "
            f"px, more than this small input with padding {pad} holds: here "
            + " and ".join(changed) + ".")
    return small, stride, p, d, note


def slide_kernel(s: Mapping[str, Any], kernel: np.ndarray | None = None) -> np.ndarray:
    """The window the sliding window moves: the kernel, or a pooling window of ones."""
    if SLIDE_OPS[s["cv_slide_op"]] in (None, "transposed"):
        return kernel_of(s) if kernel is None else kernel
    size = int(s["cv_slide_pool"])
    return np.ones((size, size), np.float32)


def frames_of(s: Mapping[str, Any], image: np.ndarray | None = None,
              kernel: np.ndarray | None = None) -> conv.ConvFrames | conv.TransposedFrames:
    image = image_of(s) if image is None else image
    kernel = slide_kernel(s, kernel)
    op = SLIDE_OPS[s["cv_slide_op"]]
    if op == "transposed":       # the output grows: the input is the small image as it is
        return conv.transposed_animation_frames(conv.downscale(gray_of(image),
                                                               int(s["cv_anim_n"])),
                                                kernel, *geometry(s))
    small, stride, pad, dil, _ = slide_input(s, gray_of(image), kernel)
    if op is None:
        return conv.conv_animation_frames(small, kernel, stride, pad, dil)
    return conv.pool_animation_frames(small, len(kernel), stride, pad, dil, op)



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
@lesson_measure
def near_zero_share(s) -> float:
    """Share of output pixels with |y| < 5% of max |y|."""
    y = np.abs(output_of(s))
    return float((y < 0.05 * y.max()).mean())


@lesson_measure
def brightness_change(s) -> float:
    """|mean(output) − mean(input)| away from the one-pixel padded border."""
    x, y = image_of(s), output_of(s)
    return float(abs(y[1:-1, 1:-1].mean() - x[1:-1, 1:-1].mean()))


@lesson_measure
def detail_ratio(s) -> float:
    """Mean |neighbour difference| of the output / of the input (1 = as detailed)."""
    def tv(z):
        return np.abs(np.diff(z, axis=0)).mean() + np.abs(np.diff(z, axis=1)).mean()
    return float(tv(output_of(s)) / tv(image_of(s)))


@lesson_measure
def size_ratio(s) -> float:
    """Output rows / input rows."""
    return output_of(s).shape[0] / image_of(s).shape[0]


@lesson_measure
def shrink(s) -> float:
    """Input width − output width."""
    return float(image_of(s).shape[1] - output_of(s).shape[1])


def dense_weights_of_span(s) -> float:
    """Weights of a dense square kernel as wide as the dilated one: (d(k − 1) + 1)²."""
    k, d = kernel_of(s).shape[0], int(s["cv_dilation"])
    return float((d * (k - 1) + 1) ** 2)


@lesson_measure
def field(s) -> float:
    return float(infos_of(s)[-1].size)


@lesson_measure
def weights_per_c2(s) -> float:
    """Conv weights of the stack / c² (k² c_in c_out per conv, c_in = c_out = c)."""
    return sum(conv.conv_parameters(specs_of(s), 64, 64)) / 64 ** 2


@lesson_measure
def field_growth(s) -> list[int]:
    sizes = [i.size for i in infos_of(s)]
    return [b - a for a, b in zip(sizes, sizes[1:])]


@lesson_measure
def erf_ratio(s) -> float:
    """2σ radius of the effective field / half-width (r − 1)/2 of the theoretical box."""
    e = erf_of(s)
    return e.radius_2sigma / ((e.region.size - 1) / 2)


@lesson_measure
def central_mass(s) -> float:
    return conv.central_mass(erf_of(s))[0]


def digits_concentration_ratio(_s) -> float:
    """Peak/mean of the trained net's field over the most concentrated random init's."""
    return peak_to_mean(digits_erf(None)) / max(peak_to_mean(digits_erf(k))
                                                for k in DIGITS_ERF_SEEDS)


def digits_test_accuracy(_s) -> float:
    _, test = conv.digits_split(0.2, 0)
    return conv.digits_accuracy(_digits_cnn(), test.images, test.labels)


@lesson_measure
def predicted_right(s) -> float:
    d = _digits()
    _, probs = conv.feature_maps(_digits_cnn(), d.images[int(s["cv_digit"])])
    return float(int(probs.argmax()) == int(d.labels[int(s["cv_digit"])]))


def _layer(s, layer: str) -> conv.FeatureMap:
    """The digit's feature maps of one layer of the digits CNN (FM_LAYERS names them)."""
    maps, _ = conv.feature_maps(_digits_cnn(), _digits().images[int(s["cv_digit"])])
    return maps[FM_LAYERS.index(layer)]


@lesson_measure
def feature_map_side(s, layer: str) -> float:
    """Width in pixels of each map of `layer` (the figure's panel title prints C × H×W)."""
    return float(_layer(s, layer).maps.shape[-1])


@lesson_measure
def feature_map_field(s, layer: str) -> float:
    """Receptive field of one unit of `layer` (the panel title: 'sees r×r px')."""
    return float(_layer(s, layer).rf.size)


@lesson_measure
def pool_block_max_error(s) -> float:
    """max |maxpool1 − the largest value of each 2×2 block of conv2 + ReLU|: 0 when pooling
    keeps exactly each block's maximum."""
    before, after = _layer(s, "conv2 + ReLU").maps, _layer(s, "maxpool1").maps
    c, h, w = before.shape
    blocks = before[:, :h // 2 * 2, :w // 2 * 2].reshape(c, h // 2, 2, w // 2, 2).max(axis=(2, 4))
    return float(np.abs(blocks - after).max())


def wrap_note(shape: tuple[int, int], dy: int, dx: int) -> str | None:
    """The shift is circular: on an h × w image a shift of (dy, dx) acts as (dy mod h,
    dx mod w). A sentence saying so when that differs from what the sliders ask (a shift by
    8 on an 8 px digit is no shift at all), else None."""
    h, w = int(shape[0]), int(shape[1])
    parts = [f"{name} {v} px on {n} px is {v % n} px" for name, v, n in
             (("down", dy, h), ("right", dx, w)) if abs(v) >= n]
    if not parts:
        return None
    return ("The shift wraps around (circular): " + "; ".join(parts)
            + (". The image is not shifted at all, so every change is 0." if
               dy % h == 0 and dx % w == 0 else "."))


# ----------------------------------------------------------------------------- a unit's sum
UNIT_KEY = "cv_unit"     # session: (layer, channel, row, col) the maps figure's click chose
MAPS_PER_ROW = 8         # channels per tile row in the feature-maps figure


def unit_at(shape: tuple[int, int, int], x: int, y: int, per_row: int = MAPS_PER_ROW
            ) -> tuple[int, int, int] | None:
    """(channel, row, col) of the pixel (x, y) of a layer's tiled heatmap (channels (C, H, W)
    tiled `per_row` to a row with a one-pixel gap, as figures._tiled lays them out); None on
    a gap or past the last channel."""
    c, h, w = shape
    tr, r = divmod(int(y), h + 1)
    tc, q = divmod(int(x), w + 1)
    ch = tr * per_row + tc
    if r == h or q == w or tc >= per_row or not 0 <= ch < c or min(x, y) < 0:
        return None
    return ch, r, q


def strongest_unit(maps, layer: int) -> tuple[int, int, int, int]:
    """(layer, channel, row, col) of the largest value of that layer: what the network
    overview explains before any click."""
    m = maps[layer].maps
    ch, r, q = np.unravel_index(int(np.argmax(m)), m.shape)
    return layer, int(ch), int(r), int(q)
