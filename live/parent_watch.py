"""A child process that ends with its parent: a daemon thread polls os.getppid() and exits
the process once it changed (the parent died and the child was handed to init or a
subreaper). A training worker starts it first thing, so a web process that ends in any way
(Ctrl-C, SIGTERM, SIGKILL) leaves no worker behind, even one busy in a long step or still
importing torch. (Not Linux's PR_SET_PDEATHSIG: that fires when the parent *thread* that
started the child ends, and Streamlit starts workers from short-lived script threads.)"""
from __future__ import annotations

import os
import threading
import time

PARENT_ENV = "DLPLAY_PARENT_PID"      # the parent's pid, set by the parent when it starts us
POLL_S = 0.5


def exit_with_parent(parent: int | None = None, poll_s: float = POLL_S) -> threading.Thread:
    """Exit this process (no cleanup: os._exit) within `poll_s` of its parent's death.
    `parent`: the pid to outlive none of; default $DLPLAY_PARENT_PID, else the current parent
    (a parent that died before this call is noticed at once when the variable names it)."""
    if parent is None:
        parent = int(os.environ.get(PARENT_ENV) or 0) or os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(0)

    thread = threading.Thread(target=watch, name="dlplay-parent-watch", daemon=True)
    thread.start()
    return thread
