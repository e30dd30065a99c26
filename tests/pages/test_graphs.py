"""AppTest of the graphs page: its tabs, every preset and tour step, the numbers its figures
show, a Step of its live training, and plain words for the inputs it cannot use."""
from __future__ import annotations

import numpy as np
import pytest

from tests.apptest import (chart_figure, check_every_preset_and_step, check_tabs_are_the_views,
                           choose_preset, open_page, open_view, plotly_array, set_values)

PAGE = "topics/graphs/page.py"
SLUG = "graphs"


def _module():
    import topics.graphs.page as page
    return page


def test_tabs_and_defaults():
    at = check_tabs_are_the_views(SLUG)
    assert not at.warning


def test_every_preset_then_every_step():
    check_every_preset_and_step(SLUG)


def test_messages_show_the_row_of_a_hat():
    from topics.graphs.compute import graph_of, passing_of
    at = open_page(PAGE)
    choose_preset(at, SLUG, "Messages into the club's leader")
    passing = chart_figure(at, "gr_fig_passing")
    assert sum(t.get("name", "").startswith("Â[0,") for t in passing["data"]) == 16
    fig = chart_figure(at, "gr_fig_spread")
    dots = next(t for t in fig["data"] if t.get("name") == "Â_ij")
    a_hat = passing_of("karate", 20, 0.15)["a_hat"]
    deg = graph_of("karate", 20, 0.15).degrees + 1
    weights, senders = plotly_array(dots["y"]), plotly_array(dots["x"])
    np.testing.assert_allclose(np.sort(weights), np.sort(a_hat[0][a_hat[0] > 0]), rtol=1e-6)
    np.testing.assert_allclose(weights, 1 / np.sqrt(deg[0] * senders), rtol=1e-6)
    listed = next(m.value for m in at.markdown if "Row 0 of Â" in m.value)
    assert f"Â[0,31] = {a_hat[0, 31]:.3f}" in listed and listed.count("Â[0,") == 17


def test_the_spread_curve_is_the_claimed_one():
    from topics.graphs.compute import spread_after
    at = open_page(PAGE)
    choose_preset(at, SLUG, "Over-smoothing: 8 layers")
    curve = next(t for t in chart_figure(at, "gr_fig_spread")["data"]
                 if t.get("name") == "spread")
    spread = plotly_array(curve["y"])
    s = _module().STATE.resolve(_module().PRESETS["Over-smoothing: 8 layers"].settings)
    assert spread[0] == pytest.approx(1) and spread[8] == pytest.approx(spread_after(s),
                                                                        rel=1e-6)
    assert spread[8] < 0.15


def test_the_permutation_points_lie_on_the_diagonal():
    at = open_page(PAGE)
    choose_preset(at, SLUG, "Relabel the nodes")
    fig = chart_figure(at, "gr_fig_perm")
    for trace in fig["data"][1:]:
        x, y = plotly_array(trace["x"]), plotly_array(trace["y"])
        assert np.abs(x - y).max() < 1e-5


@pytest.mark.parametrize("settings, words", [
    ({"gr_graph": "ring", "gr_n": 1}, "one node"),
    ({"gr_graph": "random", "gr_n": 20, "gr_p": 0.05}, "no neighbour"),
])
def test_graphs_it_cannot_use_get_words(settings, words):
    at = set_values(open_page(PAGE), **settings)
    shown = " ".join(m.value for m in [*at.info, *at.warning])
    assert words in shown and not at.error


@pytest.mark.parametrize("per_class, words", [(0, "No node is labelled"),
                                              (17, "Every member is labelled")])
def test_labels_it_cannot_use_get_words(per_class, words):
    at = open_view(open_page(PAGE), SLUG, "Node classification")
    set_values(at, gr_per_class=per_class)
    shown = " ".join(m.value for m in [*at.info, *at.warning])
    assert words in shown and not at.error


def test_one_node_on_the_permutation_tab():
    at = open_view(open_page(PAGE), SLUG, "Permutation")
    set_values(at, gr_graph="ring", gr_n=1)
    assert any("one node" in m.value for m in at.info) and not at.error


def test_step_trains_the_live_view():
    at = open_view(open_page(PAGE), SLUG, "Node classification")
    at.button(key="gr_train__step").click().run()
    assert not at.exception
    assert at.session_state["gr_train__view"].steps > 0
    title = chart_figure(at, "gr_fig_loss")["layout"]["title"]["text"]
    assert "MLP without edges 50.0%" in title
    snap = at.session_state["gr_train__view"].snapshot()
    classes = chart_figure(at, "gr_fig_classes")
    assert classes["layout"]["title"]["text"] == f"GCN: {snap.accuracy:.1%} of unlabelled right"
    diamonds = next(t for t in classes["data"] if t.get("name") == "labelled")
    assert len(diamonds["marker"]["color"]) == int(snap.labelled.sum()) == 2


def test_step_trains_the_simulator_and_draws_both_sizes():
    from topics.graphs.compute import rollouts_of
    at = open_view(open_page(PAGE), SLUG, "Learned physics")
    at.button(key="gr_sim__step").click().run()
    assert not at.exception and not at.error
    view = at.session_state["gr_sim__view"]
    assert view.steps > 0
    mine, theirs = rollouts_of(view.snapshot(), 5, 10)
    for key, r, balls in (("gr_fig_roll", mine, 5), ("gr_fig_roll_other", theirs, 10)):
        fig = chart_figure(at, key)
        assert fig["layout"]["title"]["text"].endswith(f"error {r.error[-1]:.3f}")
        learned = next(t for t in fig["data"] if t.get("name") == "learned balls")
        np.testing.assert_allclose(plotly_array(learned["x"]), r.learned[-1, :, 0], rtol=1e-5,
                                   atol=1e-5)
        assert len(plotly_array(learned["x"])) == balls
    curve = chart_figure(at, "gr_fig_roll_error")["data"][1]
    np.testing.assert_allclose(plotly_array(curve["y"]), theirs.error, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("puzzle, words", [
    ("..../..../..../....", "grid is empty"),
    ("2..2/3.../..4./..3.", "both hold 2"),
    ("..../.123/..../4...", "no way of filling"),
    ("12345", "cannot be read"),
])
def test_puzzles_it_cannot_solve_get_words(puzzle, words):
    at = open_view(open_page(PAGE), SLUG, "Sudoku")
    set_values(at, gr_sudoku=puzzle)
    assert any(words in m.value for m in at.warning) and not at.error and not at.exception


def test_the_sudoku_shows_the_networks_beliefs():
    from engine.graphs.sudoku import parse_grid, solutions
    from topics.graphs.compute import DEFAULT_PUZZLE, puzzle_beliefs
    at = open_view(open_page(PAGE), SLUG, "Sudoku")
    set_values(at, gr_sd_iter=2)
    b = puzzle_beliefs(DEFAULT_PUZZLE)
    assert b["digits"] is not None, "the shipped Sudoku network is missing"
    fig = chart_figure(at, "gr_fig_sudoku")
    z = np.array([plotly_array(row) for row in fig["data"][0]["z"]])
    np.testing.assert_allclose(z.ravel(), b["confidence"][1], rtol=1e-6)
    right = int((b["digits"][1] == solutions(parse_grid(DEFAULT_PUZZLE), 1)[0]).sum())
    assert fig["layout"]["title"]["text"] == f"t = 2: {right}/16 right"
