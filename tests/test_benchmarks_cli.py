"""`python -m benchmarks --help` lists the benchmarks without running one, and the table reads
each row's target from its note (benchmarks/__main__.py)."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.__main__ import module_names, target_of

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_help_lists_every_benchmark_and_runs_none():
    t0 = time.perf_counter()
    out = _run("--help")
    assert out.returncode == 0, out.stderr
    assert time.perf_counter() - t0 < 30          # nothing measured (a full run takes minutes)
    assert out.stdout.startswith("usage: python -m benchmarks")
    assert "| benchmark |" not in out.stdout
    names = [n.removeprefix("bench_") for n in module_names()]
    assert len(names) >= 20
    for name in names:
        assert f"  {name} " in out.stdout, name
    assert "[run only when named]" in out.stdout.split("  browser ", 1)[1].splitlines()[0]


def test_a_name_that_matches_nothing_is_an_error_not_an_empty_table():
    out = _run("no_such_benchmark")
    assert out.returncode == 2
    assert "no benchmark name contains" in out.stderr and "  gan " in out.stderr
    assert "| benchmark |" not in out.stdout


@pytest.mark.parametrize("value, unit, note, expect", [
    (1.21, "ms", "one sequence; target < 20 ms", ("< 20 ms", "yes")),
    (189.0, "ms", "9 methods; CPU time 189 ms; target < 100 ms", ("< 100 ms", "no")),
    (22.7, "ms", "one batched backward (target < 1 s)", ("< 1 s", "yes")),
    (1.93, "s", "DDPM; target < 3 s", ("< 3 s", "yes")),
    (0.942, "x plain loop", "CPU-time ratio 0.94; target >= 0.8", (">= 0.8", "yes")),
    (1.05, "x slower than plain loop", "CPU-time ratio 1.11 (target <= 1.2x)",
     ("<= 1.2x", "yes")),
    (85.0, "% training", "curve 3 steps behind; target >= 80%", (">= 80%", "yes")),
    (12.0, "ms", "attention_maps, 12 tokens; target ≤ 150 ms", ("≤ 150 ms", "yes")),
    (5.41, "redraws/s", "50 it/frame (target >= 4; Streamlit's own work", (">= 4", "yes")),
    (251.0, "it/s", "minibatch of 128 digits", ("", "")),
    (18.5, "MB RSS growth", "target growth < 50; it/s (spread 0%, target within 20%)", ("", "")),
    (3.0, "ms", "target < 5 ms per page; target >= 2 frames", ("", "")),
])
def test_target_of_a_note(value, unit, note, expect):
    assert target_of(value, unit, note) == expect
