"""AppTest of topics/adversarial/page.py: defaults, every preset and tour step (the numbers
their texts quote are the ones on screen), widget changes that must change what is shown, a
click on the digit strip, one live training step, and a missing weights file that must give a
message, not a crash."""
from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import (chart_figure, chart_titles, choose_preset, click_chart, metric,
                           open_page, open_view, plotly_array, show_step)

PAGE = "topics/adversarial/page.py"
SLUG = "adversarial"
ACC = "Held-out accuracy, attacked"


def _page(query: dict | None = None) -> AppTest:
    return open_page(PAGE, query)


def _all_valid(at: AppTest) -> None:
    """Every drawn chart passes plotly's validation (figures are built as dicts: ui/fastfig.py)."""
    charts = at.get("plotly_chart")
    assert charts
    for chart in charts:
        go.Figure(json.loads(chart.proto.spec))


def _pct(text: str) -> float:
    return float(text.rstrip("%")) / 100


@pytest.fixture(scope="module")
def page() -> AppTest:
    return _page()


def test_defaults_attack_the_standard_cnn_with_pgd(page):
    assert not page.error
    titles = chart_titles(page)
    assert titles[0].startswith("PGD-10 on the standard CNN, ε = 0.125, untargeted: fooled")
    assert "Click a held-out digit" in titles[1]
    _all_valid(page)
    assert _pct(metric(page, ACC)) < 0.20
    assert _pct(metric(page, "Clean held-out accuracy")) > 0.97
    linf, l2 = metric(page, "Perturbation").split(" / ")
    assert float(linf) == pytest.approx(0.125, abs=1e-3) and float(l2) > 0.125


def test_the_figure_shows_the_digit_its_perturbation_and_the_attacked_digit(page):
    fig = chart_figure(page, "adv_attack_fig")
    clean, delta, attacked = (plotly_array(fig["data"][i]["z"]) for i in range(3))
    assert clean.shape == delta.shape == attacked.shape == (8, 8)
    assert abs(delta).max() <= 0.125 + 1e-6
    assert (attacked - clean) == pytest.approx(delta, abs=1e-6)
    before, after = plotly_array(fig["data"][3]["y"]), plotly_array(fig["data"][4]["y"])
    assert before.argmax() == 0 and after.argmax() != 0          # digit #12 is a 0, then not


@pytest.mark.parametrize("name", ["ε = 0.125: PGD breaks the standard CNN (< 20%)",
                                  "The robust CNN keeps ≥ 70% at the same ε",
                                  "A targeted attack reaches its class",
                                  "Targeted attack on the robust CNN"])
def test_attack_presets_show_the_numbers_their_text_quotes(name):
    from topics.adversarial import page as mod
    at = choose_preset(_page(), SLUG, name)
    preset = mod.PRESETS[name]
    assert not at.error
    s = mod.STATE.resolve(preset.settings)
    shown = metric(at, ACC)
    assert shown == f"{mod.heldout_accuracy(s):.1%}"
    title = chart_titles(at)[0]
    if s["adv_target"] >= 0:
        assert metric(at, "Held-out digits sent to 8") == f"{mod.targeted_rate(s):.1%}"
        assert title.endswith("target 8: fooled" if s["adv_model"] == "standard"
                              else "target 8: not fooled")
    for claim in preset.claims:
        value, ok = claim.check(s)
        assert ok, (claim.what, value)
    # the quoted percentage is on screen
    quoted = {"standard": "17.8%", "robust": "76.0%"}
    if s["adv_target"] < 0:
        assert shown == quoted[s["adv_model"]] and quoted[s["adv_model"]] in preset.description


