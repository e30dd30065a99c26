"""AppTest of pages/gradient_descent.py: defaults, every preset, a guided step, widget changes
that must change the numbers shown, and bad input that must give a message, not a crash."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import (chart_figure, chart_titles, choose_preset, click_chart, open_page,
                           open_view, plotly_array, show_step)

PAGE = "topics/gradient_descent/page.py"
SLUG = "gradient_descent"
STEPS_COL = "steps to f − f* ≤ 1e-08"


def _page(query: dict | None = None) -> AppTest:
    return open_page(PAGE, query)


def _table(at: AppTest):
    return at.table[0].value.set_index("method")


def _warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]




@pytest.fixture(scope="module")
def page() -> AppTest:
    return _page()


def test_defaults_race_four_methods_and_draw_every_figure(page):
    table = _table(page)
    assert list(table.index) == ["GD", "Momentum", "Nesterov", "Adam"]
    assert not page.error and not _warnings(page)
    # defaults: kappa 20, lambda_max 1, eta = 1.4 -> GD rate max(|1-1.4|, 1-0.07) = 0.93
    assert table.loc["GD", "step size"] == pytest.approx(10 ** 0.1461, rel=1e-9)
    assert table.loc["Momentum", STEPS_COL] < table.loc["GD", STEPS_COL]
    titles = chart_titles(page)
    for expected in ("Paths on the contour plot", "Error f(x_k)"):
        assert any(expected in t for t in titles), (expected, titles)
    assert len(page.get("download_button")) == 2


@pytest.mark.parametrize("view, expected", [("Step factor |1 − ηλ|", "Why the largest eigenvalue"),
                                            ("Error per eigenvector", "Error along each eigenvector"),
                                            ("Momentum phase diagram", "Heavy-ball rate"),
                                            ("Schedules", "Learning rate η_t")])
def test_every_view_draws_its_figure_and_only_the_open_view_runs(view, expected):
    at = open_view(_page(), SLUG, view)
    titles = chart_titles(at)
    assert any(expected in t for t in titles), (expected, titles)
    assert not any("Paths on the contour plot" in t for t in titles)    # lazy: race not run


def test_schedules_tab_draws_the_chosen_schedule_and_its_restarts():
    at = open_view(_page(), SLUG, "Schedules")
    assert not at.exception
    (trace, *_) = chart_figure(at, "gd_sched_fig")["data"]
    lrs = plotly_array(trace["y"])
    assert len(lrs) == 20000 and int(lrs.argmax()) == 3999        # warm-up w = 4000
    assert any("at t = 3999" in c.value for c in at.caption)
    at.radio(key="gd_sched").set_value("sgdr").run()
    at.select_slider(key="gd_sched_n").set_value(200).run()
    at.select_slider(key="gd_sched_period").set_value(10).run()
    at.select_slider(key="gd_sched_mult").set_value(2).run()
    assert not at.exception
    assert any("warm restarts at t = 10, 30, 70, 150" in c.value for c in at.caption)


def test_eigenvector_axes_are_drawn_through_the_minimum_on_request():
    at = _page({"gd_land": "quadratic", "gd_kappa": "5", "gd_angle": "30"})
    names = lambda: [t.get("name", "") for t in chart_figure(at, "gd_contour")["data"]]  # noqa: E731
    assert not any(n.startswith("eigenvector") for n in names())
    at.checkbox(key="gd_eigaxes").check().run()
    assert not at.exception
    axes = [t for t in chart_figure(at, "gd_contour")["data"]
            if t.get("name", "").startswith("eigenvector")]
    assert [t["name"] for t in axes] == ["eigenvector 1 (λ = 0.2)", "eigenvector 2 (λ = 1)"]
    (x0, x1), (y0, y1) = plotly_array(axes[0]["x"]), plotly_array(axes[0]["y"])
    assert math.degrees(math.atan2(y1 - y0, x1 - x0)) % 180 == pytest.approx(30.0)


def test_the_quadratic_model_at_the_start_is_drawn_on_request():
    at = _page()
    at.selectbox(key="gd_land").select("rosenbrock").run()           # starts at (-1.5, 2)
    at.checkbox(key="gd_taylor").check().run()
    assert not at.exception
    rings = [t for t in chart_figure(at, "gd_contour")["data"]
             if t.get("legendgroup") == "model"]
    assert len(rings) == 3 and [t["showlegend"] for t in rings] == [True, False, False]
    # the middle level curve passes through the start point
    x, y = plotly_array(rings[1]["x"]), plotly_array(rings[1]["y"])
    assert np.hypot(x + 1.5, y - 2.0).min() < 0.05


def test_every_preset_runs_and_shows_its_phenomenon():
    at = _page()
    presets = at.selectbox(key="gradient_descent__preset").options
    assert len(presets) >= 7
    seen = {}
    for name in presets:
        choose_preset(at, SLUG, name)
        assert not at.error, (name, [e.value for e in at.error])
        seen[name] = (_table(at), _warnings(at))
    one = seen["κ = 1, η = 1/λ: one step"][0]
    assert one.loc["GD", STEPS_COL] == 1
    table, warnings = seen["η just above 2/λmax: divergence"]
    step = table.loc["GD", "diverged at"]
    assert step > 0 and any(f"diverged at step {step}" in w for w in warnings)
    mom = seen["Optimal momentum: faster, not smoother"][0]
    # rates 0.96 vs 0.75: momentum needs several times fewer steps
    assert mom.loc["Momentum", STEPS_COL] * 3 < mom.loc["GD", STEPS_COL]
    stuck = seen["Saddle: GD stalls"][0].loc["GD", "final f − f*"]
    free = seen["Saddle + gradient noise: escapes"][0].loc["GD", "final f − f*"]
    assert stuck == pytest.approx(0.25, abs=1e-9) and free < 0.01
    rb = seen["Rosenbrock valley"][0]
    assert rb.loc["Newton", STEPS_COL] < 20 and math.isnan(rb.loc["GD", STEPS_COL])


def test_guided_step_sets_the_widgets_and_bad_input_gives_a_message():
    at = _page()
    show_step(at, SLUG, 2)
    assert at.slider(key="gd_loglr").value == pytest.approx(math.log10(2.05), abs=1e-3)
    assert any("diverged at step" in w for w in _warnings(at))
    at.multiselect(key="gd_methods").set_value([]).run()
    assert not at.exception
    assert any("Choose at least one method" in w for w in _warnings(at))
    at.multiselect(key="gd_methods").set_value(["gd"]).run()
    at.slider(key="gd_loglr").set_value(1.0).run()          # eta = 10: diverges at once
    assert not at.exception and not at.error
    # kappa = 10 after the guided step: |1 - 10 * 1| = 9 per step, |x_0| ~ 2.9 -> 1e6 at k = 6
    assert any("GD diverged at step 6" in w for w in _warnings(at)), _warnings(at)


def test_widget_changes_change_the_numbers():
    at = _page()
    before = _table(at)
    at.slider(key="gd_loglr").set_value(-0.5).run()
    after = _table(at)
    assert after.loc["GD", "step size"] == pytest.approx(10 ** -0.5)
    assert after.loc["GD", "final f − f*"] > before.loc["GD",
                                                                       "final f − f*"]
    at.multiselect(key="gd_methods").set_value(["gd", "newton"]).run()
    assert list(_table(at).index) == ["GD", "Newton"]
    assert _table(at).loc["Newton", STEPS_COL] == 1            # Newton: one step on a quadratic
    at.selectbox(key="gd_land").select("rosenbrock").run()
    assert not at.exception and not _warnings(at)     # its own safe eta = 1/lambda_max
    assert at.slider(key="gd_loglr").value == pytest.approx(math.log10(1 / 1001.6), abs=1e-3)
    assert at.number_input(key="gd_x0").value == -1.5
    at.selectbox(key="gd_land").select("two_minima").run()
    assert not at.exception
    assert _table(at).loc["GD", "final f − f*"] > 0.5   # stuck in the local min
    at.slider(key="gd_iter").set_value(5).run()
    assert any(re.search(r"iteration 5\)", t) for t in chart_titles(at))


def test_url_reproduces_the_view_and_bad_values_fall_back():
    at = _page({"gd_kappa": "50", "gd_loglr": "-0.5", "gd_methods": ["GD", "Adam"],
                "gd_land": "Quadratic"})
    assert at.select_slider(key="gd_kappa").value == 50
    assert list(_table(at).index) == ["GD", "Adam"]
    assert _table(at).loc["GD", "step size"] == pytest.approx(10 ** -0.5)
    bad = _page({"gd_kappa": "13", "gd_loglr": "abc", "gd_land": "moon", "gd_steps": "-4"})
    assert not bad.error
    assert bad.select_slider(key="gd_kappa").value == 20
    assert bad.selectbox(key="gd_land").value == "quadratic"
    assert bad.slider(key="gd_steps").value == 10                  # -4: clamped to the minimum
    assert any("gd_steps=-4 is not valid; using 10" in w.value.replace("\\", "")
               for w in bad.warning)


def test_start_from_selection_reads_clicks_and_boxes():
    from topics.gradient_descent.figures import start_from_selection
    click = {"selection": {"points": [{"x": 1.0, "y": -0.75, "curve_number": 1}], "box": []}}
    assert start_from_selection(click, (-3, 3)) == (1.0, -0.75)
    box = {"selection": {"points": [], "box": [{"x": [0.0, 1.0], "y": [2.0, 5.0]}]}}
    assert start_from_selection(box, (-3, 3)) == (0.5, 3.0)          # centre, clipped
    for nothing in (None, {}, {"selection": {"points": [], "box": []}},
                    {"selection": {"points": [{"x": "a", "y": 1}]}}):
        assert start_from_selection(nothing, (-3, 3)) is None


def test_click_on_the_contour_plot_moves_the_start_and_the_paths():
    """A click selects a point of the plot's invisible click grid: the start inputs and the
    figure's start marker move there and every path starts from it."""
    at = _page()
    spec = chart_figure(at, "gd_contour")
    # Streamlit turns clicks into selections only when dragmode is not select/lasso
    assert spec["layout"]["dragmode"] not in ("select", "lasso")
    assert spec["layout"]["clickmode"] == "event+select"
    click_chart(at, "gd_contour", {"x": 1.0, "y": -0.75, "curve_number": 1, "point_number": 7,
                                   "point_index": 7})
    assert not at.exception
    assert (at.number_input(key="gd_x0").value, at.number_input(key="gd_y0").value) == (1.0, -0.75)
    spec = chart_figure(at, "gd_contour")
    start = next(t for t in spec["data"] if t.get("name") == "start")
    assert (start["x"], start["y"]) == ([1.0], [-0.75])
    gd_path = next(t for t in spec["data"] if t.get("name") == "GD")
    assert (plotly_array(gd_path["x"])[0], plotly_array(gd_path["y"])[0]) == (1.0, -0.75)


