"""The real app in real Chromium: every page renders, no exception box, classroom mode
changes the fonts, and the URL reproduces the seed and classroom state."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import SCREENSHOTS, wait_idle
from ui.topics import TOPICS

pytestmark = pytest.mark.e2e

EXCEPTION = '[data-testid="stException"]'
PLOT = '[data-testid="stPlotlyChart"], .js-plotly-plot, [data-testid="stVegaLiteChart"]'
PARAGRAPH = '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p'


def _font_px(page, selector: str) -> float:
    return page.evaluate(
        "(sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize)", selector)


def test_home_gallery(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    assert page.locator("h1").first.inner_text() == "Deep-learning playground"
    assert page.locator(EXCEPTION).count() == 0
    for topic in TOPICS:
        assert page.get_by_text(topic.sentence).count() == 1
    assert page.locator('[data-testid="stImage"] img').count() >= len(TOPICS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "home.png"), full_page=True)


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.slug)
def test_every_page_renders(page, server_url, topic):
    page.goto(f"{server_url}/{topic.slug}")
    wait_idle(page)
    assert page.locator("h1").first.inner_text().strip() == topic.title
    assert page.locator(EXCEPTION).count() == 0, page.locator(EXCEPTION).first.inner_text()
    page.wait_for_selector(PLOT, timeout=60_000)
    assert page.locator(PLOT).count() >= 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{topic.slug}.png"), full_page=False)


def test_classroom_toggle_enlarges_fonts(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    before = _font_px(page, PARAGRAPH)
    page.locator('[data-testid="stSidebar"]').get_by_text("Classroom mode").click()
    page.wait_for_function(
        "([sel, px]) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize) > px",
        arg=[PARAGRAPH, before], timeout=30_000)
    wait_idle(page)
    after = _font_px(page, PARAGRAPH)
    assert after >= 1.4 * before, (before, after)
    assert "classroom=1" in page.url


def test_url_reproduces_seed_and_classroom(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    plain = _font_px(page, PARAGRAPH)
    page.goto(f"{server_url}/?seed=7&classroom=1")
    wait_idle(page)
    seed_box = page.locator('[data-testid="stSidebar"] input[type="number"]').first
    assert seed_box.input_value() == "7"
    assert page.locator('[data-testid="stSidebar"] input[type="checkbox"]').first.is_checked()
    assert _font_px(page, PARAGRAPH) >= 1.4 * plain


def test_moving_the_seed_updates_the_url(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    seed_box = page.locator('[data-testid="stSidebar"] input[type="number"]').first
    seed_box.fill("5")
    seed_box.press("Enter")
    page.wait_for_function("() => location.search.includes('seed=5')", timeout=30_000)
    wait_idle(page)
    assert page.locator(EXCEPTION).count() == 0


def test_deep_link_on_a_fresh_server(page, fresh_server_url):
    """The first request a new server gets is a link to a topic page: it must render inside
    the app shell (navigation sections, shared sidebar), not as a bare script."""
    topic = TOPICS[0]
    page.goto(f"{fresh_server_url}/{topic.slug}")
    wait_idle(page)
    assert page.locator("h1").first.inner_text().strip() == topic.title
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text("Compute device").count() == 1
    assert sidebar.get_by_text("Architectures").count() >= 1
    assert page.locator(EXCEPTION).count() == 0


def test_a_deep_path_opens_the_page_it_starts_with(page, server_url):
    """`/<slug>/extra/path` used to give a blank page (the index's scripts resolved below it)."""
    topic = TOPICS[0]
    page.goto(f"{server_url}/{topic.slug}/extra/path?classroom=1")
    wait_idle(page)
    assert page.url.endswith(f"/{topic.slug}?classroom=1")
    assert page.locator("h1").first.inner_text().strip() == topic.title
    assert page.locator(EXCEPTION).count() == 0


def test_an_unknown_deep_path_says_page_not_found_over_the_gallery(page, server_url):
    page.goto(f"{server_url}/nosuch/extra/path")
    wait_idle(page)
    assert page.get_by_text("Page not found").count() >= 1
    assert page.locator("h1").first.inner_text() == "Deep-learning playground"
