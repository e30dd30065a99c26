"""Real-browser fixtures: a `streamlit run app.py` server on a free loopback port, and
Debian's Chromium driven by Playwright (never a browser Playwright downloads itself).

On CI (CI=true) these tests must run: a missing Chromium is a failure. On a developer
machine without Chromium they are skipped with the reason."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--no-first-run", "--disable-sync", "--disable-quic"]
# Tests never write tracked files: their screenshots go to a git-ignored folder.
# scripts/refresh_screenshots.sh points DLPLAY_SCREENSHOTS at assets/screenshots on purpose.
SCREENSHOTS = Path(os.environ.get("DLPLAY_SCREENSHOTS",
                                  ROOT / "tests" / "e2e" / "_artifacts" / "screenshots"))


def _need(what: str, reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required on CI: {reason}")
    pytest.skip(f"{what} not available: {reason}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_path(log_name: str) -> Path:
    """Where a server started as `log_name` ("_server.log") writes: one file per pytest-xdist
    worker ("_server.gw1.log"), so servers of parallel workers never share a log."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = Path(log_name)
    return ROOT / "tests" / "e2e" / (f"{name.stem}.{worker}{name.suffix}" if worker else log_name)


def _start(script: str, log_name: str):
    """Start `streamlit run <script>` on a free loopback port; yield its URL; stop it."""
    port = _free_port()
    log = open(log_path(log_name), "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "DLPLAY_DEVICE": os.environ.get("DLPLAY_DEVICE", "cpu"),
             "PYTHONPATH": str(ROOT)})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail(f"streamlit did not start: see {log.name}")
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def server_url():
    yield from _start("app.py", "_server.log")


@pytest.fixture
def fresh_server_url():
    """A server that has served nothing yet (for first-request behaviour)."""
    yield from _start("app.py", "_fresh.log")


def process_server(monkeypatch, log_name: str):
    """A fresh server whose trainers run in worker processes (DLPLAY_TRAINERS=process), for a
    function-scoped fixture: `yield from process_server(monkeypatch, "_x.log")`."""
    monkeypatch.setenv("DLPLAY_TRAINERS", "process")
    yield from _start("app.py", log_name)


@pytest.fixture(scope="session")
def harness_url():
    """The shared-widget harness page (tests/pages/harness_widgets.py) on its own server."""
    yield from _start("tests/pages/harness_widgets.py", "_harness.log")


@pytest.fixture(scope="session")
def browser():
    exe = shutil.which("chromium")
    if exe is None:
        _need("chromium", "install Debian's package: apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("playwright", "pip install -r requirements-dev.txt")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    context.close()


# A script run in progress shows in the DOM as: elements of the previous run marked
# data-stale="true" until the run replaces them, skeletons while a page is first drawn, and
# (only after ~500 ms of running, and not for every run) the status widget. Idle = none.
BUSY_JS = ("() => !!document.querySelector('[data-stale=\"true\"], "
           "[data-testid=\"stStatusWidget\"], [data-testid=\"stSkeleton\"]')")


def wait_idle(page, timeout_s: float = 90.0, heading: bool = True, quiet_s: float = 0.6) -> None:
    """Wait until the app is rendered and no script run is in progress: no stale element,
    no status widget and no skeleton for `quiet_s` seconds in a row. Raises when the page is
    still busy after `timeout_s` (e.g. a live fragment still playing)."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_s * 1000)
    if heading:
        page.wait_for_selector("h1", timeout=timeout_s * 1000)
    quiet_since, deadline = None, time.time() + timeout_s
    while time.time() < deadline:
        if page.evaluate(BUSY_JS):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since >= quiet_s:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the app was still running a script after {timeout_s:g} s")


def wait_for_counter(page, label: str, lo: int, hi: int, timeout_ms: int = 60_000) -> None:
    """Wait until the page's text "<label> N of ..." shows N - 1 in [lo, hi] (0-based index;
    e.g. label "Position" for the sliding window, "Snapshot" for the VAE replay)."""
    page.wait_for_function(
        "([label, lo, hi]) => { const m = document.body.innerText.match("
        "new RegExp(label + ' (\\\\d+) of'));"
        " return m && parseInt(m[1]) - 1 >= lo && parseInt(m[1]) - 1 <= hi; }",
        arg=[label, lo, hi], timeout=timeout_ms)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under pytest-xdist (--dist loadgroup) every real-browser test runs in one worker, one
    after another as without xdist: one app server and one Chromium at a time, beside the
    other worker's tests (two browsers and servers at once on a 2-core machine timed out)."""
    for item in items:
        if item.get_closest_marker("e2e") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group("e2e"))
