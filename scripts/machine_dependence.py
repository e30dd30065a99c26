"""Which tests change their outcome with the machine's arithmetic: the same tests run under
variants that round differently, and every test whose outcome differs from the plain run is
listed.

    python -m scripts.machine_dependence                       # tests/engine tests/pages
    python -m scripts.machine_dependence tests/engine -k gan    # any pytest arguments

Variants (each a fresh pytest process, e2e and slow tests left out unless the arguments
select them):
- plain: the suite as CI runs it (one torch thread);
- deterministic: torch.use_deterministic_algorithms(True) (DLPLAY_TEST_DETERMINISTIC=1);
- 2 threads: DLPLAY_TORCH_THREADS=2, so reductions split over two threads add in another order;
- other BLAS kernels: OPENBLAS_CORETYPE set to an older core type than this CPU's (numpy's
  OpenBLAS then runs other SIMD kernels), where numpy uses OpenBLAS.

A test that passes in one variant and fails in another compares a value at a precision finer
than the arithmetic guarantees: its tolerance or its text's number is what to fix. The report
goes to standard output; the JUnit files to a temporary folder (never the tree).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ARGS = ["tests/engine", "tests/pages", "-m", "not e2e and not slow"]


def _openblas() -> bool:
    try:
        from threadpoolctl import threadpool_info
        import numpy  # noqa: F401 - loads its BLAS so threadpoolctl can see it
        return any(i.get("internal_api") == "openblas" for i in threadpool_info())
    except Exception:  # noqa: BLE001 - no threadpoolctl or numpy: the variant is skipped
        return False


def variants() -> dict[str, dict[str, str]]:
    out = {"plain": {}, "deterministic": {"DLPLAY_TEST_DETERMINISTIC": "1"},
           "2 threads": {"DLPLAY_TORCH_THREADS": "2"}}
    if _openblas():
        out["other BLAS kernels"] = {"OPENBLAS_CORETYPE": "Sandybridge",
                                     "OPENBLAS_L2_SIZE": "262144"}
    return out


def outcomes(junit: Path) -> dict[str, str]:
    """test id -> passed | failed | skipped, from a JUnit XML file."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[name] = ("failed" if kinds & {"failure", "error"} else
                     "skipped" if "skipped" in kinds else "passed")
    return out


def run(args: list[str]) -> int:
    args = args or DEFAULT_ARGS
    results: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="dlplay-machine-") as tmp:
        for name, extra in variants().items():
            junit = Path(tmp) / f"{len(results)}.xml"
            env = {**os.environ, **extra}
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   f"--junitxml={junit}", *args]
            print(f"== {name}: {' '.join(f'{k}={v}' for k, v in extra.items()) or '(as CI)'}",
                  flush=True)
            done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
            print("   " + (done.stdout.strip().splitlines() or ["(no output)"])[-1], flush=True)
            results[name] = outcomes(junit) if junit.exists() else {}
    plain = results.get("plain", {})
    changed = sorted(t for t in plain for r in results.values() if r.get(t, plain[t]) != plain[t])
    changed = list(dict.fromkeys(changed))
    print(f"\n{len(changed)} test(s) change outcome with the machine's arithmetic")
    for test in changed:
        print(f"- {test}: " + ", ".join(f"{n} {r.get(test, '?')}" for n, r in results.items()))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
