"""AppTest of the LSTM gating page: every tab renders, every preset runs, outputs follow
the widgets, bad input gets a message."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest
from tests.apptest import metric, open_page

PAGE = "topic_pages/lstm_gating.py"


def _page() -> AppTest:
    return open_page(PAGE)




def _equations(at: AppTest) -> str:
    return next(l.value for l in at.latex if "aligned" in l.value)


@pytest.fixture(scope="module")
def page() -> AppTest:
    return _page()


def test_defaults_show_a_trained_lstm_answering_correctly(page):
    assert metric(page, "Network answers") == metric(page, "Correct answer")
    assert metric(page, "Same-size RNN answers") in "ABCD"
    assert len(page.get("plotly_chart")) >= 6     # heatmaps, unit, answer, flow, cell, race
    # the gradient-flow metrics: LSTM (forget bias 1) keeps more than the RNN at lag 99
    rnn = float(metric(page, "RNN (tanh): gradient"))
    lstm = float(metric(page, "LSTM: gradient"))
    assert lstm > 10 * rnn
    assert not page.error and not page.warning


@pytest.mark.parametrize("name", [
    "Trained LSTM remembers a symbol", "Freeze the memory (f = 1, i = 0)",
    "Erase every step (f = 0)", "Vanishing: RNN vs GRU vs LSTM", "Exploding RNN, clipped",
    "One cell: short memory (forget bias 0)", "One cell: long memory (forget bias 4)"])
def test_every_preset_runs(page, name):
    page.selectbox(key="lg_preset").select(name).run()
    assert not page.exception, [e.value for e in page.exception]
    assert not page.error
    assert page.info, "the preset's description shows once its settings are applied"


def test_clamps_change_the_trace_and_typed_symbols_are_recalled():
    at = _page()
    free_eq = _equations(at)
    at.selectbox(key="lg_preset").select("Freeze the memory (f = 1, i = 0)").run()
    frozen = _equations(at)
    assert frozen != free_eq
    # c_0 = 1·c_{-1} + 0·g = 0 and h = o·tanh(0) = 0
    assert re.search(r"= 1\.00\\cdot\(0\.00\) \+ 0\.00\\cdot\(.*?\) = 0\.00", frozen)
    at.selectbox(key="lg_clamp_f").select("free").run()
    assert _equations(at) != frozen
    at.selectbox(key="lg_clamp_i").select("free").run()
    # typed symbols are recalled; a bad symbol gets a message, not a traceback
    at.slider(key="lg_t").set_value(41).run()
    at.selectbox(key="lg_input").select("typed symbols").run()
    at.text_input(key="lg_text").input("C" + ".ABDA" * 6 + "?").run()
    assert metric(at, "Network answers") == "C"
    assert at.slider(key="lg_t").value == 23      # clamped into the default typed text (T = 24)
    at.text_input(key="lg_text").input("C..X?").run()
    assert not at.exception
    assert any("unknown symbol" in e.value for e in at.error)


def test_gradient_flow_and_single_cell_follow_the_sliders():
    at = _page()
    before = float(metric(at, "RNN (tanh): gradient"))
    at.slider(key="lg_rho").set_value(2.0).run()
    after = float(metric(at, "RNN (tanh): gradient"))
    assert after > 1e3 * before          # larger ρ: far less vanishing
    lstm1 = float(metric(at, "LSTM: gradient"))
    at.select_slider(key="lg_fb").set_value(3).run()
    assert float(metric(at, "LSTM: gradient")) > lstm1
    at.multiselect(key="lg_kinds").set_value([]).run()
    assert not at.exception and any("at least one" in w.value for w in at.warning)
    # single cell: the forget bias sets f at rest = σ(b_f)
    at.slider(key="lg_s_f_b").set_value(0.0).run()
    assert float(metric(at, "forget gate at rest")) == pytest.approx(0.5, abs=1e-3)
    at.slider(key="lg_s_f_b").set_value(4.0).run()
    assert float(metric(at, "forget gate at rest")) == pytest.approx(0.982, abs=1e-3)


def test_train_tab_steps_the_race():
    at = _page()
    at.slider(key="lg_tr_delay").set_value(5).run()
    at.button(key="lg_race__step").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Iteration **20**" in c.value for c in at.caption)