def test_scrubbing_reruns_only_the_scrubber_and_its_two_figures():
    """The iteration slider, the contour and the loss figure share a fragment: a
    scrub redraws those three (at the new k) and nothing else (no table, no ruler)."""
    from tests.apptest import rerun_fragment
    at = _page()
    at.slider(key="gd_iter").set_value(5)
    rerun_fragment(at, "gd_scrub")
    assert [t for t in chart_titles(at) if "iteration" in t] == \
        ["Paths on the contour plot of f (iteration 5)"]
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert any(k.endswith("gd_contour") for k in keys) and any(k.endswith("gd_loss") for k in keys)
    assert not any(k.endswith("gd_ruler") for k in keys)
    assert not at.table                           # the table was not rebuilt
    gd = next(t for t in chart_figure(at, "gd_contour")["data"] if t.get("name") == "GD")
    assert list(plotly_array(gd["customdata"]))[-1] == 5      # drawn up to step 5


def test_paths_are_drawn_at_screen_resolution_from_start_to_end():
    """The contour figure merges iterates closer than ~4 px (a converged tail) but keeps the
    first and the last, and hovers the true step numbers; step markers are a separate
    markers-only trace (no "lines+markers" trace: they made a slider move 2-3x slower)."""
    import numpy as np
    from topics.gradient_descent import page as P
    at = _page()
    spec = chart_figure(at, "gd_contour")
    runs = P.race_of(P.STATE.resolve({}))
    assert not any(t.get("mode") == "lines+markers" for t in spec["data"])
    for name, method in (("GD", "gd"), ("Adam", "adam")):
        path = next(t for t in spec["data"] if t.get("name") == name)
        steps = plotly_array(path["customdata"]).astype(int)
        pts = runs[method].points
        assert steps[0] == 0 and steps[-1] == len(pts) - 1 and len(steps) < len(pts) / 3
        assert np.allclose(plotly_array(path["x"]), pts[steps, 0])
        # every dropped iterate lies within the merge radius of a drawn vertex
        drawn = pts[steps]
        gaps = np.min(np.hypot(*(pts[:, None, :] - drawn[None]).transpose(2, 0, 1)), axis=1)
        assert gaps.max() < 0.008 * 6.0 + 1e-9


