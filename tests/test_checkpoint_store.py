"""live/checkpoint_store.py: the shared directory where replicas find each other's trainers.
Written atomically, read back whole or not at all, one browser never gets another's, and
old files are pruned."""
from __future__ import annotations

import os
import pickle
import threading
import time

import pytest

from live.checkpoint_store import DIR_ENV_VAR, Checkpoint, CheckpointStore


def _cp(browser="browser-a", page="gan", key="gan", steps=120, data=None, **kw) -> Checkpoint:
    data = pickle.dumps({"weights": list(range(50)), "steps": steps}) if data is None else data
    return Checkpoint(browser, page, key, kw.pop("config_id", '{"lr": 0.1}'), steps,
                      kw.pop("playing", True), kw.pop("server", "replica-1"), data)


def test_off_without_the_env_var_and_on_with_it(tmp_path):
    assert CheckpointStore.from_env({}) is None
    assert CheckpointStore.from_env({DIR_ENV_VAR: "  "}) is None
    store = CheckpointStore.from_env({DIR_ENV_VAR: str(tmp_path / "ck")})
    assert store is not None and store.root == tmp_path / "ck"


def test_write_then_read_gives_the_same_checkpoint(tmp_path):
    store = CheckpointStore(tmp_path)
    cp = _cp()
    assert store.write(cp)
    got = store.read("browser-a", "gan", "gan")
    assert got is not None and got.data == cp.data and pickle.loads(got.data)["steps"] == 120
    assert (got.steps, got.playing, got.server, got.config_id) == \
        (120, True, "replica-1", '{"lr": 0.1}')
    assert abs(got.saved_at - time.time()) < 60
    assert store.read("browser-a", "gan", "other key") is None
    assert store.read("browser-a", "vae", "gan") is None


def test_another_browser_never_reads_it(tmp_path):
    store = CheckpointStore(tmp_path)
    store.write(_cp(browser="browser-a"))
    assert store.read("browser-b", "gan", "gan") is None
    # even a file that sits under browser b's name (a hash collision, a copied file) is
    # refused: the header names browser a
    os.replace(store.path_of("browser-a", "gan", "gan"), store.path_of("browser-b", "gan", "gan"))
    assert store.read("browser-b", "gan", "gan") is None


def test_the_browser_id_never_becomes_a_path(tmp_path):
    store = CheckpointStore(tmp_path / "ck")
    assert store.write(_cp(browser="../../etc/passwd"))
    assert [p.parent for p in (tmp_path / "ck").iterdir()] == [tmp_path / "ck"]
    assert store.read("../../etc/passwd", "gan", "gan") is not None


@pytest.mark.parametrize("damage", ["truncated", "random", "empty", "flipped", "header"])
def test_a_corrupt_file_reads_as_none_without_raising(tmp_path, damage, caplog):
    store = CheckpointStore(tmp_path)
    store.write(_cp())
    path = store.path_of("browser-a", "gan", "gan")
    raw = path.read_bytes()
    path.write_bytes({"truncated": raw[: len(raw) - 7], "random": os.urandom(300), "empty": b"",
                      "flipped": raw[:-1] + bytes([raw[-1] ^ 1]),
                      "header": raw[:30] + b"{" + raw[31:]}[damage])
    assert store.read("browser-a", "gan", "gan") is None
    assert not any(r.exc_info for r in caplog.records)        # one line, no traceback


def test_a_write_replaces_atomically_readers_see_old_or_new(tmp_path):
    """A reader racing 100 writes of two different checkpoints always gets one whole."""
    store = CheckpointStore(tmp_path)
    a, b = _cp(steps=1, data=b"a" * 200_000), _cp(steps=2, data=b"b" * 300_000)
    store.write(a)
    seen, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            got = store.read("browser-a", "gan", "gan")
            seen.append(None if got is None else (got.steps, got.data))

    t = threading.Thread(target=reader)
    t.start()
    for i in range(100):
        store.write(b if i % 2 else a)
    stop.set()
    t.join()
    assert seen and all(s in ((1, a.data), (2, b.data)) for s in seen)
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_too_big_is_not_stored(tmp_path):
    store = CheckpointStore(tmp_path, max_bytes=1000)
    assert not store.write(_cp(data=b"x" * 1001))
    assert store.read("browser-a", "gan", "gan") is None
    assert store.write(_cp(data=b"x" * 1000))


def test_old_checkpoints_are_not_read_and_are_pruned(tmp_path):
    store = CheckpointStore(tmp_path, max_age_s=1800)
    store.write(_cp(browser="old"))
    store.write(_cp(browser="new"))
    (tmp_path / ".left.tmp").write_bytes(b"half")
    old = store.path_of("old", "gan", "gan")
    then = time.time() - 3600
    os.utime(old, (then, then))
    os.utime(tmp_path / ".left.tmp", (then, then))
    assert store.read("old", "gan", "gan", now=time.time() + 3600) is None    # by its header
    assert store.prune() == 2
    assert not old.exists() and not (tmp_path / ".left.tmp").exists()
    assert store.read("new", "gan", "gan") is not None


def test_save_later_writes_the_latest_in_the_background_and_forget_drops_it(tmp_path):
    store = CheckpointStore(tmp_path)
    for steps in (10, 20, 30):
        store.save_later(_cp(steps=steps))
    assert store.flush()
    assert store.read("browser-a", "gan", "gan").steps == 30
    store.forget("browser-a", "gan", "gan")
    assert store.read("browser-a", "gan", "gan") is None
