"""A class opening one live page at the same moment: 10 browser contexts (10 students, one
Chromium) open the GAN page at once against one `streamlit run app.py` with trainers in
worker processes. Every tab shows its live figure within a generous bound, and none shows
an error box or a traceback.

Why the GAN page: it is the page where two of ten tabs once stalled (no figure in 300 s);
its figure needs its trainer's first picture from the worker, which every tab asks for at
the same moment (ten trainers built from the shipped snapshot in one worker on this 2-core
box). The bound is a liveness bound, not a speed claim."""
from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import process_server
from tests.e2e.test_skeleton_pages import ERRORS

pytestmark = pytest.mark.e2e

TABS = 10
BOUND_S = 240.0                   # liveness: a stall waits forever, a slow box takes ~1 min
FIGURE = ".st-key-gan_fig_samples .js-plotly-plot"     # the live chart, drawn from the view


@pytest.fixture
def process_app(monkeypatch):
    yield from process_server(monkeypatch, "_tabs.log")


def test_ten_tabs_opened_at_once_each_show_their_live_figure(browser, process_app):
    contexts = [browser.new_context(viewport={"width": 1200, "height": 800})
                for _ in range(TABS)]
    try:
        pages = [c.new_page() for c in contexts]
        started = time.time()
        for page in pages:        # all ten requests leave before any page has loaded
            page.goto(f"{process_app}/gan", wait_until="commit")
        sent = time.time() - started
        shown: dict[int, float] = {}
        while len(shown) < TABS and time.time() - started < BOUND_S:
            for i, page in enumerate(pages):
                if i not in shown and page.locator(FIGURE).count():
                    shown[i] = time.time() - started
            pages[0].wait_for_timeout(250)
        missing = sorted(set(range(TABS)) - set(shown))
        assert not missing, f"tabs {missing} showed no figure in {BOUND_S:.0f} s ({shown})"
        for page in pages:
            assert page.locator(ERRORS).count() == 0
            assert "Traceback" not in page.locator("body").inner_text()
            assert page.get_by_text("Iteration").count() >= 1      # the status line too
        print(f"{TABS} tabs opened within {sent:.1f} s: figures after "
              f"{min(shown.values()):.1f} .. {max(shown.values()):.1f} s")
    finally:
        for context in contexts:
            context.close()
