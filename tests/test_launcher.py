"""`dlplay` and `dlplay serve` (deploy/cli.py): their options, the address they listen on,
and that every way of stopping them (SIGTERM, Ctrl-C, a start that fails) leaves no process
of theirs running and no temporary folder behind. Every process a launcher starts inherits a
tag in its environment; /proc finds whatever still carries it."""
from __future__ import annotations

import os
import signal
import socket
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from deploy.cli import parse
from deploy.processes import StartFailed, exit_cause, start_group, stop_groups, wait_healthy
from deploy.replicas import listen_on, local_host, nginx_config

ROOT = Path(__file__).resolve().parent.parent
TAG = "DLPLAY_TEST_LAUNCH"


# ---- options ---------------------------------------------------------------------------

def test_laptop_listens_on_the_loopback_unless_told():
    command, args = parse([])
    assert command == "laptop" and args.address == "127.0.0.1" and args.port is None
    assert not args.no_browser
    _, args = parse(["--address", "0.0.0.0", "--port", "9000", "--no-browser"])
    assert (args.address, args.port, args.no_browser) == ("0.0.0.0", 9000, True)


def test_serve_listens_on_every_interface_with_one_server_by_default():
    command, args = parse(["serve"])
    assert command == "serve" and (args.address, args.port, args.replicas) == ("0.0.0.0", 8501, 1)
    _, args = parse(["serve", "--address", "10.0.0.5", "--port", "8080", "--replicas", "3"])
    assert (args.address, args.port, args.replicas) == ("10.0.0.5", 8080, 3)


@pytest.mark.parametrize("argv", [["serve", "--replicas", "0"], ["serve", "--port", "70000"],
                                  ["--port", "0"], ["serve", "--port", "65535", "--replicas", "2"],
                                  ["serve", "--bogus"]])
def test_bad_options_are_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        parse(argv)
    assert exc.value.code == 2 and "usage:" in capsys.readouterr().err


def test_dlplay_is_a_console_script():
    import tomllib
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"dlplay": "deploy.cli:main"}


def test_nginx_listens_on_the_address_given():
    assert listen_on(None, 8080) == "8080"
    assert listen_on("0.0.0.0", 8080) == "0.0.0.0:8080"
    assert listen_on("::", 8080) == "[::]:8080"
    conf = nginx_config(Path("/tmp/x"), 8080, [8081, 8082], "127.0.0.2")
    assert "listen 127.0.0.2:8080;" in conf and "server 127.0.0.1:8081" in conf
    assert local_host("0.0.0.0") == "127.0.0.1" and local_host("127.0.0.2") == "127.0.0.2"


@pytest.mark.parametrize("log, cause", [
    ("  Stopping...\n2026-12-07 ERROR Port 8809 is not available\n", "Port 8809 is not available"),
    ("nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)\n",
     "[emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)"),
    ("Traceback (most recent call last):\n  File \"x\", line 1\nModuleNotFoundError: No "
     "module named 'torch'\n", "ModuleNotFoundError: No module named 'torch'"),
    ("one\nlast words\n\n", "last words"),
    ("", "(its log is empty)"),
])
def test_the_cause_of_an_exit_is_read_from_the_log(log, cause):
    assert exit_cause(log) == cause


def test_the_laptop_opens_its_tab_itself_on_a_free_port(monkeypatch):
    """Streamlit runs headless (no first-run email prompt, no tab of its own); the command
    opens the tab once the server answers, on the first free port from 8501."""
    from deploy import cli
    started, opened = [], []

    class Done:
        pid = 0

        def wait(self):
            return 0

    monkeypatch.setattr(cli, "free_port", lambda address: 8507)
    monkeypatch.setattr(cli, "start_group", lambda cmd, **kw: started.append(cmd) or Done())
    monkeypatch.setattr(cli, "wait_healthy", lambda name, url, proc: opened.append(url))
    monkeypatch.setattr(cli, "stop_groups", lambda procs: None)
    monkeypatch.setattr(cli, "open_tab", opened.append)
    assert cli.run_laptop(cli.parse([])[1]) == 0
    cmd = started[0]
    assert cmd[cmd.index("--server.headless") + 1] == "true"
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--server.port") + 1] == "8507"
    assert opened == ["http://127.0.0.1:8507/_stcore/health", "http://127.0.0.1:8507"]


