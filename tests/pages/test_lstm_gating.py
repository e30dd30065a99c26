"""AppTest of the LSTM gating page: every view renders, every preset then every tour step in
order, outputs follow the widgets, presets leave no clamps behind, bad input gets a
message."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from engine import recurrent as R
from tests.apptest import (chart_figure, chart_titles, choose_preset, metric, open_page,
                           open_view, show_step)
from topics.lstm_gating import compute, page
from ui.page_keys import tour_key, view_key

PAGE = "topics/lstm_gating/page.py"
SLUG = "lstm_gating"
TITLES = {v.key: v.title for v in page.VIEWS}


def _page(query=None, view=None) -> AppTest:
    q = dict(query or {})
    if view:
        q[view_key(SLUG)] = TITLES[view]
    return open_page(PAGE, q)


def _switch(at, view):
    """Open another view of a page that was opened with ?lstm_gating_view= in the URL
    (AppTest resends its query on every run, and a URL value beats one set in code)."""
    at.query_params[view_key(SLUG)] = TITLES[view]
    return open_view(at, SLUG, TITLES[view])


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _equations(at: AppTest) -> str:
    return next(l.value for l in at.latex if "aligned" in l.value)


def test_defaults_show_a_trained_lstm_answering_correctly():
    at = _page()
    _ok(at)
    assert metric(at, "Network answers") == metric(at, "Correct answer")
    assert metric(at, "Same-size RNN answers") in "ABCD"
    assert not at.warning
    # the delay slider offers exactly the trained range
    assert (at.slider(key="lg_delay").min, at.slider(key="lg_delay").max) == page.DELAYS
    # the symbol and '?' are labelled on the time axis of the heatmaps
    fig = chart_figure(at, "lg_fig_heat")
    ticks = fig["layout"]["xaxis"]["ticktext"]
    assert ticks[0].endswith("<br>" + metric(at, "Correct answer")) and ticks[-1].endswith("?")


def test_shipped_nets_meta_and_accuracy_per_delay():
    net, meta = R.load_net(compute.WEIGHTS / "lstm_gating_lstm.pt")
    assert tuple(meta["delays"]) == page.DELAYS
    acc = R.accuracy_by_length(net, "delayed_recall", [2, 3, 7, 22, 41, 59], n=256,
                               distract=1.0)
    assert acc.min() >= 0.95, acc                    # delays between the checked ones too
    rnn, _ = R.load_net(compute.WEIGHTS / "lstm_gating_rnn.pt")
    assert R.accuracy_by_length(rnn, "delayed_recall", [2, 40], n=256, distract=1.0).max() < 0.45


def test_every_delay_of_the_slider_is_answered_right():
    at = _page()
    for d in (1, 2, 10, 22, 60):
        at.slider(key="lg_delay").set_value(d).run()
        _ok(at)
        assert metric(at, "Network answers") == metric(at, "Correct answer"), d


def test_every_preset_then_every_step_then_every_view_in_order():
    at = _page()
    for name, preset in page.PRESETS.items():
        choose_preset(at, SLUG, name)
        _ok(at)
        assert at.session_state[view_key(SLUG)] == TITLES[preset.view], name
        assert any(name in i.value for i in at.info), name
    for i, step in enumerate(page.STEPS):
        assert step.body.strip()
        at.session_state["lg_race__playing"] = False
        show_step(at, SLUG, i)
        _ok(at)
        assert at.session_state[view_key(SLUG)] == TITLES[step.view], step.title
    for title in TITLES.values():
        open_view(at, SLUG, title)
        _ok(at)
        assert at.get("plotly_chart"), title


def test_clamps_of_one_preset_do_not_persist_into_the_next():
    at = _page()
    choose_preset(at, SLUG, "Freeze the memory (f = 1, i = 0)")
    frozen = _equations(at)
    # c_0 = 1·c_{-1} + 0·g = 0 and h = o·tanh(0) = 0
    assert re.search(r"= 1\.00\\cdot\(0\.00\) \+ 0\.00\\cdot\(.*?\) = 0\.00", frozen)
    choose_preset(at, SLUG, "Vanishing: RNN vs GRU vs LSTM")
    choose_preset(at, SLUG, "Trained LSTM remembers a symbol")
    _ok(at)
    assert [at.selectbox(key=f"lg_clamp_{g}").value for g in "ifo"] == ["free"] * 3
    assert _equations(at) != frozen
    assert metric(at, "Network answers") == metric(at, "Correct answer")


def test_auto_unit_stores_the_symbol_and_typed_symbols_are_recalled():
    at = _page()
    units = page.storing_units()
    answer = metric(at, "Correct answer")
    u = units[R.RECALL_ALPHABET.index(answer)][0]
    assert any(f"Unit {u} stores '{answer}'" in c.value for c in at.caption)
    assert f"Unit {u} over time" in str(
        chart_titles(at))
    at.selectbox(key="lg_unit").set_value(3).run()
    assert "Unit 3 over time" in str(
        chart_titles(at))
    # typed symbols are recalled; a bad symbol gets a message, not a traceback
    at.slider(key="lg_t").set_value(41).run()
    at.selectbox(key="lg_input").set_value("typed symbols").run()
    at.text_input(key="lg_text").input("C" + ".ABDA" * 6 + "?").run()
    _ok(at)
    assert metric(at, "Network answers") == "C"
    assert at.slider(key="lg_t").value == 23      # clamped into the default text (T = 24)
    at.text_input(key="lg_text").input("C..X?").run()
    assert not at.exception
    assert any("unknown symbol" in e.value for e in at.error)


def test_gradient_flow_and_single_cell_follow_the_sliders():
    at = _page(view="flow")
    _ok(at)
    before = float(metric(at, "RNN (tanh): gradient"))
    at.slider(key="lg_rho").set_value(2.0).run()
    after = float(metric(at, "RNN (tanh): gradient"))
    assert after > 1e3 * before          # larger ρ: far less vanishing
    lstm1 = float(metric(at, "LSTM: gradient"))
    at.select_slider(key="lg_fb").set_value(3).run()
    assert float(metric(at, "LSTM: gradient")) > lstm1
    at.multiselect(key="lg_kinds").set_value([]).run()
    assert not at.exception and any("at least one" in w.value for w in at.warning)
    _switch(at, "cell")
    at.slider(key="lg_s_f_b").set_value(0.0).run()
    assert float(metric(at, "forget gate at rest")) == pytest.approx(0.5, abs=1e-3)
    at.slider(key="lg_s_f_b").set_value(4.0).run()
    assert float(metric(at, "forget gate at rest")) == pytest.approx(0.982, abs=1e-3)


def test_train_view_steps_the_race():
    at = _page(view="train")
    at.slider(key="lg_tr_delay").set_value(5).run()
    at.button(key="lg_race__step").click().run()
    _ok(at)
    assert any("Iteration **20**" in c.value for c in at.caption)


def test_show_me_clicked_inside_the_view_fragment_opens_the_steps_view():
    from tests.apptest import _run
    at = _page(view="cell")
    at.session_state[tour_key(SLUG)] = 3                       # "Why gradients vanish": flow
    at.run()
    at.button(key=f"{tour_key(SLUG)}__show").click()
    _run(at, at._tree.get_widget_states(), fragment=True, key=None)
    _ok(at)
    assert at.session_state[view_key(SLUG)] == TITLES["flow"]
    assert float(metric(at, "LSTM: gradient")) > 0


def test_a_corrupt_shipped_file_warns_and_shows_an_untrained_net(tmp_path, monkeypatch):
    from ui import shipped_models
    for name in ("lstm_gating_lstm.pt", "lstm_gating_rnn.pt"):
        data = (compute.WEIGHTS / name).read_bytes()
        (tmp_path / name).write_bytes(data[: len(data) // 3])
    monkeypatch.setattr(shipped_models, "WEIGHTS", tmp_path)
    at = _page()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning]
    for name in ("lstm_gating_lstm.pt", "lstm_gating_rnn.pt"):
        assert any(name in w and "corrupt" in w and "scripts.pretrain" in w
                   for w in warnings), (name, warnings)
    assert "untrained LSTM" in " ".join(warnings)
    assert not [m for m in at.metric if m.label == "Same-size RNN answers"]
    assert not any("accuracy by delay" in c.value for c in at.caption)


def test_gate_figures_are_valid_light_plain_figures():
    """The gates view's figures are built as plain dicts (ui.fastfig): rebuilt with
    Plotly's validation they give the same JSON; no hidden grid under the heatmaps and no
    automargin pass; each panel shows its own gate's values; the input of each step rides
    on the unit figure's first line."""
    import json
    import numpy as np
    from tests.apptest import plotly_array
    from topics.lstm_gating import figures as F
    from ui.fastfig import validated
    s = page.STATE.resolve({"lg_delay": 12})
    trace, free, labels, _ = page.trace_of(s, 0)
    heat, lines = F.gate_heatmaps(trace, labels), F.unit_lines(trace, 3, labels, reference=free)
    for fig in (heat, lines):
        spec = json.loads(fig.to_json())
        assert json.loads(validated(fig).to_json()) == spec
        axes = [v for k, v in spec["layout"].items() if k.startswith(("xaxis", "yaxis"))]
        assert axes and all(ax.get("automargin") is False for ax in axes)
    spec = json.loads(heat.to_json())
    assert spec["layout"]["xaxis"]["showgrid"] is False
    for name, panel in zip("ifogch", spec["data"]):
        np.testing.assert_allclose(plotly_array(panel["z"]), getattr(trace, name).T, atol=1e-6)
    first = json.loads(lines.to_json())["data"][0]
    assert first["customdata"] == list(labels) and "%{customdata}" in first["hovertemplate"]
    np.testing.assert_allclose(plotly_array(first["y"]), trace.i[:, 3], atol=1e-6)


