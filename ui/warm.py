"""Fill a page's shared caches in the background, once per server process: what its presets
and tour steps draw is then ready before anyone picks them (a preset change should
cost about a slider move, not a cold computation).

    warm.start("initialization", (seed, device), lambda: [partial(propagation_of, s, seed), ...])

Each job is a call of an st.cache_data/st.cache_resource function; its result lands in the cache
every session shares. The jobs run one after the other in one daemon thread named
"dlplay-warm-<name>" at a lower CPU priority (nice NICE on Linux: it yields to page runs);
an error is logged and skipped (the page computes, and reports, it again
when asked). At interpreter exit the threads stop after their current job and are joined: a
daemon thread killed inside a torch op aborts the process ("terminate called without an active
exception", exit code 134) after the server or the test run has otherwise ended well. Streamlit's cache spinners have no page to draw on in that thread and would log
"missing ScriptRunContext" once per call: that line is dropped for these threads only.
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import Callable, Hashable, Iterable

import streamlit as st

log = logging.getLogger("dlplay")
PREFIX = "dlplay-warm-"
NICE = 10          # the warm-up threads' nice value (Linux), below the server's own threads
_CTX_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"
EXIT_JOIN_S = 60.0   # at exit, how long to wait for a warm-up's current job
_stop = threading.Event()
_threads: list[threading.Thread] = []


def _not_warm_thread(record: logging.LogRecord) -> bool:
    return not record.threadName.startswith(PREFIX)


def _lower_priority() -> None:
    """Lower this thread's CPU priority (Linux: a thread is a task with its own nice value):
    a warm-up runs beside first paints and slider moves and should yield the CPU to them.
    Best effort: elsewhere it keeps the process's priority."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
    except (AttributeError, OSError):
        pass


def _run(name: str, jobs: Iterable[Callable[[], object]]) -> None:
    _lower_priority()
    for job in jobs:
        if _stop.is_set():
            return
        try:
            job()
        except Exception:  # noqa: BLE001 - a warm-up never breaks a page
            log.exception("warming the caches of %s", name)


@st.cache_resource(max_entries=32, show_spinner=False)
def start(name: str, key: Hashable, _jobs: Callable[[], Iterable[Callable[[], object]]]
          ) -> threading.Thread:
    """Start the warm-up of `name` for `key` (e.g. (seed, device)) unless it already ran in
    this process; returns its thread. `_jobs` is called in the thread and yields the calls."""
    logger = logging.getLogger(_CTX_LOGGER)
    if _not_warm_thread not in logger.filters:
        logger.addFilter(_not_warm_thread)
    thread = threading.Thread(target=lambda: _run(name, _jobs()), name=f"{PREFIX}{name}",
                              daemon=True)
    _threads[:] = [t for t in _threads if t.is_alive()] + [thread]
    thread.start()
    return thread


@atexit.register
def _stop_at_exit() -> None:
    """Let every warm-up finish its current job and end before the interpreter tears down."""
    _stop.set()
    for thread in list(_threads):
        thread.join(EXIT_JOIN_S)
