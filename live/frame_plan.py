"""How a live panel's frames are paced: pushed to the browser through the frame route or
drawn by reruns of the fragment, how often (the page's interval stretched by the server's
frame budget, live/budget.py), and what one script run of live_training decided (LiveRun)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamlit.runtime.scriptrunner import get_script_run_ctx

from live import push as live_push
from live.backends import trainer_mode
from live.budget import BUDGET
from live.handle import WAIT_S
from live.trainer_session import State
from ui import screen
from ui.live_keys import LiveKeys, live_keys
from ui.render import present_height, rows_above

DEFAULT_BUDGET_S = 0.4   # docs/ARCHITECTURE.md: time-budgeted ticks keep ~0.6-0.8x plain-loop speed
DEFAULT_INTERVAL_S = 0.5
# A trainer in a worker that is still starting (many sessions opening at once share its
# start-up and its trainer builds) has no picture yet: the page waits FIRST_VIEW_WAIT_S for
# it, then says so and looks again every FIRST_VIEW_POLL_S instead of waiting for a click.
FIRST_VIEW_WAIT_S = WAIT_S
FIRST_VIEW_POLL_S = 1.0
HOSTED_INTERVAL_S = 0.3  # frames when a worker trains: a frame only fetches a view (~30 ms CPU)
# A pushing page's fragment is not rerun for its frames, but keeps a timer this long: after its
# websocket reconnects (its replica died; nginx sent it to another) Streamlit's frontend asks
# for a full run only while some fragment has a timer (or a run is pending). Without one the
# page sat frozen on the new server; with it, the new session runs and resumes the trainer
# from the shared checkpoints (live/resume.py). It fires at most once an hour.
RECONNECT_TIMER_S = 3600.0


def frame_interval(interval_s: float, mode: str) -> float:
    """Seconds between redraws while playing. Inline, a frame also trains (up to budget_s), so
    the page's interval stands. Where a worker trains between frames (process, ray) a frame
    only draws the latest view, so it may come more often: at most HOSTED_INTERVAL_S, i.e.
    >= 3 redraws/s asked for. The training pace stays steps-per-frame / the page's interval."""
    return interval_s if mode == "inline" else min(interval_s, HOSTED_INTERVAL_S)


@dataclass
class LiveRun:
    """What one script run of live_training decided, shared by the steps of its frame."""
    key: str
    handle: Any
    epoch: int
    playing: bool
    spf: int
    push: bool
    every: float | None         # the fragment's run_every (None: it runs on events only)
    base: float                 # the page's own redraw interval, before the frame budget
    pending: bool               # a worker-hosted trainer has not sent its first picture
    interval_s: float
    budget_s: float
    max_total_steps: int | None
    present_px: int | None
    target: int | None = None   # a lesson slide's `train = N`: Play stops at N (train_to)

    @property
    def k(self) -> LiveKeys:
        return live_keys(self.key)


def plan(state: State, key: str, handle: Any, epoch: int, playing: bool, spf: int,
          interval_s: float, budget_s: float, max_total_steps: int | None) -> LiveRun:
    """How this run's frame gets drawn: pushed to the browser or rerun, and how often."""
    push = (playing and live_push.enabled(trainer_mode())
            and bool(state.get(live_push.pushes_key(key))))
    if not push:
        state.pop(live_keys(key).push_source, None)   # its token stops answering: the poller stops
    every, base = _redraw_interval(key, interval_s, playing, push)
    pending = _first_view_pending(handle)
    if pending and every is None:
        every = FIRST_VIEW_POLL_S
    with rows_above(screen.LIVE_ROW_PX):
        present_px = present_height()
    return LiveRun(key, handle, epoch, playing, spf, push, every, base, pending, interval_s,
                   budget_s, max_total_steps, present_px)


def _who(key: str) -> tuple[str, str]:
    ctx = get_script_run_ctx(suppress_warning=True)
    return (ctx.session_id if ctx is not None else "", key)


def _first_view_pending(handle: Any) -> bool:
    """True while a worker-hosted trainer has not sent its first picture."""
    link = getattr(handle, "link", None)
    return link is not None and link.error is None and link.latest() is None


def _redraw_interval(key: str, interval_s: float, playing: bool,
                     push: bool = False) -> tuple[float | None, float]:
    """(run_every of the fragment, the page's own redraw interval): while playing, the page's
    interval (frame_interval) stretched by the server's frame budget (live/budget.py:
    all playing fragments together ask for at most DLPLAY_FRAME_BUDGET redraws a second).
    A pushing page (live/push.py) counts as playing but its fragment is not rerun: the
    browser fetches its frames at the budget's interval."""
    base = frame_interval(interval_s, trainer_mode())
    if not playing:
        BUDGET.gone(_who(key))
        return None, base
    BUDGET.seen(_who(key))
    return (None if push else BUDGET.interval(base)), base


def _budget_says_rerun(key: str, every: float, base: float) -> bool:
    """A playing frame counts itself; True when its run_every is HYSTERESIS off the budget's."""
    BUDGET.seen(_who(key))
    return BUDGET.off_by(every, base)
