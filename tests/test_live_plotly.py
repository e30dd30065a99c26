"""Live figures the canvas does not draw (3-D surfaces, bars, fills, filled contours) are drawn
by plotly.js inside the same live component: the frame route sends them as {"plotly": figure
JSON}, app.py's route serves the installed plotly package's plotly.min.js (no CDN), and the
component calls Plotly.react per fetched frame, so no page falls back to a rerun per frame."""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from live.handle import TrainerHandle
from engine.training import TrainerBase
from live import canvas as lc
from live import push as live_push
from live.budget import FrameBudget
from live.parts import Figure, Payload


class Counter(TrainerBase):
    def _iteration(self):
        return {"loss": float(self.steps)}

    def snapshot(self):
        return self.steps


REFUSED = {
    "surface": go.Figure(go.Surface(z=np.arange(12.0).reshape(3, 4)), {"height": 380}),
    "bars": go.Figure(go.Bar(x=[1, 2, 3], y=[3.0, 1.0, 2.0])),
    "fill": go.Figure(go.Scatter(x=[0, 1, 2], y=[0, 1, 0], fill="tozeroy")),
    "contour": go.Figure(go.Contour(z=np.eye(4), contours={"coloring": "fill"})),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_figure_goes_out_as_plotly_json_with_its_numbers(name):
    fig = REFUSED[name]
    assert lc.to_spec(fig) is None                         # the canvas refuses it
    payload = Figure(fig).payload(False)
    assert set(payload) == {"plotly", "height"}
    sent = json.loads(payload["plotly"])
    assert sent["data"][0]["type"] == fig.data[0].type
    assert payload["height"] == (380 if name == "surface" else 450)
    assert Payload.of({"f": Figure(fig)}, False).drawable()


def test_the_surface_z_reaches_the_browser_as_built():
    import base64
    sent = json.loads(Figure(REFUSED["surface"]).payload(False)["plotly"])["data"][0]["z"]
    z = (np.frombuffer(base64.b64decode(sent["bdata"]), dtype=sent["dtype"]).reshape(3, 4)
         if isinstance(sent, dict) else np.asarray(sent))
    np.testing.assert_allclose(z, np.arange(12.0).reshape(3, 4), rtol=1e-12)


def test_plotly_in_the_component_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(lc.PLOTLY_ENV, "0")
    assert Figure(REFUSED["bars"]).payload(False) is None


def test_a_frame_with_a_3d_surface_is_sent_not_a_rerun(monkeypatch):
    monkeypatch.setattr(live_push, "BUDGET", FrameBudget(fps=10.0))
    handle = TrainerHandle(Counter())
    handle.play()

    def parts(view, read):
        return {"surf": Figure(REFUSED["surface"])}
    source = live_push.Source(handle=handle, parts=parts, who=("s", "k"), session_id=None,
                              base_interval_s=0.3, classroom=False)
    live_push.register("tok-plotly", source)
    status, body = live_push.answer("tok-plotly")
    frame = json.loads(body)
    assert status == 200 and frame["rerun"] is False and not source.fallback
    assert json.loads(frame["slots"]["surf"]["plotly"])["data"][0]["type"] == "surface"


def test_app_serves_the_installed_plotly_js_and_takes_the_pause(monkeypatch):
    """GET /_dlplay/plotly.min.js answers the plotly package's own file (cacheable); GET of a
    frame URL with ?pause=1 pauses that page's trainer at once and marks its source."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from live import route as frame_route
    monkeypatch.setattr(live_push, "MOUNTED", False)
    client = TestClient(Starlette(routes=frame_route.routes()))
    r = client.get(live_push.PLOTLY_PATH)
    assert r.status_code == 200 and r.content == lc.plotly_js().read_bytes()
    assert r.headers["content-type"].startswith("text/javascript")
    handle = TrainerHandle(Counter())
    handle.play()
    source = live_push.Source(handle=handle, parts=lambda view, read: {}, who=("s", "p"),
                              session_id=None, base_interval_s=0.3, classroom=False)
    source.frame_id = "pub-pause"                 # the public id in the path; the token in a header
    live_push.register("tok-pause", source)
    mine = {live_push.TOKEN_HEADER: "tok-pause"}
    client.cookies.set(live_push.CLIENT_COOKIE, "browser-a")
    assert client.get(live_push.PATH + "pub-pause", headers=mine).json()["rerun"] is False
    other = TestClient(Starlette(routes=frame_route.routes()))        # another browser
    other.cookies.set(live_push.CLIENT_COOKIE, "browser-b")
    assert other.get(live_push.PATH + "pub-pause?pause=1", headers=mine).status_code == 404
    assert handle.playing and not source.pause_asked
    r = client.get(live_push.PATH + "pub-pause?pause=1", headers=mine)
    assert r.status_code == 200 and source.pause_asked and not handle.playing
    assert client.get(live_push.PATH + "pub-pause?pause=1",
                      headers={live_push.TOKEN_HEADER: "nope"}).status_code == 404



def _node(script: str) -> dict:
    """Run tests/js/<script> on live/canvas.js in Node; its JSON output (skip without node)."""
    import shutil
    import subprocess
    from pathlib import Path
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([shutil.which("node"), str(root / "tests/js" / script), str(lc._JS)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)

def test_the_component_loads_plotly_js_once_and_reacts_per_frame(tmp_path):
    """live/canvas.js in Node: the first plotly payload adds ONE <script> for the poll's
    plotly_js URL; frames that arrive before it loads are not queued up (the latest is drawn
    once it has loaded); each later frame is one Plotly.react on the same div (no mode bar, no pointer events;
    not staticPlot, which leaves a 3-D scene blank)."""
    out = _node("run_live_plotly.mjs")
    assert out["scripts"] == ["/_dlplay/plotly.min.js"] and out["before"] == 0
    titles = out["titles"]                      # f4 may be skipped when f5 came during its react
    assert titles[0] == "f3" and titles[-1] == "f5" and set(titles) <= {"f3", "f4", "f5"}
    assert set(out["types"]) == {"surface"}
    assert out["testid"] == "dlplay-live-plotly" and out["height"] == "380px"
    assert out["frames"] == str(len(titles)) and out["modebar"] is False
    assert out["staticPlot"] is False and "pointer-events:none" in out["pointer"]   # 3-D draws
    assert out["canvases"] == 1 and out["polls"] == 0


def test_a_pause_click_stops_the_poller_at_once_and_tells_the_route():
    """live/canvas.js in Node: one capture-phase click listener per page; a click elsewhere
    changes nothing; a click on the page's Pause button sends <frame url>?pause=1 at once and
    no frame is fetched after it; a component still mounted 3 s later, its button still
    saying Pause (Streamlit dropped the click), asks for one rerun."""
    out = _node("run_live_pause.mjs")
    assert out["listeners"] == [["click", True]] and out["stillPolling"]
    assert out["pauseSent"] == ["/_dlplay/frame/T?pause=1"]
    assert out["afterClick"] == ["/_dlplay/frame/T?pause=1"]       # nothing fetched after it
    assert out["triggers"] == [["rerun", True]] and out["polls"] == 0 and out["pauses"] == "1"
