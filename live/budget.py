"""A web process's frame budget: all live fragments playing in this server together ask for at
most `fps` redraws a second, so a class that presses Play at once still leaves the server (and,
on one machine, the CPU) free for slider moves.

    interval_s = max(base_s, n_playing / fps)

base_s: the page's own redraw interval (live.controls.frame_interval); n_playing: live fragments
(one per session and page) that drew a playing frame within the last STALE_S seconds in this
process. Up to 5-8 students at the default fps = 20 keep base_s (0.25-0.4 s); 16 students get a
frame every 0.8 s each. Training is not slowed: its pace is steps-per-frame / the page's interval,
and where a worker trains (DLPLAY_TRAINERS=process|ray) it trains between frames.

A fragment's interval is fixed when the page runs (st.fragment(run_every=...)), so a frame
asks for a whole-page rerun only when the budget's interval and the one it runs at differ by
HYSTERESIS or more (students joining one by one do not make every page rerun).
DLPLAY_FRAME_BUDGET sets fps (0: no budget).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable, Hashable

FPS = 20.0            # redraws per second for the whole web process (~12-20 ms of CPU each
#                       with frames fetched: a class of 8 gets > 2 frames/s each, the probe
#                       slider < 2x idle; `python -m benchmarks classroom`, docs/PERFORMANCE.md)
STALE_S = 5.0         # a fragment not seen drawing for this long no longer counts
HYSTERESIS = 1.3      # rerun the page when the wanted interval is off by this factor or more
ENV_VAR = "DLPLAY_FRAME_BUDGET"


def budget_fps(env: dict | None = None) -> float:
    """DLPLAY_FRAME_BUDGET as frames per second; FPS when unset or not a number, 0 for none."""
    raw = (os.environ if env is None else env).get(ENV_VAR, "")
    try:
        fps = float(raw) if raw.strip() else FPS
    except ValueError:
        return FPS
    return fps if fps > 0 and fps == fps and fps != float("inf") else 0.0


class FrameBudget:
    """Which live fragments play now, and the redraw interval that keeps them within fps."""

    def __init__(self, fps: float | None = None, stale_s: float = STALE_S,
                 clock: Callable[[], float] = time.monotonic):
        self.fps = budget_fps() if fps is None else fps
        self.stale_s, self.clock = stale_s, clock
        self._seen: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def seen(self, who: Hashable) -> None:
        """`who` (session id, page key) drew a playing frame now."""
        with self._lock:
            self._seen[who] = self.clock()

    def gone(self, who: Hashable) -> None:
        """`who` paused, reset or left: it stops counting at once."""
        with self._lock:
            self._seen.pop(who, None)

    def playing(self) -> int:
        now = self.clock()
        with self._lock:
            for who in [w for w, t in self._seen.items() if now - t > self.stale_s]:
                del self._seen[who]
            return len(self._seen)

    def interval(self, base_s: float) -> float:
        """max(base_s, n_playing / fps) (a page about to play marks itself `seen` first)."""
        if not self.fps:
            return base_s
        return max(base_s, self.playing() / self.fps)

    def off_by(self, current_s: float, base_s: float) -> bool:
        """Whether a fragment running at current_s should be rerun at the budget's interval."""
        wanted = self.interval(base_s)
        return max(wanted, current_s) / max(min(wanted, current_s), 1e-9) >= HYSTERESIS


BUDGET = FrameBudget()
