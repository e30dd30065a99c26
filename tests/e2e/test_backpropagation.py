"""The backpropagation page in real Chromium: Play walks the backward pass by itself and stops
at the end. (Every preset, step and tab, figure first at 1280x720 classroom and the tab each
preset or step names: tests/e2e/test_skeleton_pages.py, for every page.)"""
from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e

ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
FIGURE = '[data-testid="stMain"] .js-plotly-plot'


def _settle(page) -> None:
    wait_idle(page)
    page.wait_for_timeout(800)
    wait_idle(page)


def test_play_walks_the_backward_pass_to_the_end(page, server_url):
    page.goto(f"{server_url}/backpropagation")
    _settle(page)
    page.locator(".st-key-bp_play button").first.click()
    page.get_by_text(re.compile(r"Backward step 1 of 2")).first.wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"Backward step 2 of 2 · done")).first.wait_for(timeout=30_000)
    page.locator(".st-key-bp_play button", has_text="Play").first.wait_for(timeout=30_000)
    assert page.locator(ERRORS).count() == 0
