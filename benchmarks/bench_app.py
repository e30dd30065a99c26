"""Server-side time of a full script run per page (AppTest, median of 5): with defaults and
after one widget change, against an empty page baseline (a script with only st.title)."""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Callable

from streamlit.testing.v1 import AppTest

from benchmarks import Measurement, median_time
from ui.topics import ROOT, TOPICS

REPEAT = 5
TIMEOUT = 120


def _muted(fn: Callable[[], Measurement]) -> Callable[[], Measurement]:
    """fn with log warnings off: AppTest runs outside a server and Streamlit logs "missing
    ScriptRunContext" on every run, which would interleave with the printed table."""
    def wrapped() -> Measurement:
        logging.disable(logging.WARNING)
        try:
            return fn()
        finally:
            logging.disable(logging.NOTSET)
    return wrapped


def _empty_page_seconds() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "empty.py"
        script.write_text('import streamlit as st\nst.title("empty")\n')

        def run():
            AppTest.from_file(str(script), default_timeout=TIMEOUT).run()
        return median_time(run, REPEAT)


_BASELINE: list[float] = []


def baseline() -> float:
    if not _BASELINE:
        _BASELINE.append(_empty_page_seconds())
    return _BASELINE[0]


def _page_app(slug: str | None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "playground.py"), default_timeout=TIMEOUT)
    at.run()
    if slug is not None:
        at.switch_page(f"topics/{slug}/page.py")
    return at


def _first_change(at: AppTest):
    """The first main-area slider (else select box) moved to another value, or None."""
    for slider in at.main.slider:
        lo, hi = slider.min, slider.max
        v = slider.value
        if isinstance(v, (int, float)) and hi != lo:
            target = lo if v != lo else hi
            return lambda: slider.set_value(target)
    for box in at.main.selectbox:
        if len(box.options) > 1:
            other = next(o for o in box.options if o != box.value)
            return lambda: box.select(other)
    return None


def page_defaults(slug: str | None) -> Measurement:
    def run():
        _page_app(slug).run()
    t = median_time(run, REPEAT)
    return Measurement(t * 1e3, "ms", f"{t / baseline():.1f}x the empty page")


def page_change(slug: str) -> Measurement:
    at = _page_app(slug)
    at.run()
    if _first_change(at) is None:
        return Measurement(float("nan"), "ms", "no slider/select box on the page")

    def run():
        change = _first_change(at)
        change()
        at.run()
    t = median_time(run, REPEAT)
    return Measurement(t * 1e3, "ms", f"{t / baseline():.1f}x the empty page (after moving "
                                      f"the first slider/select box)")


BENCHMARKS = {"empty page (AppTest baseline)": lambda: Measurement(baseline() * 1e3, "ms",
                                                                    "st.title only"),
              "page: home gallery, defaults": lambda: page_defaults(None)}
for _t in TOPICS:
    BENCHMARKS[f"page: {_t.slug}, defaults"] = (lambda s=_t.slug: page_defaults(s))
    BENCHMARKS[f"page: {_t.slug}, one widget change"] = (lambda s=_t.slug: page_change(s))
BENCHMARKS = {name: _muted(fn) for name, fn in BENCHMARKS.items()}
