"""Every runnable script and the benchmark runner limit torch's and the BLAS libraries'
threads as the app does (engine.device.configure_threads, or scripts.reproducible's
deterministic set-up): a script left on all cores runs many times slower on a loaded
machine, and its measurements are not the app's."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMITS = ("configure_threads(", "deterministic(")
# runs only other processes, each of which sets its own threads (pytest: tests/conftest.py)
DRIVERS = {"scripts/machine_dependence.py"}
# reads and writes text only: loads no library that starts threads
TEXT_ONLY = {"scripts/make_figure_list.py", "scripts/screenshot_gallery.py"}


def _runnable() -> list[Path]:
    files = [*sorted((ROOT / "scripts").glob("*.py")), ROOT / "benchmarks" / "__main__.py"]
    return [f for f in files if '__name__ == "__main__"' in f.read_text(encoding="utf-8")]


def test_every_runnable_script_limits_its_threads():
    loose = [str(f.relative_to(ROOT)) for f in _runnable()
             if str(f.relative_to(ROOT)) not in DRIVERS | TEXT_ONLY
             and not any(x in f.read_text(encoding="utf-8") for x in LIMITS)]
    assert _runnable() and not loose, loose


def test_text_only_scripts_load_no_threaded_library():
    for name in TEXT_ONLY:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(torch|numpy|pandas|engine)\b", text, re.M), name
