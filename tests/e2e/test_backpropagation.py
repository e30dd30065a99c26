"""The backpropagation page in real Chromium, as a teacher walks it: at 1280x720 in classroom
mode every preset, then every tour step's "Show me", then every tab, one after the other in
one session; no error box, the figure's top edge on the first screen, and the tab a preset or
step names is the one open. Then Play walks the backward pass by itself and stops at the end."""
from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import wait_idle
from topic_pages import backpropagation as bp

pytestmark = pytest.mark.e2e

ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
FIGURE = '[data-testid="stMain"] .js-plotly-plot'


def _settle(page) -> None:
    wait_idle(page)
    page.wait_for_timeout(800)
    wait_idle(page)


def _check(page, what: str, tab: str) -> None:
    assert page.locator(ERRORS).count() == 0, (what, page.locator(ERRORS).all_inner_texts())
    selected = page.locator('[data-testid="stMain"] [role="tab"][aria-selected="true"]')
    assert selected.inner_text().strip() == tab, what
    page.locator(FIGURE).first.wait_for(timeout=30_000)
    top = page.locator(FIGURE).first.bounding_box()["y"]
    assert 0 < top < 720, (what, top)


def _title(view_key: str) -> str:
    return next(v.title for v in bp.VIEWS if v.key == view_key)


def test_presets_steps_and_tabs_in_one_session(browser, server_url):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{server_url}/backpropagation?classroom=1")
    _settle(page)
    _check(page, "defaults", "Graph")
    for name, preset in bp.PRESETS.items():
        page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=name, exact=True).click()
        _settle(page)
        _check(page, f"preset {name}", _title(preset.view))
    page.get_by_role("button", name=re.compile("Guided tour")).click()
    _settle(page)
    for i, step in enumerate(bp.STEPS):
        page.locator(".st-key-backpropagation__tour__show button").first.click()
        _settle(page)
        _check(page, f"step {i + 1}", _title(step.view))
        if i < len(bp.STEPS) - 1:
            page.locator(".st-key-backpropagation__tour__next button").first.click()
            _settle(page)
    for view in bp.VIEWS:
        page.get_by_role("tab", name=view.title).click()
        _settle(page)
        _check(page, f"tab {view.title}", view.title)
    context.close()


def test_play_walks_the_backward_pass_to_the_end(page, server_url):
    page.goto(f"{server_url}/backpropagation")
    _settle(page)
    page.locator(".st-key-bp_play button").first.click()
    page.get_by_text(re.compile(r"Backward step 1 of 2")).first.wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"Backward step 2 of 2 · done")).first.wait_for(timeout=30_000)
    page.locator(".st-key-bp_play button", has_text="Play").first.wait_for(timeout=30_000)
    assert page.locator(ERRORS).count() == 0
