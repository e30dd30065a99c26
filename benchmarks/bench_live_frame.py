"""What one live frame costs the web process in CPU time , per live page.

Each page at its defaults under AppTest, its live fragment rerun as a run_every tick does:
- inline (DLPLAY_TRAINERS=inline), paused: the frame's cost without training;
- process (DLPLAY_TRAINERS=process), playing: the trainer trains in a worker process between
  frames and the frame only fetches the latest view and draws it - what the web process pays
  per delivered frame in the hosted setup.
The CPU of the whole web process is counted (time.process_time: the script thread and the
receiver threads), not the workers'. Breakdown per frame (CPU of the script thread):
  view   handle.view(): wait + unpickle of the worker's TrainerView (inline: the snapshot)
  draw   the page's draw(view, tick): figure building + Streamlit calls, of which
  chart  st.plotly_chart calls (serialization + protobuf), of which
  json   plotly.io.to_json (the figure's JSON); figures = draw - chart - canvas (building
         go.Figure objects, their validation, the page's numpy)
  canvas a playing frame's figures painted by live/canvas.py instead of st.plotly_chart:
         to_spec (to_dict + whitelist) and the component call (JSON + protobuf)
  rest   frame - view - draw: live.py's controls and status line, Streamlit's marshalling,
         and AppTest's own element-tree parsing (not paid by a real server)

`python -m benchmarks live_frame` prints one row per page and mode (DLPLAY_BENCH_PAGES=gan,vae
picks pages); `python benchmarks/bench_live_frame.py [--profile] [--inline|--process] [page ...]` prints the same
(and a cProfile table of the script thread)."""
from __future__ import annotations

import contextlib
import cProfile
import functools
import os
import pstats
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import Measurement, sized  # noqa: E402

FRAMES = sized(12, 2)
GAP_S = sized(0.3, 0.05)       # between frames (the worker trains meanwhile; sleeping costs no CPU)
# page -> (script, view title holding the live training or None, the live_training key)
PAGES = {
    "gan": ("topics/gan/page.py", None, "gan"),
    "vae": ("topics/vae/page.py", None, "vae_live"),
    "relu_regions": ("topics/relu_regions/page.py", None, "rr_train"),
    "diffusion": ("topics/diffusion/page.py", "Train", "df_train"),
    "flows": ("topics/flows/page.py", "Real NVP on 2-D data", "fl_train"),
}


class Clock:
    """Thread CPU seconds spent inside wrapped calls (outermost call only)."""

    def __init__(self):
        self.total = 0.0
        self._depth = 0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            self._depth += 1
            t0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.total += time.thread_time() - t0
        return timed


def _live_fragment_id(at) -> str:
    """The id of live_training's fragment (a page may have others, e.g. its view body)."""
    for fid, fn in at._fragment_storage._fragments.items():
        names = [getattr(c.cell_contents, "__qualname__", "") for c in fn.__closure__ or ()]
        if any(n.endswith("live_training.<locals>._frame") for n in names):
            return fid
    raise LookupError("no live_training fragment on this page")


def rerun_live(at) -> None:
    """One run_every tick of the live fragment, as the browser sends it."""
    from streamlit.runtime.scriptrunner import RerunData
    from streamlit.testing.v1 import local_script_runner
    run = functools.partial(RerunData, fragment_id_queue=[_live_fragment_id(at)],
                            is_fragment_scoped_rerun=True)
    with mock.patch.object(local_script_runner, "RerunData", run):
        at._run(at._tree.get_widget_states())
    assert not at.exception, [e.value for e in at.exception]


def _open(page: str):
    from streamlit.testing.v1 import AppTest

    from tests.apptest import open_view
    script, view, key = PAGES[page]
    at = AppTest.from_file(str(ROOT / "playground.py"), default_timeout=180)
    at.run()
    at.switch_page(script)
    at.run()
    if view:
        open_view(at, page, view)
    assert not at.exception, [e.value for e in at.exception]
    return at, key