def test_a_playing_race_mounts_its_slots_once_and_the_route_serves_its_frames(monkeypatch):
    """Paused the race's parts
    are checked drawable; on Play its fragment gets no run_every, both figures and the status
    line are live components bound to the page's token, and the route answers that token with
    the same slots (accuracies computed next to the trainer). Pause draws Plotly again."""
    from tests.apptest import pause_and_forget, play_and_fetch, push_on
    asked = push_on(monkeypatch)
    at = _page(view="train")
    at.slider(key="lg_tr_delay").set_value(5).run()
    mounted, frame = play_and_fetch(at, "lg_race", {"lg_fig_acc", "lg_fig_hist"}, asked)
    _ok(at)
    assert "spec" in mounted["lg_fig_acc"] and "spec" in mounted["lg_fig_hist"]
    assert not at.get("plotly_chart") or all(
        "lg_fig" not in c.proto.id for c in at.get("plotly_chart"))
    assert "spec" in frame["slots"]["lg_fig_acc"]
    pause_and_forget(at, "lg_race")
    assert chart_figure(at, "lg_fig_acc")["data"] and chart_figure(at, "lg_fig_hist")["data"]


def test_a_clamped_gate_shows_its_own_accuracy_next_to_the_shipped_one():
    """'Accuracy drops from 100% to about 47%' had no clamped accuracy on screen (the caption
    gave only the free net's 100%): the caption and the card now show both."""
    at = choose_preset(open_page(PAGE), SLUG, "Erase every step (f = 0)")
    captions = " ".join(c.value for c in at.caption)
    assert "With f = 0 clamped: 46.9% at D=40" in captions, captions
    card = "\n".join(m.value for m in at.markdown)
    assert "accuracy with f = 0 (64 sequences): **46.9%** ✓" in card
    assert "accuracy unclamped at delay 40 (512 sequences): **100.0%** ✓" in card
    assert "chance: a guess among 4 symbols: **25%** ✓" in card


