"""A live page's trainer survives its replica: its checkpoints go to the deployment's shared
store (live/checkpoint_store.py, DLPLAY_CHECKPOINT_DIR), and a new session of the same
browser on another replica resumes from there.

    saved = saved_checkpoint(key, config_id)     # in the new session: None, or where to resume
    attach_saver(handle, key, config_id)         # every checkpoint of this trainer is stored

Who is who: the browser is the `dlplay_client` cookie that the live component sets
(live/canvas.js); Streamlit reads it from the websocket's request (st.context.cookies), so a
session opened before the first Play does not know it yet: the frame route learns it at the
first frame and tells the saver (`Saver.know`). The page is its URL path; the key is
live_training's. No browser id: nothing is stored, nothing resumed.

When to resume: a checkpoint of this browser, page and key, with the same settings
(config_id), whose session is gone: written by ANOTHER web process (the replica that died),
or by a session of this one that is no longer connected when the page reloaded itself
because its frame requests reached another replica (live/canvas.js sets the short-lived
`dlplay_moved` cookie first). A second tab of the same browser, or a tab reopened on the
same replica, is a new training, not a resumed one; a session that is not
connected stores nothing (a closed tab's trainer, kept for its lease, cannot overwrite the
checkpoint its browser resumed elsewhere). Only trainers in worker processes
(DLPLAY_TRAINERS=process) are stored: their worker already pickles them every ~3 s and
after Pause or Step (live/worker_loop.py), so storing costs the web process one file write;
inline trainers (laptops, tests) are not pickled, and a deployment trains in workers.
"""
from __future__ import annotations

import functools
import logging
import os
import pickle
import threading
from typing import Any, Callable

from live.checkpoint_store import DIR_ENV_VAR, Checkpoint, CheckpointStore
from live import push as live_push
from live.push import CLIENT_COOKIE

log = logging.getLogger(__name__)

MOVED_COOKIE = "dlplay_moved"
SERVER_STOPPED = ("The server this page was on stopped; training resumed from iteration "
                  "{steps:,}.")

_STORES: dict[str, CheckpointStore] = {}
_STORES_LOCK = threading.Lock()


def store() -> CheckpointStore | None:
    """The deployment's store (one per directory, so one writer thread), or None when
    DLPLAY_CHECKPOINT_DIR is unset."""
    root = os.environ.get(DIR_ENV_VAR, "").strip()
    if not root:
        return None
    with _STORES_LOCK:
        if root not in _STORES:
            made = CheckpointStore.from_env()
            if made is None:
                return None
            _STORES[root] = made
        return _STORES[root]


def browser_id() -> str | None:
    """This session's browser: its `dlplay_client` cookie, if its websocket carried one.
    (A function of its own so tests can stand in for a browser: AppTest sends no cookies.)"""
    try:
        import streamlit as st
        value = st.context.cookies.get(CLIENT_COOKIE)
    except Exception:  # noqa: BLE001 - no session (a bare script run): no browser
        return None
    return value or None


def page_id() -> str:
    """The page this script run draws, the same on every replica: its URL path (the main
    script's path for a one-page app)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        ctx = get_script_run_ctx(suppress_warning=True)
        if ctx is None:
            return ""
        page = ctx.pages_manager.get_pages().get(ctx.page_script_hash) or {}
        return str(page.get("url_pathname") or ctx.page_script_hash or "")
    except Exception:  # noqa: BLE001 - a Streamlit without pages: one page
        return ""


def saved_checkpoint(key: str, config_id: str) -> Checkpoint | None:
    """The checkpoint a new session of this browser should resume trainer `key` from: same
    page, same settings, written by another web process (the replica that died)."""
    st_ = store()
    browser = browser_id() if st_ is not None else None
    if browser is None:
        return None
    cp = st_.read(browser, page_id(), key)
    if cp is None or cp.config_id != config_id:
        return None
    if cp.server == live_push.SERVER_ID and (cp.session == session_id() or not moved_here()
                                             or live_push.session_connected(cp.session)):
        return None                     # this server's own: a new tab is a new training
    return cp


def moved_here() -> bool:
    """Whether this page was reloaded because its frames reached another replica (the
    `dlplay_moved` cookie live/canvas.js sets for a minute before that reload)."""
    try:
        import streamlit as st
        return bool(st.context.cookies.get(MOVED_COOKIE))
    except Exception:  # noqa: BLE001 - no session: not moved
        return False


def session_id() -> str:
    """This script run's Streamlit session ("" outside one)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else ""


def factory_of(cp: Checkpoint) -> Callable[[], Any]:
    """A trainer factory that unpickles the checkpoint (in the worker it is sent to)."""
    return functools.partial(pickle.loads, cp.data)


def announce_resumed(handle: Any, cp: Checkpoint) -> None:
    """The status line says, for a minute, that the server stopped and where training
    resumed; a worker death before its next checkpoint resumes from the same point."""
    link = getattr(handle, "link", None)
    if link is not None:
        link.on_checkpoint(cp.steps, cp.data)
        link.announce(SERVER_STOPPED.format(steps=cp.steps))


class Saver:
    """Stores each checkpoint of one trainer (called by its Link's receiver thread)."""

    def __init__(self, st_: CheckpointStore, browser: str | None, page: str, key: str,
                 config_id: str, session: str = ""):
        self.store, self.browser, self.page = st_, browser, page
        self.key, self.config_id, self.session = key, config_id, session

    def know(self, browser: str) -> None:
        """The frame route's first request told the browser's cookie."""
        if self.browser is None and browser:
            self.browser = browser

    def __call__(self, steps: int, data: bytes, playing: bool) -> None:
        """Store one checkpoint (on the worker's receiver thread: never blocks on the disk)."""
        if self.browser is None:
            return                      # the next checkpoint, once the route knows it
        if self.session and not live_push.session_connected(self.session):
            return                      # its tab is gone (maybe resumed elsewhere)
        self.store.save_later(Checkpoint(self.browser, self.page, self.key, self.config_id,
                                         int(steps), bool(playing), live_push.SERVER_ID, data,
                                         session=self.session))

    def forget(self) -> None:
        if self.browser is not None:
            self.store.forget(self.browser, self.page, self.key)


def attach_saver(handle: Any, key: str, config_id: str) -> Saver | None:
    """Store every checkpoint of the trainer behind `handle` (a worker's trainer only)."""
    st_ = store()
    link = getattr(handle, "link", None)
    if st_ is None or link is None or not hasattr(link, "on_saved"):
        return None
    saver = Saver(st_, browser_id(), page_id(), key, config_id, session_id())
    link.on_saved = saver
    return saver


def saver_of(handle: Any) -> Saver | None:
    return getattr(getattr(handle, "link", None), "on_saved", None)