def test_a_click_inside_the_scrubber_fragment_reruns_the_race():
    """The contour sits in the scrubber's fragment, but a new start needs a new race: the
    click's callback turns the fragment rerun into a full one (table redrawn, paths from the
    clicked point)."""
    at = _page()
    click_chart(at, "gd_contour", {"x": 1.0, "y": -0.75, "curve_number": 1, "point_number": 7,
                                   "point_index": 7}, in_fragment=True, fragment_key="gd_scrub")
    assert not at.exception and at.table
    gd_path = next(t for t in chart_figure(at, "gd_contour")["data"] if t.get("name") == "GD")
    assert (plotly_array(gd_path["x"])[0], plotly_array(gd_path["y"])[0]) == (1.0, -0.75)


def test_race_figures_are_valid_plotly_and_the_step_dots_sit_on_the_steps(page):
    """The race view's figures are built from plain dicts (not validated when built): as drawn
    they pass Plotly's validation. The step dots are one line trace per method (rings, not
    one marker node per step) and every ring lies on a drawn vertex of its path."""
    import numpy as np
    import plotly.graph_objects as go
    from topics.gradient_descent import figures as F
    for key in ("gd_contour", "gd_loss"):
        go.Figure(chart_figure(page, key))                  # raises on an invalid property
    spec = chart_figure(page, "gd_contour")
    span = 6.0
    for name in ("GD", "Adam"):
        path = next(t for t in spec["data"] if t.get("name") == name)
        dots = next(t for t in spec["data"] if t.get("name") == f"{name} steps")
        assert dots["mode"] == "lines" and dots["hoverinfo"] == "skip"
        vertices = np.c_[plotly_array(path["x"]), plotly_array(path["y"])]
        ring = np.c_[plotly_array(dots["x"]), plotly_array(dots["y"])]
        assert len(ring) == len(vertices) * 11          # centre, 9 ring points, centre
        near = np.min(np.hypot(*(ring[:, None, :] - vertices[None]).transpose(2, 0, 1)), axis=1)
        assert near.max() <= F.DOT_RADIUS * span * 1.001
    # the landscape: one filled contour with its level lines
    contour = spec["data"][0]
    assert contour["type"] == "contour" and contour["contours"]["coloring"] == "fill"
    assert sum(1 for t in spec["data"] if "markers" in t.get("mode", "")) == len(spec["data"]) - \
        1 - 4 * 2                                        # click grid + 4 current dots + start, x*


