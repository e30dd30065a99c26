"""Trainer checkpoints on disk, shared by the replicas of one deployment: when a replica dies,
nginx sends its browsers to another replica, whose new session finds the trainer there.

    store = CheckpointStore.from_env()          # None unless DLPLAY_CHECKPOINT_DIR is set
    store.write(Checkpoint(browser, page, key, config_id, steps, playing, server, data))
    saved = store.read(browser, page, key)      # None: none, too old, corrupt or not ours

One file per (browser, page, trainer key), named by a hash of the three (the browser id is
a cookie: it never becomes a path). A file is the magic line, the length of a JSON header,
the header (who wrote it, for which settings, at which iteration, the payload's size and
SHA-256) and the payload: the trainer pickled by its worker (live/worker_loop.py). A write
goes to a temporary file then os.replace, so a reader sees the old file or the new one,
never half of one; a file that does not check out (truncated, another format, another
browser's under a colliding name) reads as no checkpoint. Files older than max_age_s are
not read and are deleted by `prune`, which the background writer runs every minute.

This module never imports Streamlit: live/resume.py joins it to a session.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

log = logging.getLogger(__name__)

DIR_ENV_VAR = "DLPLAY_CHECKPOINT_DIR"
MAX_MB_ENV_VAR = "DLPLAY_CHECKPOINT_MAX_MB"
MAX_MB = 64.0            # a trainer pickled bigger than this is not stored (the page's largest
#                          trainers pickle to a few MB)
MAX_AGE_S = 30 * 60.0    # a class is long over: such a checkpoint is neither read nor kept
PRUNE_EVERY_S = 60.0
MAGIC = b"DLPLAY-CHECKPOINT-1\n"
SUFFIX = ".ckpt"
_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class Checkpoint:
    """One trainer as a session left it: whose (browser, page, key), for which settings
    (config_id, live.controls' id of the page's config), where it was and who wrote it."""
    browser: str
    page: str
    key: str
    config_id: str
    steps: int
    playing: bool
    server: str                  # the web process that wrote it (live.resume.SERVER_ID)
    data: bytes = dataclasses.field(repr=False)
    session: str = ""            # the Streamlit session whose trainer it is
    saved_at: float = 0.0        # time.time() of the write (set by write)


class CheckpointStore:
    """A directory of checkpoint files; see the module docstring."""

    def __init__(self, root: str | os.PathLike, max_bytes: int = int(MAX_MB * 2**20),
                 max_age_s: float = MAX_AGE_S):
        self.root = Path(root)
        self.max_bytes, self.max_age_s = int(max_bytes), float(max_age_s)
        self._pending: dict[Path, Checkpoint] = {}
        self._cond = threading.Condition()
        self._writer: threading.Thread | None = None
        self._pruned_at = 0.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "CheckpointStore | None":
        """The store DLPLAY_CHECKPOINT_DIR names (created if missing), or None when unset:
        then nothing is ever written (laptops, tests)."""
        env = os.environ if env is None else env
        root = env.get(DIR_ENV_VAR, "").strip()
        if not root:
            return None
        try:
            max_mb = float(env.get(MAX_MB_ENV_VAR, MAX_MB))
        except ValueError:
            max_mb = MAX_MB
        return cls(root, max_bytes=int(max_mb * 2**20))

    def path_of(self, browser: str, page: str, key: str) -> Path:
        name = hashlib.sha256("\0".join((browser, page, key)).encode()).hexdigest()[:40]
        return self.root / f"{name}{SUFFIX}"

    # ---- writing -------------------------------------------------------------------------
    def write(self, cp: Checkpoint) -> bool:
        """Store `cp` atomically (temporary file, then os.replace); False when it is larger
        than max_bytes or the disk refused it (logged: a lost checkpoint must not stop a
        class)."""
        if len(cp.data) > self.max_bytes:
            log.warning("checkpoint of %r (%d MB) is over the store's limit: not stored",
                        cp.key, len(cp.data) >> 20)
            return False
        header = {"browser": cp.browser, "page": cp.page, "key": cp.key,
                  "config_id": cp.config_id, "steps": int(cp.steps), "playing": bool(cp.playing),
                  "server": cp.server, "session": cp.session, "saved_at": time.time(),
                  "size": len(cp.data),
                  "sha256": hashlib.sha256(cp.data).hexdigest()}
        head = json.dumps(header).encode()
        path = self.path_of(cp.browser, cp.page, cp.key)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(MAGIC + _LENGTH.pack(len(head)) + head)
                f.write(cp.data)
            os.replace(tmp, path)
            return True
        except OSError as exc:
            log.warning("could not store a checkpoint in %s: %s", self.root, exc)
            try:
                tmp.unlink()
            except OSError:
                pass
            return False

    def save_later(self, cp: Checkpoint) -> None:
        """Hand `cp` to the store's writer thread (the caller, a worker's receiver thread,
        must not wait on the disk). A newer checkpoint of the same trainer replaces one not
        yet written."""
        with self._cond:
            self._pending[self.path_of(cp.browser, cp.page, cp.key)] = cp
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                                name="dlplay-checkpoint-writer")
                self._writer.start()
            self._cond.notify()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every checkpoint handed to save_later is written (tests)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    _busy = False

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending, PRUNE_EVERY_S)
                batch, self._pending = list(self._pending.values()), {}
                self._busy = True
            try:
                for cp in batch:
                    self.write(cp)
                if time.time() - self._pruned_at >= PRUNE_EVERY_S:
                    self.prune()
            except Exception:  # noqa: BLE001 - the writer must outlive one bad checkpoint
                log.exception("checkpoint writer failed")
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def forget(self, browser: str, page: str, key: str) -> None:
        """Drop the stored checkpoint (Reset: that training is over)."""
        path = self.path_of(browser, page, key)
        with self._cond:
            self._pending.pop(path, None)
        try:
            path.unlink()
        except OSError:
            pass

    def prune(self, now: float | None = None) -> int:
        """Delete checkpoint (and leftover temporary) files older than max_age_s; returns
        how many."""
        now = time.time() if now is None else now
        self._pruned_at = now
        removed = 0
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return 0
        for entry in entries:
            if not (entry.name.endswith(SUFFIX) or entry.name.endswith(".tmp")):
                continue
            try:
                if now - entry.stat().st_mtime > self.max_age_s:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                pass                     # another replica pruned it first
        return removed

    # ---- reading -------------------------------------------------------------------------
    def read(self, browser: str, page: str, key: str,
             now: float | None = None) -> Checkpoint | None:
        """The checkpoint stored for this browser, page and key; None when there is none, it
        is older than max_age_s, it belongs to another browser, page or key, or the file
        does not check out (logged in one line, never raised)."""
        path = self.path_of(browser, page, key)
        try:
            if path.stat().st_size > self.max_bytes + 2**20:
                raise ValueError("larger than the store's limit")
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring checkpoint file %s: %s", path.name, exc)
            return None
        try:
            cp = _parse(raw)
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            log.warning("ignoring checkpoint file %s: %s", path.name, exc)
            return None
        now = time.time() if now is None else now
        if (cp.browser, cp.page, cp.key) != (browser, page, key) or \
                now - cp.saved_at > self.max_age_s:
            return None
        return cp


def _parse(raw: bytes) -> Checkpoint:
    """A Checkpoint from a file's bytes; ValueError (or KeyError, TypeError) when they are
    not one whole checkpoint."""
    if not raw.startswith(MAGIC):
        raise ValueError("not a checkpoint file")
    at = len(MAGIC)
    (length,) = _LENGTH.unpack_from(raw, at)
    at += _LENGTH.size
    header = json.loads(raw[at:at + length].decode())
    if not isinstance(header, dict):
        raise ValueError("bad header")
    data = raw[at + length:]
    if len(data) != header["size"] or hashlib.sha256(data).hexdigest() != header["sha256"]:
        raise ValueError("truncated or damaged")
    return Checkpoint(browser=str(header["browser"]), page=str(header["page"]),
                      key=str(header["key"]), config_id=str(header["config_id"]),
                      steps=int(header["steps"]), playing=bool(header["playing"]),
                      server=str(header["server"]), data=data,
                      session=str(header.get("session", "")),
                      saved_at=float(header["saved_at"]))
