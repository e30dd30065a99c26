"""A teacher plays a whole lesson on the projector (1280x720, ?classroom=1) with the keys a
presenter's clicker sends: every slide shows its title beside its figure, the figure starts on
the first screen, the URL names the slide, and no error box appears. The lesson crosses pages
(backpropagation -> ReLU regions)."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

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
        _slide_shown(page, k, n)
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
