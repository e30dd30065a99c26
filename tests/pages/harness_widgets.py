"""A tiny page exercising the shared ui widgets, for tests/pages/test_widgets.py."""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.datasets import make_dataset
from engine.training import MLPClassifierTrainer
from live.controls import live_training, rerun_page
from ui.widgets import export_buttons

lr = st.slider("lr", 0.001, 1.0, 0.1, key="h_lr", bind="query-params")
hidden = st.select_slider("hidden", [4, 8, 16, 32], 8, key="h_hidden")
data = make_dataset("circles", 200, seed=0)
# drawn above the fragment, set by a click on the chart inside it
st.number_input("picked x", -2.0, 2.0, 0.0, key="h_pick_x")


def _on_pick():
    points = st.session_state["h_pick"]["selection"]["points"]
    if points:
        st.session_state["h_pick_x"] = float(points[0]["x"])


def draw(trainer, tick):
    st.markdown(f"loss={trainer.history.last('loss'):.6f} steps={trainer.steps}")
    st.plotly_chart(go.Figure(go.Scatter(x=data.points[:20, 0], y=data.points[:20, 1],
                                         mode="markers")),
                    key="h_pick", on_select=rerun_page(_on_pick), selection_mode="points")


trainer = live_training("h", lambda: MLPClassifierTrainer(data.points, data.labels, hidden=hidden,
                                                          lr=lr, seed=0),
                        draw, config={"lr": lr, "hidden": hidden}, steps_per_frame=25)
export_buttons(pd.DataFrame({"step": [1, 2], "loss": [0.5, 0.25]}), {"lr": lr}, "harness")
