"""Live training on a page: Play/Pause, Step, Reset and steps-per-frame, driving any object
that follows the trainer protocol of engine/training.py.

The trainer lives in st.session_state. While Play is on, an @st.fragment(run_every=...)
advances it by at most `steps per frame` iterations and at most `budget_s` seconds per tick
(engine.training.run_for), then redraws only the fragment: widgets stay responsive, Pause
acts at once, other pages are unaffected. A change of `config` (anything that defines the
trainer: widget values, seed, device) builds a fresh trainer.

    def draw(view, tick):             # view: live.handle.TrainerView; tick: TickResult or None
        show_figure(my_figure(view.snapshot()))

    live_training("gan", lambda: GANTrainer(...), draw, config={"lr": lr, "seed": seed})

One writer per trainer: the trainer sits in an live.handle.TrainerHandle (lock + pause
flag) at st.session_state["<key>__handle"] (the trainer itself also at "<key>__trainer").
A tick trains only if the trainer is free (else it skips training and just redraws), Step
and the frame's view wait their turn, Pause stops the loop within one chunk (~25 ms), and a
new script run (Streamlit starts it while the old one may still be inside torch) stops the
older run's training. Page code that touches the trainer outside `draw` (a "Step D" button,
an export) goes through `locked_trainer(key)` or `read_trainer(key, fn)`.

Where the trainer lives is DLPLAY_TRAINERS (live/workers.py): `inline` (default; here,
trained inside the fragment's ticks), `process` (a pool of worker processes trains it between
frames at the pace steps-per-frame / interval; a frame only fetches the latest view) or `ray`
(a Ray actor). The factory must then be picklable (cloudpickle) and pure: no st.* or session
lookups inside, plain values in (else it stays inline, with a logged warning); `handle.trainer`,
get_trainer() and st.session_state["<key>__trainer"] are None and locked_trainer raises
(use read_trainer). A lost trainer (its worker died, its session was released) shows its
message and Reset builds a new one.

Where a worker trains and the page builds its frame as parts (live/parts.py; `draw` calls
live.push.live_parts and place), a playing page does not rerun its fragment at all: the
browser fetches each frame from the frame route (live/push.py, live/route.py) and
the fragment runs again only for a widget, Pause, or when the route asks (the run ended).

`draw` never sees the trainer: it gets a TrainerView (steps, diverged_at, a copy of the
history, and the trainer's own snapshot() as `view.snapshot()`), taken under the lock, and
draws outside it. Anything else it needs is `read_trainer(key, fn)` with fn returning plain
data. That keeps figures on plain data and lets the trainer live in another process.

A widget drawn inside `draw` reruns only the fragment when the user uses it. If its callback
sets widgets drawn outside the fragment (a click on a chart that moves sliders above it), wrap
the callback with `rerun_page` so the whole page reruns and those widgets show the new values:

    show_figure(fig, key="scatter", on_select=rerun_page(_on_pick), selection_mode="points")
"""
from __future__ import annotations

import contextlib
import functools
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterator, MutableMapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from live.busy import busy_frame
from live.handle import TrainerBusy, TrainerHandle, TrainerLost, TrainerView, WAIT_S
from engine.training import Trainer, TickResult
from live.backends import open_handle, trainer_mode
from ui import live_hooks
from ui.page_keys import RESET_ASKED, TRAIN_REACHED, TRAIN_TO
from live.workers import get_pool
from live import push as live_push
from live import resume
from ui import screen
from ui import session
from live.budget import BUDGET
from live.parts import Caption
from ui.render import live_frame, present_height, rows_above

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

State = MutableMapping[str, Any]   # st.session_state, or a dict in tests


def _config_id(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True, default=str)


def _keys(key: str) -> dict[str, str]:
    return {name: f"{key}__{name}" for name in
            ("handle", "trainer", "config", "playing", "pending_step", "view",
             "push_source", "push_off")}


# ---- the page's code path, on a plain mapping (st.session_state in the app) -------------

