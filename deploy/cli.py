"""The playground's one command per profile (pyproject.toml's console script `dlplay`):

    dlplay                       a laptop: the local profile on 127.0.0.1, a browser tab opens
    dlplay --address 0.0.0.0     the same, reachable from other machines
    dlplay serve --address 0.0.0.0 --port 8501 [--replicas N]
                                 a class server: the hosting profile (deploy/hosting.env), one
                                 server on address:port, or N replicas behind nginx there

Every server runs on this interpreter (sys.executable) in its own process group. Ctrl-C,
SIGTERM, SIGHUP (the terminal closed) and a failed start stop every process the command
started and remove its temporary folder; a failed start says why in one line (exit code 1).
`streamlit run app.py` still runs the local profile directly.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import webbrowser

from deploy.hosting import hosting_profile
from deploy.processes import StartFailed, start_group, stop_groups, wait_healthy
from deploy.replicas import ROOT, Deployment, local_host, streamlit_command

LAPTOP_PORT = 8501          # the first port a laptop tries (then the next free ones)
SERVE_PORT = 8501
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stopping(BaseException):
    """A stop signal arrived: unwind to the command's cleanup."""


def laptop_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="dlplay", description="The deep-learning playground on this machine (a browser "
        "tab opens). For a class server: dlplay serve --help.")
    ap.add_argument("--address", default="127.0.0.1",
                    help="interface to listen on (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=_port, default=None,
                    help=f"port (default: {LAPTOP_PORT}, or the next free one)")
    ap.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    return ap


def serve_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="dlplay serve", description="A class server: the hosting profile "
        "(deploy/hosting.env), trainers in worker processes; stops on Ctrl-C or SIGTERM.")
    ap.add_argument("--address", default="0.0.0.0",
                    help="interface the class connects to (default 0.0.0.0: every interface)")
    ap.add_argument("--port", type=_port, default=SERVE_PORT,
                    help=f"port the class connects to (default {SERVE_PORT})")
    ap.add_argument("--replicas", type=_positive, default=1,
                    help="servers behind nginx on that port (default 1: no nginx; N > 1 "
                         "listen on 127.0.0.1 at port+1..port+N)")
    return ap


def parse(argv: list[str]) -> tuple[str, argparse.Namespace]:
    """("laptop" | "serve", its options); exits with a usage message on bad ones."""
    if argv and argv[0] == "serve":
        ap = serve_parser()
        args = ap.parse_args(argv[1:])
        if args.port + (args.replicas if args.replicas > 1 else 0) > 65535:
            ap.error(f"--port {args.port} leaves no room for {args.replicas} replicas")
        return "serve", args
    return "laptop", laptop_parser().parse_args(argv)


def _port(text: str) -> int:
    port = int(text)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (1-65535)")
    return port


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text}: at least 1")
    return n


def free_port(address: str, first: int = LAPTOP_PORT, tries: int = 100) -> int:
    """The first port from `first` on that nothing listens on at `address`."""
    for port in range(first, min(65536, first + tries)):
        with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as s:
            try:
                s.bind((address, port))
                return port
            except OSError:
                continue
    raise StartFailed(f"no free port from {first} to {first + tries - 1} on {address}")


def _stop_on_signals() -> None:
    """Each stop signal unwinds to the cleanup, except one ignored when the command started
    (`nohup dlplay serve` keeps running when its terminal closes)."""
    def stopping(signum, frame):
        for s in STOP_SIGNALS:             # the cleanup itself is not interrupted
            signal.signal(s, signal.SIG_IGN)
        raise Stopping(signum)
    for s in STOP_SIGNALS:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, stopping)


def open_tab(url: str) -> bool:
    """A browser tab at `url`, its output kept off the terminal. On Linux only with a
    graphical session (without one, Python's webbrowser would start a text browser in the
    terminal): xdg-open where installed. False when none was opened."""
    if sys.platform.startswith("linux"):
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            return False
        if shutil.which("xdg-open"):
            subprocess.Popen(["xdg-open", url], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return True
    return webbrowser.open(url)


def run_laptop(args: argparse.Namespace) -> int:
    port = args.port or free_port(args.address)
    url = f"http://{local_host(args.address)}:{port}"
    # headless: Streamlit neither asks for an email nor opens the tab; this command opens it
    proc = start_group(streamlit_command(args.address, port, headless=True), cwd=ROOT)
    try:
        wait_healthy("the playground", f"{url}/_stcore/health", proc)
        print(f"The playground is at {url} (Ctrl-C stops it)", flush=True)
        if not args.no_browser:
            open_tab(url)
        return 0 if proc.wait() == 0 else 1
    finally:
        stop_groups([proc])


def run_serve(args: argparse.Namespace) -> int:
    dep = Deployment(args.port, args.replicas, args.address, profile=hosting_profile())
    try:
        dep.start()
        where = (socket.gethostname() if args.address in ("0.0.0.0", "::")
                 else local_host(args.address))
        print(f"The class connects to http://{where}:{args.port} "
              f"({args.replicas} server{'s' if args.replicas > 1 else ''}; Ctrl-C stops "
              f"{'them' if args.replicas > 1 else 'it'}; logs in {dep.prefix} until then)",
              flush=True)
        dep.watch()
        return 0
    finally:
        dep.stop()


def main(argv: list[str] | None = None) -> int:
    command, args = parse(sys.argv[1:] if argv is None else argv)
    _stop_on_signals()
    try:
        return run_serve(args) if command == "serve" else run_laptop(args)
    except Stopping:
        return 0
    except StartFailed as exc:
        print(f"dlplay: could not start: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
