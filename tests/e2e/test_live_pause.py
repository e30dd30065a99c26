"""Live training in Chromium on the GAN page at its default settings: Pause means pause, Step
adds exactly steps-per-frame, 50 Play/Pause cycles raise nothing, and applying every preset
of every page logs no traceback on the server (issue 23)."""
from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import ROOT, wait_idle
from topic_pages.gan import STEPS_PER_FRAME
from viz.topics import TOPICS

pytestmark = pytest.mark.e2e

ERROR_BOX = '[data-testid="stException"], [data-testid="stAlertContentError"]'
PLAY = ".st-key-gan__play button"
STEP = ".st-key-gan__step button"
ITERATION = re.compile(r"Iteration ([\d,]+)")
FRESH_LOG = ROOT / "tests" / "e2e" / "_fresh.log"    # conftest.fresh_server_url writes it


def _iteration(page) -> int:
    m = ITERATION.search(page.locator('[data-testid="stMain"]').inner_text())
    assert m, "no 'Iteration N' caption on the page"
    return int(m.group(1).replace(",", ""))


def _wait_label(page, label: str) -> None:
    page.wait_for_function(
        "([sel, label]) => { const b = document.querySelector(sel);"
        " return b && b.innerText.includes(label); }", arg=[PLAY, label], timeout=30_000)


def _open_gan(page, url: str) -> int:
    page.goto(f"{url}/gan")
    wait_idle(page)
    page.locator(PLAY).wait_for(timeout=60_000)
    return _iteration(page)


def _errors(page) -> list[str]:
    return [e.inner_text() for e in page.locator(ERROR_BOX).all()]


def test_pause_freezes_the_iteration_and_step_adds_one_frame(page, server_url):
    start = _open_gan(page, server_url)
    page.locator(PLAY).click()
    _wait_label(page, "Pause")
    page.wait_for_function(                   # it trains on its own
        "([start]) => { const m = document.body.innerText.match(/Iteration ([\\d,]+)/);"
        " return m && parseInt(m[1].replace(/,/g, '')) >= start + 100; }",
        arg=[start], timeout=45_000)
    page.locator(PLAY).click()                # Pause
    _wait_label(page, "Play")
    wait_idle(page, heading=False)
    paused = _iteration(page)
    page.wait_for_timeout(2000)
    assert _iteration(page) == paused         # nothing moves after Pause
    page.locator(STEP).click()
    page.wait_for_function(
        "([n]) => { const m = document.body.innerText.match(/Iteration ([\\d,]+)/);"
        " return m && parseInt(m[1].replace(/,/g, '')) !== n; }", arg=[paused], timeout=30_000)
    wait_idle(page, heading=False)
    assert _iteration(page) == paused + STEPS_PER_FRAME
    page.wait_for_timeout(1000)
    assert _iteration(page) == paused + STEPS_PER_FRAME
    assert _errors(page) == []


def test_fifty_play_pause_cycles_raise_nothing(page, server_url):
    """100 clicks as fast as a student would hammer the button (each a new script run that
    preempts the one in flight, while ticks train): no error box, and once paused the
    iteration stays put. (On the shared 2-core machine one label flip takes 2-6 s, so the
    clicks do not wait for it; the callback toggles whatever the label shows.)"""
    start = _open_gan(page, server_url)
    for i in range(100):                                   # a DOM click: no actionability wait
        page.evaluate("(sel) => document.querySelector(sel).click()", PLAY)
        page.wait_for_timeout(40 + 23 * (i % 7))
    # settle: the last clicks may still be in flight (each is a rerun that toggles); end
    # paused, then the iteration must stop moving (a Pause that does not stop fails here)
    settled, last, deadline = 0, None, time.time() + 45
    while settled < 3 and time.time() < deadline:
        page.wait_for_timeout(1000)
        if "Pause" in page.locator(PLAY).inner_text():
            page.locator(PLAY).click()
            settled, last = 0, None
            continue
        now = _iteration(page)
        settled, last = (settled + 1 if now == last else 0), now
    assert settled >= 3, "the iteration kept moving after Pause"
    assert last > start                                    # it did train in between
    assert _errors(page) == []


def _preset_box(page):
    """The preset picker (viz.widgets.preset_picker: a select box labelled "Preset")."""
    return page.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator("label", has_text=re.compile(r"^Preset$"))).first


def _preset_names(page) -> list[str]:
    box = _preset_box(page)
    box.wait_for(timeout=30_000)
    box.click()
    options = page.locator('[role="option"]')
    options.first.wait_for(timeout=10_000)
    names = [o.inner_text().strip() for o in options.all()]
    page.keyboard.press("Escape")
    return names


def _apply_preset(page, name: str) -> None:
    box = _preset_box(page)
    box.click()
    page.locator('[role="option"]').filter(
        has_text=re.compile(rf"^{re.escape(name)}$")).first.click()
    wait_idle(page, heading=False)
    assert box.locator("input").input_value() == name


# Measured 2026-11-26 on fresh servers (main at a2beb90): every ready page passes except the
# convolution page, where a preset raises StreamlitValueAboveMaxError (cv_out_row /
# cv_out_col value 16 above the new max 7 / 15) with a traceback in the log. Its owner is
# converting it to viz.page.topic_page (declared, clamped widgets); until its file calls
# topic_page( the test is xfail for it, strict afterwards. (Before main switched Streamlit's
# widget-default warning off in .streamlit/config.toml, GAN and gradient descent logged it.)
KNOWN = {"convolution": "a preset raises StreamlitValueAboveMaxError (cv_out_row/cv_out_col "
                        "16 > max 7/15) until the page is on viz.page.topic_page"}


def _converted(slug: str) -> bool:
    return "topic_page(" in (ROOT / "topic_pages" / f"{slug}.py").read_text(encoding="utf-8")


def _ready_topics():
    return [pytest.param(t, id=t.slug, marks=[pytest.mark.xfail(reason=KNOWN[t.slug])]
                         if t.slug in KNOWN and not _converted(t.slug) else [])
            for t in TOPICS if t.ready]


@pytest.mark.parametrize("topic", _ready_topics())
def test_every_preset_logs_no_traceback(page, fresh_server_url, topic):
    """A fresh server's own log (stdout + stderr) holds no traceback and no widget-default
    warning after every preset of the page was applied. Fresh: Streamlit logs that warning
    only once per process, so a shared server would hide every page after the first."""
    page.goto(f"{fresh_server_url}/{topic.slug}")
    wait_idle(page)
    names = _preset_names(page)
    assert names, "no preset picker found"
    for name in names:
        _apply_preset(page, name)
    time.sleep(0.5)
    logged = FRESH_LOG.read_text(encoding="utf-8", errors="replace")
    assert "created with a default value" not in logged, logged[-3000:]
    assert "Traceback" not in logged, logged[-3000:]
    assert _errors(page) == []
