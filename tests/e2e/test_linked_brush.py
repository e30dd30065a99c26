"""Linked views in a real browser: brushing the VAE's latent codes (an Altair interval
selection) changes the linked charts below it (the brushed digits and their decoded means),
and the brush is answered in the browser: no websocket message goes to the server while the
user drags."""
from __future__ import annotations

import os

import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stVegaLiteChart"]'
EXCEPTION = '[data-testid="stException"]'


def _linked_half(page, box) -> bytes:
    """A screenshot of the chart's lower half: the brushed digits and their decoded means,
    which only the brush changes (the scatter and its rectangle are above it)."""
    return page.screenshot(clip={"x": box["x"], "y": box["y"] + 0.6 * box["height"],
                                 "width": box["width"], "height": 0.4 * box["height"]})


def test_a_brush_on_the_codes_changes_the_linked_view_without_a_server_message(page,
                                                                               server_url):
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append("x")))
    page.goto(f"{server_url}/vae?vae_view=Brush+the+codes")
    wait_idle(page)
    chart = page.locator(CHART).first
    chart.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)                   # vega-embed draws after the element
    box = chart.bounding_box()
    assert box and box["width"] > 500 and box["height"] > 500, box
    before = _linked_half(page, box)
    shots = os.environ.get("DLPLAY_WALK_SHOTS")
    messages = len(sent)
    # the scatter is the top-left view (340 px square after its axis and title)
    x0, y0 = box["x"] + 90, box["y"] + 60
    page.mouse.move(x0, y0)
    page.mouse.down()
    for i in range(1, 11):                        # a drag of 10 moves, like a hand
        page.mouse.move(x0 + 14 * i, y0 + 12 * i)
        page.wait_for_timeout(30)
    page.mouse.up()
    page.wait_for_timeout(800)
    after = _linked_half(page, box)
    if shots:
        page.screenshot(path=os.path.join(shots, "vae_brush.png"))
    assert after != before, "the brush did not change the linked digits"
    assert len(sent) == messages, f"{len(sent) - messages} messages sent while brushing"
    assert page.locator(EXCEPTION).count() == 0
