"""`streamlit run app.py` with DLPLAY_TRAINERS=process in Chromium: a playing GAN page gets its
frames from the frame route (live/push.py), not from fragment reruns: the iteration count
and the canvas move while the websocket stays quiet; Pause brings the interactive Plotly
figures back and stops the polling."""
from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import process_server, wait_idle

pytestmark = pytest.mark.e2e

ITER = re.compile(r"Iteration ([\d,]+)")


@pytest.fixture
def process_app(monkeypatch):
    yield from process_server(monkeypatch, "_push.log")


def _iteration(page) -> int:
    m = ITER.search(page.locator('[data-testid="stMain"]').inner_text())
    return int(m.group(1).replace(",", "")) if m else -1


def test_a_playing_page_is_fed_by_the_frame_route_not_by_reruns(browser, process_app):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    ws_frames, frames = [0], {}
    page.on("websocket", lambda ws: ws.on("framereceived",
                                          lambda _: ws_frames.__setitem__(0, ws_frames[0] + 1)))
    page.on("response", lambda r: "/_dlplay/frame/" in r.url and frames.__setitem__(
        r.status, frames.get(r.status, 0) + 1))
    page.goto(f"{process_app}/gan")
    wait_idle(page)
    page.get_by_role("button", name="Play").first.click()
    page.wait_for_function("() => +(document.body.dataset.dlplayFrames || 0) >= 3",
                           timeout=60_000)
    start, ws_start, polled = _iteration(page), ws_frames[0], frames.get(200, 0)
    page.wait_for_timeout(4000)
    assert _iteration(page) > start > 0                      # the status line moves
    assert frames.get(200, 0) - polled >= 6                  # ~3-4 frames a second
    assert ws_frames[0] - ws_start <= 2                      # no fragment reruns
    canvas = page.locator('canvas[data-testid="dlplay-live-canvas"]')
    assert canvas.count() == 2 and int(canvas.first.get_attribute("data-frames")) >= 6
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_role("button", name="Pause").first.click()
    wait_idle(page)
    page.wait_for_timeout(1000)
    polled = sum(frames.values())
    page.wait_for_timeout(2000)
    assert sum(frames.values()) == polled                    # the poller stopped
    assert page.locator(".js-plotly-plot").count() >= 2 and canvas.count() == 0
    context.close()