def test_hyperparameters_are_drawn_only_while_their_expander_is_open_and_kept_when_closed():
    """The noise and per-method hyperparameter widgets are lazy (not drawn, not redrawn on a
    slider move, while their expander is closed); a value set while it was open still drives
    the race after it is closed and after another control moves."""
    at = _page()
    keys = {w.key for w in at.number_input}
    assert "gd_hp_adam_lr" not in keys and "gd_x0" in keys     # start inputs always drawn
    at.session_state["gd_more"] = True
    at.run()
    at.number_input(key="gd_hp_adam_lr").set_value(0.3).run()
    assert _table(at).loc["Adam", "step size"] == pytest.approx(0.3)
    at.session_state["gd_more"] = False
    at.run()
    assert "gd_hp_adam_lr" not in {w.key for w in at.number_input}
    at.select_slider(key="gd_kappa").set_value(50).run()
    assert not at.exception
    assert _table(at).loc["Adam", "step size"] == pytest.approx(0.3)


def test_the_ruler_is_an_svg_that_places_eta_the_edge_and_the_optimum_on_a_log_axis(page):
    """The learning-rate ruler is inline SVG (no Plotly chart: one newPlot less in the first
    paint): the η dot, the 2/λmax line (red shading beyond it) and η* sit at their log-scale
    x; a landscape change moves them."""
    import numpy as np
    from topics.gradient_descent import figures as F

    def ruler(at):
        svg = next(m.value for m in at.markdown if 'class="gd-ruler"' in m.value)
        dot = float(re.search(r'<circle cx="([-\d.]+)"', svg).group(1))
        lines = {c: float(x) for x, c in re.findall(
            r'<line x1="([-\d.]+)" y1="[-\d.]+" x2="[-\d.]+" y2="[-\d.]+" '
            r'stroke="(#d62728|#2ca02c)"', svg)}
        return svg, dot, lines

    def x_of(v, lo=1e-4, hi=10.0):
        return 10 + (np.log10(v) - np.log10(lo)) / (np.log10(hi) - np.log10(lo)) * 220

    assert not any(c.proto.id.endswith("gd_ruler") for c in page.get("plotly_chart"))
    svg, dot, lines = ruler(page)
    assert abs(dot - x_of(1.4)) < 0.1                         # default η = 1.4
    assert abs(lines["#d62728"] - x_of(2.0)) < 0.1            # 2/λmax = 2 (λmax = 1)
    assert abs(lines["#2ca02c"] - x_of(2 / (1 + 1 / 20))) < 0.1   # η* = 2/(λmin + λmax)
    assert 'fill="#d62728" fill-opacity="0.12"' in svg and "2/λmax" in svg and "η*" in svg
    at = _page()
    at.slider(key="gd_lmax").set_value(4.0).run()
    _, dot4, lines4 = ruler(at)
    assert abs(lines4["#d62728"] - x_of(0.5)) < 0.1 and abs(dot4 - dot) < 0.1
    assert F.lr_ruler_svg(1.0, 1e-4, 10.0, edge=20.0).count("<rect") == 0   # edge past hi


def test_the_path_figure_subtitle_names_the_setup_the_race_ran():
    """κ, rotation, the shared η (not the optimal heavy ball's own) and any gradient noise."""
    from topics.gradient_descent import page as gd
    adaptive = gd.STATE.resolve(gd.PRESETS["Adam vs RMSProp, ill-conditioned and rotated"].settings)
    assert gd.race_setup(adaptive) == "κ = 100, rotated 45° · η = 1.9 (GD)"
    momentum = gd.STATE.resolve(gd.PRESETS["Optimal momentum: faster, not smoother"].settings)
    assert "(GD)" in gd.race_setup(momentum) and "Momentum" not in gd.race_setup(momentum)
    noisy = gd.STATE.resolve(gd.PRESETS["Saddle + gradient noise: escapes"].settings)
    assert gd.race_setup(noisy).endswith("gradient noise σ = 0.05")