def test_curve_preset_opens_the_curves_with_fgsm_above_pgd():
    at = choose_preset(_page(), SLUG, "FGSM is weaker than PGD")
    assert "Accuracy under attack" in chart_titles(at)[0]
    fig = chart_figure(at, "adv_curves")
    ys = {t["name"]: plotly_array(t["y"]) for t in fig["data"]}
    assert set(ys) == {"standard CNN, FGSM", "standard CNN, PGD-10", "robust CNN, FGSM",
                       "robust CNN, PGD-10"}
    for m in ("standard", "robust"):
        assert (ys[f"{m} CNN, FGSM"] >= ys[f"{m} CNN, PGD-10"]).all()
    assert ys["standard CNN, PGD-10"][5] == pytest.approx(17.8, abs=0.05)    # eps = 0.125
    assert ys["robust CNN, PGD-10"][5] == pytest.approx(76.0, abs=0.05)


def test_linear_preset_and_eps_change_the_figure():
    at = choose_preset(_page(), SLUG, "Linear models: the effect grows with d")
    assert "A linear score" in chart_titles(at)[0]
    assert float(metric(at, "slope of the worst case")) == pytest.approx(1.0, abs=0.03)
    worst = plotly_array(chart_figure(at, "adv_linear")["data"][0]["y"])
    at.slider(key="adv_lin_eps").set_value(0.05).run()
    worst5 = plotly_array(chart_figure(at, "adv_linear")["data"][0]["y"])
    assert worst5 == pytest.approx(5 * worst, rel=1e-9)      # eps ||w||_1 is linear in eps


def test_every_tour_step_runs_and_opens_its_view():
    from topics.adversarial import page as mod
    at = _page()
    expected = {"attack": "on the", "curves": "Accuracy under attack", "linear": "A linear score"}
    for i, step in enumerate(mod.STEPS):
        show_step(at, SLUG, i)
        assert not at.error, (step.title, [e.value for e in at.error])
        assert expected[step.view] in chart_titles(at)[0], (step.title, chart_titles(at))
        _all_valid(at)


def test_moving_widgets_changes_what_is_shown():
    at = _page()
    before = metric(at, ACC)
    at.slider(key="adv_eps").set_value(0.05).run()
    assert "ε = 0.05," in chart_titles(at)[0] and metric(at, ACC) != before
    at.button_group(key="adv_attack").set_value("fgsm").run()
    assert chart_titles(at)[0].startswith("FGSM on the standard CNN")
    at.button_group(key="adv_model").set_value("robust").run()
    assert chart_titles(at)[0].startswith("FGSM on the robust CNN")
    at.selectbox(key="adv_target").set_value(3).run()
    assert "target 3" in chart_titles(at)[0]
    assert metric(at, "Held-out digits sent to 3").endswith("%")


def test_l2_attack_uses_a_ball_of_radius_8_eps():
    at = _page()
    at.button_group(key="adv_attack").set_value("pgd_l2").run()
    linf, l2 = (float(v) for v in metric(at, "Perturbation").split(" / "))
    assert l2 <= 8 * 0.125 + 1e-4 and l2 > 0.5
    assert linf > 0.125                      # the L2 budget concentrates on a few pixels


def test_clicking_a_digit_in_the_strip_attacks_it():
    at = _page()
    click_chart(at, "adv_gallery", {"x": 3 * 9 + 3.5, "y": 9 + 3.5, "customdata": 15})
    assert not at.exception
    assert at.number_input(key="adv_digit").value == 15
    assert chart_titles(at)[0] != "" and "digit 9<br>" in chart_figure(at, "adv_attack_fig")[
        "layout"]["annotations"][0]["text"]                  # held-out #15 is a 9


def test_a_live_training_step_draws_the_green_curve():
    at = open_view(_page(), SLUG, "Robustness curves")
    names = [t["name"] for t in chart_figure(at, "adv_curves")["data"]]
    assert not any("trained live" in n for n in names)
    at.button(key="adv_live__step").click().run()
    assert not at.exception
    data = chart_figure(at, "adv_curves")["data"]
    live = [t for t in data if "trained live" in t["name"]]
    assert len(live) == 1 and "step 23" in live[0]["name"]
    _all_valid(at)
    assert len(plotly_array(live[0]["y"])) == 6