def measure(page: str, mode: str, frames: int = FRAMES,
            profile: cProfile.Profile | None = None) -> dict[str, list[float]]:
    """CPU ms per frame of `page` in `mode` (inline paused / process playing), broken down."""
    import plotly.io

    from live.handle import TrainerHandle
    from live.workers import Link
    from live import controls as live
    os.environ["DLPLAY_TRAINERS"] = mode
    import streamlit
    from streamlit.elements.plotly_chart import PlotlyMixin
    from live import canvas as live_canvas
    clocks = {name: Clock() for name in ("view", "draw", "chart", "json", "canvas")}
    original_live = live.live_training

    def live_training(key, make, draw, config, **kw):
        return original_live(key, make, clocks["draw"].wrap(draw), config, **kw)

    patches = [mock.patch.object(live, "live_training", live_training),
               mock.patch.object(plotly.io, "to_json", clocks["json"].wrap(plotly.io.to_json)),
               mock.patch.object(streamlit, "plotly_chart",
                                 clocks["chart"].wrap(streamlit.plotly_chart)),
               mock.patch.object(PlotlyMixin, "plotly_chart",
                                 clocks["chart"].wrap(PlotlyMixin.plotly_chart)),
               mock.patch.object(Link, "view", clocks["view"].wrap(Link.view)),
               mock.patch.object(live_canvas, "to_spec", clocks["canvas"].wrap(live_canvas.to_spec)),
               mock.patch.object(live_canvas, "show", clocks["canvas"].wrap(live_canvas.show)),
               mock.patch.object(TrainerHandle, "view", clocks["view"].wrap(TrainerHandle.view))]
    out: dict[str, list[float]] = {k: [] for k in ("frame", "view", "draw", "chart", "json",
                                                    "canvas", "rest")}
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        at, key = _open(page)
        if mode == "process":
            at.button(key=f"{key}__play").click().run()
            time.sleep(2.0)
        rerun_live(at)                                    # warm
        if profile:
            stack.enter_context(_profiled_script_runs(profile))
        for _ in range(frames):
            time.sleep(GAP_S)
            before = {k: c.total for k, c in clocks.items()}
            c0 = time.process_time()
            rerun_live(at)
            frame = (time.process_time() - c0) * 1e3
            part = {k: (c.total - before[k]) * 1e3 for k, c in clocks.items()}
            out["frame"].append(frame)
            for k in ("view", "draw", "chart", "json", "canvas"):
                out[k].append(part[k])
            out["rest"].append(frame - part["view"] - part["draw"])
        handle = at.session_state[f"{key}__handle"]
        out["steps"] = [float(handle.steps)]
        link = getattr(handle, "link", None)
        out["kb"] = [len(link.view_bytes) / 1024 if link and link.view_bytes else float("nan")]
        handle.close()
    os.environ.pop("DLPLAY_TRAINERS", None)
    return out


def _profiled_script_runs(profile: cProfile.Profile):
    """Run AppTest's script thread under `profile` (cProfile sees one thread only)."""
    from streamlit.testing.v1.local_script_runner import LocalScriptRunner
    original = LocalScriptRunner._run_script

    def run(self, *args, **kwargs):
        profile.enable()
        try:
            return original(self, *args, **kwargs)
        finally:
            profile.disable()
    return mock.patch.object(LocalScriptRunner, "_run_script", run)


def _pages() -> list[str]:
    wanted = [a for a in sys.argv[1:] if a in PAGES] or \
        [p for p in os.environ.get("DLPLAY_BENCH_PAGES", "").split(",") if p in PAGES]
    return wanted or list(PAGES)


def _row(page: str, mode: str, profile: cProfile.Profile | None = None) -> Measurement:
    r = measure(page, mode, profile=profile)
    med = {k: statistics.median(v) for k, v in r.items()}
    size = "" if mode == "inline" else f"view {med['kb']:.0f} kB pickled; "
    return Measurement(med["frame"], "ms CPU",
                       f"{mode}{' playing' if mode == 'process' else ' paused'}: view "
                       f"{med['view']:.1f}, draw {med['draw']:.1f} (figures "
                       f"{med['draw'] - med['chart'] - med['canvas']:.1f}, st.plotly_chart "
                       f"{med['chart']:.1f} of which to_json {med['json']:.1f}, canvas "
                       f"{med['canvas']:.1f}), "
                       f"rest {med['rest']:.1f} (live.py + Streamlit + AppTest); "
                       f"{size}{FRAMES} frames; iteration {int(med['steps'])} "
                       f"at the end; target <= 40")


def _entry(page: str, mode: str):
    return lambda: _row(page, mode)


BENCHMARKS = {f"live frame: {page}, {mode}": _entry(page, mode)
              for page in _pages() for mode in ("inline", "process")}


if __name__ == "__main__":
    from engine.device import configure_threads
    configure_threads()
    prof = cProfile.Profile() if "--profile" in sys.argv else None
    modes = [m for m in ("inline", "process") if f"--{m}" in sys.argv] or ["inline", "process"]
    for page in _pages():
        for mode in modes:
            m = _row(page, mode, prof)
            print(f"| live frame: {page}, {mode} | {m.value:.1f} {m.unit} | {m.note} |",
                  flush=True)
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
