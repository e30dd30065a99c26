"""Playing frames on a canvas in Chromium: Play on the GAN page paints its figures
on canvases (live/canvas.js) whose pixels change from frame to frame while "Iteration"
advances, the same canvas elements stay (no DOM growth per frame), no error box and no
console error; Pause shows the interactive Plotly charts again."""
from __future__ import annotations

import pytest

from tests.e2e.test_live_pause import ERROR_BOX, PLAY, _iteration, _open_gan, _wait_label

pytestmark = pytest.mark.e2e

CANVAS = 'canvas[data-testid="dlplay-live-canvas"]'
PIXELS = """(sel) => [...document.querySelectorAll(sel)].map((c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let h = 0, ink = 0;
  for (let i = 0; i < d.length; i += 4) {
    h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) >>> 0;
    if (d[i] + d[i + 1] + d[i + 2] < 600) ink++;
  }
  return {hash: h, ink, w: c.width, h: c.height, frames: +c.dataset.frames};
})"""


def test_play_paints_canvases_and_pause_shows_plotly(page, server_url):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error"
            and "404" not in m.text else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    start = _open_gan(page, server_url)
    page.wait_for_function(                   # paused: the interactive Plotly charts
        "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length >= 2",
        timeout=60_000)
    assert page.locator(CANVAS).count() == 0
    page.locator(PLAY).click()
    _wait_label(page, "Pause")
    page.wait_for_function(f"() => document.querySelectorAll('{CANVAS}').length >= 2"
                           f" && [...document.querySelectorAll('{CANVAS}')]"
                           f".every((c) => +c.dataset.frames >= 2)", timeout=60_000)
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 0
    first = page.evaluate(PIXELS, CANVAS)
    it0 = _iteration(page)
    page.evaluate(f"() => {{ window.__canvases = [...document.querySelectorAll('{CANVAS}')]; }}")
    page.wait_for_function(
        "([sel, frames]) => [...document.querySelectorAll(sel)][0].dataset.frames >= frames + 2",
        arg=[CANVAS, first[0]["frames"]], timeout=30_000)
    second = page.evaluate(PIXELS, CANVAS)
    assert _iteration(page) > it0 > start
    for a, b in zip(first, second):
        assert a["w"] > 300 and a["h"] > 200 and a["ink"] > 1000      # drawn, not blank
    assert first[0]["hash"] != second[0]["hash"]                       # the samples moved
    assert page.evaluate("() => window.__canvases.every((c) => c.isConnected)")   # same elements
    assert page.locator(ERROR_BOX).count() == 0
    page.locator(PLAY).click()                                         # Pause
    _wait_label(page, "Play")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length >= 2",
        timeout=30_000)
    assert page.locator(CANVAS).count() == 0 and page.locator(ERROR_BOX).count() == 0
    assert not errors, errors
