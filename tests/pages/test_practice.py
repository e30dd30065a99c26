"""AppTest of the Training in practice page: the numbers on screen against the engine's, bad
input that gives a message and no traceback, every preset and tour step, and a Step of the
live pruning tab."""
from __future__ import annotations

import pytest

from tests.apptest import chart_figure, check_every_preset_and_step, metric, open_page, open_view

PAGE = "topics/practice/page.py"
SLUG = "practice"


def _module():
    import topics.practice.page as page
    return page


def test_every_preset_then_every_step():
    check_every_preset_and_step(SLUG)


def _warned(at, words: str) -> bool:
    return any(words in w.value for w in at.warning)


def test_uncertainty_tab_shows_the_bands_numbers():
    from topics.practice.compute import band_from
    page = _module()
    at = open_page(PAGE)
    assert [t.label for t in at.tabs] == [v.title for v in page.VIEWS]
    b = band_from(page.STATE.resolve({}))
    assert metric(at, "gap / data") == f"{b.width_ratio:.2f}×"
    assert b.width_ratio > 1.5
    assert chart_figure(at, "pr_fig_band")["data"][-1]["name"] == "data"


def test_one_member_and_dropout_zero_are_explained():
    at = open_page(PAGE)
    at.slider(key="pr_members").set_value(1).run()
    assert not at.exception and _warned(at, "at least 2 members")
    at.radio(key="pr_method").set_value("MC dropout").run()
    at.select_slider(key="pr_drop").set_value(0.0).run()
    assert not at.exception and _warned(at, "band collapses")


def test_svgd_one_particle_and_search_budgets_are_explained():
    at = open_view(open_page(PAGE), SLUG, "SVGD particles")
    at.slider(key="pr_particles").set_value(1).run()
    assert not at.exception and _warned(at, "no repulsion")
    at = open_view(at, SLUG, "Hyperparameter search")
    at.checkbox(key="pr_bayes").uncheck().run()
    at.number_input(key="pr_budget").set_value(0).run()
    assert not at.exception and _warned(at, "budget of 0")
    at.number_input(key="pr_budget").set_value(10_000).run()
    assert not at.exception and any("capped at 100" in i.value for i in at.info)


def test_pruning_all_or_nothing_is_explained():
    at = open_view(open_page(PAGE), SLUG, "Pruning & lottery tickets")
    for rate, words in ((0.0, "removes nothing"), (1.0, "removes every weight")):
        at.select_slider(key="pr_rate").set_value(rate).run()
        assert not at.exception and _warned(at, words), rate


def test_step_trains_the_live_view():
    at = open_view(open_page(PAGE), SLUG, "Pruning & lottery tickets")
    at.button(key="pr_train__step").click().run()
    assert not at.exception
    assert at.session_state["pr_train__view"].steps > 0


def test_distillation_tab_shows_both_students():
    at = open_view(open_page(PAGE), SLUG, "Distillation")
    assert not at.exception and not at.error
    fig = chart_figure(at, "pr_fig_distill")
    assert [d["name"] for d in fig["data"][:2]] == ["student on hard labels",
                                                    "student on soft targets, T = 4"]
    at.slider(key="pr_digit").set_value(5).run()
    assert not at.exception and not at.error


def test_pruning_figure_after_rounds_is_valid_and_blank_where_pruned():
    """The live figure once rounds are recorded: valid with Plotly's validation, one curve per
    arm, and the matrix's pruned weights sent as gaps (NaN)."""
    import json

    import numpy as np
    import plotly.io as pio

    from engine.practice.pruning import LotteryTrainer
    from topics.practice import figures as figs
    from topics.practice.compute import curves
    from ui.fastfig import validated
    tr = LotteryTrainer(hidden=16, rate=0.5, round_steps=10, seed=0)
    tr.step(30)
    snap = tr.snapshot()
    fig = figs.lottery_figure(snap.weights, curves(snap.rounds),
                              snap.rounds[0].accuracy["ticket"], snap.kept, 0.5)
    spec = json.loads(pio.to_json(fig, validate=False))
    assert json.loads(pio.to_json(validated(fig), validate=False)) == spec
    assert [d["name"] for d in fig.data[1:]] == list(figs.ARM_NAMES.values())
    z = np.asarray(fig.data[0]["z"], dtype=float)
    assert np.isnan(z).mean() == pytest.approx(1 - snap.layer_kept[0], abs=1e-6)


def test_rounds_table_reads_the_live_trainer():
    from engine.practice.pruning import LotteryTrainer
    from engine.practice.reads import rounds_of
    tr = LotteryTrainer(hidden=16, rate=0.5, round_steps=10, seed=0)
    tr.step(20)
    rows = rounds_of(tr)
    assert [r["round"] for r in rows] == [0, 1] and rows[1]["kept"] == pytest.approx(0.5, abs=1e-3)
    assert all(1 <= r["ticket peak at"] <= 10 for r in rows)
    at = open_view(open_page(PAGE), SLUG, "Pruning & lottery tickets")
    at.button(key="pr_rounds").click().run()
    assert not at.exception and any("No finished round" in i.value for i in at.info)
