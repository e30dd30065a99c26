"""The steps of one live frame, in order (live.controls.live_training's fragment): follow
what the frame route saw, train (inline) or take what the worker trained, fetch the view to
draw, and draw it: as Streamlit elements, or registered with the frame route so the browser
fetches the next frames without a rerun (live/push.py)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from engine.training import TickResult
from live import push as live_push
from live import resume
from live.backends import trainer_mode
from live.frame_plan import FIRST_VIEW_WAIT_S, LiveRun, _budget_says_rerun, _who
from live.handle import TrainerBusy, TrainerLost, TrainerView
from live.parts import Caption
from live.status import status_line, status_text
from live.trainer_session import State, advance
from ui import screen
from ui import session
from ui.live_keys import live_keys
from ui.render import live_frame, rows_above


def follow_the_route(state: State, run: LiveRun) -> None:
    """A full rerun when the frame budget changed the interval, the route saw Pause, or a
    part the canvas cannot draw sent this page back to reruns."""
    k = run.k
    if run.playing and run.every is not None and _budget_says_rerun(run.key, run.every, run.base):
        st.rerun(scope="app")                 # the class grew or shrank: a new redraw interval
    source = state.get(k.push_source)
    if run.push and source is not None and source.pause_asked:
        state[k.playing] = False           # Pause reached the route, its click did not
        st.rerun(scope="app")                 # reach Streamlit: the page shows it paused
    if run.push and source is not None and source.fallback:
        state[live_push.pushes_key(run.key)] = False    # a part the canvas cannot draw:
        state[k.push_off] = True                     # reruns for this page from now on
        st.rerun(scope="app")


def train(state: State, run: LiveRun) -> TickResult | None:
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
    if finished and state.get(k.handle) is handle:
        state[k.playing] = False
        handle.pause()
        if run.target is not None and handle.steps >= run.target:
            # the slide's training is done: a later Play trains on, past N, as Play does
            state.pop(live_keys(run.key).train_to, None)
            state[live_keys(run.key).train_reached] = run.target
        st.rerun(scope="app")
    return tick


def fetch_view(state: State, run: LiveRun) -> TrainerView | None:
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
    state[k.view] = view
    if passed_a_claim(state, run.key, view.steps):
        st.rerun(scope="app")                 # the card beside the figure reads this view
    if view.error is not None:
        if state.get(k.playing):           # the buttons say what is true: Play, disabled
            state[k.playing] = False
            handle.pause()
            st.rerun(scope="app")
        st.error(view.error, icon=":material/error:")
        return None
    return view


def passed_a_claim(state: State, key: str, steps: int) -> bool:
    """Whether the run passed, since the frame before, an iteration that a claim of the card
    beside the figure reads on it (ui.claims.OnRun; the card sits outside this fragment and
    shows the value on its next run). Notes `steps` as this frame's."""
    k = live_keys(key)
    seen = state.get(k.claim_seen)
    state[k.claim_seen] = steps
    return seen is not None and any(seen < at <= steps for at in state.get(k.claim_marks, ()))


def draw_frame(state: State, run: LiveRun, view: TrainerView, tick: TickResult | None,
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
                                present_px=run.present_px, on_client=_learns_browser(handle),
                                claim_marks=tuple(state.get(k.claim_marks, ())),
                                claim_seen=view.steps)

    status = st.container() if run.push else status_line(view, tick, run.target)
    ctx = live_push.FrameContext(state, run.key, handle, push=run.push,
                                 probe=not run.push and push_enabled
                                 and not state.get(k.push_off),
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
                    status_line(view, tick, run.target)
    if run.playing and not run.push and state.get(live_push.pushes_key(run.key)):
        st.rerun(scope="app")                 # its parts are drawable: fetch frames from now on


def _learns_browser(handle: Any) -> Callable[[str], None] | None:
    """What the frame route calls with the browser's cookie on its first request: a session
    opened before the live component set the cookie learns its browser there."""
    saver = resume.saver_of(handle)
    return saver.know if saver is not None else None
