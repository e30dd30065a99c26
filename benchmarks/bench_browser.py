"""`python -m benchmarks browser`: what a student feels, in headless Chromium, as a ratio to a
bare Streamlit page measured in the same run (the floor: one slider, a 200x200 Plotly contour
and a 300-point path).

Per page: (a) first paint: navigation -> the page stops changing; (b) the median of 7 moves of
the page's first slider (key press -> the page stops changing); (c) a preset change; plus the
Plotly JSON bytes of one full rerun (server side, AppTest). "Stops changing": no script or
fragment run in progress (the app root's data-test-script-state), no stale element, status
widget or skeleton, and no DOM mutation for 400 ms; the time is that of the last mutation. Only run when asked (needs Debian's chromium).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks import Measurement
from ui.topics import ROOT, TOPICS

EXPLICIT = True           # benchmarks/__main__.py runs this module only when named
MOVES = 7
QUIET_MS = 400
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"]
# a script or fragment run in progress: Streamlit's own run state on the app root (what its
# e2e tests wait on), stale elements, the status widget or skeletons. Without the run state a
# page that computes > 400 ms between two messages (convolution's first run) read as settled
# before its sliders existed.
RUNNING = ('[data-testid="stApp"]:not([data-test-script-state="notRunning"])'
           ':not([data-test-script-state="compilationError"])')
BUSY = (f'{RUNNING}, [data-stale="true"], [data-testid="stStatusWidget"], '
        '[data-testid="stSkeleton"]')

FLOOR_PAGE = '''
import numpy as np
import plotly.graph_objects as go
import streamlit as st
st.title("Floor")
a = st.slider("a", 0.0, 2.0, 1.0, 0.05, key="a")
x = np.linspace(-3, 3, 200)
z = np.add.outer(x ** 2, a * x ** 2)
t = np.linspace(0, 1, 300)
fig = go.Figure([go.Contour(x=x, y=x, z=z), go.Scatter(x=3 * np.cos(9 * t) * (1 - t),
                 y=3 * np.sin(9 * t) * (1 - t), mode="lines+markers")])
st.plotly_chart(fig)
'''

# __lastRun: the last time a mutation saw the app running a script or fragment. A key press
# whose rerun has not started yet 400 ms later (a busy server) must not read as settled: the
# slider's own thumb moved at once and nothing else did yet (the classroom probe read 0.22x
# idle that way at N = 4).
WATCH_JS = """() => { window.__lastMut = performance.now(); window.__lastRun = 0;
  new MutationObserver(() => { const t = performance.now(); window.__lastMut = t;
      const app = document.querySelector('[data-testid="stApp"]');
      if (app && app.getAttribute('data-test-script-state') === 'running') window.__lastRun = t; })
    .observe(document.body, {subtree: true, childList: true, attributes: true,
                             characterData: true}); }"""
RUN_START_TIMEOUT_S = 15.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run <script>` on a free loopback port."""

    def __init__(self, script: str, cwd: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"], cwd=cwd,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "DLPLAY_DEVICE": "cpu", "PYTHONPATH": str(ROOT)})
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).read() == b"ok":
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"{script} did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _settled_at(page, t0: float, timeout_s: float = 120.0, rerun: bool = False) -> float:
    """Seconds from t0 (performance.now() ms) to the last DOM change before the page went
    quiet. rerun=True (after an input that reruns the script): first wait until a run has
    started after t0 (up to RUN_START_TIMEOUT_S), so a late rerun is not missed."""
    deadline = time.time() + timeout_s
    page.wait_for_timeout(100)
    if rerun:
        start_by = time.time() + RUN_START_TIMEOUT_S
        while time.time() < start_by and page.evaluate("(t0) => window.__lastRun < t0", t0):
            page.wait_for_timeout(20)
    while time.time() < deadline:
        state = page.evaluate(
            "(sel) => [document.querySelectorAll(sel).length, performance.now() - "
            "window.__lastMut, window.__lastMut]", BUSY)
        if state[0] == 0 and state[1] > QUIET_MS:
            return (state[2] - t0) / 1e3
        page.wait_for_timeout(50)
    return float("nan")


def _now(page) -> float:
    return page.evaluate("() => performance.now()")


def first_paint(page, url: str) -> float:
    page.goto("about:blank")
    t0 = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("h1", timeout=120_000)
    page.evaluate(WATCH_JS)
    rest = _settled_at(page, _now(page))
    return time.perf_counter() - t0 + max(rest, 0.0)


SLIDER = '[data-testid="stMainBlockContainer"] input[type="range"]'   # Streamlit 1.67's slider


