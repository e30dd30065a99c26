"""Start N Streamlit replicas of app.py and nginx in front of them (sticky per browser).

    dlplay serve --replicas 2 --address 0.0.0.0 --port 8080     # until Ctrl-C (deploy/cli.py)

Replicas listen on 127.0.0.1:<port+1>..<port+N>; nginx on <address>:<port> (0.0.0.0: every
interface, the room reaches it). One replica needs no nginx: it listens on <address>:<port>
itself. Each replica is one Python process that trains in worker processes
(DLPLAY_TRAINERS=process unless the environment says otherwise; the CPUs but one are split
among the replicas' workers, DLPLAY_WORKERS); nginx keeps a browser on one replica (cookie
`dlplay_route`).

A fault takes down one process, never the class: the launcher watches every process it
started; a replica (or nginx) that exits is logged with the cause its log gives and started
again after a backoff (1 s, 2 s, 4 s ... 30 s; back to 1 s once it has run a minute), and the
others are never stopped. Meanwhile nginx sends that replica's browsers to the next replica
(`proxy_next_upstream`); their Streamlit page reconnects there as a new session, which
finds each live trainer's latest checkpoint in <prefix>/checkpoints (DLPLAY_CHECKPOINT_DIR,
shared by the replicas) and resumes it, saying so on the status line.

Starting and stopping leave nothing behind: each replica and nginx runs in its own process
group (deploy/processes.py), `stop()` ends every group and removes the temporary folder
<prefix>; a start that fails (a replica exits before it answers: the error names the cause
from its log, e.g. "Port 8081 is not available") stops what it started first.
The log (stdout and <prefix>/deploy.log) says what happened.
tests/e2e/test_replicas.py drives two browsers through the proxy and kills a replica;
tests/test_launcher.py stops launchers every way and looks for what is left.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from engine.cpus import usable_cpus
from deploy.processes import (StartFailed, exit_cause, read_log, start_group, stop_groups,
                              wait_healthy)

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
LOG = logging.getLogger("dlplay.deploy")


@dataclass(frozen=True)
class Backoff:
    """Seconds to wait before restart number k (k = 0, 1, ...) of a process that keeps
    exiting: first * factor**k, at most cap; a process that ran `healthy_s` counts as new."""
    first: float = 1.0
    factor: float = 2.0
    cap: float = 30.0
    healthy_s: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.cap, self.first * self.factor ** max(0, failures - 1))


@dataclass
class Supervised:
    """One process the launcher keeps running: `spawn` starts it again; `log`, where its
    output goes, names the cause when it exits."""
    name: str
    spawn: Callable[[], subprocess.Popen]
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    failures: int = 0          # exits in a row without `healthy_s` of running between
    restart_at: float | None = None
    restarts: int = 0
    log: Path | None = None

    def start(self, now: float) -> None:
        self.proc = self.spawn()
        self.started_at = now
        self.restart_at = None

    def step(self, now: float, backoff: Backoff) -> None:
        """Notice an exit (schedule a restart) or do a scheduled restart."""
        if self.restart_at is not None:
            if now >= self.restart_at:
                self.restarts += 1
                LOG.warning("%s: restarting (restart %d)", self.name, self.restarts)
                self.start(now)
                LOG.warning("%s: restarted as pid %d", self.name, self.proc.pid)
            return
        if self.proc is None or self.proc.poll() is None:
            return
        ran = now - self.started_at
        self.failures = 1 if ran >= backoff.healthy_s else self.failures + 1
        wait = backoff.delay(self.failures)
        cause = f" ({_why_exited(self.proc.returncode, self.log)})"
        LOG.error("%s: pid %d exited with code %s after %.0f s%s; the others keep serving; "
                  "restart in %.0f s", self.name, self.proc.pid, self.proc.returncode, ran,
                  cause, wait)
        self.restart_at = now + wait


def _why_exited(code: int, log: Path | None) -> str:
    """A signal's name when one killed the process (an out-of-memory kill is SIGKILL), else
    the cause its log gives."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return exit_cause(read_log(log)) if log is not None else "no log"


def server_lines(addresses: list[str]) -> str:
    """The upstream's `server` lines. A replica that refuses a connection is skipped for
    fail_timeout: its browsers are hashed onto the others meanwhile (proxy_next_upstream in
    the template)."""
    return "\n".join(f"        server {a} max_fails=1 fail_timeout=5s;" for a in addresses)


def listen_on(address: str | None, port: int) -> str:
    """nginx's `listen` argument: the port alone (every interface) without an address."""
    if not address:
        return str(port)
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def nginx_config(prefix: Path, port: int, backends: list[int],
                 address: str = "127.0.0.1") -> str:
    servers = server_lines([f"127.0.0.1:{p}" for p in backends])
    return TEMPLATE.read_text().format(prefix=prefix, listen=listen_on(address, port),
                                       servers=servers)


def local_host(address: str) -> str:
    """Where this machine reaches a server listening on `address` (every interface: loopback)."""
    if address in ("", "0.0.0.0"):
        return "127.0.0.1"
    if address == "::":
        return "[::1]"
    return f"[{address}]" if ":" in address else address


def streamlit_command(address: str, port: int, headless: bool = True) -> list[str]:
    """This interpreter running app.py's server on address:port (no usage statistics)."""
    return [sys.executable, "-m", "streamlit", "run", "app.py",
            "--server.headless", str(headless).lower(), "--server.address", address,
            "--server.port", str(port), "--browser.gatherUsageStats", "false"]