def handle_for(state: State, key: str, make_trainer: Callable[[], Trainer],
               config: dict[str, Any]) -> TrainerHandle:
    """The session's handle for `key`: built on first use, rebuilt (the old one cancelled)
    when `config` changed, after Reset, or when page code replaced/removed the trainer."""
    k = _keys(key)
    cid = _config_id(config)
    handle = state.get(k["handle"])
    current = state.get(k["trainer"])
    if handle is not None and handle.config_id == cid and not handle.cancelled \
            and current is handle.trainer:
        return handle
    if handle is not None:
        handle.cancel()
    adopt = current is not None and handle is not None and current is not handle.trainer \
        and state.get(k["config"]) == cid
    # a new session of a browser whose replica died: its trainer is in the shared store
    saved = None if adopt or handle is not None or trainer_mode() != "process" \
        else resume.saved_checkpoint(key, cid)
    if adopt:
        make_trainer = lambda: current       # noqa: E731 - page code replaced the trainer
    elif saved is not None:
        make_trainer = resume.factory_of(saved)
    handle = _open(make_trainer, cid)
    resume.attach_saver(handle, key, cid)
    if saved is not None:
        resume.announce_resumed(handle, saved)
    state[k["handle"]], state[k["trainer"]], state[k["config"]] = handle, handle.trainer, cid
    # playing again if it was (or a Play click that reached the new session before its trainer)
    state[k["playing"]] = saved is not None and (saved.playing or bool(state.get(k["playing"])))
    return handle


def _open(make_trainer: Callable[[], Trainer], cid: str):
    """A handle where DLPLAY_TRAINERS says: inline (a TrainerHandle here), process (a
    worker of live/workers.py's pool; handle.trainer is None) or ray."""
    mode = trainer_mode()
    session_id = None
    if mode == "process":
        ctx = get_script_run_ctx(suppress_warning=True)
        session_id = ctx.session_id if ctx is not None else None
        pool = get_pool()
        if pool.session_alive is None:
            pool.session_alive = live_push.session_connected
    return open_handle(make_trainer, cid, session_id, mode)


def press_play(state: State, key: str, playing: bool | None = None) -> None:
    """Play/Pause: the flag the training loop reads between chunks, and the button label.
    `playing`: what the pressed button's label promised (None: toggle). The button passes it,
    so a click that Streamlit replays in a later coalesced run (seen with ui/autoplay.py's
    player) lands on the state its label said instead of flipping it back."""
    k = _keys(key)
    if playing is None:
        playing = not state.get(k["playing"], False)
    state[k["playing"]] = playing
    handle = state.get(k["handle"])
    if handle is not None:
        handle.play() if playing else handle.pause()


live_hooks.PAUSERS.append(lambda state, key: press_play(state, key, False))


def press_step(state: State, key: str) -> None:
    state[_keys(key)["pending_step"]] = True


def press_reset(state: State, key: str) -> None:
    """Stop whatever trains the old trainer (within one chunk) and drop it; the next run
    builds a fresh one."""
    k = _keys(key)
    handle = state.pop(k["handle"], None)
    if handle is not None:
        handle.cancel()                       # its link takes no more checkpoints
        saver = resume.saver_of(handle)
        if saver is not None:
            saver.forget()                    # that training is over on every replica
    state.pop(k["trainer"], None)
    state[k["playing"]] = False
    reached = state.pop(TRAIN_REACHED.format(key=key), None)
    if reached is not None:                   # a lesson slide trained to N: shown again, to N
        state[TRAIN_TO.format(key=key)] = reached


def advance(state: State, key: str, handle: TrainerHandle, epoch: int, steps_per_frame: int,
            budget_s: float, max_total_steps: int | None = None) -> tuple[TickResult | None, bool]:
    """The training part of one frame: a pending Step (exactly steps_per_frame iterations,
    waiting its turn), else a tick if playing (skipped when the trainer is busy). Returns
    (tick or None, finished) where finished means Play must stop (diverged / step cap)."""
    k = _keys(key)
    step_once = state.pop(k["pending_step"], False)
    if state.get(k["handle"]) is not handle or handle.cancelled:
        return None, False
    limit = int(steps_per_frame)
    if max_total_steps is not None:
        limit = max(0, min(limit, max_total_steps - handle.steps))
    if handle.playing:
        tick = handle.tick(limit, budget_s, epoch)
        # at the cap now: pause on this frame, not one frame (and one more redraw) later
        finished = handle.diverged_at is not None or limit == 0 or (
            max_total_steps is not None and handle.steps >= max_total_steps)
        return tick, finished
    if step_once:
        return handle.step(limit), False
    return None, False


def read_trainer(key: str, fn: Callable[[Trainer], Any], default: Any = None,
                 timeout: float = WAIT_S) -> Any:
    """fn(trainer) under the trainer's lock (e.g. the data of an export, a snapshot for a
    figure drawn outside the live fragment); `default` when there is no trainer yet."""
    handle = st.session_state.get(_keys(key)["handle"])
    return default if handle is None else handle.read(fn, timeout)


