"""A session whose replica died resumes on another replica (live/resume.py): the harness page
with trainers in worker processes and a shared checkpoint directory. A first session plays;
its checkpoints land in the store; a new session of the same browser, as if on the other
replica (another server id, the same directory, the same cookie), opens the page and resumes
from the latest one, playing, and says so. Another browser, a second tab on the same
server and a corrupt file all start from 0, quietly."""
from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from live import push as live_push
from live import resume
from live.checkpoint_store import CheckpointStore
from tests.pages.test_live import HARNESS, _steps

KEY = "h"


@pytest.fixture
def shared_store(monkeypatch, tmp_path):
    """Process trainers, a checkpoint directory, and a browser id that tests set."""
    monkeypatch.setenv("DLPLAY_TRAINERS", "process")
    monkeypatch.setenv("DLPLAY_CHECKPOINT_DIR", str(tmp_path))
    browser = {"id": "browser-a", "session": "session-1"}
    monkeypatch.setattr(resume, "browser_id", lambda: browser["id"])
    # AppTest gives every session one id: each _open() here is a session of its own
    monkeypatch.setattr(resume, "session_id", lambda: browser["session"])
    browser["moved"] = False        # the dlplay_moved cookie of a page that reloaded itself
    monkeypatch.setattr(resume, "moved_here", lambda: browser["moved"])
    return browser, CheckpointStore(tmp_path)


def _open() -> AppTest:
    at = AppTest.from_file(HARNESS, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def _play_until_stored(at: AppTest, store: CheckpointStore, page: str, at_least: int):
    """Play, and return (stored checkpoint, the trainer's iteration at that moment) once a
    checkpoint of at least `at_least` iterations is in the store."""
    at.button(key=f"{KEY}__play").click().run()
    handle = at.session_state[f"{KEY}__handle"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        cp = store.read("browser-a", page, KEY)
        if cp is not None and cp.steps >= at_least:
            return cp, handle.read(lambda tr: tr.steps)
        time.sleep(0.05)
    raise AssertionError("no checkpoint reached the store in 60 s")


def test_a_new_session_of_the_same_browser_on_another_replica_resumes(shared_store,
                                                                      monkeypatch):
    browser, store = shared_store
    first = _open()
    page = _stored_page(store, first)
    cp, reached = _play_until_stored(first, store, page, at_least=100)
    assert cp.playing and cp.server == live_push.SERVER_ID
    first.session_state[f"{KEY}__handle"].cancel()          # its replica dies: gone with it

    monkeypatch.setattr(live_push, "SERVER_ID", "the-other-replica")
    browser["session"] = "session-2"
    second = _open()
    resumed = int(_captions(second).split("resumed from iteration ")[1].split(".")[0]
                  .replace(",", ""))
    assert "The server this page was on stopped; training resumed from iteration" in \
        _captions(second)
    assert resumed == cp.steps and resumed >= 0.9 * reached, (resumed, reached)
    assert _steps(second) >= resumed and not second.error
    assert second.session_state[f"{KEY}__playing"]          # playing again, as it was
    assert second.button(key=f"{KEY}__play").label == "Pause"
    handle = second.session_state[f"{KEY}__handle"]
    t0 = time.monotonic()
    while handle.read(lambda tr: tr.steps) <= resumed and time.monotonic() - t0 < 30:
        time.sleep(0.1)
    assert handle.read(lambda tr: tr.steps) > resumed        # and it trains on

    # Reset ends that training on every replica: the store forgets it
    second.button(key=f"{KEY}__reset").click().run()
    assert store.read("browser-a", page, KEY) is None
    second.session_state[f"{KEY}__handle"].cancel()


def test_never_another_browsers_nor_the_same_servers_nor_a_corrupt_checkpoint(shared_store,
                                                                                monkeypatch):
    browser, store = shared_store
    first = _open()
    page = _stored_page(store, first)
    cp, _ = _play_until_stored(first, store, page, at_least=25)
    first.session_state[f"{KEY}__handle"].cancel()

    browser["session"] = "session-2"            # the same browser, the same server, the first
    second_tab = _open()                        # tab still connected: a new tab, a new training
    assert _steps(second_tab) == 0 and "resumed" not in _captions(second_tab)
    second_tab.session_state[f"{KEY}__handle"].cancel()

    monkeypatch.setattr(live_push, "SERVER_ID", "the-other-replica")
    browser["id"] = "browser-b"                 # another browser on the other replica
    other = _open()
    assert _steps(other) == 0 and "resumed" not in _captions(other)
    assert not other.session_state[f"{KEY}__playing"]
    other.session_state[f"{KEY}__handle"].cancel()

    browser["id"] = "browser-a"                 # its own, but the file is damaged
    path = store.path_of("browser-a", page, KEY)
    path.write_bytes(path.read_bytes()[:-100])
    damaged = _open()
    assert _steps(damaged) == 0 and "resumed" not in _captions(damaged)
    assert not damaged.exception and not damaged.error
    damaged.session_state[f"{KEY}__handle"].cancel()


def _stored_page(store: CheckpointStore, at: AppTest) -> str:
    """The page id the harness's checkpoints are filed under (its script's page)."""
    return at.session_state[f"{KEY}__handle"].link.on_saved.page


def test_a_page_reloaded_on_the_same_server_resumes_once_its_old_session_is_gone(
        shared_store, monkeypatch):
    """The page reloads itself when its frames reach another replica (live/canvas.js, with
    the dlplay_moved cookie); the new session may land on the server that already resumed it
    once. Its checkpoint is this server's own, its session disconnected: resumed. A tab
    opened again without that cookie starts a new training."""
    browser, store = shared_store
    first = _open()
    page = _stored_page(store, first)
    cp, _ = _play_until_stored(first, store, page, at_least=25)
    first.session_state[f"{KEY}__handle"].cancel()
    monkeypatch.setattr(live_push, "session_connected", lambda sid: sid != "session-1")
    browser["session"] = "session-2"
    reopened = _open()                          # a tab opened again later: a new training
    assert _steps(reopened) == 0 and "resumed" not in _captions(reopened)
    reopened.session_state[f"{KEY}__handle"].cancel()
    browser["session"], browser["moved"] = "session-3", True
    again = _open()                             # the page reloaded itself: resumed
    assert f"resumed from iteration {cp.steps:,}." in _captions(again)
    assert cp.server == live_push.SERVER_ID and cp.session == "session-1"
    again.session_state[f"{KEY}__handle"].cancel()