def test_no_tab_is_opened_without_a_graphical_session(monkeypatch):
    """A laptop over ssh: no text browser takes over the terminal; the URL is printed."""
    from deploy import cli
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux's rule")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(cli.webbrowser, "open", lambda url: pytest.fail("a browser was asked"))
    assert cli.open_tab("http://127.0.0.1:8501") is False


def test_a_busy_port_is_skipped_when_the_laptop_picks_one():
    from deploy.cli import free_port
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert free_port("127.0.0.1", first=taken) > taken


def test_stop_signals_unwind_to_the_cleanup_but_nohup_is_respected():
    from deploy import cli
    saved = {s: signal.getsignal(s) for s in cli.STOP_SIGNALS}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)            # as nohup starts a command
        cli._stop_on_signals()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        with pytest.raises(cli.Stopping):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN   # during the cleanup
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


# ---- processes -------------------------------------------------------------------------

def _alive(pid: int) -> bool:
    """Running (a zombie waits only for its parent to reap it: it runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _stat(pid: str) -> list[str]:
    """/proc/<pid>/stat's fields after the command name: state, ppid, pgrp, session, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _tagged(tag: str, sessions: set[int] = frozenset()) -> list[str]:
    """The running processes whose environment carries TAG=tag, or which belong to one of
    `sessions` (nginx writes its process title over its environment)."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ours = int(_stat(entry.name)[3]) in sessions or \
                needle in (entry / "environ").read_bytes().split(b"\0")
            if ours and _alive(int(entry.name)):
                found.append(f"{entry.name} {(entry / 'cmdline').read_bytes()!r}")
        except OSError:
            continue
    return found


def _sessions(root: int) -> set[int]:
    """The sessions of `root` and of all its descendants."""
    children: dict[int, list[int]] = {}
    sids: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat(entry.name)
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
            sids[int(entry.name)] = int(fields[3])
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in sids:
            out.add(sids[pid])
        todo.extend(children.get(pid, []))
    return out


def _wait_gone(tag: str, sessions: set[int] = frozenset(), timeout_s: float = 5.0) -> list[str]:
    end = time.monotonic() + timeout_s
    while (left := _tagged(tag, sessions)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def test_stopping_a_group_ends_the_children_of_its_leader_too():
    tag = uuid.uuid4().hex
    child = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', " \
            "'import time; time.sleep(60)']); print('up', flush=True); time.sleep(60)"
    proc = start_group([sys.executable, "-c", child], env={**os.environ, TAG: tag},
                       stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"up\n"
    assert len(_tagged(tag)) == 2
    stop_groups([proc], grace_s=5)
    assert _wait_gone(tag) == []


def test_the_health_wait_fails_at_once_when_the_server_exits(tmp_path):
    log = tmp_path / "replica.log"
    with open(log, "w") as out:
        proc = start_group([sys.executable, "-c", "import time; time.sleep(1); "
                            "print('ERROR Port 9 is not available')"], stdout=out)
    start = time.monotonic()
    with pytest.raises(StartFailed, match=r"replica :9 exited with code 0 before it answered: "
                                          r"Port 9 is not available"):
        wait_healthy("replica :9", "http://127.0.0.1:9/_stcore/health", proc, log)
    assert time.monotonic() - start < 10


def test_a_training_worker_ends_with_its_web_process():
    """The web process dies by SIGKILL while its worker still imports torch: the worker
    exits within a second or so (live/parent_watch.py), it is not orphaned."""
    tag = uuid.uuid4().hex
    web = ("from live.worker_link import spawn_worker; import time; "
           "conn, proc = spawn_worker(0.025, 0.15); print(proc.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", web], cwd=ROOT, stdout=subprocess.PIPE,
                              env={**os.environ, TAG: tag, "PYTHONPATH": str(ROOT)})
    worker = int(parent.stdout.readline())
    assert _alive(worker)
    parent.kill()
    parent.wait()
    assert _wait_gone(tag, timeout_s=10) == []


# ---- real servers ----------------------------------------------------------------------

def _free_block(n: int, host: str = "127.0.0.1") -> int:
    """A port p with p..p+n free on `host` and on 127.0.0.1."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n < 65535 and all(_free(h, base + i) for i in range(n + 1)
                                    for h in {host, "127.0.0.1"}):
            return base
    raise RuntimeError("no free port block")