@contextlib.contextmanager
def locked_trainer(key: str, timeout: float = WAIT_S) -> Iterator[Trainer | None]:
    """The trainer, held for the block (None when there is none yet): for page code that
    trains or reads it outside `draw`, e.g. a "Step D" callback or an export."""
    handle = st.session_state.get(_keys(key)["handle"])
    if handle is None:
        yield None
        return
    with handle.locked(timeout) as trainer:
        yield trainer


def is_playing(key: str) -> bool:
    """True while Play is on (exports/figures outside the fragment can say "pause to...")."""
    return bool(st.session_state.get(_keys(key)["playing"], False))


# ---- Streamlit -------------------------------------------------------------------------

def get_trainer(key: str, make_trainer: Callable[[], Trainer],
                config: dict[str, Any]) -> Trainer | None:
    """The session's trainer for `key`, rebuilt when `config` changed or on first use.
    None when trainers live in worker processes (DLPLAY_TRAINERS=process|ray): use
    read_trainer(key, fn) there."""
    return handle_for(st.session_state, key, make_trainer, config).trainer


def rerun_page(callback: Callable[..., Any]) -> Callable[..., None]:
    """`callback`, then a rerun of the whole page instead of only the fragment.

    For a widget drawn inside the live-training fragment (e.g. a plotly chart's on_select)
    whose callback writes session state that widgets outside the fragment display. Without it
    Streamlit reruns only the fragment and those widgets keep showing their old values.
    Callbacks run before the script, so st.rerun(scope="app") raised here replaces the
    fragment run by one full run (no run is spent twice)."""
    @functools.wraps(callback)
    def _then_rerun(*args: Any, **kwargs: Any) -> None:
        callback(*args, **kwargs)
        st.rerun(scope="app")
    return _then_rerun


def _whole_page(callback: Callable[..., Any]) -> Callable[..., None]:
    """`callback`, then a full rerun if this run is only a fragment's. The browser sends a
    click on Play/Pause/Step/Reset along with a live fragment's timed rerun when both are
    due together (measured in Chromium: 1 click in ~8 during play); the callback then ran in
    the fragment run and the buttons outside it kept their old labels."""
    @functools.wraps(callback)
    def _then_rerun(*args: Any, **kwargs: Any) -> None:
        callback(*args, **kwargs)
        ctx = get_script_run_ctx()
        if ctx is not None and getattr(ctx, "fragment_ids_this_run", None):
            st.rerun(scope="app")
    return _then_rerun


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
    target: int | None = None   # a lesson slide's `train = N`: Play stops at N (TRAIN_TO)

    @property
    def k(self) -> dict[str, str]:
        return _keys(self.key)


def live_training(key: str, make_trainer: Callable[[], Trainer],
                  draw: Callable[[TrainerView, TickResult | None], None], config: dict[str, Any],
                  *, steps_per_frame: int = 50, max_steps_per_frame: int = 1000,
                  budget_s: float = DEFAULT_BUDGET_S, interval_s: float = DEFAULT_INTERVAL_S,
                  max_total_steps: int | None = None) -> TrainerView:
    """Draw the controls and the training fragment; returns the view the frame drew."""
    state = st.session_state
    if state.pop(RESET_ASKED.format(key=key), False):
        press_reset(state, key)
    handle = handle_for(state, key, make_trainer, config)
    epoch = handle.claim()                    # older runs' ticks stop before their next chunk
    playing = _playing(state, key, handle)
    spf = _control_row(state, key, handle, playing, steps_per_frame, max_steps_per_frame,
                       budget_s)
    target = state.get(TRAIN_TO.format(key=key))
    if target is not None:
        max_total_steps = target if max_total_steps is None else min(max_total_steps, target)
    run = _plan(state, key, handle, epoch, playing, spf, interval_s, budget_s, max_total_steps)
    run.target = target

    @st.fragment(run_every=run.every if run.every is not None or not run.push
                 else RECONNECT_TIMER_S)
    def _frame() -> None:
        with busy_frame():                    # a busy worker is a status line, not a traceback
            _follow_the_route(state, run)
            tick = _train(state, run)
            view = _fetch_view(state, run)
            if view is not None:
                _draw_frame(state, run, view, tick, draw)

    _frame()
    return state.get(_keys(key)["view"])


def _playing(state: State, key: str, handle: Any) -> bool:
    """Whether this run plays: the session's flag (the route's Pause clears it), which the
    handle then follows (tests set the flag by hand)."""
    k = _keys(key)
    if getattr(state.get(k["push_source"]), "pause_asked", False):
        state[k["playing"]] = False           # the browser's Pause reached the frame route
    playing = bool(state.get(k["playing"], False))
    if playing != handle.playing:
        handle.play() if playing else handle.pause()
    return playing


