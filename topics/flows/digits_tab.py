"""The flow page's digits tab (notes 004, Fig. 11.7, small): the shipped Real NVP's samples at a
temperature, their spread and roughness, and its test bits per pixel next to other models of
the same 17-level digits."""
from __future__ import annotations

import streamlit as st

from engine import weights
from engine.flows import digits as fd
from topics.flows import figures as figs
from topics.flows.digits import (N_SAMPLES, PIXELCNN_STEPS, baseline_bits, flow_bits,
                                 pixelcnn_bits, samples_of, shipped_flow, stats_at)
from ui.page import user_errors
from ui.render import explain, show_figure
from ui.state import StateTable

PIXELCNN_ASKED = "fl_pixelcnn_asked"


def digits_view(panel, state: StateTable) -> None:
    with panel.controls:
        state.widget("fl_temp")
        st.caption("Notes 004, Fig. 11.7 (Real NVP's samples), here on 8 × 8 digits.")
    temp = float(state.values()["fl_temp"])
    with panel.figure:
        try:
            shipped_flow()
        except weights.WeightsError as err:
            st.error(f"The digits flow is not available: {err}", icon=":material/error:")
            return
        with user_errors("sample the digits flow"):
            _samples(temp)
        with user_errors("measure bits per pixel"):
            _bits()
    with panel.notes:
        st.latex(r"y = \tfrac{v + u}{17},\ u \sim U[0,1)^{64},\quad "
                 r"x = \operatorname{logit}(\alpha + (1-2\alpha)\,y),\quad "
                 r"\text{bits per pixel} = -\tfrac{1}{64}\log_2 p(v + u)")
        explain("The 8 × 8 digits have 17 grey levels v. Adding uniform noise u makes them "
                "continuous (dequantisation), and a logit keeps the flow off the edges of "
                f"[0, 1]. {fd.MODEL_CONFIG['layers']} coupling layers alternate a checkerboard "
                "mask and left/right halves (notes 004, Fig. 11.2); s and t are MLPs of "
                f"{fd.MODEL_CONFIG['hidden']} units. The density of "
                "v + u, measured in bits per pixel, is an upper bound on the bits of the "
                "discrete digit, so it sits on the same scale as the PixelCNN's bits at 17 "
                "levels. Lowering the temperature shrinks z towards the base's mode: samples "
                "become smoother and more alike; at T = 0 every sample is the image of z = 0.")


def _samples(temp: float) -> None:
    if temp <= 0:
        st.info("At temperature 0 every z is 0, so every sample is one and the same image, "
                "f⁻¹(0): raise T to see variety.", icon=":material/info:")
        show_figure(figs.digits_figure(samples_of(0.0, 1), 1, "T = 0: f⁻¹(0)"),
                    key="fl_fig_digits")
        return
    images = samples_of(temp)
    show_figure(figs.digits_figure(images, 8, f"{N_SAMPLES} samples at T = {temp:g}"),
                key="fl_fig_digits")
    st.caption(f"The same {N_SAMPLES} base draws z, scaled by T.")
    here, full = stats_at(temp), stats_at(1.0)
    m = st.columns(2)
    m[0].metric("Spread across samples", f"{here.spread:.2f}",
                f"{here.spread - full.spread:+.2f} vs T = 1", delta_color="off",
                help="Std of each pixel across the samples, averaged over pixels (grey levels "
                     "0-16): how varied the samples are.")
    m[1].metric("Roughness", f"{here.roughness:.2f}",
                f"{here.roughness - full.roughness:+.2f} vs T = 1", delta_color="off",
                help="Mean |difference| of neighbouring pixels within a sample (grey levels): "
                     "how unsmooth a sample is.")


def _bits() -> None:
    bits = {"Real NVP (dequantised bound)": flow_bits(),
            "independent pixels": baseline_bits()}
    asked = st.session_state.get(PIXELCNN_ASKED, False)
    if st.button(f"Train the PixelCNN at 17 levels ({PIXELCNN_STEPS} steps) to compare",
                 key="fl_pixelcnn") or asked:
        st.session_state[PIXELCNN_ASKED] = True
        with st.spinner("Training the autoregressive page's PixelCNN on the same split…"):
            bits["PixelCNN (17 levels)"] = pixelcnn_bits()
    show_figure(figs.bits_figure(bits), key="fl_fig_bits")
    st.caption(f"Test digits ({len(fd.digit_levels()[1])} images of the autoregressive "
               "page's split). The VAE page's bound is not on this scale: its decoder treats "
               "a grey value as the probability of a binary pixel, which is not a "
               "distribution over the 17 levels, so it gives no bits per pixel here.")
