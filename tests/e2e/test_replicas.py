"""Two Streamlit replicas behind nginx (deploy/replicas.py): sessions spread over both
replicas, each browser stays on one (its websocket, its media files), a page renders through
the proxy and a download served from the session's replica arrives."""
from __future__ import annotations

import shutil
import socket

import pytest

from tests.e2e.conftest import _need
from tests.e2e.test_skeleton_pages import ERRORS, settle

pytestmark = pytest.mark.e2e


def _free_block(n: int) -> int:
    """A port p with p..p+n free on the loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n < 65535 and all(_free(base + i) for i in range(n + 1)):
            return base
    raise RuntimeError("no free port block")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@pytest.fixture(scope="module")
def proxy_url():
    if shutil.which("nginx") is None and not __import__("os").path.exists("/usr/sbin/nginx"):
        _need("nginx", "apt-get install -y nginx")
    from deploy.replicas import Deployment
    deployment = Deployment(_free_block(3), 2).start()
    try:
        yield deployment.url
    finally:
        deployment.stop()


def _replicas_seen(context, page, url: str) -> set[str]:
    seen: set[str] = set()
    page.on("response", lambda r: seen.add(r.headers.get("x-dlplay-replica", "")))
    page.goto(url)
    page.wait_for_selector("h1", timeout=120_000)
    settle(page)
    seen.discard("")
    return seen


def test_sessions_spread_and_each_browser_stays_on_one_replica(browser, proxy_url):
    """New browsers get a random route: keep opening them until both replicas served one (at
    most 12: all on one replica by chance has probability 2 / 2**12)."""
    per_browser: list[set[str]] = []
    while len(per_browser) < 12 and len(set().union(*per_browser)) < 2:
        context = browser.new_context(viewport={"width": 1200, "height": 800})
        try:
            page = context.new_page()
            per_browser.append(_replicas_seen(context, page, proxy_url))
            assert page.locator(ERRORS).count() == 0
        finally:
            context.close()
    assert all(len(s) == 1 for s in per_browser), per_browser     # sticky
    assert len(set().union(*per_browser)) == 2, per_browser         # both replicas serve


def test_page_and_download_through_the_proxy(browser, proxy_url):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    try:
        page = context.new_page()
        seen = _replicas_seen(context, page, f"{proxy_url}/gradient_descent")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)   # the websocket works
        assert len(seen) == 1 and page.locator(ERRORS).count() == 0
        page.get_by_text("Export", exact=True).click()
        with page.expect_download(timeout=60_000) as info:
            page.get_by_role("button", name="Download data (CSV)").click()
        path = info.value.path()
        text = open(path, encoding="utf-8").read()
        assert text.startswith("method,step,x1,x2") and text.count("\n") > 100
    finally:
        context.close()
