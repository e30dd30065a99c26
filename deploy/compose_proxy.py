"""The proxy service of compose.yaml: nginx in front of the app replicas, with the sticky
routing of deploy/replicas.py (deploy/nginx.conf.template, cookie `dlplay_route` + consistent
hash), rendered for containers: it listens on every interface, and its upstream is the compose
service name, which Docker's and Podman's DNS resolve to every replica's address when nginx
starts (restart the proxy after scaling the replicas).

    python3 -m deploy.compose_proxy --port 8080 --upstream app:8501
    python3 -m deploy.compose_proxy --port 8080 --upstream 127.0.0.1:8601 --upstream 127.0.0.1:8602
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from deploy.replicas import TEMPLATE, listen_on, server_lines


def proxy_config(prefix: Path, port: int, upstreams: list[str]) -> str:
    """The template with `listen <port>` on all interfaces and one `server` per upstream."""
    servers = server_lines(upstreams)             # the replicas' failover settings too
    return TEMPLATE.read_text().format(prefix=prefix, listen=listen_on(None, port),
                                       servers=servers)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--upstream", action="append", required=True,
                    help="host:port of the replicas (a compose service name reaches them all)")
    args = ap.parse_args(argv)
    prefix = Path(tempfile.mkdtemp(prefix="dlplay-proxy-"))
    conf = prefix / "nginx.conf"
    conf.write_text(proxy_config(prefix, args.port, args.upstream))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    os.execv(nginx, [nginx, "-c", str(conf), "-p", str(prefix)])


if __name__ == "__main__":
    main()