def _movable_slider(page, selector: str):
    """The first enabled slider of the main area that a key press really moves (a disabled
    or single-valued one would never start a rerun), or None."""
    for i in range(min(page.locator(selector).count(), 6)):
        thumb = page.locator(selector).nth(i)
        if thumb.is_disabled():
            continue
        before = thumb.input_value()
        thumb.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
        if thumb.input_value() != before:
            _settled_at(page, _now(page))
            return thumb
    return None


def slider_moves(page, selector: str = SLIDER) -> float:
    """Median seconds from a key press on the first movable slider to the last DOM change
    before the page is quiet (NaN when no slider moves)."""
    thumb = _movable_slider(page, selector)
    if thumb is None:
        return float("nan")
    times = []
    for i in range(MOVES):
        thumb.focus()
        t0 = _now(page)
        page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
        took = _settled_at(page, t0, rerun=True)
        times.append(took if took > 0 else float("nan"))
    return statistics.median(times)


def preset_change(page, slug: str) -> float:
    from ui.page_keys import preset_key
    box = page.locator(f".st-key-{preset_key(slug)} input")
    if box.count() == 0:
        return float("nan")
    box.click()
    options = page.get_by_role("option")
    if options.count() < 2:
        return float("nan")
    t0 = _now(page)
    options.nth(1).click()
    return _settled_at(page, t0, rerun=True)


def figure_bytes(slug: str) -> int:
    """Plotly JSON bytes of one full run of the page with defaults (what a rerun sends)."""
    from streamlit.testing.v1 import AppTest
    logging.disable(logging.WARNING)
    try:
        at = AppTest.from_file(str(ROOT / "playground.py"), default_timeout=120)
        at.run()
        at.switch_page(f"topics/{slug}/page.py")
        at.run()
        return sum(len(c.proto.spec) for c in at.get("plotly_chart"))
    finally:
        logging.disable(logging.NOTSET)


def run_all() -> list[tuple[str, Measurement]]:
    from playwright.sync_api import sync_playwright
    exe = shutil.which("chromium")
    if exe is None:
        raise RuntimeError("needs Debian's chromium (apt-get install -y chromium)")
    rows: list[tuple[str, Measurement]] = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "floor.py").write_text(FLOOR_PAGE)
        floor_srv, app_srv = Server("floor.py", Path(tmp)), Server("app.py", ROOT)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=exe, args=ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                first_paint(page, floor_srv.url)               # warm-up
                floor_paint = first_paint(page, floor_srv.url)
                floor = slider_moves(page)
                rows.append(("browser: floor page, slider move (median of 7)",
                             Measurement(floor * 1e3, "ms", "one slider, 200x200 contour, "
                                                            "300-point path")))
                rows.append(("browser: floor page, first paint",
                             Measurement(floor_paint * 1e3, "ms", "")))
                ratios = []
                only = [w for w in os.environ.get("DLPLAY_BENCH_PAGES", "").split(",") if w]
                for topic in [t for t in TOPICS if (not only or t.slug in only)]:
                    url = f"{app_srv.url}/{topic.slug}"
                    first_paint(page, url)                     # warm caches and imports
                    paint = first_paint(page, url)
                    move = slider_moves(page)
                    preset = preset_change(page, topic.slug)
                    size = figure_bytes(topic.slug)
                    ratios.append(move / floor)
                    rows.append((f"browser: {topic.slug}",
                                 Measurement(move / floor, "x floor",
                                             f"slider {move * 1e3:.0f} ms (floor "
                                             f"{floor * 1e3:.0f} ms); preset "
                                             f"{preset / floor:.1f}x floor ({preset:.2f} s); "
                                             f"first paint {paint:.2f} s; figures "
                                             f"{size / 1024:.0f} KB per full run")))
                rows.append(("browser: median over pages, slider move",
                             Measurement(statistics.median(ratios), "x floor",
                                         "target <= 1.3x; every page <= 1.5x")))
                browser.close()
        finally:
            floor_srv.stop()
            app_srv.stop()
    return rows


_RESULTS: list[tuple[str, Measurement]] = []


def _all() -> Measurement:
    _RESULTS.extend(run_all())
    print("\n".join(f"| {name} | {m.value:,.3g} {m.unit} | {m.note} |" for name, m in _RESULTS))
    return Measurement(len(_RESULTS), "rows", "printed above")


BENCHMARKS = {"browser: every page vs the floor": _all}

if __name__ == "__main__":
    print(json.dumps([(n, m.value, m.unit, m.note) for n, m in run_all()], indent=1))
