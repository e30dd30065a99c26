"""A warm-up thread still busy in torch when Python exits must not abort the process: the
thread finishes its current job and ends (ui/warm.py joins it at exit)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import functools, time, torch
from ui import warm

def busy(seconds):
    end = time.time() + seconds
    a = torch.randn(300, 300)
    while time.time() < end:
        a = torch.tanh(a @ a.T / 300)

warm.start("exit-test", 0, lambda: [functools.partial(busy, 1.0)] * 50)
time.sleep(0.3)                      # the thread is inside torch when the script ends
print("script done", flush=True)
"""


def test_a_busy_warm_up_lets_the_interpreter_exit_cleanly():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "script done" in out.stdout and "terminate called" not in out.stderr
