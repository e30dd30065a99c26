"""Every benchmark module imports and every benchmark runs to a row of the table, at a token
size (DLPLAY_BENCH_SMOKE=1: one round, no warm-up, a few iterations; benchmarks.sized), so an
engine change that breaks a benchmark (a moved import, a renamed attribute) fails a test
instead of the next `python -m benchmarks`. The numbers are not looked at: speed is measured
by `python -m benchmarks`, never in tests. Each check runs in a fresh process, as the
benchmarks do (the smoke size is read at import; some modules set environment variables)."""
from __future__ import annotations

import os
import pkgutil
import subprocess
import sys

import pytest

import benchmarks
from ui.topics import ROOT

MODULES = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                 if m.name.startswith("bench_"))
# start a Streamlit server and headless Chromium per entry: imported and listed only
SERVERS = {"bench_browser", "bench_classroom", "bench_frame_cpu"}
# an AppTest page run (or a page's claim) per entry, dozens of entries: their first entries run
PAGES = {"bench_app": 2, "bench_live_frame": 1, "bench_claims": 1}
COMPUTE = [m for m in MODULES if m not in SERVERS and m not in PAGES]


# a guard against a hang only: the runs take ~30-45 s of CPU, and far longer wall time on a
# loaded machine
TIMEOUT_S = 900


def _python(code: list[str], timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
    env = {**os.environ, "DLPLAY_BENCH_SMOKE": "1", "DLPLAY_TORCH_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _failed(out: subprocess.CompletedProcess) -> str:
    rows = [line for line in out.stdout.splitlines() if "FAILED" in line]
    return "\n".join(rows) or (out.stdout + out.stderr)[-3000:]


def test_every_benchmark_module_imports_and_lists_its_benchmarks():
    code = ("import importlib\n"
            f"for name in {MODULES!r}:\n"
            "    fns = importlib.import_module(f'benchmarks.{name}').BENCHMARKS\n"
            f"    if name not in {sorted(SERVERS)!r}:   # theirs are made by one measured run\n"
            "        assert fns and all(callable(f) for f in fns.values()), name\n"
            "    print(name)\n")
    out = _python(["-c", code])
    assert out.returncode == 0, out.stderr[-3000:]
    assert len(out.stdout.splitlines()) == len(MODULES)


def test_every_compute_benchmark_runs_at_a_token_size():
    """`python -m benchmarks` itself, on every module that starts no server and no page."""
    out = _python(["-m", "benchmarks", *COMPUTE])
    assert out.returncode == 0 and "FAILED" not in out.stdout, _failed(out)
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ")
            and not line.startswith(("| benchmark", "|---"))]
    assert len(rows) >= len(COMPUTE)


@pytest.mark.slow
def test_the_page_benchmarks_first_entries_run_at_a_token_size():
    code = ("import importlib\n"
            f"for name, n in {PAGES!r}.items():\n"
            "    fns = importlib.import_module(f'benchmarks.{name}').BENCHMARKS\n"
            "    for label, fn in list(fns.items())[:n]:\n"
            "        m = fn()\n"
            "        print(name, label, m.value, m.unit)\n")
    out = _python(["-c", code])
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert len(out.stdout.splitlines()) == sum(PAGES.values())