def replica_env(replicas: int, cpus: int | None = None,
                checkpoints: Path | None = None) -> dict[str, str]:
    """Defaults for each replica: trainers in worker processes, the CPUs but one (the web
    processes and nginx) shared among the replicas' worker pools, at least one each; and,
    given `checkpoints`, the directory where all of them keep their trainers' checkpoints
    (live/checkpoint_store.py: a browser sent to another replica resumes its training)."""
    cpus = cpus or usable_cpus()
    env = {"DLPLAY_TRAINERS": "process",
           "DLPLAY_WORKERS": str(max(1, (cpus - 1) // max(1, replicas)))}
    if checkpoints is not None:
        env["DLPLAY_CHECKPOINT_DIR"] = str(checkpoints)
    return env


@dataclass
class Deployment:
    """`replicas` servers of app.py reachable at address:port: one listens there itself;
    more listen on the loopback behind nginx there. `profile`: environment defaults for the
    replicas (deploy/hosting.env's), under the launcher's own environment."""
    port: int
    replicas: int
    address: str = "127.0.0.1"
    profile: dict[str, str] = field(default_factory=dict)
    prefix: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dlplay-")))
    backoff: Backoff = field(default_factory=Backoff)
    units: list[Supervised] = field(default_factory=list)

    @property
    def behind_nginx(self) -> bool:
        return self.replicas > 1

    @property
    def backends(self) -> list[int]:
        if not self.behind_nginx:
            return [self.port]
        return [self.port + 1 + i for i in range(self.replicas)]

    @property
    def url(self) -> str:
        """Where this machine reaches the deployment."""
        return f"http://{local_host(self.address)}:{self.port}"

    @property
    def procs(self) -> list[subprocess.Popen]:
        """The running processes: the replicas, then nginx."""
        return [u.proc for u in self.units if u.proc is not None]

    def replica(self, port: int) -> Supervised:
        return next(u for u in self.units if u.name == f"replica :{port}")

    def _replica_spawner(self, port: int, env: dict[str, str],
                         log: Path) -> Callable[[], subprocess.Popen]:
        address = "127.0.0.1" if self.behind_nginx else self.address

        def spawn() -> subprocess.Popen:
            with open(log, "a") as out:
                return start_group(streamlit_command(address, port), cwd=ROOT, stdout=out,
                                   stderr=subprocess.STDOUT, env=env)
        return spawn

    def _nginx_spawner(self, nginx: str, conf: Path, log: Path) -> Callable[[], subprocess.Popen]:
        def spawn() -> subprocess.Popen:
            with open(log, "a") as out:
                return start_group([nginx, "-c", str(conf), "-p", str(self.prefix)],
                                   stdout=subprocess.DEVNULL, stderr=out)
        return spawn

    def start(self) -> "Deployment":
        """Every process up and answering; on any failure (StartFailed says which process
        and why) or interruption, what was started is stopped and the folder removed."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> "Deployment":
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if self.behind_nginx and not Path(nginx).exists():
            raise StartFailed("nginx is not installed (apt-get install -y nginx)")
        _log_to(self.prefix / "deploy.log")
        path = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "")
                                              .split(os.pathsep) if p])
        env = {**replica_env(self.replicas, checkpoints=self.prefix / "checkpoints"),
               **self.profile, **os.environ, "PYTHONPATH": path}
        now = time.time()
        for p in self.backends:
            log = self.prefix / f"replica-{p}.log"
            unit = Supervised(f"replica :{p}", self._replica_spawner(p, env, log), log=log)
            unit.start(now)
            self.units.append(unit)
        host = "127.0.0.1" if self.behind_nginx else local_host(self.address)
        for unit, p in zip(list(self.units), self.backends):
            wait_healthy(unit.name, f"http://{host}:{p}/_stcore/health", unit.proc, unit.log,
                         on_wait=lambda s, n=unit.name: LOG.info("%s: still starting (%.0f s)",
                                                                 n, s))
        if self.behind_nginx:
            conf = self.prefix / "nginx.conf"
            conf.write_text(nginx_config(self.prefix, self.port, self.backends, self.address))
            log = self.prefix / "nginx.out"
            unit = Supervised("nginx", self._nginx_spawner(nginx, conf, log), log=log)
            unit.start(time.time())
            self.units.append(unit)
            wait_healthy("nginx", f"{self.url}/_stcore/health", unit.proc, log, timeout_s=60)
            LOG.info("%d replicas (%s) behind nginx at %s:%d", self.replicas,
                     ", ".join(map(str, self.backends)), self.address, self.port)
        else:
            LOG.info("one server at %s:%d", self.address, self.port)
        return self

    def check(self, now: float | None = None) -> None:
        """One round of the watch: restart what exited (after its backoff)."""
        now = time.time() if now is None else now
        for unit in self.units:
            unit.step(now, self.backoff)

    def watch(self, stop: Callable[[], bool] = lambda: False, every_s: float = 0.5) -> None:
        """Keep every process running until `stop()` (or a signal's exception)."""
        while not stop():
            self.check()
            time.sleep(every_s)

    def stop(self) -> None:
        """nginx, then the replicas, each with all its process group; then the folder goes.
        Safe to call twice."""
        stop_groups(reversed(self.procs))
        self.units.clear()
        _close_log(self.prefix / "deploy.log")
        shutil.rmtree(self.prefix, ignore_errors=True)


def _log_to(path: Path) -> None:
    """The launcher's log: stdout and `path`, with times."""
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    for handler in list(LOG.handlers):
        if isinstance(handler, logging.FileHandler):
            LOG.removeHandler(handler)
            handler.close()
    handlers = [logging.FileHandler(path)]
    if not LOG.handlers:
        handlers.append(logging.StreamHandler(sys.stdout))
    for handler in handlers:
        handler.setFormatter(fmt)
        LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    LOG.propagate = False


def _close_log(path: Path) -> None:
    for handler in list(LOG.handlers):
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename) == path:
            LOG.removeHandler(handler)
            handler.close()