def test_the_train_steps_claims_read_the_live_race_on_their_seed_and_settings():
    """The race's claims are read on the Train tab's live run (ui.claims.OnRun): its held-out
    accuracy at delay 40, which the race logs at iteration RACE_AT; a claim about another
    seed or the curriculum says which run it needs instead of reading this one."""
    from topics.lstm_gating.tour import C_TRAIN, STEPS
    step = next(i for i, s in enumerate(STEPS) if s.claims == C_TRAIN)
    at = show_step(open_page(PAGE, {"seed": "0"}), SLUG, step)
    assert not at.exception
    text = "\n".join(m.value for m in at.markdown)
    at_600 = f"{compute.RACE_AT:,}"
    assert f"{C_TRAIN[0].what}: *this run: 0 / {at_600} iterations (≥ 90.0%)*" in text, text
    assert f"{C_TRAIN[1].what}: *read on seed 1 (this run: seed 0" in text
    assert f"{C_TRAIN[2].what}: *this run: 0 / {at_600} iterations" in text
    assert f"{C_TRAIN[3].what}: *read on a run with the curriculum on" in text
    assert "measured after training" not in text
    race = at.session_state["lg_race__trainer"]
    assert race.eval_every and compute.RACE_AT % race.eval_every == 0
    assert race.eval_n == 256 and race.eval_length == 40           # reads.race_accuracy's
    assert {c.run.metrics for c in C_TRAIN} == {(f"{k}/heldout",) for k in race.racers}
