"""DLPLAY_TRAINERS=process in a real server and Chromium: the harness page's trainer trains in
a worker process (a child of the server), and closing the tab frees it: Streamlit's session
manager reports the session gone and the janitor releases its trainer after the lease
(DLPLAY_LEASE_S=3 here; 40 s by default)."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import _start, log_path, wait_idle

pytestmark = pytest.mark.e2e

LOG = "_workers.log"
PLAY = ".st-key-h__play button"
STEPS = re.compile(r"steps=(\d+)")


@pytest.fixture
def process_server(monkeypatch):
    """The harness page on its own server, trainers in worker processes, a 3 s lease."""
    monkeypatch.setenv("DLPLAY_TRAINERS", "process")
    monkeypatch.setenv("DLPLAY_LEASE_S", "3")
    server = _start("tests/pages/harness_widgets.py", LOG)
    url = next(server)
    yield url, _server_pid(url), log_path(LOG)
    next(server, None)


def _server_pid(url: str) -> int:
    """The pid of the streamlit process listening on url's port (a child of this test)."""
    port = url.rsplit(":", 1)[1]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"streamlit" in b" ".join(cmd) and port.encode() in cmd:
                return int(proc.name)
    raise LookupError(f"no streamlit process on port {port}")


def _workers(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for kid in (task / "children").read_text().split():
            cmd = Path(f"/proc/{kid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"live.worker_loop" in cmd:
                kids.append(int(kid))
    return kids


def _steps(page) -> int:
    m = STEPS.search(page.locator('[data-testid="stMain"]').inner_text())
    return int(m.group(1)) if m else -1


def test_a_worker_trains_and_a_closed_tab_releases_its_trainer(browser, process_server):
    url, pid, log_path = process_server
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(url)
    wait_idle(page, heading=False)
    page.locator(PLAY).click()
    deadline = time.time() + 60
    while _steps(page) < 50 and time.time() < deadline:
        page.wait_for_timeout(200)
    assert _steps(page) >= 50
    assert len(_workers(pid)) == 1                   # the trainer lives in a child
    assert "Traceback" not in log_path.read_text()
    context.close()                                       # the tab goes away
    deadline = time.time() + 45
    while "released 1 trainer(s)" not in log_path.read_text() and time.time() < deadline:
        time.sleep(0.5)
    assert "released 1 trainer(s) of closed sessions" in log_path.read_text()
    assert "Traceback" not in log_path.read_text()
