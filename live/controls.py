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

from typing import Any, Callable

import streamlit as st

from engine.training import TickResult, Trainer
from live.busy import busy_frame
from live.frame_plan import (DEFAULT_BUDGET_S, DEFAULT_INTERVAL_S, FIRST_VIEW_POLL_S,
                             HOSTED_INTERVAL_S, RECONNECT_TIMER_S, frame_interval, plan)
from live.frame_steps import draw_frame, fetch_view, follow_the_route, train
from live.handle import TrainerView
from live.rerun import rerun_page, whole_page
from live.status import status_text
from live.trainer_session import (State, advance, get_trainer, handle_for,
                                  is_playing, locked_trainer, press_play, press_reset,
                                  press_step, read_trainer)
from ui import session
from ui.live_keys import live_keys

__all__ = ["live_training", "read_trainer", "locked_trainer", "get_trainer", "is_playing",
           "rerun_page", "status_text", "press_play", "press_step", "press_reset", "advance",
           "handle_for", "frame_interval", "DEFAULT_BUDGET_S", "DEFAULT_INTERVAL_S",
           "FIRST_VIEW_POLL_S", "HOSTED_INTERVAL_S", "RECONNECT_TIMER_S"]

# The parts of a live panel, one job each:
#   live/trainer_session.py   the session's trainer: built, rebuilt, resumed; Play/Step/Reset
#   live/frame_plan.py        pushed or rerun, and how often (the frame budget)
#   live/frame_steps.py       one frame: follow the route, train, fetch the view, draw
#   live/status.py            the status line
#   live/rerun.py             when the whole page reruns (the one rule)


def live_training(key: str, make_trainer: Callable[[], Trainer],
                  draw: Callable[[TrainerView, TickResult | None], None], config: dict[str, Any],
                  *, steps_per_frame: int = 50, max_steps_per_frame: int = 1000,
                  budget_s: float = DEFAULT_BUDGET_S, interval_s: float = DEFAULT_INTERVAL_S,
                  max_total_steps: int | None = None) -> TrainerView:
    """Draw the controls and the training fragment; returns the view the frame drew."""
    state = st.session_state
    if state.pop(live_keys(key).reset_asked, False):
        press_reset(state, key)
    handle = handle_for(state, key, make_trainer, config)
    epoch = handle.claim()                    # older runs' ticks stop before their next chunk
    playing = _playing(state, key, handle)
    spf = _control_row(state, key, handle, playing, steps_per_frame, max_steps_per_frame,
                       budget_s)
    target = state.get(live_keys(key).train_to)
    if target is not None:
        max_total_steps = target if max_total_steps is None else min(max_total_steps, target)
    run = plan(state, key, handle, epoch, playing, spf, interval_s, budget_s, max_total_steps)
    run.target = target

    @st.fragment(run_every=run.every if run.every is not None or not run.push
                 else RECONNECT_TIMER_S)
    def _frame() -> None:
        with busy_frame():                    # a busy worker is a status line, not a traceback
            follow_the_route(state, run)
            tick = train(state, run)
            view = fetch_view(state, run)
            if view is not None:
                draw_frame(state, run, view, tick, draw)

    _frame()
    return state.get(live_keys(key).view)


def _playing(state: State, key: str, handle: Any) -> bool:
    """Whether this run plays: the session's flag (the route's Pause clears it), which the
    handle then follows (tests set the flag by hand)."""
    k = live_keys(key)
    if getattr(state.get(k.push_source), "pause_asked", False):
        state[k.playing] = False           # the browser's Pause reached the frame route
    playing = bool(state.get(k.playing, False))
    if playing != handle.playing:
        handle.play() if playing else handle.pause()
    return playing


def _control_row(state: State, key: str, handle: Any, playing: bool, steps_per_frame: int,
                 max_steps_per_frame: int, budget_s: float) -> int:
    """Play/Pause, Step, Reset and the steps-per-frame slider; returns steps per frame."""
    cols = st.columns([1, 1, 1, 3], vertical_alignment="bottom")
    cols[0].button("Pause" if playing else "Play", key=f"{key}__play",
                   on_click=whole_page(press_play), args=(state, key, not playing),
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   type="primary", width="stretch",
                   disabled=handle.diverged_at is not None or bool(getattr(handle, "error", None)))
    cols[1].button("Step", key=f"{key}__step", icon=":material/skip_next:", width="stretch",
                   disabled=playing, on_click=whole_page(press_step), args=(state, key))
    cols[2].button("Reset", key=f"{key}__reset", on_click=whole_page(press_reset), args=(state, key),
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
