"""`python -m benchmarks classroom [--students N[,N...]] [--trainers inline|process|ray]
[--pages=gan,vae,relu_regions] [--cycles] [--soak=MINUTES] [--split]`: a class on one server. (Write --pages=... as one
word: a bare page name would also select the benchmark module of that name.)

One `streamlit run app.py` server (trainers where --trainers / DLPLAY_TRAINERS says); N
students, each a headless-Chromium context on a live page
(GAN, VAE, ReLU regions in turn) with Play pressed; one probe student moving the first slider
of the gradient-descent page. For each N it prints the probe's slider latency against the same
probe on the idle server, frames/s and it/s per student (worst and median), total it/s, the
server process's CPU time per delivered live frame (independent of where the browsers run),
the CPU of its worker processes (DLPLAY_TRAINERS=process), the RSS of both, and the error
boxes seen. The browsers run on the same machine as the server: on a 2-core box wall times are
pessimistic, the server CPU per frame is not. With --split the server and its workers run on
the first CPU and the browsers on the others (the server's own capacity on one core). With
--cycles it also opens and closes a student's tab 30 times (Play pressed each time) and
prints the RSS growth of the server and its workers once the closed sessions' trainers are
released. With --soak=MINUTES only one student
plays for that long (RSS and it/s every minute). Only run when named.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Iterator

from benchmarks import Measurement
from benchmarks.bench_browser import ARGS, Server, first_paint, slider_moves
from ui.topics import ROOT

EXPLICIT = True
LIVE_PAGES = ("gan", "vae", "relu_regions")
WINDOW_S = 30.0
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
COUNT_JS = """() => { window.__frames = 0; window.__last = null; window.__iters = [];
  setInterval(() => { const m = document.body.innerText.match(/Iteration ([\\d,]+)/);
    if (!m) return; const it = parseInt(m[1].replace(/,/g, ''));
    if (it !== window.__last) { window.__frames += 1; window.__last = it;
                                 window.__iters.push([performance.now(), it]); } }, 40); }"""


CYCLES = 30


def _arg(name: str) -> str | None:
    argv = sys.argv
    for i, a in enumerate(argv):
        if a.startswith(f"--{name}"):
            return a.split("=", 1)[1] if "=" in a else argv[i + 1]
    return None


def _students() -> list[int]:
    value = _arg("students") or os.environ.get("DLPLAY_STUDENTS", "1,2,4")
    return [int(v) for v in value.split(",")]


def _live_pages() -> tuple[str, ...]:
    """--pages gan,relu_regions (or DLPLAY_BENCH_PAGES): the live pages students play."""
    value = _arg("pages") or os.environ.get("DLPLAY_BENCH_PAGES")
    return tuple(value.split(",")) if value else LIVE_PAGES


def _trainers() -> str:
    return _arg("trainers") or os.environ.get("DLPLAY_TRAINERS", "inline")


def _proc_cpu_s(pid: int, reaped: bool = True) -> float:
    """utime + stime of the process (and of its reaped children), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in fields[11:15 if reaped else 13])
    return ticks / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return kids


def _sample(pid: int) -> dict[str, float]:
    """CPU seconds and RSS MB of the web process and of its worker processes (children)."""
    out = {"web_cpu": _proc_cpu_s(pid, reaped=False), "web_rss": _rss_mb(pid),
           "worker_cpu": 0.0, "worker_rss": 0.0}
    for kid in _children(pid):
        try:
            out["worker_cpu"] += _tree_cpu_s(kid)
            out["worker_rss"] += _rss_mb(kid)
        except (FileNotFoundError, ProcessLookupError, IndexError):
            pass
    return out


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


@contextlib.contextmanager
def _split_cpus(server_pid: int, split: bool) -> Iterator[str]:
    """--split: the server (every thread of it, so the workers it starts later too) on the
    first CPU, this process and the browsers it launches on the others: the server's own
    capacity, as if the students' browsers ran on their own machines (a 2-core box: one core
    each). Restored afterwards."""
    cpus = sorted(os.sched_getaffinity(0))
    if not split or len(cpus) < 2:
        yield ""
        return
    for task in Path(f"/proc/{server_pid}/task").iterdir():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(task.name), {cpus[0]})
    os.sched_setaffinity(0, set(cpus[1:]))
    try:
        yield f" [split: server on CPU {cpus[0]}, browsers on {len(cpus) - 1}]"
    finally:
        os.sched_setaffinity(0, set(cpus))


