"""Garbage collection in the web process: what one rerun costs.

Streamlit's default (`runner.postScriptGC`) runs gc.collect(2) after every script run, fragment
runs included. A full collection walks every object the collector tracks; with torch, plotly,
pandas and streamlit imported that is ~300k objects, ~0.2 s of CPU on the 2-core box. Measured
with py-spy on a live GAN frame in process mode: ~300 ms of web-process CPU per frame, ~250 ms
of it in that collection - the frame itself (view, figure, plotly_chart) was ~40 ms.

So .streamlit/config.toml turns the post-run collection off, and `after_run()` (called by
app.py at the end of each full run) moves the long-lived objects - the modules imported so far,
their functions and tables - into the permanent generation (gc.freeze). Python's own
generational collector then walks only what sessions allocate (figures, views, session state).

It freezes again only when modules were imported since the last freeze (a page visited for the
first time loads its engine), after one full collection, so what it freezes is alive. Objects
in the permanent generation are still freed by reference counting; only reference cycles among
them would wait for `gc.unfreeze()`, which is why freezes follow imports and nothing else.
"""
from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_frozen_modules = 0          # len(sys.modules) at the last freeze


def after_run() -> bool:
    """Freeze the objects alive now if modules were imported since the last freeze (True
    when it froze). Cheap otherwise: one length comparison."""
    global _frozen_modules
    if len(sys.modules) <= _frozen_modules or not _serving():
        return False
    with _lock:
        if len(sys.modules) <= _frozen_modules:
            return False
        gc.collect()
        gc.freeze()
        _frozen_modules = len(sys.modules)
        return True


def _serving() -> bool:
    """Only a real server freezes: under AppTest (no Runtime) the process is a test run whose
    objects come and go, and frozen cycles among them would never be collected."""
    from streamlit.runtime import Runtime
    return Runtime.exists()


def collect_cost_objects() -> int:
    """Objects a full collection would walk now (tracked, not frozen): for tests/benchmarks."""
    return len(gc.get_objects())
