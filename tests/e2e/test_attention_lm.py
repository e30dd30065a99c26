"""The attention page's Real model tab in real Chromium at the projector size (1280x720,
?classroom=1): the head view is fully on the first screen with no error, and a click on a
small map of the model view enlarges that head."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e

ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
TO_PIXEL = """(gd, [x, y]) => { const L = gd._fullLayout, r = gd.getBoundingClientRect();
    return [r.left + L.xaxis._offset + L.xaxis.l2p(x), r.top + L.yaxis._offset + L.yaxis.l2p(y)]; }"""
HEADS = """(gd) => { const t = gd._fullData.find(d => d.name === "heads");
    return t.customdata.map((c, i) => [c[0], c[1], t.x[i], t.y[i]]); }"""


def _open(browser, url: str):
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.goto(url)
    page.wait_for_selector("h1", timeout=120_000)
    wait_idle(page, timeout_s=180)
    return page


def _box(page, key: str) -> dict:
    """The chart's box once it is on the page and stays there: on the projector the figure is
    drawn again once the window's size is known (ui/viewport.py), which can detach the first
    one between the wait and the measurement."""
    # .last: while the figure is redrawn the old chart and the new one are both in the slot
    plot = page.locator(f".st-key-{key} .js-plotly-plot").last
    for _ in range(60):
        plot.wait_for(timeout=180_000)
        box = plot.bounding_box()
        if box is not None:
            wait_idle(page, timeout_s=60)
            again = plot.bounding_box()
            if again is not None:
                return again
        page.wait_for_timeout(500)
    raise AssertionError(f"{key}: no chart box after 30 s")


def test_head_view_fully_on_the_first_screen(browser, server_url):
    page = _open(browser, f"{server_url}/attention?classroom=1&attention_view=Real+model")
    assert page.locator(ERRORS).count() == 0
    box = _box(page, "at_fig_lm_head")
    assert box["y"] >= 0 and box["y"] + box["height"] <= 720, box
    assert box["width"] > 600, box
    title = page.locator(".st-key-at_fig_lm_head .gtitle").text_content()
    assert "layer 1 · head 3 (previous)" in title
    page.context.close()


def test_click_on_a_small_map_enlarges_it(browser, server_url):
    page = _open(browser, f"{server_url}/attention?classroom=1&attention_view=Real+model"
                          "&at_lm_view=model+view")
    box = _box(page, "at_fig_lm_model")
    assert box["y"] + box["height"] <= 720, box
    plot = page.locator(".st-key-at_fig_lm_model .js-plotly-plot").last
    layer, head, x, y = next(h for h in plot.evaluate(HEADS) if h[:2] == [6, 12])
    px, py = plot.evaluate(TO_PIXEL, [x, y])
    page.mouse.move(px, py)
    page.wait_for_timeout(300)
    page.mouse.click(px, py)
    page.wait_for_function(
        "() => (document.querySelector('.st-key-at_fig_lm_model .gtitle') || {}).textContent"
        "?.includes('L6 H12')", timeout=120_000)
    assert page.locator(ERRORS).count() == 0
    page.context.close()
