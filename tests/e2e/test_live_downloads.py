"""Downloads while a page trains live: the export sits outside the live fragment,
so ticks write nothing into Streamlit's media store, no media request fails, and a download
clicked during training arrives whole."""
from __future__ import annotations

import time

import pytest

from tests.e2e.test_skeleton_pages import ERRORS, settle

pytestmark = pytest.mark.e2e


def test_no_media_404_and_a_download_during_training(browser, server_url):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    failed: list[str] = []
    try:
        page = context.new_page()
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                if "/media/" in r.url and r.status >= 400 else None)
        page.goto(f"{server_url}/relu_regions")
        page.wait_for_selector(".st-key-rr_train__play button", timeout=120_000)
        settle(page)
        page.get_by_text("Export the regions", exact=False).first.click()
        page.locator(".st-key-rr_train__play button").click()
        time.sleep(8)                                      # ticks run while the export sits
        with page.expect_download(timeout=60_000) as info:
            page.get_by_role("button", name="Download data (CSV)").first.click()
        text = open(info.value.path(), encoding="utf-8").read()
        assert text.count("\n") > 10, text[:200]
        time.sleep(2)
        assert failed == [], failed
        assert page.locator(ERRORS).count() == 0
    finally:
        context.close()
