"""AppTest of topics/initialization/page.py: defaults, every view, every preset and tour step in
one session (as a teacher walks them), widget changes that must change the numbers shown, a
click on the mean-field map, live training, and bad URL values."""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.apptest import (chart_figure, chart_titles, choose_preset, click_chart, metric,
                           open_page, open_view, plotly_array, show_step)

PAGE = "topics/initialization/page.py"
SLUG = "initialization"


@pytest.fixture(scope="module")
def page():
    return open_page(PAGE)


def _ratio(at) -> float:
    return float(metric(at, "per-layer variance ratio"))


def _no_errors(at):
    assert not at.exception and not at.error, ([e.value for e in at.exception],
                                                [e.value for e in at.error])


def _all_valid(at) -> None:
    """Every drawn chart passes plotly's validation (figures are built as dicts: ui/fastfig.py)."""
    charts = at.get("plotly_chart")
    assert charts
    for chart in charts:
        go.Figure(json.loads(chart.proto.spec))


def test_defaults_draw_signal_figure_metrics_and_export(page):
    _no_errors(page)
    titles = chart_titles(page)
    assert any("tanh, normal init, σ_w = 1: 50 layers × 256" in t for t in titles), titles
    assert any("Effective rank" in t for t in titles)
    # tanh at σ_w = 1 is critical: the variance decays, but slower than geometrically at 0.25
    assert 0.85 < _ratio(page) < 1.0
    assert len(page.get("download_button")) == 2
    fig = chart_figure(page, "in_signal")
    act = plotly_array(fig["data"][0]["y"])
    assert act.shape == (51,) and act[0] == pytest.approx(1.0, rel=0.02)
    _all_valid(page)


def test_he_relu_changes_the_numbers():
    at = open_page(PAGE)
    before = _ratio(at)
    at.selectbox(key="in_act").select("relu").run()
    at.selectbox(key="in_init").select("kaiming_normal").run()
    _no_errors(at)
    after = _ratio(at)
    assert after != before and 0.95 < after < 1.05
    at.selectbox(key="in_init").select("xavier_normal").run()
    assert 0.45 < _ratio(at) < 0.55


@pytest.mark.parametrize("title, key", [("Edge of chaos", "in_map"), ("Train", "in_train_fig"),
                                        ("Batch norm", "in_bn_step"),
                                        ("Covariance spectra", "in_spectra")])
def test_every_view_draws_its_figure(title, key):
    at = open_view(open_page(PAGE), SLUG, title)
    _no_errors(at)
    assert chart_figure(at, key)["data"]
    _all_valid(at)
    assert not any("Variance per layer" in t for t in chart_titles(at))   # lazy tabs


def test_click_on_the_map_loads_the_point_for_tanh():
    at = open_view(open_page(PAGE), SLUG, "Edge of chaos")
    click_chart(at, "in_map", {"x": 1.52, "y": 0.31, "curve_number": 2, "point_number": 5})
    _no_errors(at)
    assert at.session_state["in_sw"] == pytest.approx(1.5)
    assert at.session_state["in_sb"] == pytest.approx(0.3)
    chi = float(metric(at, "χ (mean field)"))
    measured = float(metric(at, "measured gradient factor"))
    assert measured == pytest.approx(chi, rel=0.05)
    star = chart_figure(at, "in_map")["data"][-1]
    assert plotly_array(star["x"])[0] == pytest.approx(1.5)


def test_live_training_steps_and_draws_three_nets():
    at = open_view(open_page(PAGE), SLUG, "Train")
    at.button(key="in_train__step").click().run()
    _no_errors(at)
    fig = chart_figure(at, "in_train_fig")
    losses = [d for d in fig["data"] if d.get("xaxis", "x") == "x" and d["mode"] == "lines"]
    assert len(losses) == 3
    assert len(plotly_array(losses[0]["y"])) == 20          # one frame: 20 steps
    _all_valid(at)
    table = at.dataframe[0].value
    assert list(table["net"]) == ["normal σ_w=0.5", "xavier_normal", "kaiming_normal"]


def test_batch_size_two_gives_plus_minus_one_in_train_mode():
    at = open_view(open_page(PAGE), SLUG, "Batch norm")
    at.select_slider(key="bn_batch").set_value(2).run()
    _no_errors(at)
    fig = chart_figure(at, "in_bn_step")
    train = [d for d in fig["data"] if d.get("xaxis") == "x3" and d["marker"].get("size") == 9]
    values = np.concatenate([plotly_array(d["x"]) for d in train])
    np.testing.assert_allclose(np.abs(values), 1.0, atol=1e-3)
    _all_valid(at)


