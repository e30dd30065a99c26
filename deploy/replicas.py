"""Start N Streamlit replicas of app.py and nginx in front of them (sticky per browser).

    python deploy/replicas.py --replicas 2 --port 8080        # until Ctrl-C

Replicas listen on 127.0.0.1:<port+1>..<port+N>; nginx on 127.0.0.1:<port> (change
`listen` in the template to 0.0.0.0 for a real host). Each replica is one Python process
that trains in worker processes (DLPLAY_TRAINERS=process unless the environment says
otherwise; the CPUs but one are split among the replicas' workers, DLPLAY_WORKERS);
nginx keeps a browser on one replica (cookie `dlplay_route`).
tests/e2e/test_replicas.py drives two browsers through the proxy.
"""
from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).with_name("nginx.conf.template")


def nginx_config(prefix: Path, port: int, backends: list[int]) -> str:
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in backends)
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


def replica_env(replicas: int, cpus: int | None = None) -> dict[str, str]:
    """Defaults for each replica: trainers in worker processes, the CPUs but one (the web
    processes and nginx) shared among the replicas' worker pools, at least one each."""
    cpus = cpus or os.cpu_count() or 1
    return {"DLPLAY_TRAINERS": "process",
            "DLPLAY_WORKERS": str(max(1, (cpus - 1) // max(1, replicas)))}


@dataclass
class Deployment:
    port: int
    replicas: int
    prefix: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dlplay-")))
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def backends(self) -> list[int]:
        return [self.port + 1 + i for i in range(self.replicas)]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Deployment":
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            raise RuntimeError("nginx is not installed (apt-get install -y nginx)")
        env = {**replica_env(self.replicas), **os.environ, "PYTHONPATH": str(ROOT)}
        for p in self.backends:
            log = open(self.prefix / f"replica-{p}.log", "w")
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless",
                 "true", "--server.address", "127.0.0.1", "--server.port", str(p),
                 "--browser.gatherUsageStats", "false"],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env))
        for p in self.backends:
            _wait_ok(f"http://127.0.0.1:{p}/_stcore/health")
        conf = self.prefix / "nginx.conf"
        conf.write_text(nginx_config(self.prefix, self.port, self.backends))
        self.procs.append(subprocess.Popen([nginx, "-c", str(conf), "-p", str(self.prefix)],
                                           stdout=subprocess.DEVNULL,
                                           stderr=open(self.prefix / "nginx.out", "w")))
        _wait_ok(f"{self.url}/_stcore/health")
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--port", type=int, default=8080)
    args = ap.parse_args()
    dep = Deployment(args.port, args.replicas).start()
    print(f"{args.replicas} replicas behind nginx at {dep.url} (logs in {dep.prefix})")
    try:
        while all(p.poll() is None for p in dep.procs):
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        dep.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
