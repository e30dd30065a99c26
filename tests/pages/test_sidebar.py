"""The sidebar's seed widget takes a value written by a preset without Streamlit's
"created with a default value but also set via Session State" warning (a logged traceback)."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest
from streamlit import config
from streamlit.elements.lib import policies
from streamlit.testing.v1 import AppTest

import ui.sidebar

HARNESS = str(Path(__file__).with_name("harness_seed.py"))
WARNING = "created with a default value"


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.text = ""

    def emit(self, record):
        self.text += record.getMessage() + "\n"


@pytest.fixture
def logged(monkeypatch):
    """Streamlit's widget-policy warnings (its loggers do not propagate to caplog), with the
    warning switched on: .streamlit/config.toml turns it off for the app, which would make
    these tests pass whatever the sidebar does."""
    option = "global.disableWidgetStateDuplicationWarning"
    before = config.get_option(option)
    config.set_option(option, False)
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # once per process
    records = _Records()
    policies._LOGGER.addHandler(records)
    yield records
    policies._LOGGER.removeHandler(records)
    config.set_option(option, before)


def _apply_seed_preset() -> AppTest:
    at = AppTest.from_file(HARNESS, default_timeout=30)
    at.run()
    assert at.number_input(key="seed").value == 0 and "seed=0" in at.markdown[0].value
    at.button(key="seed_preset").click().run()
    return at


def test_preset_sets_the_seed_without_the_default_value_warning(logged):
    at = _apply_seed_preset()
    at.run()
    assert at.number_input(key="seed").value == 7 and "seed=7" in at.markdown[0].value
    assert not at.exception and WARNING not in logged.text


def test_an_explicit_default_would_warn(logged, monkeypatch):
    """The check above can fail: the same preset with value=0 on the widget warns."""
    monkeypatch.setattr(ui.sidebar, "SEED_WIDGET_DEFAULT", 0)
    _apply_seed_preset()
    assert WARNING in logged.text
