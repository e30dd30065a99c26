"""Discover benchmarks/bench_*.py, run every entry of their BENCHMARKS, print a Markdown table
with each row's target and whether it is met (docs/PERFORMANCE.md explains the numbers).

    python -m benchmarks                 every benchmark not marked EXPLICIT
    python -m benchmarks gan vae         only the modules whose name contains "gan" or "vae"
    python -m benchmarks --help          usage and the list of names; runs nothing
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import platform
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

USAGE = """usage: python -m benchmarks [NAME ...] [OPTIONS]

Runs the benchmarks whose module name contains one of the NAMEs (all of them but those marked
"run only when named" when no NAME is given) and prints a Markdown table: the result, the
target where the benchmark has one, and whether the result meets it. A few modules read
options of their own (see their docstrings), e.g.
    python -m benchmarks classroom --students 1,2,4 --trainers process
Environment: DLPLAY_TORCH_THREADS (default 1, as the app), DLPLAY_BENCH_PAGES (which pages the
browser benchmarks open); docs/CONFIGURATION.md lists them all.
"""

# "target < 20 ms", "target >= 0.85", "target ≤ 150 ms", "target <= 1.2x", "target >= 80%"
TARGET = re.compile(r"target\s*(<=|>=|<|>|≤|≥)\s*(\d[\d,]*(?:\.\d+)?)\s*(ms|s|x|%|MB|KB|it/s)?"
                    r"(?![\w/])")
SCALE = {("ms", "s"): 1e3, ("s", "ms"): 1e-3}   # (value unit, target unit) -> target factor


def module_names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))


def describe(name: str) -> tuple[str, bool]:
    """A module's one-line summary (its docstring's first sentence) and whether it runs only
    when named (EXPLICIT = True), read from its source without importing it."""
    tree = ast.parse((HERE / f"{name}.py").read_text())
    doc = " ".join((ast.get_docstring(tree) or "").split())
    doc = re.sub(r"^`python -m benchmarks [^`]*`:?\s*", "", doc)   # the usage line it opens with
    summary = re.split(r"(?<=\.)\s", doc, maxsplit=1)[0]
    if len(summary) > 90:
        summary = summary[:89].rstrip(" ,;:(") + "…"
    explicit = any(isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "EXPLICIT"
                                                       for t in node.targets)
                   and getattr(node.value, "value", False) is True for node in tree.body)
    return summary, explicit


def listing() -> str:
    lines = ["benchmarks (NAME is any part of a name, e.g. `gan`):"]
    for name in module_names():
        summary, explicit = describe(name)
        short = name.removeprefix("bench_")
        flag = " [run only when named]" if explicit else ""
        lines.append(f"  {short:<18} {summary}{flag}")
    return "\n".join(lines)


def target_of(value: float, unit: str, note: str) -> tuple[str, str]:
    """(the target as written, "yes"/"no") from a note that states exactly one target in a
    unit comparable with the result's; ("", "") where there is none or it is ambiguous."""
    found = TARGET.findall(note)
    if len(found) != 1:
        return "", ""
    op, bound, tunit = found[0]
    text = f"{op} {bound}{' ' if tunit not in ('x', '%') else ''}{tunit}".strip()
    vunit = (unit.split() or [""])[0]
    if tunit and tunit != vunit and (vunit, tunit) not in SCALE:
        return text, ""
    limit = float(bound.replace(",", "")) * SCALE.get((vunit, tunit), 1.0)
    ok = {"<": value < limit, "<=": value <= limit, "≤": value <= limit,
          ">": value > limit, ">=": value >= limit, "≥": value >= limit}[op]
    return text, "yes" if ok else "no"


def main(argv: list[str]) -> int:
    wanted = argv[1:]
    if {"-h", "--help", "--list"} & set(wanted):
        print(USAGE + "\n" + listing())
        return 0
    names = module_names()
    if wanted:
        names = [m for m in names if any(w in m for w in wanted)]
        if not names:
            print(f"no benchmark name contains any of {' '.join(wanted)}\n\n{listing()}",
                  file=sys.stderr)
            return 2
    else:   # modules marked EXPLICIT (the browser benchmarks) run only when named
        names = [m for m in names if not describe(m)[1]]
    import torch

    from engine.device import configure_threads
    configure_threads()  # as the app runs: DLPLAY_TORCH_THREADS, default 1
    print(f"Machine: {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} torch threads, torch {torch.__version__}")
    print()
    print("| benchmark | result | target | met | note |")
    print("|---|---|---|---|---|")
    failures = 0
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        for label, fn in module.BENCHMARKS.items():
            try:
                m = fn()
                target, met = target_of(m.value, m.unit, m.note)
                print(f"| {label} | {m.value:,.3g} {m.unit} | {target} | {met} | {m.note} |",
                      flush=True)
            except Exception as exc:  # report and go on: one broken entry must not hide the rest
                failures += 1
                print(f"| {label} | FAILED | | | {type(exc).__name__}: {exc} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