def _free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
            return True
        except OSError:
            return False


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def _tmpdir(tag: str) -> Path:
    """The launcher's TMPDIR in the test tagged `tag`: its own, so folders that other tests
    running at the same time make (pytest-xdist) never count as left behind by this one."""
    path = Path(tempfile.gettempdir()) / f"launcher-tmp-{tag}"
    path.mkdir(exist_ok=True)
    return path


def _folders(tag: str) -> set[Path]:
    return set(_tmpdir(tag).glob("dlplay-*"))


def _launch(args: list[str], tag: str, extra_env: dict | None = None) -> subprocess.Popen:
    """The launcher in a session of its own, its output in files (read while it runs)."""
    env = {**os.environ, TAG: tag, "DLPLAY_WORKERS": "1", "TMPDIR": str(_tmpdir(tag)),
           **(extra_env or {})}
    out = Path(tempfile.mkdtemp(prefix="launcher-out-"))
    with open(out / "stdout", "w") as stdout, open(out / "stderr", "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "deploy.cli", *args], cwd=ROOT, env=env,
                                stdout=stdout, stderr=stderr, start_new_session=True)
    proc.out = out
    return proc


def _output(proc: subprocess.Popen) -> tuple[str, str]:
    return (proc.out / "stdout").read_text(), (proc.out / "stderr").read_text()


def _finish(proc: subprocess.Popen, timeout_s: float = 180) -> tuple[int, str, str]:
    proc.wait(timeout=timeout_s)
    out, err = _output(proc)
    shutil.rmtree(proc.out, ignore_errors=True)
    return proc.returncode, out, err


def _wait_up(proc: subprocess.Popen, url: str, says: str, timeout_s: float = 180) -> None:
    """Until `url` answers and the launcher printed `says`."""
    end = time.monotonic() + timeout_s
    while not (_answers(url) and says in _output(proc)[0]):
        assert proc.poll() is None, _output(proc)
        assert time.monotonic() < end, (f"{url} did not answer", _output(proc))
        time.sleep(0.5)


def _stop(proc: subprocess.Popen, sig: int) -> tuple[int, str, str, float]:
    start = time.monotonic()
    proc.send_signal(sig)
    code, out, err = _finish(proc, 60)
    return code, out, err, time.monotonic() - start


@pytest.fixture
def nginx():
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        pytest.skip("nginx is not installed (apt-get install -y nginx)")


@pytest.fixture
def tag():
    tag = uuid.uuid4().hex
    yield tag
    for line in _tagged(tag):                     # a failed test leaves nothing either
        os.kill(int(line.split()[0]), signal.SIGKILL)
    shutil.rmtree(_tmpdir(tag), ignore_errors=True)