def test_missing_weights_give_a_message_not_a_traceback(tmp_path, monkeypatch):
    from engine.adversarial import training as adversarial_training
    monkeypatch.setitem(adversarial_training.SNAPSHOTS, "standard", tmp_path / "missing.pt")
    at = _page()
    assert not at.exception
    assert any("missing" in e.value and "scripts.pretrain" in e.value for e in at.error)


def test_out_of_range_digit_in_the_url_falls_back_to_a_valid_one():
    at = _page({"adv_digit": "9999", "adv_eps": "abc"})
    assert not at.exception and not at.error
    assert 0 <= at.number_input(key="adv_digit").value <= 358
    assert 0 <= at.slider(key="adv_eps").value <= 0.3


@pytest.mark.slow
def test_presets_are_computed_in_the_background_before_they_are_picked(monkeypatch):
    import threading

    import streamlit as st

    from engine import adversarial as adv
    st.cache_data.clear()
    st.cache_resource.clear()
    at = _page()
    warm = [t for t in threading.enumerate() if t.name == "dlplay-warm-adversarial"]
    assert warm
    warm[0].join(600)
    calls = []
    for name in ("attack_one", "robust_accuracy", "targeted_success"):
        real = getattr(adv, name)
        monkeypatch.setattr(adv, name, lambda *a, _real=real, **k: calls.append(a) or _real(*a, **k))
    for preset in ("The robust CNN keeps ≥ 70% at the same ε", "A targeted attack reaches its class",
                   "FGSM is weaker than PGD"):
        choose_preset(at, SLUG, preset)
        assert not at.exception and not at.error
    assert calls == []                       # drawn from the caches the warm-up filled


def test_a_playing_curves_tab_mounts_its_slots_once_and_the_route_serves_its_frames(
        monkeypatch):
    """The Robustness tab's live frame is built as parts (the
    curves and the caption under them). Paused it checks they are drawable; on Play its
    fragment gets no run_every, both slots and the status line are live components bound to
    the page's token, and the frame route answers that token with the same slots; Pause
    draws Plotly and st.caption again and the token stops answering."""
    from tests.apptest import pause_and_forget, play_and_fetch, push_on
    asked = push_on(monkeypatch)
    at = open_view(_page(), SLUG, "Robustness curves")
    assert not [c for c in at.caption if c.value.startswith("Live CNN")]
    mounted, frame = play_and_fetch(at, "adv_live", {"adv_curves", "adv_live_note"}, asked)
    assert "spec" in mounted["adv_curves"] and "html" in mounted["adv_live_note"]
    assert not any(c.proto.id.endswith("adv_curves") for c in at.get("plotly_chart"))
    names = [t.get("name", "") for t in frame["slots"]["adv_curves"]["spec"]["data"]]
    assert any("trained live" in n for n in names)               # Play trained a first frame
    assert "Live CNN after" in frame["slots"]["adv_live_note"]["html"]
    pause_and_forget(at, "adv_live")
    assert any("trained live" in t["name"] for t in chart_figure(at, "adv_curves")["data"])
    assert [c for c in at.caption if c.value.startswith("Live CNN after")]


def test_the_first_open_shows_a_spinner_while_the_held_out_digits_are_attacked(monkeypatch):
    """The figure column stayed blank with no word while 359 digits were attacked."""
    import contextlib

    import streamlit as st
    said = []

    @contextlib.contextmanager
    def spinner(text="", **kw):
        said.append(text)
        yield

    monkeypatch.setattr(st, "spinner", spinner)
    _page()
    assert any("held-out digits" in t for t in said), said


def test_the_curves_step_points_to_play_where_it_is():
    from topics.adversarial.tour import STEPS
    assert "under the figure" not in STEPS[4].body and "Play" in STEPS[4].body
