"""DLPLAY_TRAINERS=process in a real server and Chromium: the harness page's trainer trains in
a worker process (a child of the server), and closing the tab frees it: Streamlit's session
manager reports the session gone and the janitor releases its trainer after the lease
(DLPLAY_LEASE_S=3 here; 40 s by default)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, wait_idle

pytestmark = pytest.mark.e2e

PORT = 8652
PLAY = ".st-key-h__play button"
STEPS = re.compile(r"steps=(\d+)")


@pytest.fixture
def process_server(tmp_path):
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "tests/pages/harness_widgets.py",
             "--server.headless", "true", "--server.address", "127.0.0.1",
             "--server.port", str(PORT), "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "DLPLAY_DEVICE": "cpu", "PYTHONPATH": str(ROOT),
                 "DLPLAY_TRAINERS": "process", "DLPLAY_LEASE_S": "3"})
        url = f"http://127.0.0.1:{PORT}"
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        else:
            proc.kill()
            pytest.fail(f"streamlit did not start: {log_path.read_text()[-2000:]}")
        try:
            yield url, proc, log_path
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _workers(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for kid in (task / "children").read_text().split():
            cmd = Path(f"/proc/{kid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"engine.worker_loop" in cmd:
                kids.append(int(kid))
    return kids


def _steps(page) -> int:
    m = STEPS.search(page.locator('[data-testid="stMain"]').inner_text())
    return int(m.group(1)) if m else -1


def test_a_worker_trains_and_a_closed_tab_releases_its_trainer(browser, process_server):
    url, proc, log_path = process_server
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(url)
    wait_idle(page, heading=False)
    page.locator(PLAY).click()
    deadline = time.time() + 60
    while _steps(page) < 50 and time.time() < deadline:
        page.wait_for_timeout(200)
    assert _steps(page) >= 50
    assert len(_workers(proc.pid)) == 1                   # the trainer lives in a child
    assert "Traceback" not in log_path.read_text()
    context.close()                                       # the tab goes away
    deadline = time.time() + 45
    while "released 1 trainer(s)" not in log_path.read_text() and time.time() < deadline:
        time.sleep(0.5)
    assert "released 1 trainer(s) of closed sessions" in log_path.read_text()
    assert "Traceback" not in log_path.read_text()