@pytest.mark.slow
def test_serve_listens_on_the_address_given_and_sigterm_leaves_nothing(nginx, tag):
    """`serve --address 127.0.0.2` (another loopback address): nginx answers there and not
    on 127.0.0.1; SIGTERM to the launcher ends the replicas, nginx and the folder."""
    before = _folders(tag)
    port = _free_block(2, "127.0.0.2")
    proc = _launch(["serve", "--address", "127.0.0.2", "--port", str(port), "--replicas", "2"],
                   tag)
    try:
        _wait_up(proc, f"http://127.0.0.2:{port}/healthz",
                 f"The class connects to http://127.0.0.2:{port}")
        assert not _answers(f"http://127.0.0.1:{port}/healthz")
        sessions = _sessions(proc.pid)           # the launcher's, 2 replicas', nginx's
        assert len(sessions) == 4 and len(_tagged(tag, sessions)) >= 6      # nginx's workers
    finally:
        code, out, err, took = _stop(proc, signal.SIGTERM)
    assert code == 0 and "Traceback" not in err, err
    assert _wait_gone(tag, sessions) == [] and _folders(tag) <= before
    print(f"stopped in {took:.1f} s")


@pytest.mark.slow
def test_laptop_listens_on_the_loopback_only_and_ctrl_c_leaves_nothing(tag):
    port = _free_block(0, "127.0.0.2")
    proc = _launch(["--port", str(port), "--no-browser"], tag)
    try:
        _wait_up(proc, f"http://127.0.0.1:{port}/_stcore/health",
                 f"The playground is at http://127.0.0.1:{port}")
        assert not _answers(f"http://127.0.0.2:{port}/_stcore/health")
    finally:
        code, out, err, took = _stop(proc, signal.SIGINT)
    assert code == 0 and "Traceback" not in err, err
    assert "Email" not in out                         # headless: no first-run prompt
    assert _wait_gone(tag) == []


@pytest.mark.slow
def test_a_busy_port_fails_the_start_at_once_naming_the_port(tag):
    before = _folders(tag)
    port = _free_block(0, "127.0.0.2")
    with socket.socket() as busy:
        busy.bind(("127.0.0.2", port))
        busy.listen()
        proc = _launch(["serve", "--address", "127.0.0.2", "--port", str(port)], tag)
        code, out, err = _finish(proc)
    assert code == 1, (out, err)
    assert f"Port {port} is not available" in err and "Traceback" not in err, err
    assert _wait_gone(tag) == [] and _folders(tag) <= before


@pytest.mark.slow
def test_a_replica_that_crashes_at_start_stops_the_others(nginx, tag, tmp_path):
    """Replica 2 of 2 dies at start (a sitecustomize that exits in it): the launcher stops
    replica 1, which was starting or up, and says why replica 2 died."""
    before = _folders(tag)
    port = _free_block(2)
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import os, sys
        if "{port + 2}" in sys.argv:
            print("ImportError: the replica cannot start", file=sys.stderr, flush=True)
            os._exit(1)
    """))
    path = os.pathsep.join([str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "")
                                              .split(os.pathsep) if p])
    proc = _launch(["serve", "--address", "127.0.0.1", "--port", str(port), "--replicas", "2"],
                   tag, {"PYTHONPATH": path})
    code, out, err = _finish(proc)
    assert code == 1, (out, err)
    assert f"replica :{port + 2} exited with code 1 before it answered: ImportError: the " \
           "replica cannot start" in err and "Traceback" not in err, err
    assert _wait_gone(tag) == [] and _folders(tag) <= before


@pytest.mark.slow
def test_a_launcher_killed_without_cleanup_still_takes_its_servers_along(nginx, tag):
    """SIGKILL runs no cleanup: the servers and nginx end anyway (Linux's parent-death
    signal, deploy/die_with_launcher.py); only the temporary folder stays."""
    port = _free_block(2)
    proc = _launch(["serve", "--address", "127.0.0.1", "--port", str(port), "--replicas", "2"],
                   tag)
    try:
        _wait_up(proc, f"http://127.0.0.1:{port}/healthz",
                 f"The class connects to http://127.0.0.1:{port}")
        sessions = _sessions(proc.pid)
        assert len(sessions) == 4
    finally:
        code, out, err, took = _stop(proc, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert _wait_gone(tag, sessions, timeout_s=15) == []
    for folder in _folders(tag):                    # what SIGKILL cannot clean up
        if (folder / "nginx.conf").exists() and f":{port};" in (folder / "nginx.conf").read_text():
            shutil.rmtree(folder)
