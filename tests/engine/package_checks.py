"""Checks shared by the tests of the engine topics that became packages (engine/<topic>/):
the old single module's names still import from the old place, and every file is short."""
from __future__ import annotations

import importlib
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
MAX_LINES = 500


def missing_names(package: str, names: list[str]) -> list[str]:
    """The names `engine.<package>` no longer provides (empty when the split kept them all);
    also checks that the package's __all__ only lists names it has."""
    pkg = importlib.import_module(f"engine.{package}")
    assert set(pkg.__all__) <= set(dir(pkg)), set(pkg.__all__) - set(dir(pkg))
    return [n for n in names if not hasattr(pkg, n)]


def long_files(package: str) -> dict[str, int]:
    """{file name: lines} of the package's modules over MAX_LINES (asserts it has several)."""
    files = sorted((ENGINE / package).glob("*.py"))
    assert len(files) > 3, files
    return {p.name: n for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES}
