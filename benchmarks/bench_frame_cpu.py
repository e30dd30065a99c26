"""`python -m benchmarks frame_cpu`: the student's browser CPU per playing frame, per live
page, three ways measured side by side in one run (headless Chromium, `streamlit run app.py`
with DLPLAY_TRAINERS=process, a fresh server per way):

  canvas   frames fetched from the frame route; the canvas draws what it can and plotly.js
           (Plotly.react, inside the same component) the rest (ReLU's 3-D surface): the app
  plotly   frames fetched, every figure drawn by Plotly.react (DLPLAY_LIVE_CANVAS=0)
  rerun    no fetching: the live fragment reruns per frame (DLPLAY_PUSH=0), the way a page
           that fell back played before

Per page: Play, 4 s to warm up, then the main thread's task time (the DevTools Protocol's
Performance.getMetrics TaskDuration) over WINDOW_S seconds divided by the frames shown in
that window (changes of the "Iteration N" status line, seen by a MutationObserver).
DLPLAY_BENCH_PAGES=gan,relu_3d picks views (relu_3d: the ReLU page showing its 3-D
surface, drawn by plotly.js; every other live tab by its live_training key, e.g. lg_race;
DLPLAY_BENCH_PAGES=all: every view). Without it the three views the README first measured
run. Only run when asked (needs chromium)."""
from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager

from urllib.parse import quote_plus

from benchmarks import Measurement
from ui.live_tabs import live_keys
from ui.topics import ROOT

EXPLICIT = True
WINDOW_S = 10.0
WARMUP_S = 4.0
# view -> (url path, live_training key, the option clicked before Play)
PAGES = {"gan": ("gan", "gan", None), "relu_regions": ("relu_regions", "rr_train", None),
         "relu_3d": ("relu_regions", "rr_train", "3-D surface"),
         "vae": ("vae", "vae_live", None)}
DEFAULT = ("gan", "relu_regions", "relu_3d")
# the attention page opens on its shipped model, which does not train
SETTINGS = {"at_train": "&at_source=" + quote_plus("train from scratch")}


def _every_view() -> dict[str, tuple[str, str, str | None]]:
    """PAGES plus every other live tab (ui.live_tabs.live_keys()), named by its key and
    opened on its tab (?<slug>_view=)."""
    from ui import lesson_library as library
    views = dict(PAGES)
    covered = {key for _, key, _ in PAGES.values()}
    for (slug, tab), key in live_keys().items():
        if key in covered:
            continue
        title = next(v.title for v in library.PAGES[slug].VIEWS if v.key == tab)
        views[key] = (f"{slug}?{slug}_view={quote_plus(title)}{SETTINGS.get(key, '')}", key, None)
    return views
WAYS = {"canvas": {}, "plotly": {"DLPLAY_LIVE_CANVAS": "0"}, "rerun": {"DLPLAY_PUSH": "0"}}
# frames shown: fetched frames painted (the component counts them) or, rerunning, changes of
# the "Iteration N" status line
# (the component's count restarts with each poller: its changes are counted, not its value)
COUNT_JS = """() => { window.__frames = 0; window.__fetched = 0; let last = null;
  const main = document.querySelector('[data-testid="stMain"]');
  const read = () => { const m = main.innerText.match(/Iteration ([\\d,]+)/);
    const v = m && m[1]; if (v && v !== last) { last = v; window.__frames++; } };
  new MutationObserver(read).observe(main, {subtree: true, childList: true,
                                            characterData: true});
  new MutationObserver((ms) => { window.__fetched += ms.length; }).observe(document.body,
      {attributes: true, attributeFilter: ['data-dlplay-frames']}); }"""
FRAMES_JS = "(push) => push ? window.__fetched : window.__frames"


@contextmanager
def _env(extra: dict[str, str]):
    old = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _task_s(cdp) -> float:
    return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                if m["name"] == "TaskDuration")


def _per_frame(browser, url: str, key: str, option: str | None,
               push: bool) -> tuple[float, int]:
    """(ms of main-thread task time per frame, frames in the window) for one view."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(url)
        play = f".st-key-{key}__play button"
        page.wait_for_selector(play, timeout=180_000)
        page.wait_for_timeout(3000)
        if option:
            page.locator('[data-testid="stButtonGroup"] button', has_text=option).first.click()
            page.wait_for_timeout(4000)
        page.locator(play).click()
        page.wait_for_function("(sel) => document.querySelector(sel).innerText.includes"
                               "('Pause')", arg=play, timeout=60_000)
        page.wait_for_timeout(WARMUP_S * 1e3)
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.evaluate(COUNT_JS)
        t0 = _task_s(cdp)
        time.sleep(WINDOW_S)
        frames = page.evaluate(FRAMES_JS, push)
        cpu = _task_s(cdp) - t0
        page.locator(play).click()
        return (1e3 * cpu / frames if frames else float("nan")), frames
    finally:
        context.close()


def measure() -> dict[tuple[str, str], tuple[float, int]]:
    from playwright.sync_api import sync_playwright

    from benchmarks.bench_browser import ARGS, Server
    views = _every_view()
    wanted = [p for p in os.environ.get("DLPLAY_BENCH_PAGES", ",".join(DEFAULT)).split(",") if p]
    if wanted == ["all"]:
        wanted = list(views)
    out = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        try:
            for way, extra in WAYS.items():
                with _env({"DLPLAY_TRAINERS": "process", **extra}):
                    server = Server("app.py", ROOT)
                try:
                    for view in wanted:
                        path, key, option = views[view]
                        out[(view, way)] = _per_frame(browser, f"{server.url}/{path}", key,
                                                      option, push=way != "rerun")
                finally:
                    server.stop()
        finally:
            browser.close()
    return out


def _rows() -> dict:
    results = measure()
    rows = {}
    for (path, way), (ms, frames) in results.items():
        base = results.get((path, "canvas"), (float("nan"), 0))[0]
        rows[f"frame_cpu {path} {way}"] = Measurement(
            ms, "ms/frame", f"{frames} frames in {WINDOW_S:.0f} s; {ms / base:.2f}x canvas")
    return rows


class _Lazy(dict):
    """Measured once, on first access (the three servers share one run)."""

    def items(self):
        if not len(self):
            self.update(_rows())
        return [(k, (lambda v=v: v)) for k, v in dict.items(self)]


BENCHMARKS = _Lazy()
