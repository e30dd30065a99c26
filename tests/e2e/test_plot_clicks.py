"""Clicks on Plotly charts in real Chromium reach the page's on_select callback: the gradient
descent start point, and a chart inside the live-training fragment that sets widgets drawn
outside it (live.controls.rerun_page: the harness page and the VAE latent scatter).

A click is sent to the pixel of one data point, chosen far from every other clickable point,
so the test knows which point the selection must report."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from tests.e2e.conftest import wait_idle
from topics.gradient_descent import figures as gd_figs

pytestmark = pytest.mark.e2e

EXCEPTION = '[data-testid="stException"]'
TRACES = """(gd) => gd._fullData.map((t, i) => ({
    i, name: t.name || "", x: Array.from(t.x || []), y: Array.from(t.y || []),
    hoverable: t.hoverinfo !== "skip" && t.type === "scatter",
    clickable: t.hoverinfo !== "skip" && (t.mode || "").includes("markers")}))"""
TO_PIXEL = """(gd, [x, y]) => { const L = gd._fullLayout, r = gd.getBoundingClientRect();
    return [r.left + L.xaxis._offset + L.xaxis.l2p(x), r.top + L.yaxis._offset + L.yaxis.l2p(y)]; }"""


def _plot(page, key: str):
    """The chart in `.st-key-<key>`, once its size has settled: the page reports the window's
    size after its first paint (ui/viewport.py) and the rerun that follows resizes the figure,
    which would move the pixel of a point between measuring it and clicking it."""
    plot = page.locator(f".st-key-{key} .js-plotly-plot")
    wait_idle(page, heading=False)            # (a rerun may hold the old chart beside the new)
    plot.wait_for(timeout=90_000)
    last = None
    for _ in range(30):
        wait_idle(page, heading=False)
        box = plot.bounding_box()
        size = box and (round(box["width"]), round(box["height"]))
        if size and size == last:
            break
        last = size
        page.wait_for_timeout(1500)        # the reporter sends after two agreeing polls
    plot.scroll_into_view_if_needed()
    return plot


def _traces(plot) -> list[dict]:
    return plot.evaluate(TRACES)


def _isolated(candidates: np.ndarray, others: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The candidate inside [lo, hi]^2 farthest from every point of `others` (n, 2)."""
    inside = candidates[np.all((candidates >= lo) & (candidates <= hi), axis=1)]
    gaps = np.linalg.norm(inside[:, None, :] - others[None, :, :], axis=2)
    gaps[gaps == 0] = np.inf                       # a candidate is not its own neighbour
    return inside[np.argmin(-gaps.min(axis=1))]


CLICK_RES = inspect.signature(gd_figs.path_figure).parameters["click_res"].default


def _click(page, plot, point: np.ndarray) -> None:
    x, y = plot.evaluate(TO_PIXEL, [float(point[0]), float(point[1])])
    page.mouse.move(x, y)
    page.wait_for_timeout(300)                     # plotly picks the hovered point on click
    page.mouse.click(x, y)


def _points(traces: list[dict], keep, field: str = "clickable") -> np.ndarray:
    rows = [np.c_[t["x"], t["y"]] for t in traces if t[field] and keep(t) and t["x"]]
    return np.concatenate(rows) if rows else np.zeros((0, 2))


def test_click_on_the_contour_plot_sets_the_start_point(page, server_url):
    page.goto(f"{server_url}/gradient_descent")
    wait_idle(page)
    start_x1, start_x2 = page.get_by_label("Start x₁"), page.get_by_label("Start x₂")
    assert (start_x1.input_value(), start_x2.input_value()) == ("-2.50", "1.50")
    plot = _plot(page, "gd_contour")
    traces = _traces(plot)
    grid = _points(traces, lambda t: t["name"].startswith("click"))
    # every point a click could land on instead (path vertices with hover, lines or markers)
    paths = _points(traces, lambda t: not t["name"].startswith("click"), "hoverable")
    assert len(grid) == CLICK_RES ** 2 and len(paths) > 0
    target = np.round(_isolated(grid, paths, -2.5, 2.5), 2)
    _click(page, plot, target)
    page.wait_for_function(
        "(v) => document.querySelector('.st-key-gd_x0 input').value === v",
        arg=f"{target[0]:.2f}", timeout=60_000)
    wait_idle(page)
    assert float(start_x1.input_value()) == target[0]
    assert float(start_x2.input_value()) == target[1]
    # the redrawn figure starts every path there
    start = next(t for t in _traces(_plot(page, "gd_contour")) if t["name"] == "start")
    assert (start["x"], start["y"]) == ([target[0]], [target[1]])
    assert page.locator(EXCEPTION).count() == 0


def test_click_inside_the_live_fragment_updates_a_widget_outside_it(page, harness_url):
    page.goto(harness_url)
    page.wait_for_selector("text=steps=0", timeout=90_000)
    wait_idle(page, heading=False)
    box = page.locator(".st-key-h_pick_x input")
    assert box.input_value() == "0.00"
    plot = _plot(page, "h_pick")
    pts = _points(_traces(plot), lambda t: True)
    target = _isolated(pts, pts, -1.5, 1.5)
    _click(page, plot, target)
    page.wait_for_function(
        "(v) => document.querySelector('.st-key-h_pick_x input').value === v",
        arg=f"{target[0]:.2f}", timeout=60_000)
    assert page.locator(EXCEPTION).count() == 0


def test_click_on_the_vae_latent_scatter_moves_the_decode_sliders(page, server_url):
    page.goto(f"{server_url}/vae")
    wait_idle(page)
    plot = _plot(page, "vae_scatter")
    codes = _points(_traces(plot), lambda t: t["name"].isdigit())
    assert len(codes) == 359                       # the test digits
    target = _isolated(codes, codes, -3.5, 3.5)
    _click(page, plot, target)
    want = [float(v) for v in np.round(target, 2)]
    # the sliders (step 0.05) show the clicked code, rounded to 2 decimals
    page.wait_for_function(
        "(v) => ['vae_z1', 'vae_z2'].every((k, i) => { const e = document.querySelector("
        "`.st-key-${k} input[type=range]`);"
        " return e && Math.abs(parseFloat(e.getAttribute('aria-valuetext')) - v[i]) <= 0.026; })",
        arg=want, timeout=60_000)
    assert page.locator(EXCEPTION).count() == 0
