"""The shared widget groups (ui/widgets.py, live/controls.py) driven through AppTest."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import click_chart

HARNESS = str(Path(__file__).with_name("harness_widgets.py"))


@pytest.fixture
def at():
    app = AppTest.from_file(HARNESS, default_timeout=60)
    app.run()
    assert not app.exception
    return app


def _md(at, prefix):
    return [m.value for m in at.markdown if m.value.startswith(prefix)]


def test_step_button_trains_and_reset_restarts(at):
    assert _md(at, "loss=") == ["loss=nan steps=0"]
    at.button(key="h__step").click().run()
    first = _md(at, "loss=")[0]
    assert first.endswith("steps=25")
    at.button(key="h__step").click().run()
    second = _md(at, "loss=")[0]
    assert second.endswith("steps=50")
    assert float(second.split()[0][5:]) < float(first.split()[0][5:])
    at.button(key="h__reset").click().run()
    assert _md(at, "loss=") == ["loss=nan steps=0"]


def test_config_change_rebuilds_trainer(at):
    at.button(key="h__step").click().run()
    assert _md(at, "loss=")[0].endswith("steps=25")
    at.slider(key="h_lr").set_value(0.2).run()
    assert _md(at, "loss=") == ["loss=nan steps=0"]


def test_play_toggles_label_and_trains_a_frame(at):
    at.button(key="h__play").click().run()
    assert at.button(key="h__play").label == "Pause"
    assert at.session_state["h__playing"] is True
    assert int(_md(at, "loss=")[0].split("steps=")[1]) > 0   # a frame ran while playing
    at.button(key="h__play").click().run()
    assert at.button(key="h__play").label == "Play"


def test_export_buttons_present(at):
    # AppTest has no download-button accessor: check the JSON builder directly
    from ui.widgets import config_json
    cfg = json.loads(config_json({"lr": 0.1, "shape": (2, 3)}, "harness"))
    assert cfg["page"] == "harness" and cfg["lr"] == 0.1 and cfg["shape"] == [2, 3]
    assert "seed" in cfg and "device" in cfg


def test_click_in_the_fragment_updates_widgets_outside_it(at):
    """A plotly on_select inside the live-training fragment sets a number input drawn above
    the fragment: rerun_page makes the whole page rerun, so the input shows the new value."""
    assert at.number_input(key="h_pick_x").value == 0.0
    click_chart(at, "h_pick", {"x": 0.75, "y": -0.5, "curve_number": 0, "point_number": 3,
                               "point_index": 3}, in_fragment=True)
    assert not at.exception
    assert at.session_state["h_pick_x"] == 0.75
    # without rerun_page only the fragment reruns: the input above it is not redrawn
    assert "h_pick_x" in [n.key for n in at.number_input], "only the fragment was redrawn"
    assert at.number_input(key="h_pick_x").value == 0.75
    assert _md(at, "loss=") == ["loss=nan steps=0"]          # the fragment drew too