def _control_row(state: State, key: str, handle: Any, playing: bool, steps_per_frame: int,
                 max_steps_per_frame: int, budget_s: float) -> int:
    """Play/Pause, Step, Reset and the steps-per-frame slider; returns steps per frame."""
    cols = st.columns([1, 1, 1, 3], vertical_alignment="bottom")
    cols[0].button("Pause" if playing else "Play", key=f"{key}__play",
                   on_click=_whole_page(press_play), args=(state, key, not playing),
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   type="primary", width="stretch",
                   disabled=handle.diverged_at is not None or bool(getattr(handle, "error", None)))
    cols[1].button("Step", key=f"{key}__step", icon=":material/skip_next:", width="stretch",
                   disabled=playing, on_click=_whole_page(press_step), args=(state, key))
    cols[2].button("Reset", key=f"{key}__reset", on_click=_whole_page(press_reset), args=(state, key),
                   icon=":material/restart_alt:", width="stretch")
    kept = f"{key}__spf_kept"       # Streamlit drops a widget's state while its tab is closed:
    if f"{key}__spf" not in state and kept in state:      # the choice survives a round trip
        state[f"{key}__spf"] = state[kept]
    spf = cols[3].slider("Steps per frame", 1, max_steps_per_frame, steps_per_frame,
                         key=f"{key}__spf",
                         help=f"Iterations per redraw (each frame also stops after "
                              f"{budget_s:.1f} s of training).",
                         # the projector: one row of controls, the height goes to the figure
                         label_visibility="collapsed" if session.classroom() else "visible")
    state[kept] = spf
    return spf


def _plan(state: State, key: str, handle: Any, epoch: int, playing: bool, spf: int,
          interval_s: float, budget_s: float, max_total_steps: int | None) -> LiveRun:
    """How this run's frame gets drawn: pushed to the browser or rerun, and how often."""
    push = (playing and live_push.enabled(trainer_mode())
            and bool(state.get(live_push.pushes_key(key))))
    if not push:
        state.pop(_keys(key)["push_source"], None)   # its token stops answering: the poller stops
    every, base = _redraw_interval(key, interval_s, playing, push)
    pending = _first_view_pending(handle)
    if pending and every is None:
        every = FIRST_VIEW_POLL_S
    with rows_above(screen.LIVE_ROW_PX):
        present_px = present_height()
    return LiveRun(key, handle, epoch, playing, spf, push, every, base, pending, interval_s,
                   budget_s, max_total_steps, present_px)


def _follow_the_route(state: State, run: LiveRun) -> None:
    """A full rerun when the frame budget changed the interval, the route saw Pause, or a
    part the canvas cannot draw sent this page back to reruns."""
    k = run.k
    if run.playing and run.every is not None and _budget_says_rerun(run.key, run.every, run.base):
        st.rerun(scope="app")                 # the class grew or shrank: a new redraw interval
    source = state.get(k["push_source"])
    if run.push and source is not None and source.pause_asked:
        state[k["playing"]] = False           # Pause reached the route, its click did not
        st.rerun(scope="app")                 # reach Streamlit: the page shows it paused
    if run.push and source is not None and source.fallback:
        state[live_push.pushes_key(run.key)] = False    # a part the canvas cannot draw:
        state[k["push_off"]] = True                     # reruns for this page from now on
        st.rerun(scope="app")


def _train(state: State, run: LiveRun) -> TickResult | None:
    """This frame's training (inline) or what the worker trained since the last frame; a run
    that reached max_total_steps pauses the page."""
    handle, k = run.handle, run.k
    tick, finished = None, False
    handle.set_pace(run.spf / run.interval_s, run.max_total_steps)   # the page's interval
    try:
        tick, finished = advance(state, run.key, handle, run.epoch, run.spf, run.budget_s,
                                 run.max_total_steps)
    except TrainerBusy:
        st.warning("The trainer is still busy with an earlier step; press Step again.",
                   icon=":material/hourglass:")
    except TrainerLost:
        pass                                  # the view carries the message
    if finished and state.get(k["handle"]) is handle:
        state[k["playing"]] = False
        handle.pause()
        if run.target is not None and handle.steps >= run.target:
            # the slide's training is done: a later Play trains on, past N, as Play does
            state.pop(TRAIN_TO.format(key=run.key), None)
            state[TRAIN_REACHED.format(key=run.key)] = run.target
        st.rerun(scope="app")
    return tick


