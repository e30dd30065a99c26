"""A teacher plays a whole lesson on the projector (1280x720, ?classroom=1) with the keys a
presenter's clicker sends: every slide shows its title beside its figure, the figure starts on
the first screen, the URL names the slide, and no error box appears. The lesson crosses pages
(backpropagation -> ReLU regions). A slide that trains to N stops there by itself, inline and
in a worker process."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import process_server
from tests.e2e.test_skeleton_pages import _main_figure_top, no_errors, settle
from ui import lesson_library as library

pytestmark = pytest.mark.e2e

LESSON = "02-backprop-and-relu-networks"
CARD = ".st-key-lesson_card"
WIDTH, HEIGHT = 1280, 720


def _slide_shown(page, k: int, n: int, timeout_ms: int = 90_000) -> None:
    page.wait_for_function(
        "([sel, text]) => { const c = document.querySelector(sel);"
        " return c && c.innerText.includes(text); }",
        arg=[CARD, f"{k}/{n}"], timeout=timeout_ms)
    settle(page)


def test_play_a_lesson_with_the_keyboard(browser, server_url):
    lesson = library.shipped(LESSON)
    n = len(lesson.slides)
    page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
    page.goto(f"{server_url}/?lesson={LESSON}&slide=1&classroom=1")
    keys = ["ArrowRight", "PageDown"]
    problems = []
    for k, slide in enumerate(lesson.slides, start=1):
        try:
            _slide_shown(page, k, n)
        except PlaywrightTimeout as e:                  # say where, and what was on screen
            card = page.locator(CARD)
            raise AssertionError(f"slide {k}/{n} never shown; {page.url}; card: "
                                 f"{card.inner_text()[:200] if card.count() else None}") from e
        no_errors(page, f"slide {k}")
        card = page.locator(CARD).inner_text()
        assert slide.title in card, (k, card[:200])
        query = parse_qs(urlsplit(page.url).query)
        assert query.get("lesson") == [LESSON] and query.get("slide") == [str(k)], page.url
        assert urlsplit(page.url).path.strip("/") == slide.page, (k, page.url)
        top = _main_figure_top(page)
        if top is None or top > HEIGHT - 150:
            problems.append(f"slide {k} ({slide.title}): figure starts at {top} px")
        if k < n:
            page.keyboard.press(keys[k % 2])
    assert not problems, problems
    page.keyboard.press("PageUp")                    # back one, across nothing
    _slide_shown(page, n - 1, n)
    page.keyboard.press("ArrowLeft")
    _slide_shown(page, n - 2, n)
    assert parse_qs(urlsplit(page.url).query).get("slide") == [str(n - 2)]



@pytest.fixture
def process_app(monkeypatch):
    yield from process_server(monkeypatch, "_lesson_train.log")


def test_a_train_slide_trains_to_its_iteration_and_stops(browser, server_url):
    _trains_to_1000_and_stops(browser, server_url)


def test_a_train_slide_stops_at_its_iteration_in_a_worker(browser, process_app):
    """The same where a worker process trains (it stops at its cap, the frame route reports)."""
    _trains_to_1000_and_stops(browser, process_app)


def _trains_to_1000_and_stops(browser, url: str) -> None:
    """Slide 1 of lesson 11 (`train = 1000`): the player presses Play, the status line counts
    "Training to 1,000", the panel stops by itself at iteration 1,000 exactly, and the card
    says so; Play is offered again and nothing trains further."""
    lid = "11-generalization"
    assert library.shipped(lid).slides[0].train == 1000
    page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
    page.goto(f"{url}/?lesson={lid}&slide=1&classroom=1")
    page.wait_for_function("() => document.body.innerText.includes('Training to 1,000:')",
                           timeout=120_000)
    page.wait_for_function(
        "() => document.body.innerText.includes('Trained to iteration 1,000')", timeout=180_000)
    settle(page)
    no_errors(page, "trained slide")
    body = page.locator("body").inner_text()
    assert "Iteration 1,000" in body and "Training to 1,000:" not in body, body[:600]
    play = page.locator(".st-key-gen_overfit__play button")
    assert "Play" in play.inner_text()                  # stopped, not playing
    page.wait_for_timeout(1500)
    assert "Iteration 1,000" in page.locator("body").inner_text()   # and stays at 1,000
