"""The processes a launcher starts, and how it ends them: each in its own process group (its
own session), so stopping it reaches everything it started in turn (a replica's training
workers, nginx's worker processes) and a Ctrl-C in the terminal reaches only the launcher,
which then stops them in order. Also: waiting for a server's health route while its process
lives, and the line of its log that says why it exited."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterable

DIE_WITH_LAUNCHER = Path(__file__).with_name("die_with_launcher.py")
# Lines of a server's log that say why it could not start, most telling first.
CAUSES = [
    re.compile(r"Port \d+ is not available"),                      # Streamlit, busy port
    re.compile(r"\[emerg\].*"),                                    # nginx: bind() ... failed
    re.compile(r"^\w*(?:Error|Exception)\b.*", re.M),            # a Python exception's line
]


class StartFailed(RuntimeError):
    """A process exited (or never answered) before its server was up; the message says why."""


def start_group(cmd: list[str], **popen) -> subprocess.Popen:
    """`cmd` as the leader of a new process group (and session); on Linux it also gets
    SIGTERM when the thread that started it ends (deploy/die_with_launcher.py), so even a
    launcher killed without cleanup (SIGKILL) does not leave it running."""
    if sys.platform.startswith("linux"):
        cmd = [sys.executable, "-I", str(DIE_WITH_LAUNCHER), str(os.getpid()), *cmd]
    return subprocess.Popen(cmd, start_new_session=True, stdin=subprocess.DEVNULL, **popen)


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """`sig` to every process of `proc`'s group (the group outlives its leader)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def stop_groups(procs: Iterable[subprocess.Popen], grace_s: float = 10.0) -> None:
    """SIGTERM to each process group in order, then wait up to `grace_s` in all for them to
    end; SIGKILL to whatever is left of any group (a worker its server did not take along)."""
    procs = list(procs)
    for proc in procs:
        signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        signal_group(proc, signal.SIGKILL)
    for proc in procs:
        if proc.poll() is None:
            proc.wait()
        end = time.monotonic() + 5.0
        while group_alive(proc.pid) and time.monotonic() < end:
            time.sleep(0.05)


def exit_cause(log: str) -> str:
    """The line of a log that says why its process stopped: a known cause, else its last line."""
    for pattern in CAUSES:
        found = [m.group(0) for m in pattern.finditer(log)]
        if found:
            return found[-1].strip()
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return lines[-1] if lines else "(its log is empty)"


def read_log(path: Path | None) -> str:
    try:
        return path.read_text(errors="replace") if path is not None else ""
    except OSError:
        return ""


def answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether `url` answers `ok` now."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def wait_healthy(name: str, url: str, proc: subprocess.Popen, log: Path | None = None,
                 timeout_s: float | None = None, on_wait=None) -> None:
    """Until `url` answers ok. Keeps waiting while `proc` runs (a loaded machine may take
    minutes; `on_wait(seconds)` is called about every 30 s); raises StartFailed at once when
    it exits, naming the cause from its `log`, or after `timeout_s` when one is given."""
    start = time.monotonic()
    told = start
    while not answers(url):
        if proc.poll() is not None:
            cause = exit_cause(read_log(log)) if log is not None else "see its output above"
            raise StartFailed(f"{name} exited with code {proc.returncode} before it answered: "
                              f"{cause}")
        now = time.monotonic()
        if timeout_s is not None and now - start > timeout_s:
            raise StartFailed(f"{name} did not answer {url} within {timeout_s:.0f} s")
        if on_wait is not None and now - told >= 30.0:
            told = now
            on_wait(now - start)
        time.sleep(0.3)
