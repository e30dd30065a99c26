"""The projector's viewport reporter (ui/viewport.js) measures only an idle page: while a rerun
runs (a stale element on the page) a moved figure starts no rerun; once the page is idle and
the new place holds for two polls, one report goes out with it."""
from __future__ import annotations

import json
import time

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e

SHIFT = 60        # px the figure is moved down


def _reports(frames: list) -> list[list[int]]:
    """The viewport values carried by the rerun requests in `frames`, in order."""
    out = []
    for frame in frames:
        msg = BackMsg()
        msg.ParseFromString(frame)
        if msg.WhichOneof("type") != "rerun_script":
            continue
        for w in msg.rerun_script.widget_states.widgets:
            if w.id.endswith("dlplay_viewport") and w.json_value:
                out.append(w.json_value)
    return out


def _figure_top(page) -> float:
    return page.evaluate("""() => Math.min(...[...document.querySelectorAll(
        '[data-testid="stMainBlockContainer"] .js-plotly-plot')].map(e => e.getBoundingClientRect())
        .filter(r => r.height >= 280).map(r => r.top + window.scrollY))""")


def test_a_busy_page_is_not_measured_and_an_idle_one_is_once(page, server_url):
    frames: list[bytes] = []
    page.set_viewport_size({"width": 1280, "height": 720})
    page.on("websocket", lambda ws: ws.on(
        "framesent", lambda f: frames.append(f) if isinstance(f, bytes) else None))
    page.goto(f"{server_url}/gradient_descent?classroom=1")
    wait_idle(page)
    page.wait_for_timeout(1500)                # its own first report and rerun are over
    wait_idle(page)
    top = _figure_top(page)
    sent = len(frames)
    page.evaluate(f"""() => {{ const d = document.createElement('div');
        d.id = 'shift'; d.style.height = '{SHIFT}px'; d.setAttribute('data-stale', 'true');
        document.querySelector('[data-testid="stMainBlockContainer"]').prepend(d); }}""")
    assert _figure_top(page) == pytest.approx(top + SHIFT, abs=2)
    page.wait_for_timeout(2000)                # five polls on a "running" page
    assert _reports(frames[sent:]) == [], "measured while a rerun was running"
    page.evaluate("() => document.getElementById('shift').removeAttribute('data-stale')")
    deadline = time.time() + 5
    while not _reports(frames[sent:]) and time.time() < deadline:
        page.wait_for_timeout(100)
    reports = _reports(frames[sent:])
    assert reports, "no report once the page was idle"
    width, height, figure_top = json.loads(reports[0])["size"]
    assert (width, height) == (1280, 720)
    assert figure_top == pytest.approx(top + SHIFT, abs=2), reports