@pytest.mark.slow
def test_every_preset_then_every_step_in_one_session():
    """As a teacher does: presets one after the other, then the tour; no error on the way.
    (The slow learning-rate sweep preset is applied last and its figure checked.)"""
    from topics.initialization.page import PRESETS, STEPS, VIEWS
    TITLES = {v.key: v.title for v in VIEWS}
    at = open_page(PAGE)
    for name, preset in PRESETS.items():
        choose_preset(at, SLUG, name)
        _no_errors(at)
        for key, value in preset.settings.items():
            assert at.session_state[key] == value, (name, key)
        assert at.session_state[f"{SLUG}_view"] == TITLES[preset.view]
    assert chart_figure(at, "in_bn_sweep")["data"]
    _all_valid(at)
    for i, _ in enumerate(STEPS):
        show_step(at, SLUG, i)
        _no_errors(at)


@pytest.mark.parametrize("query", [{"in_depth": "1000"}, {"in_act": "softsign"},
                                   {"in_width": "7"}, {"in_sw": "-3"}])
def test_bad_url_values_fall_back_without_a_crash(query):
    at = open_page(PAGE, query)
    _no_errors(at)
    assert chart_figure(at, "in_signal")["data"]


def test_signal_presets_are_computed_in_the_background_before_they_are_picked(monkeypatch):
    import threading

    import streamlit as st

    from engine import signal as S
    st.cache_data.clear()
    st.cache_resource.clear()
    at = open_page(PAGE)
    warm = [t for t in threading.enumerate() if t.name == "dlplay-warm-initialization"]
    assert warm
    warm[0].join(300)
    calls = []
    real = S.propagate
    monkeypatch.setattr(S, "propagate", lambda *a, **k: calls.append(a) or real(*a, **k))
    choose_preset(at, SLUG, "ReLU + He: a per-layer ratio near 1")
    _no_errors(at)
    assert at.session_state["in_init"] == "kaiming_normal"
    assert calls == []                       # drawn from the cache the warm-up filled


def test_a_playing_train_tab_mounts_its_slots_once_and_the_route_serves_its_frames(monkeypatch):
    """The Train tab's frame is built as parts. Paused (a fresh
    trainer, no history yet) it checks they are drawable; on Play its fragment gets no
    run_every, the figure and the status line are live components bound to the page's token,
    and the frame route answers that token with the same slots; Pause draws Plotly again and
    the token stops answering."""
    from tests.apptest import pause_and_forget, play_and_fetch, push_on
    asked = push_on(monkeypatch)
    at = open_view(open_page(PAGE), SLUG, "Train")
    mounted, frame = play_and_fetch(at, "in_train", {"in_train_fig"}, asked)
    _no_errors(at)
    assert "spec" in mounted["in_train_fig"]
    assert not any(c.proto.id.endswith("in_train_fig") for c in at.get("plotly_chart"))
    assert len(frame["slots"]["in_train_fig"]["spec"]["data"]) == 6      # 3 nets x 2 panels
    pause_and_forget(at, "in_train")
    _no_errors(at)
    assert chart_figure(at, "in_train_fig")["data"]


def test_signal_metrics_name_what_they_cannot_measure_instead_of_nan():
    """Depth 1 and an overflow showed 'nan' metrics under a clean plot."""
    at = open_page(PAGE, {"in_depth": "1"})
    shown = {m.label: m.value for m in at.metric}
    assert "nan" not in " ".join(shown.values()) and "needs L ≥ 2" in shown["Var(h_L) / Var(h_1)"]
    at = open_page(PAGE, {"in_act": "relu", "in_init": "normal", "in_sw": "4", "in_depth": "100",
                          "in_norm": "none"})
    shown = {m.label: m.value for m in at.metric}
    assert "nan" not in " ".join(shown.values()), shown
    assert "(to layer" in shown["per-layer variance ratio"]


def test_a_diverging_net_does_not_stretch_the_loss_axis():
    """One net at loss 5·10⁶ rescaled the axis and flattened the others onto 0."""
    from engine.signal.training import DeepNetsSnapshot
    from topics.initialization.figures import LOSS_CAP, training_figure
    losses = np.array([[2.3, 1.5, 0.9], [2.3, 2.3, 2.29], [2.3, 5e6, np.nan]])
    snap = DeepNetsSnapshot(3, ("He", "normal", "big"), np.arange(3), losses, np.arange(0),
                            np.zeros((0, 3, 4)), np.zeros(3), (None, None, 2))
    top = training_figure(snap).layout.yaxis.range[1]
    assert 2.3 < top <= 1.08 * LOSS_CAP


def test_covariance_spectra_spread_with_depth_in_a_linear_stack():
    at = open_page(PAGE, {"in_act": "linear", "in_init": "xavier_normal", "in_width": "32",
                          "in_depth": "10"})
    at = open_view(at, SLUG, "Covariance spectra")
    _no_errors(at)
    lines = chart_figure(at, "in_spectra")["data"]
    assert [t["name"] for t in lines] == ["input x", "h_1", "h_2", "h_3", "h_4", "h_5"]
    first, last = plotly_array(lines[0]["y"]), plotly_array(lines[-1]["y"])
    assert len(first) == 32 and first[0] / first[-1] < 3 and last[0] / last[-1] > 1e6
    assert any("x: λmax/λmin" in c.value for c in at.caption)
