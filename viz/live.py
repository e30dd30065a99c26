"""Live training on a page: Play/Pause, Step, Reset and steps-per-frame, driving any object
that follows the trainer protocol of engine/training.py.

The trainer lives in st.session_state. While Play is on, an @st.fragment(run_every=...)
advances it by at most `steps per frame` iterations and at most `budget_s` seconds per tick
(engine.training.run_for), then redraws only the fragment: widgets stay responsive, Pause
acts at once, other pages are unaffected. A change of `config` (anything that defines the
trainer: widget values, seed, device) builds a fresh trainer.

    def draw(trainer, tick):          # tick: TickResult of this tick, or None
        show_figure(my_figure(trainer.snapshot()))

    live_training("gan", lambda: GANTrainer(...), draw, config={"lr": lr, "seed": seed})

A widget drawn inside `draw` reruns only the fragment when the user uses it. If its callback
sets widgets drawn outside the fragment (a click on a chart that moves sliders above it), wrap
the callback with `rerun_page` so the whole page reruns and those widgets show the new values:

    show_figure(fig, key="scatter", on_select=rerun_page(_on_pick), selection_mode="points")
"""
from __future__ import annotations

import functools
import json
from typing import Any, Callable

import streamlit as st

from engine.training import Trainer, TickResult, run_for

DEFAULT_BUDGET_S = 0.4   # DESIGN.md: time-budgeted ticks keep ~0.6-0.8x plain-loop speed
DEFAULT_INTERVAL_S = 0.5


def _config_id(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True, default=str)


def get_trainer(key: str, make_trainer: Callable[[], Trainer], config: dict[str, Any]) -> Trainer:
    """The session's trainer for `key`, rebuilt when `config` changed or on first use."""
    tkey, ckey = f"{key}__trainer", f"{key}__config"
    cid = _config_id(config)
    if st.session_state.get(ckey) != cid or tkey not in st.session_state:
        st.session_state[tkey] = make_trainer()
        st.session_state[ckey] = cid
        st.session_state[f"{key}__playing"] = False
    return st.session_state[tkey]


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


def live_training(key: str, make_trainer: Callable[[], Trainer],
                  draw: Callable[[Trainer, TickResult | None], None], config: dict[str, Any],
                  *, steps_per_frame: int = 50, max_steps_per_frame: int = 1000,
                  budget_s: float = DEFAULT_BUDGET_S, interval_s: float = DEFAULT_INTERVAL_S,
                  max_total_steps: int | None = None) -> Trainer:
    """Draw the controls and the training fragment; returns the current trainer."""
    trainer = get_trainer(key, make_trainer, config)
    pkey = f"{key}__playing"
    playing = bool(st.session_state.get(pkey, False))

    def _toggle() -> None:
        st.session_state[pkey] = not st.session_state.get(pkey, False)

    def _reset() -> None:
        st.session_state.pop(f"{key}__trainer", None)
        st.session_state[pkey] = False

    cols = st.columns([1, 1, 1, 3], vertical_alignment="bottom")
    cols[0].button("Pause" if playing else "Play", key=f"{key}__play", on_click=_toggle,
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   type="primary", width="stretch",
                   disabled=trainer.diverged_at is not None)
    skey = f"{key}__pending_step"
    cols[1].button("Step", key=f"{key}__step", icon=":material/skip_next:", width="stretch",
                   disabled=playing, on_click=lambda: st.session_state.__setitem__(skey, True))
    cols[2].button("Reset", key=f"{key}__reset", on_click=_reset,
                   icon=":material/restart_alt:", width="stretch")
    spf = cols[3].slider("Steps per frame", 1, max_steps_per_frame, steps_per_frame,
                         key=f"{key}__spf",
                         help=f"Iterations per redraw (each frame also stops after "
                              f"{budget_s:.1f} s of training).")

    @st.fragment(run_every=interval_s if playing else None)
    def _frame() -> None:
        tr = st.session_state[f"{key}__trainer"]
        tick = None
        running = st.session_state.get(pkey, False)
        step_once = st.session_state.pop(skey, False)
        if running or step_once:
            limit = spf
            if max_total_steps is not None:
                limit = max(0, min(spf, max_total_steps - tr.steps))
            tick = run_for(tr, limit, budget_s if running else float("inf"))
            if running and (tr.diverged_at is not None or limit == 0):
                st.session_state[pkey] = False
                st.rerun(scope="app")
        _status_line(tr, tick)
        draw(tr, tick)

    _frame()
    return st.session_state[f"{key}__trainer"]


def _status_line(trainer: Trainer, tick: TickResult | None) -> None:
    text = f"Iteration **{trainer.steps:,}**"
    if tick is not None and tick.steps_done and tick.seconds > 0:
        text += f" · {tick.steps_done / tick.seconds:,.0f} it/s this frame"
    st.caption(text)
    if trainer.diverged_at is not None:
        st.warning(f"Training diverged at iteration {trainer.diverged_at} (a value became "
                   f"infinite or NaN). Lower the learning rate and press Reset.",
                   icon=":material/warning:")
