"""python3 -I deploy/die_with_launcher.py PID COMMAND...: run COMMAND (exec: same process)
so that Linux sends it SIGTERM when the thread of process PID that started it ends
(prctl PR_SET_PDEATHSIG, which exec keeps). A launcher killed with SIGKILL, which runs no
cleanup, still takes its servers and nginx along. Stdlib only: it runs before any
environment the command needs is in place."""
from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        print(f"prctl failed: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
    if os.getppid() != parent:                # the launcher died before the line above
        sys.exit("the launcher is gone")
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
