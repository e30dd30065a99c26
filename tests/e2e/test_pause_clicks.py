"""Pause never gets lost (DLPLAY_TRAINERS=process, frames fetched from the frame route): on a
canvas page (GAN) and a page whose 3-D surface plotly.js draws inside the live component
(ReLU regions), Play, then Pause clicked at a random moment of play, many times: every click
takes effect (the button reads Play again, the poller stopped at once, the iteration stays
put afterwards), and no page ever falls back to a rerun per frame. DLPLAY_PAUSE_CLICKS sets
the clicks per page (5 here; the closing note's run used 50). The other live pages (every
tab that trains live, ui.live_tabs.live_keys()) run when DLPLAY_PAUSE_PAGES names them
(`all`, or url paths / live keys separated by commas): each costs minutes of a 2-core CI box."""
from __future__ import annotations

import os
import random
import re
from urllib.parse import quote_plus

import pytest

from tests.e2e.conftest import _start, wait_idle
from ui.live_tabs import live_keys

pytestmark = pytest.mark.e2e

CLICKS = int(os.environ.get("DLPLAY_PAUSE_CLICKS", "5"))
ITER = re.compile(r"Iteration ([\d,]+)")
PAGES = {"gan": "gan", "relu_regions": "rr_train"}     # url path -> live_training key (CI)
# every live tab: its url (the tab chosen by ?<slug>_view=; the attention page opens on the
# shipped model, which does not train) -> its live_training key
SETTINGS = {"at_train": "&at_source=" + quote_plus("train from scratch")}


def _every_live_tab() -> dict[str, str]:
    from ui import lesson_library as library
    out = {}
    for (slug, tab), key in live_keys().items():
        title = next(v.title for v in library.PAGES[slug].VIEWS if v.key == tab)
        out[f"{slug}?{slug}_view={quote_plus(title)}{SETTINGS.get(key, '')}"] = key
    return out


def _pages() -> dict[str, str]:
    wanted = [w for w in os.environ.get("DLPLAY_PAUSE_PAGES", "").split(",") if w]
    if not wanted:
        return PAGES
    every = _every_live_tab()
    return {url: key for url, key in every.items()
            if "all" in wanted or key in wanted or url.split("?")[0] in wanted}
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'


@pytest.fixture(scope="module")
def process_app():
    old = os.environ.get("DLPLAY_TRAINERS")
    os.environ["DLPLAY_TRAINERS"] = "process"
    server = _start("app.py", "_pause.log")
    try:
        yield next(server)
    finally:
        next(server, None)
        if old is None:
            os.environ.pop("DLPLAY_TRAINERS", None)
        else:
            os.environ["DLPLAY_TRAINERS"] = old


def _iteration(page) -> int:
    m = ITER.search(page.locator('[data-testid="stMain"]').inner_text())
    return int(m.group(1).replace(",", "")) if m else -1


def _label(page, sel: str, label: str, timeout: int = 30_000) -> bool:
    try:
        page.wait_for_function("([sel, label]) => { const b = document.querySelector(sel);"
                               " return b && b.innerText.includes(label); }",
                               arg=[sel, label], timeout=timeout)
        return True
    except Exception:                                   # noqa: BLE001 - counted as lost
        return False


def _play(page, play: str, i: int) -> int:
    """Play, and wait until frames come from the frame route (fetched, not rerun). A run
    that reached its end (the adversarial page's 920 steps, an early stop) pauses itself
    at once: Reset starts a fresh one, as a teacher would, and Play is pressed again.
    Returns the Resets it took (0 or 1), which the test reports."""
    for resets in range(2):
        page.evaluate("(sel) => { delete document.body.dataset.dlplayFrames;"
                      " document.querySelector(sel).click(); }", play)
        if _label(page, play, "Pause", timeout=15_000):     # (at its end Play stays Play)
            page.wait_for_function(
                "(sel) => +(document.body.dataset.dlplayFrames || 0) >= 2"
                " || !document.querySelector(sel).innerText.includes('Pause')", arg=play,
                timeout=60_000)
            if page.evaluate("() => +(document.body.dataset.dlplayFrames || 0) >= 2"):
                return resets
        wait_idle(page, heading=False)
        page.locator(play.replace("__play", "__reset")).click()
        wait_idle(page, heading=False)
    raise AssertionError(f"Play {i} did not take (no frames fetched), even after Reset")


@pytest.mark.parametrize("path", sorted(_pages()), ids=lambda u: u.split("?")[0] + (
    "-" + _pages()[u] if "?" in u else ""))
def test_every_pause_click_pauses(browser, process_app, path):
    rng = random.Random(f"pause-{path}")
    play = f".st-key-{_pages()[path]}__play button"
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    route_answers = []                                         # the route's answers to Pause
    page.on("response", lambda r: "/_dlplay/frame/" in r.url and "pause=1" in r.url
            and route_answers.append(r.status))
    try:
        page.goto(f"{process_app}/{path}")
        page.wait_for_selector(play, timeout=120_000)
        wait_idle(page)
        lost = []
        resets = 0
        for i in range(CLICKS):
            resets += _play(page, play, i)
            page.wait_for_timeout(rng.uniform(0, 1500))                # a random moment
            page.evaluate("(sel) => document.querySelector(sel).click()", play)    # Pause
            polled = page.evaluate("() => +(document.body.dataset.dlplayFrames || 0)")
            if not _label(page, play, "Play"):
                lost.append(i)
                continue
            wait_idle(page, heading=False)
            at = _iteration(page)
            page.wait_for_timeout(800)
            assert _iteration(page) == at, f"click {i}: still training after Pause"
            assert page.evaluate("() => +(document.body.dataset.dlplayFrames || 0)") <= polled + 1
        answers = {code: route_answers.count(code) for code in sorted(set(route_answers))}
        print(f"\nPAUSE {path}: {CLICKS} clicks, {len(lost)} lost, route answers {answers}, "
              f"runs reset at their end {resets}")
        assert lost == [], f"{len(lost)} of {CLICKS} Pause clicks lost on {path}: {lost}"
        # each click told the route at once; 404: Streamlit's rerun of the same click got
        # there first (the page paused, its token dropped) - paused either way
        assert len(route_answers) == CLICKS and set(route_answers) <= {200, 404} and 200 in route_answers
        assert page.locator(ERRORS).count() == 0
        assert page.locator('[data-testid="dlplay-live-plotly"], canvas[data-testid='
                            '"dlplay-live-canvas"]').count() == 0      # paused: Plotly again
    finally:
        context.close()