def run_class(n: int) -> list[tuple[str, Measurement]]:
    from playwright.sync_api import sync_playwright
    mode, pages = _trainers(), _live_pages()
    os.environ["DLPLAY_TRAINERS"] = mode                 # the server inherits it
    server = Server("app.py", ROOT)
    try:
        with _split_cpus(server.proc.pid, "--split" in sys.argv) as where, \
                sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            probe = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            first_paint(probe, f"{server.url}/gradient_descent")
            idle = slider_moves(probe)
            students = []
            for i in range(n):
                page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
                first_paint(page, f"{server.url}/{pages[i % len(pages)]}")
                page.evaluate(COUNT_JS)
                students.append(page)
            for page in students:
                _play(page)
            time.sleep(3.0)                                   # past the first frames
            for page in students:
                page.evaluate("() => { window.__frames = 0; window.__iters = []; }")
            s0, t0 = _sample(server.proc.pid), time.perf_counter()
            busy = slider_moves(probe)
            time.sleep(max(0.0, WINDOW_S - (time.perf_counter() - t0)))
            s1, wall = _sample(server.proc.pid), time.perf_counter() - t0
            fps, its, errors = [], [], 0
            for page in students:
                frames, iters = page.evaluate("() => [window.__frames, window.__iters]")
                fps.append(frames / wall)
                its.append((iters[-1][1] - iters[0][1]) / ((iters[-1][0] - iters[0][0]) / 1e3)
                           if len(iters) > 1 else 0.0)
                errors += page.locator(ERRORS).count()
            browser.close()
    finally:
        server.stop()
    frames = sum(fps) * wall
    web_cpu = s1["web_cpu"] - s0["web_cpu"]
    worker_cpu = s1["worker_cpu"] - s0["worker_cpu"]
    tag = f"classroom ({mode}{where}): {n} student{'s' if n > 1 else ''}"
    return [
        (f"{tag}, probe slider", Measurement(busy / idle, "x idle",
                                             f"{busy * 1e3:.0f} ms vs {idle * 1e3:.0f} ms idle")),
        (f"{tag}, frames/s per student", Measurement(min(fps), "min",
                                                     f"median {statistics.median(fps):.2f}")),
        (f"{tag}, it/s per student", Measurement(min(its), "min",
                                                 f"median {statistics.median(its):.0f}, total "
                                                 f"{sum(its):.0f} it/s")),
        (f"{tag}, web-process CPU per live frame", Measurement(
            web_cpu / frames * 1e3 if frames else float("nan"), "ms",
            f"web process {web_cpu / wall:.0%} of one core over {wall:.0f} s, RSS "
            f"{s1['web_rss']:.0f} MB; workers {worker_cpu / wall:.0%} of one core, RSS "
            f"{s1['worker_rss']:.0f} MB; error boxes {errors}")),
    ]


def run_cycles(cycles: int = CYCLES) -> list[tuple[str, Measurement]]:
    """Open a live page, press Play, close the tab; `cycles` times. RSS of the web process and
    its workers before, right after, and once the janitor has released the closed sessions'
    trainers (DLPLAY_LEASE_S shortens its lease for this run)."""
    from playwright.sync_api import sync_playwright
    mode, pages = _trainers(), _live_pages()
    os.environ["DLPLAY_TRAINERS"] = mode
    os.environ.setdefault("DLPLAY_LEASE_S", "10")
    server = Server("app.py", ROOT)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)

            def one(i: int) -> None:
                ctx = browser.new_context(viewport={"width": 1200, "height": 800})
                page = ctx.new_page()
                first_paint(page, f"{server.url}/{pages[i % len(pages)]}")
                _play(page)
                page.wait_for_timeout(2000)
                ctx.close()

            for i in range(len(pages)):                     # warm: imports, caches, workers
                one(i)
            time.sleep(float(os.environ["DLPLAY_LEASE_S"]) + 15)
            before = _sample(server.proc.pid)
            for i in range(cycles):
                one(i)
            after = _sample(server.proc.pid)
            time.sleep(float(os.environ["DLPLAY_LEASE_S"]) + 15)
            settled = _sample(server.proc.pid)
            browser.close()
    finally:
        server.stop()

    def total(s: dict) -> float:
        return s["web_rss"] + s["worker_rss"]
    return [(f"classroom ({mode}): {cycles} open/close cycles, RSS growth", Measurement(
        total(settled) - total(before), "MB",
        f"web {before['web_rss']:.0f} -> {after['web_rss']:.0f} -> {settled['web_rss']:.0f} MB, "
        f"workers {before['worker_rss']:.0f} -> {after['worker_rss']:.0f} -> "
        f"{settled['worker_rss']:.0f} MB (before, after the cycles, after the lease); "
        f"target < 50"))]


