"""The convolution page's settings table STATE and the controls several of its views share
(image and kernel with upload and custom grid, stride/padding/dilation, the layer stack with
its editable table). topics/convolution/page.py imports them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine import conv
from topics.convolution.compute import (
    UPLOAD, CUSTOM, IMAGE_OPTIONS, KERNEL_OPTIONS, SIZES, SPEEDS, ERF_INITS, FM_LAYERS,
    N_DIGITS, MAX_OUT, SLIDE_OPS, centre_of, image_of, kernel_of, _upload)
from ui.page import user_errors
from ui.state import Control, StateTable


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
    Control("cv_slide_op", "convolution", "Window computes", kind="radio",
            options=list(SLIDE_OPS),
            help="Convolution: the sum of window × kernel. Max / average pooling: the largest "
                 "value or the mean of the window (no weights; stride, padding and dilation "
                 "as for the kernel)."),
    Control("cv_slide_pool", 2, "Pooling window", kind="select_slider", options=[2, 3]),
    Control("cv_speed", 2, "Speed (positions per second)", kind="select_slider", options=SPEEDS),
    # ranges that depend on other widgets (drawn with STATE.widget(key, hi=...)) are not
    # URL-bound: a new range is a new widget to Streamlit, and a new URL-bound widget takes
    # the URL's value over the one a preset just set (docs/ADDING_A_PAGE.md, the state table)
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
