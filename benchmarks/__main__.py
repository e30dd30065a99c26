"""Discover benchmarks/bench_*.py, run every entry of their BENCHMARKS, print a table
(Markdown, ready to paste into README's Performance section)."""
from __future__ import annotations

import importlib
import pkgutil
import platform
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    wanted = argv[1:]
    from engine.device import configure_threads
    configure_threads()  # as the app runs: DLPLAY_TORCH_THREADS, default 1
    import benchmarks
    modules = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                     if m.name.startswith("bench_"))
    if wanted:
        modules = [m for m in modules if any(w in m for w in wanted)]
    else:   # modules marked EXPLICIT (the browser benchmark) run only when named
        modules = [m for m in modules
                   if not getattr(importlib.import_module(f"benchmarks.{m}"), "EXPLICIT", False)]
    print(f"Machine: {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} torch threads, torch {torch.__version__}")
    print()
    print("| benchmark | result | note |")
    print("|---|---|---|")
    failures = 0
    for name in modules:
        module = importlib.import_module(f"benchmarks.{name}")
        for label, fn in module.BENCHMARKS.items():
            try:
                m = fn()
                print(f"| {label} | {m.value:,.3g} {m.unit} | {m.note} |", flush=True)
            except Exception as exc:  # report and go on: one broken entry must not hide the rest
                failures += 1
                print(f"| {label} | FAILED | {type(exc).__name__}: {exc} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
