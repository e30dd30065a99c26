"""The shared sidebar and a button that sets the seed the way presets do (tests/pages/test_sidebar.py)."""
import streamlit as st

from ui import session
from ui.sidebar import shared_sidebar
from ui.widgets import apply_settings

st.button("preset", key="seed_preset", on_click=apply_settings, args=({"seed": 7},))
shared_sidebar()
st.markdown(f"seed={session.seed()}")