def _fetch_view(state: State, run: LiveRun) -> TrainerView | None:
    """The view to draw, or None after saying why there is none (busy, or the trainer lost
    with its message shown and Play disabled)."""
    handle, k = run.handle, run.k
    try:
        view = handle.view(FIRST_VIEW_WAIT_S) if run.pending else handle.view()
    except TrainerBusy:
        st.info("The trainer is busy; the picture updates on the next frame.",
                icon=":material/hourglass:")
        return None
    if run.pending and not run.playing:
        st.rerun(scope="app")                 # the first picture is here: no more polling
    state[k["view"]] = view
    if view.error is not None:
        if state.get(k["playing"]):           # the buttons say what is true: Play, disabled
            state[k["playing"]] = False
            handle.pause()
            st.rerun(scope="app")
        st.error(view.error, icon=":material/error:")
        return None
    return view


def _draw_frame(state: State, run: LiveRun, view: TrainerView, tick: TickResult | None,
                draw: Callable[[TrainerView, TickResult | None], None]) -> None:
    """The status line and the page's `draw`, as Streamlit elements or pushed as parts."""
    handle, k, classroom = run.handle, run.k, session.classroom()
    push_enabled = live_push.enabled(trainer_mode())

    def make_source(parts) -> live_push.Source:
        ctx = get_script_run_ctx(suppress_warning=True)
        return live_push.Source(handle=handle, parts=parts, who=_who(run.key),
                                session_id=ctx.session_id if ctx is not None else None,
                                base_interval_s=run.base, classroom=classroom,
                                max_total_steps=run.max_total_steps,
                                status=functools.partial(status_text, target=run.target),
                                present_px=run.present_px, on_client=_learns_browser(handle))

    status = st.container() if run.push else _status_line(view, tick, run.target)
    ctx = live_push.FrameContext(state, run.key, handle, push=run.push,
                                 probe=not run.push and push_enabled
                                 and not state.get(k["push_off"]),
                                 classroom=classroom, make_source=make_source,
                                 present_px=run.present_px)
    with live_frame(run.playing and handle.playing), live_push.frame_context(ctx), \
            rows_above(screen.LIVE_ROW_PX):
        draw(view, tick)
        if run.push:                          # the status line above, pushed like the parts
            with status:
                if ctx.registered is not None:
                    live_push.mount(ctx, live_push.STATUS_SLOT,
                                    Caption(status_text(view, tick, run.target))
                                    .payload(ctx.classroom))
                else:
                    _status_line(view, tick, run.target)
    if run.playing and not run.push and state.get(live_push.pushes_key(run.key)):
        st.rerun(scope="app")                 # its parts are drawable: fetch frames from now on


def _learns_browser(handle: Any) -> Callable[[str], None] | None:
    """What the frame route calls with the browser's cookie on its first request: a session
    opened before the live component set the cookie learns its browser there."""
    saver = resume.saver_of(handle)
    return saver.know if saver is not None else None


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


def status_text(trainer: TrainerView, tick: TickResult | None,
                target: int | None = None) -> str:
    """The line over a live frame: "Iteration **N** · R it/s this frame" (while a lesson slide
    trains to T: "Training to T: **N** / T · ..."), and for a minute
    after a worker died "· The training worker restarted; resumed from iteration M.", and
    "· trained in one batch with K other models" while a worker batches it (live.batching), or
    "· trained alone: <why>" while models of its kind play beside it unbatched."""
    text = f"Iteration **{trainer.steps:,}**" if target is None else \
        f"Training to {target:,}: **{trainer.steps:,}** / {target:,}"
    if tick is not None and tick.steps_done and tick.seconds > 0:
        text += f" · {tick.steps_done / tick.seconds:,.0f} it/s this frame"
    if getattr(trainer, "notice", None):      # its worker died: resumed from a checkpoint
        text += f" · {trainer.notice}"
    others = getattr(trainer, "batched_with", 0)
    if others:                                # a worker stepped it with classmates' models
        text += f" · trained in one batch with {others} other {_plural(others, 'model')}"
    elif getattr(trainer, "alone_because", None):
        text += f" · trained alone: {trainer.alone_because}"
    return text


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


def _status_line(trainer: TrainerView, tick: TickResult | None,
                 target: int | None = None) -> None:
    st.caption(status_text(trainer, tick, target))
    if trainer.diverged_at is not None:
        st.warning(f"Training diverged at iteration {trainer.diverged_at} (a value became "
                   f"infinite or NaN). Lower the learning rate and press Reset.",
                   icon=":material/warning:")
