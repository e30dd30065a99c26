"""One session's trainer for a live panel, on a plain mapping (st.session_state in the app, a
dict in tests): the handle built, rebuilt or resumed for a config, what Play, Step and Reset
do to it, one frame's training, and the locked reads page code may make outside `draw`."""
from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, Iterator, MutableMapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from engine.training import TickResult, Trainer
from live import push as live_push
from live import resume
from live.backends import open_handle, trainer_mode
from live.handle import TrainerHandle, WAIT_S
from live.workers import get_pool
from ui import live_hooks
from ui.live_keys import live_keys

State = MutableMapping[str, Any]   # st.session_state, or a dict in tests


def _config_id(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True, default=str)


def handle_for(state: State, key: str, make_trainer: Callable[[], Trainer],
               config: dict[str, Any]) -> TrainerHandle:
    """The session's handle for `key`: built on first use, rebuilt (the old one cancelled)
    when `config` changed, after Reset, or when page code replaced/removed the trainer."""
    k = live_keys(key)
    cid = _config_id(config)
    handle = state.get(k.handle)
    current = state.get(k.trainer)
    if handle is not None and handle.config_id == cid and not handle.cancelled \
            and current is handle.trainer:
        return handle
    if handle is not None:
        handle.cancel()
    adopt = current is not None and handle is not None and current is not handle.trainer \
        and state.get(k.config) == cid
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
    state[k.handle], state[k.trainer], state[k.config] = handle, handle.trainer, cid
    # playing again if it was (or a Play click that reached the new session before its trainer)
    state[k.playing] = saved is not None and (saved.playing or bool(state.get(k.playing)))
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
    k = live_keys(key)
    if playing is None:
        playing = not state.get(k.playing, False)
    state[k.playing] = playing
    handle = state.get(k.handle)
    if handle is not None:
        handle.play() if playing else handle.pause()


live_hooks.PAUSERS.append(lambda state, key: press_play(state, key, False))


def press_step(state: State, key: str) -> None:
    state[live_keys(key).pending_step] = True


def press_reset(state: State, key: str) -> None:
    """Stop whatever trains the old trainer (within one chunk) and drop it; the next run
    builds a fresh one."""
    k = live_keys(key)
    handle = state.pop(k.handle, None)
    if handle is not None:
        handle.cancel()                       # its link takes no more checkpoints
        saver = resume.saver_of(handle)
        if saver is not None:
            saver.forget()                    # that training is over on every replica
    state.pop(k.trainer, None)
    state[k.playing] = False
    reached = state.pop(live_keys(key).train_reached, None)
    if reached is not None:                   # a lesson slide trained to N: shown again, to N
        state[live_keys(key).train_to] = reached


def advance(state: State, key: str, handle: TrainerHandle, epoch: int, steps_per_frame: int,
            budget_s: float, max_total_steps: int | None = None) -> tuple[TickResult | None, bool]:
    """The training part of one frame: a pending Step (exactly steps_per_frame iterations,
    waiting its turn), else a tick if playing (skipped when the trainer is busy). Returns
    (tick or None, finished) where finished means Play must stop (diverged / step cap)."""
    k = live_keys(key)
    step_once = state.pop(k.pending_step, False)
    if state.get(k.handle) is not handle or handle.cancelled:
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
    handle = st.session_state.get(live_keys(key).handle)
    return default if handle is None else handle.read(fn, timeout)


@contextlib.contextmanager
def locked_trainer(key: str, timeout: float = WAIT_S) -> Iterator[Trainer | None]:
    """The trainer, held for the block (None when there is none yet): for page code that
    trains or reads it outside `draw`, e.g. a "Step D" callback or an export."""
    handle = st.session_state.get(live_keys(key).handle)
    if handle is None:
        yield None
        return
    with handle.locked(timeout) as trainer:
        yield trainer


def is_playing(key: str) -> bool:
    """True while Play is on (exports/figures outside the fragment can say "pause to...")."""
    return bool(st.session_state.get(live_keys(key).playing, False))


def get_trainer(key: str, make_trainer: Callable[[], Trainer],
                config: dict[str, Any]) -> Trainer | None:
    """The session's trainer for `key`, rebuilt when `config` changed or on first use.
    None when trainers live in worker processes (DLPLAY_TRAINERS=process|ray): use
    read_trainer(key, fn) there."""
    return handle_for(st.session_state, key, make_trainer, config).trainer
