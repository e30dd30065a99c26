"""Exports built on demand: a view's rerun (a slider move) does not build files nobody asked
for. Formatting a few thousand rows as CSV, a PNG and the config JSON took ~10-20 ms of every
rerun of the GAN, VAE and diffusion views (profiled under AppTest); behind a button they
cost nothing until pressed.

    with st.expander("Export"):
        on_demand("gan_export", lambda: export_buttons(frame(), config, "gan-samples"))

The button reruns the view; on that run `build()` computes the data and draws the download
buttons (`on_click="ignore"`: downloading does not rerun, so they stay until the next rerun).
"""
from __future__ import annotations

from typing import Callable

import streamlit as st


def on_demand(key: str, build: Callable[[], None], label: str = "Prepare the files") -> bool:
    """A button `key`; on the run it triggers, build() (returns whether it ran)."""
    if st.button(label, key=key, icon=":material/download:",
                 help="Builds the files from the current state (then download them)."):
        build()
        return True
    return False
