"""AppTest of the language models page: the Next token tab's bars against the engine, the
buttons that append to the prompt, bad input (empty prompt, characters outside the
vocabulary, T = 0, a text too short to train on) answered in words, every preset and tour
step, a Step of the live training and of the RNN-vs-transformer race, and the Embeddings
tab's map and typed phrases."""
from __future__ import annotations

import numpy as np
import pytest

from tests.apptest import (chart_figure, check_every_preset_and_step, open_page, open_view,
                           plotly_array)

PAGE = "topics/language_models/page.py"
SLUG = "language_models"


def _module():
    import topics.language_models.page as page
    return page


def test_every_preset_then_every_step():
    check_every_preset_and_step(SLUG)


def test_next_token_bars_are_the_engines_distribution():
    from topics.language_models.compute import next_of
    page = _module()
    at = open_page(PAGE)
    assert [t.label for t in at.tabs] == ["Next token", "Train on your text",
                                          "Char-RNN vs transformer", "Inside the model",
                                          "Embeddings"]
    at.slider(key="lm_p").set_value(0.8).run()
    assert not at.exception and not at.error
    nt = next_of(page.STATE.resolve({"lm_p": 0.8}))
    fig = chart_figure(at, "lm_fig_next")
    bars = plotly_array(fig["data"][0]["y"])
    kept = nt.shaped.keep[nt.top]
    np.testing.assert_allclose(bars[kept], nt.shaped.final[nt.top][kept], rtol=1e-6)
    assert nt.shaped.kept_mass >= 0.8 and f"{nt.shaped.kept_mass:.0%}" in \
        fig["layout"]["title"]["text"]


def test_buttons_append_to_the_prompt():
    at = open_page(PAGE)
    before = at.text_input(key="lm_prompt").value
    at.button(key="lm_add_greedy").click().run()
    after = at.text_input(key="lm_prompt").value
    assert after.startswith(before) and len(after) == len(before) + 1
    at.button(key="lm_add_sampled").click().run()
    assert len(at.text_input(key="lm_prompt").value) == len(before) + 2
    assert not at.exception and not at.error


@pytest.mark.parametrize("prompt, said", [("", "prompt is empty"),
                                          ("caf\u00e9 \u4e2d\u6587 ", "outside the vocabulary"),
                                          ("x" * 5000, "reads the last 128")],
                         ids=["empty", "unknown", "long"])
def test_bad_prompts_are_answered_in_words(prompt, said):
    at = open_page(PAGE)
    at.text_input(key="lm_prompt").set_value(prompt).run()
    assert not at.exception and not at.error
    assert any(said in i.value for i in at.info), [i.value for i in at.info]


def test_temperature_zero_is_greedy_without_an_error():
    at = open_page(PAGE)
    at.slider(key="lm_t").set_value(0.0).run()
    at.slider(key="lm_p").set_value(0.0).run()
    assert not at.exception and not at.error
    assert any("greedy" in c.value for c in at.caption)


def test_a_too_short_text_is_refused_in_words():
    at = open_page(PAGE)
    open_view(at, SLUG, "Train on your text")
    at.selectbox(key="lm_corpus").select("Paste or upload a text").run()
    at.text_area(key="lm_paste").set_value("far too short").run()
    assert not at.exception and not at.error
    assert any("at least 1,000" in w.value for w in at.warning)
    at.selectbox(key="lm_corpus").select("The Zen of Python (too short)").run()
    assert any("856 characters" in w.value for w in at.warning)


def test_step_trains_the_live_view():
    at = open_page(PAGE)
    open_view(at, SLUG, "Train on your text")
    at.button(key="lm_train__step").click().run()
    assert not at.exception and not at.error
    assert at.session_state["lm_train__view"].steps > 0


def test_inside_tab_draws_the_lens_of_the_engine():
    from topics.language_models.compute import inside_of
    page = _module()
    at = open_page(PAGE)
    open_view(at, SLUG, "Inside the model")
    assert not at.exception and not at.error
    fig = chart_figure(at, "lm_fig_inside")
    r = inside_of(page.STATE.resolve({}))
    lens = plotly_array(fig["data"][0]["z"])
    np.testing.assert_allclose(lens, r.lens, rtol=1e-6)
    assert len(fig["data"]) == 1 + r.attention.shape[0]


def test_race_step_trains_both_models():
    at = open_page(PAGE)
    open_view(at, SLUG, "Char-RNN vs transformer")
    at.button(key="lm_race__step").click().run()
    assert not at.exception and not at.error
    view = at.session_state["lm_race__view"]
    snap = view.snapshot()
    assert view.steps > 0 and snap.cell == "lstm" and snap.rnn_ms > 0 and snap.gpt_ms > 0
    assert any("LSTM held-out" in str(m.label) for m in at.metric)


def test_embeddings_tab_draws_the_engines_map_with_the_typed_phrase():
    from topics.language_models.embed_compute import embed_view_of
    page = _module()
    at = open_page(PAGE)
    open_view(at, SLUG, "Embeddings")
    assert not at.exception and not at.error
    ev = embed_view_of(page.STATE.resolve({}))
    fig = chart_figure(at, "lm_fig_embed")
    pos = [i for i, lab in enumerate(ev.labels) if lab == "positive"]
    np.testing.assert_allclose(plotly_array(fig["data"][0]["x"]), ev.xy[pos, 0], rtol=1e-6)
    assert fig["data"][-1]["name"] == "your phrase" and ev.neighbours


@pytest.mark.parametrize("phrase, said", [("   ", "Type a phrase"),
                                          ("\u200b\u200b", "cannot be placed"),
                                          ("good " * 100, "first 300")],
                         ids=["blank", "no-tokens", "long"])
def test_bad_phrases_are_answered_in_words(phrase, said):
    at = open_page(PAGE)
    open_view(at, SLUG, "Embeddings")
    at.text_input(key="lm_phrase").set_value(phrase).run()
    assert not at.exception and not at.error
    shown = [m.value for m in (*at.info, *at.warning)]
    assert any(said in v for v in shown), shown