def run_soak(minutes: float) -> list[tuple[str, Measurement]]:
    """One student plays the first live page for `minutes`: every minute the RSS of the web
    process and its workers and the it/s of that minute (from the page's Iteration counter).
    Targets: RSS growth < 50 MB, it/s stable within 20%."""
    from playwright.sync_api import sync_playwright
    mode, pages = _trainers(), _live_pages()
    os.environ["DLPLAY_TRAINERS"] = mode
    server = Server("app.py", ROOT)
    samples = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
            first_paint(page, f"{server.url}/{pages[0]}")
            page.evaluate(COUNT_JS)
            _play(page)
            time.sleep(60.0)                                    # past start-up
            end = time.perf_counter() + minutes * 60.0
            prev = _sample(server.proc.pid)
            while time.perf_counter() < end:
                page.evaluate("() => { window.__iters = []; window.__frames = 0; }")
                t0 = time.perf_counter()
                time.sleep(60.0)
                frames, iters = page.evaluate("() => [window.__frames, window.__iters]")
                s = _sample(server.proc.pid)
                rate = ((iters[-1][1] - iters[0][1]) / ((iters[-1][0] - iters[0][0]) / 1e3)
                        if len(iters) > 1 else 0.0)
                cpu = s["worker_cpu"] - prev["worker_cpu"]     # worker CPU seconds this minute
                steps = iters[-1][1] - iters[0][1] if len(iters) > 1 else 0
                samples.append((s["web_rss"] + s["worker_rss"], rate,
                                frames / (time.perf_counter() - t0),
                                steps / cpu if cpu > 0 else 0.0, s["web_rss"]))
                prev = s
                print(f"soak minute {len(samples)}: RSS {samples[-1][0]:.0f} MB (web "
                      f"{s['web_rss']:.0f}), {rate:.0f} it/s, {samples[-1][3]:.0f} it per worker "
                      f"CPU s, {samples[-1][2]:.2f} frames/s", flush=True)
            errors = page.locator(ERRORS).count()
            browser.close()
    finally:
        server.stop()
    rss = [row[0] for row in samples]
    rates = [row[1] for row in samples]
    per_cpu = [row[3] for row in samples]
    web = [row[4] for row in samples]

    def spread(xs: list[float]) -> float:
        return (max(xs) - min(xs)) / statistics.median(xs) if xs and statistics.median(xs) else float("nan")
    return [(f"classroom ({mode}): soak of one student on {pages[0]}, {len(samples)} min",
             Measurement(rss[-1] - rss[0], "MB RSS growth",
                         f"RSS {rss[0]:.0f} -> {rss[-1]:.0f} MB (web + workers, target growth "
                         f"< 50; web {web[0]:.0f} -> {web[-1]:.0f}); it/s per minute median "
                         f"{statistics.median(rates):.0f}, min {min(rates):.0f}, max "
                         f"{max(rates):.0f} (spread {spread(rates):.0%}, target within 20%); "
                         f"iterations per worker CPU second median {statistics.median(per_cpu):.0f} "
                         f"(spread {spread(per_cpu):.0%}: the engine's own speed, whatever else "
                         f"loads the machine); error boxes {errors}"))]


def _all() -> Measurement:
    runs = [functools.partial(run_class, n) for n in _students()]
    if _arg("soak"):
        runs = [functools.partial(run_soak, float(_arg("soak")))]
    if "--cycles" in sys.argv:
        runs.append(functools.partial(run_cycles, int(_arg("cycles-n") or CYCLES)))
    rows = 0
    for run in runs:                       # print as they come: a long run may be cut short
        for name, m in run():
            print(f"| {name} | {m.value:,.3g} {m.unit} | {m.note} |", flush=True)
            rows += 1
    return Measurement(rows, "rows", "printed above")


BENCHMARKS = {"classroom: N students playing live pages": _all}
