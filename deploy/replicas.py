"""Start N Streamlit replicas of app.py and nginx in front of them (sticky per browser).

    python deploy/replicas.py --replicas 2 --port 8080        # until Ctrl-C

Replicas listen on 127.0.0.1:<port+1>..<port+N>; nginx on 127.0.0.1:<port> (change
`listen` in the template to 0.0.0.0 for a real host). Each replica is one Python process
that trains in worker processes (DLPLAY_TRAINERS=process unless the environment says
otherwise; the CPUs but one are split among the replicas' workers, DLPLAY_WORKERS);
nginx keeps a browser on one replica (cookie `dlplay_route`).

A fault takes down one process, never the class: the launcher watches every process it
started; a replica (or nginx) that exits is logged and started again after a backoff
(1 s, 2 s, 4 s ... 30 s; back to 1 s once it has run a minute), and the others are never
stopped. Meanwhile nginx sends that replica's browsers to the next replica
(`proxy_next_upstream`); their Streamlit page reconnects there as a new session, which
finds each live trainer's latest checkpoint in <prefix>/checkpoints (DLPLAY_CHECKPOINT_DIR,
shared by the replicas) and resumes it, saying so on the status line.
The log (stdout and <prefix>/deploy.log) says what happened.
tests/e2e/test_replicas.py drives two browsers through the proxy and kills a replica.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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
    """One process the launcher keeps running: `spawn` starts it again."""
    name: str
    spawn: Callable[[], subprocess.Popen]
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    failures: int = 0          # exits in a row without `healthy_s` of running between
    restart_at: float | None = None
    restarts: int = 0

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
        LOG.error("%s: pid %d exited with code %s after %.0f s; the others keep serving; "
                  "restart in %.0f s", self.name, self.proc.pid, self.proc.returncode, ran, wait)
        self.restart_at = now + wait


def server_lines(addresses: list[str]) -> str:
    """The upstream's `server` lines. A replica that refuses a connection is skipped for
    fail_timeout: its browsers are hashed onto the others meanwhile (proxy_next_upstream in
    the template)."""
    return "\n".join(f"        server {a} max_fails=1 fail_timeout=5s;" for a in addresses)


def nginx_config(prefix: Path, port: int, backends: list[int]) -> str:
    servers = server_lines([f"127.0.0.1:{p}" for p in backends])
    return TEMPLATE.read_text().format(prefix=prefix, port=port, servers=servers)


def _wait_ok(url: str, timeout_s: float = 90.0) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url, timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"no answer from {url}")


def replica_env(replicas: int, cpus: int | None = None,
                checkpoints: Path | None = None) -> dict[str, str]:
    """Defaults for each replica: trainers in worker processes, the CPUs but one (the web
    processes and nginx) shared among the replicas' worker pools, at least one each; and,
    given `checkpoints`, the directory where all of them keep their trainers' checkpoints
    (live/checkpoint_store.py: a browser sent to another replica resumes its training)."""
    cpus = cpus or os.cpu_count() or 1
    env = {"DLPLAY_TRAINERS": "process",
           "DLPLAY_WORKERS": str(max(1, (cpus - 1) // max(1, replicas)))}
    if checkpoints is not None:
        env["DLPLAY_CHECKPOINT_DIR"] = str(checkpoints)
    return env


@dataclass
class Deployment:
    port: int
    replicas: int
    prefix: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dlplay-")))
    backoff: Backoff = field(default_factory=Backoff)
    units: list[Supervised] = field(default_factory=list)

    @property
    def backends(self) -> list[int]:
        return [self.port + 1 + i for i in range(self.replicas)]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def procs(self) -> list[subprocess.Popen]:
        """The running processes: the replicas, then nginx."""
        return [u.proc for u in self.units if u.proc is not None]

    def replica(self, port: int) -> Supervised:
        return next(u for u in self.units if u.name == f"replica :{port}")

    def _replica_spawner(self, port: int, env: dict[str, str]) -> Callable[[], subprocess.Popen]:
        def spawn() -> subprocess.Popen:
            log = open(self.prefix / f"replica-{port}.log", "a")
            return subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless",
                 "true", "--server.address", "127.0.0.1", "--server.port", str(port),
                 "--browser.gatherUsageStats", "false"],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        return spawn

    def _nginx_spawner(self, nginx: str, conf: Path) -> Callable[[], subprocess.Popen]:
        def spawn() -> subprocess.Popen:
            return subprocess.Popen([nginx, "-c", str(conf), "-p", str(self.prefix)],
                                    stdout=subprocess.DEVNULL,
                                    stderr=open(self.prefix / "nginx.out", "a"))
        return spawn

    def start(self) -> "Deployment":
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            raise RuntimeError("nginx is not installed (apt-get install -y nginx)")
        _log_to(self.prefix / "deploy.log")
        env = {**replica_env(self.replicas, checkpoints=self.prefix / "checkpoints"),
               **os.environ, "PYTHONPATH": str(ROOT)}
        now = time.time()
        for p in self.backends:
            unit = Supervised(f"replica :{p}", self._replica_spawner(p, env))
            unit.start(now)
            self.units.append(unit)
        for p in self.backends:
            _wait_ok(f"http://127.0.0.1:{p}/_stcore/health")
        conf = self.prefix / "nginx.conf"
        conf.write_text(nginx_config(self.prefix, self.port, self.backends))
        unit = Supervised("nginx", self._nginx_spawner(nginx, conf))
        unit.start(time.time())
        self.units.append(unit)
        _wait_ok(f"{self.url}/_stcore/health")
        LOG.info("%d replicas (%s) behind nginx at %s", self.replicas,
                 ", ".join(map(str, self.backends)), self.url)
        return self

    def check(self, now: float | None = None) -> None:
        """One round of the watch: restart what exited (after its backoff)."""
        now = time.time() if now is None else now
        for unit in self.units:
            unit.step(now, self.backoff)

    def watch(self, stop: Callable[[], bool] = lambda: False, every_s: float = 0.5) -> None:
        """Keep every process running until `stop()` (or Ctrl-C)."""
        while not stop():
            self.check()
            time.sleep(every_s)

    def stop(self) -> None:
        procs = self.procs
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.units.clear()


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--port", type=int, default=8080)
    args = ap.parse_args()
    dep = Deployment(args.port, args.replicas).start()
    print(f"{args.replicas} replicas behind nginx at {dep.url} (logs in {dep.prefix})")
    try:
        dep.watch()
    except KeyboardInterrupt:
        pass
    finally:
        dep.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
