"""Every live view's real frame drawn by the live canvas and by plotly.js agrees: each live
tab (and the ReLU page's 3-D surface and plain-edge views) opened under AppTest, trained two
Steps, and every figure of its frame turned into what the frame route sends
(live.parts.Figure.payload). A canvas spec is drawn both ways in Chromium (canvas_fidelity):
ranges, plot area edges, tick label texts, angles and positions, legend entries, and the data
pixels inside each subplot must agree within the tolerances there; a figure the canvas
refuses goes out as plotly JSON and plotly.js draws it, so there is nothing to compare."""
from __future__ import annotations

import copy
import json

import pytest

from tests.apptest import plotly_array
from tests.e2e import canvas_fidelity as cf
from tests.e2e.live_frames import capture, live_views

pytestmark = pytest.mark.e2e

VIEWS = live_views()


@pytest.fixture(scope="module")
def harness(browser):
    context, page = cf.open_harness(browser)
    yield page
    context.close()


def _compare(page, part, name: str) -> list[str]:
    payload = part.payload(False)
    if "spec" not in payload:
        assert "plotly" in payload, f"{name}: neither a canvas spec nor plotly JSON"
        return []
    out = cf.draw_spec(page, json.loads(part.fig.to_json()), payload["spec"])
    plotly_img, canvas_img = cf.screenshots(page)
    return (cf.layout_mismatches(out, name)
            + cf.ink_mismatches(out, plotly_img, canvas_img, name))


@pytest.mark.parametrize("view", list(VIEWS))
def test_the_canvas_draws_each_live_frame_as_plotly_does(harness, view):
    parts = capture(VIEWS[view])
    bad = [m for slot, part in parts for m in _compare(harness, part, f"{view}/{slot}")]
    assert not bad, "\n".join(bad)


def test_the_comparison_sees_a_wrong_drawing(harness):
    """The checks have teeth: the diffusion loss curve drawn upside down (its y values
    mirrored in the spec) fails the data-pixel check, and a range the canvas would pad by
    10% more fails the range check, though neither changes a tick label."""
    (part,) = [p for slot, p in capture(VIEWS["df_train"]) if slot == "df_fig_loss"]
    spec = part.payload(False)["spec"]
    fig_json = json.loads(part.fig.to_json())
    flipped = copy.deepcopy(spec)
    trace = flipped["data"][0]
    ys = plotly_array(trace["y"])
    trace["y"] = list(ys.max() + ys.min() - ys)
    out = cf.draw_spec(harness, fig_json, flipped)
    assert cf.ink_mismatches(out, *cf.screenshots(harness), "flipped")
    assert not cf.ink_mismatches(cf.draw_spec(harness, fig_json, spec),
                                 *cf.screenshots(harness), "as sent")
    out = cf.draw_spec(harness, fig_json, spec)
    lo, hi = out["plotly"]["axes"]["x"]["range"]
    out["canvas"]["axes"]["x"]["range"] = [lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)]
    assert any("x range" in m for m in cf.layout_mismatches(out, "padded"))
