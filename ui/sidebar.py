"""The sidebar every page shares: compute device, global seed, classroom mode.

- device: select box of "auto" (only where more than one device exists) and the devices
  that exist, bound to ?device=. auto is the default device (DLPLAY_DEVICE naming a device,
  else CUDA > MPS > CPU); an explicit choice wins.
- seed: bound to ?seed=; its URL value is checked like any declared control (ui.url_check:
  ?seed=inf is clamped to SEED_MAX, ?seed=abc uses 0, and the page says so).
- classroom: toggle, synced by hand with ?classroom=1 because the URL convention is "1",
  which Streamlit's bound toggles (true/false only) would reject.
"""
from __future__ import annotations

import streamlit as st

from engine.device import DeviceChoice, available_devices, default_device, device_label
from ui import session
from ui import url_check
from ui.page import inject_css
from ui.state import Control

TRUTHY = {"1", "true", "yes", "on"}

# Presets and guided steps set the seed by writing st.session_state["seed"] (ui.widgets
# .apply_settings), the same path the widget itself uses. A widget drawn with an explicit
# default *and* a value written through session state makes Streamlit log a warning with a
# stack trace ("created with a default value but also had its value set via the Session
# State API"). value="min" is no explicit default to Streamlit, and min_value is the
# default seed, so the widget starts at 0 without the warning.
assert session.DEFAULT_SEED == 0, "the seed widget's default is its min_value"
SEED_WIDGET_DEFAULT = "min"
SEED = Control("seed", session.DEFAULT_SEED, "Seed", kind="number", lo=0, hi=session.SEED_MAX,
               step=1)


def _classroom_from_url() -> bool:
    return str(st.query_params.get("classroom", "")).strip().lower() in TRUTHY


def classroom_requested() -> bool:
    """Classroom mode is on (session) or asked for in the URL (?classroom=1)."""
    return bool(st.session_state.get("classroom", _classroom_from_url()))


def _sync_classroom_to_url() -> None:
    if st.session_state.get("classroom"):
        st.query_params["classroom"] = "1"
    elif "classroom" in st.query_params:
        del st.query_params["classroom"]


def device_options(devices: list[str], choice: DeviceChoice) -> tuple[list[str], int]:
    """(options, index of the default): "auto" first when there is a choice to make; the
    default is the device DLPLAY_DEVICE names, else "auto" (else the only device)."""
    options = ([session.AUTO] if len(devices) > 1 else []) + list(devices)
    if choice.reason != "auto" or session.AUTO not in options:
        return options, options.index(choice.name)
    return options, 0


def _device_caption() -> str:
    if st.session_state.get("device") == session.AUTO:
        return f"In use: **auto** ({device_label(session.device())})"
    return f"In use: **{device_label(session.device())}**"


def shared_sidebar() -> None:
    if "classroom" not in st.session_state:
        st.session_state["classroom"] = _classroom_from_url()
    choice = default_device()
    options, index = device_options(available_devices(), choice)
    url_check.apply([SEED, Control("device", options[index], "Compute device", kind="selectbox",
                                   options=options)])
    with st.sidebar:
        st.markdown("### Settings")
        st.selectbox("Compute device", options, index=index, key="device",
                     bind="query-params",
                     format_func=lambda d: "auto" if d == session.AUTO else d,
                     help="Where the PyTorch engine runs. auto: CUDA when present, else MPS, "
                          "else the CPU. The small 2-D models train faster on the CPU "
                          "(measured on an H200: 0.2-0.9x on CUDA), the transformer and the "
                          "CNN gradients gain 5-18x on CUDA. The environment variable "
                          "DLPLAY_DEVICE sets the default.")
        st.caption(_device_caption())
        if choice.warning:
            st.warning(choice.warning)
        st.number_input("Seed", min_value=0, max_value=session.SEED_MAX,
                        value=SEED_WIDGET_DEFAULT, step=1, key="seed", bind="query-params",
                        help="Every random draw on every page derives from this seed: the "
                             "same seed and URL reproduce the same picture.")
        st.toggle("Classroom mode", key="classroom", on_change=_sync_classroom_to_url,
                  help="Larger fonts, thicker lines and bigger markers for projection; long "
                       "explanations are collapsed. Also ?classroom=1 in the URL.")
    _sync_classroom_to_url()
    inject_css("base")
    if session.classroom():
        inject_css("classroom")
