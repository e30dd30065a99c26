"""A network you build: Build a small network on a 2-D dataset and watch every neuron's output, the weights and the losses as it trains.
Settings -> engine/network/ -> topics/network/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, and the footer. The
constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py.

Where the code runs: the views run in the Streamlit script. A live view's `draw(view, tick)`
gets a TrainerView (never the trainer) and builds its frame with `live_parts(fn, view,
**inputs)`: `fn(view, read, **inputs)` (train_frame_parts below) must stay pure (plain values
in, live/parts.py parts out, no st.*), because on a class server the frame route calls it on
its own thread for every playing frame, and the browser's live canvas paints the figures it
returns without a rerun of the page."""
from __future__ import annotations

import functools

import streamlit as st

from engine.network import make_points
from live.controls import live_training
from live.parts import Figure
from live.push import live_parts, place
from topics.network import figures as figs
from topics.network.compute import HIDDEN, LRS, NOISES, build_trainer, trainer_args
from topics.network.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("ne_n", 200, "Training points", lo=20, hi=1000, step=20),
    Control("ne_noise", 0.2, "Noise σ", kind="select_slider", options=NOISES),
    Control("ne_hidden", 16, "Hidden units per layer", kind="select_slider",
            options=HIDDEN),
    Control("ne_lr", 0.01, "Learning rate (Adam)", kind="select_slider", options=LRS),
])


# ----------------------------------------------------------------------------- views
def train_frame_parts(view, read) -> dict:
    """One live frame of the Train tab as parts (pure: the frame route may build it): the
    points coloured by the predicted class, and the loss curve."""
    snap = view.snapshot()
    return {"ne_fig_points": Figure(figs.points_figure(
                snap.points, snap.predicted.astype(int),
                f"Predicted class ({snap.accuracy:.1%} right)")),
            "ne_fig_loss": Figure(figs.loss_figure(*view.history.as_arrays("loss")))}


def train_view(panel) -> None:
    with panel.controls:
        for key in STATE:
            STATE.widget(key)
    s = STATE.values()
    seed, device = session.seed(), session.device()
    n, noise, hidden, lr = trainer_args(s)
    make = functools.partial(build_trainer, n, noise, hidden, lr, seed, device)

    def draw(view, tick) -> None:
        parts = live_parts(train_frame_parts, view)
        left, right = st.columns(2)
        with left:
            place(parts, "ne_fig_points")
        with right:
            place(parts, "ne_fig_loss")

    with panel.figure:
        with user_errors("train the network"):
            live_training("ne_train", make, draw,
                          config={"n": n, "noise": noise, "hidden": hidden, "lr": lr,
                                  "seed": seed, "device": device},
                          steps_per_frame=10, max_steps_per_frame=200)
    with panel.notes:
        explain("Each iteration is one full-batch Adam step on the mean binary cross-entropy "
                "of the network's logit f(x) against the class y. Press Play and watch the "
                "predicted classes (left) take the shape of the moons while the loss falls.")


def data_view(panel) -> None:
    with panel.controls:
        STATE.widget("ne_n")
        STATE.widget("ne_noise")
    s = STATE.values()
    points, labels = make_points(int(s["ne_n"]), float(s["ne_noise"]),
                                 session.seed())
    with panel.figure:
        show_figure(figs.points_figure(points, labels.astype(int),
                                       f"{len(points)} training points, noise σ = "
                                       f"{float(s['ne_noise']):g}"),
                    key="ne_fig_data")
    with panel.notes:
        explain("Two interleaved half circles with Gaussian noise (scikit-learn's make_moons): "
                "no straight line separates them, so a network needs hidden units.")


VIEWS = [View("train", "Train", train_view, live=Live("ne_train", train_max=2_000)),
         View("data", "Data", data_view)]

if __name__ == "__main__":
    topic_page("network", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"L(\theta)=\frac1n\sum_i \mathrm{BCE}\big(\sigma(f_\theta(x_i)),\,y_i\big)")
