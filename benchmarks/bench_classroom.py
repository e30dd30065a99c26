"""`python -m benchmarks classroom [--students N[,N...]]`: a class on one server.

One `streamlit run app.py` server; N students, each a headless-Chromium context on a live page
(GAN, VAE, ReLU regions in turn) with Play pressed; one probe student moving the first slider
of the gradient-descent page. For each N it prints the probe's slider latency against the same
probe on the idle server, frames/s and it/s per student (worst and median), total it/s, the
server process's CPU time per delivered live frame (independent of where the browsers run),
its RSS, and the error boxes seen. The browsers run on the same machine as the server: on a
2-core box wall times are pessimistic, the server CPU per frame is not. Only run when named.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks import Measurement
from benchmarks.bench_browser import ARGS, Server, first_paint, slider_moves
from viz.topics import ROOT

EXPLICIT = True
LIVE_PAGES = ("gan", "vae", "relu_regions")
WINDOW_S = 30.0
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
COUNT_JS = """() => { window.__frames = 0; window.__last = null; window.__iters = [];
  setInterval(() => { const m = document.body.innerText.match(/Iteration ([\\d,]+)/);
    if (!m) return; const it = parseInt(m[1].replace(/,/g, ''));
    if (it !== window.__last) { window.__frames += 1; window.__last = it;
                                 window.__iters.push([performance.now(), it]); } }, 40); }"""


def _students() -> list[int]:
    argv = sys.argv
    for i, a in enumerate(argv):
        if a.startswith("--students"):
            value = a.split("=", 1)[1] if "=" in a else argv[i + 1]
            return [int(v) for v in value.split(",")]
    return [int(v) for v in os.environ.get("DLPLAY_STUDENTS", "1,2,4").split(",")]


def _proc_cpu_s(pid: int) -> float:
    """utime + stime of the process and its reaped children, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def _tree_cpu_s(pid: int) -> float:
    total = _proc_cpu_s(pid)
    for child in Path(f"/proc/{pid}/task").iterdir():
        kids = child / "children"
        if kids.exists():
            for kid in kids.read_text().split():
                try:
                    total += _tree_cpu_s(int(kid))
                except (FileNotFoundError, ProcessLookupError, IndexError):
                    pass
    return total


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _play(page) -> None:
    page.get_by_role("button", name=re.compile(r"^\s*Play\s*$")).first.click()


def run_class(n: int) -> list[tuple[str, Measurement]]:
    from playwright.sync_api import sync_playwright
    server = Server("app.py", ROOT)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            probe = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            first_paint(probe, f"{server.url}/gradient_descent")
            idle = slider_moves(probe)
            students = []
            for i in range(n):
                page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
                first_paint(page, f"{server.url}/{LIVE_PAGES[i % len(LIVE_PAGES)]}")
                page.evaluate(COUNT_JS)
                students.append(page)
            for page in students:
                _play(page)
            time.sleep(3.0)                                   # past the first frames
            for page in students:
                page.evaluate("() => { window.__frames = 0; window.__iters = []; }")
            cpu0, t0 = _tree_cpu_s(server.proc.pid), time.perf_counter()
            busy = slider_moves(probe)
            time.sleep(max(0.0, WINDOW_S - (time.perf_counter() - t0)))
            cpu1, wall = _tree_cpu_s(server.proc.pid), time.perf_counter() - t0
            fps, its, errors = [], [], 0
            for page in students:
                frames, iters = page.evaluate("() => [window.__frames, window.__iters]")
                fps.append(frames / wall)
                its.append((iters[-1][1] - iters[0][1]) / ((iters[-1][0] - iters[0][0]) / 1e3)
                           if len(iters) > 1 else 0.0)
                errors += page.locator(ERRORS).count()
            rss = _rss_mb(server.proc.pid)
            browser.close()
    finally:
        server.stop()
    frames = sum(fps) * wall
    tag = f"classroom: {n} student{'s' if n > 1 else ''}"
    return [
        (f"{tag}, probe slider", Measurement(busy / idle, "x idle",
                                             f"{busy * 1e3:.0f} ms vs {idle * 1e3:.0f} ms idle")),
        (f"{tag}, frames/s per student", Measurement(min(fps), "min",
                                                     f"median {statistics.median(fps):.2f}")),
        (f"{tag}, it/s per student", Measurement(min(its), "min",
                                                 f"median {statistics.median(its):.0f}, total "
                                                 f"{sum(its):.0f} it/s")),
        (f"{tag}, server CPU per live frame", Measurement(
            (cpu1 - cpu0) / frames * 1e3 if frames else float("nan"), "ms",
            f"{(cpu1 - cpu0) / wall:.0%} of one core over {wall:.0f} s; RSS {rss:.0f} MB; "
            f"error boxes {errors}")),
    ]


def _all() -> Measurement:
    rows = [r for n in _students() for r in run_class(n)]
    print("\n".join(f"| {name} | {m.value:,.3g} {m.unit} | {m.note} |" for name, m in rows))
    return Measurement(len(rows), "rows", "printed above")


BENCHMARKS = {"classroom: N students playing live pages": _all}
