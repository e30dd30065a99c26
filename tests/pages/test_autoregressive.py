"""AppTest of the autoregressive page: its tabs, every preset and tour step, the numbers its
figures show, a Step of its live training, and plain words for the inputs it cannot use."""
from __future__ import annotations

import numpy as np
import pytest

from tests.apptest import (chart_figure, check_every_preset_and_step, check_tabs_are_the_views,
                           click_chart,
                           choose_preset, open_page, open_view, plotly_array, set_values)

PAGE = "topics/autoregressive/page.py"
SLUG = "autoregressive"


def _module():
    import topics.autoregressive.page as page
    return page


def test_tabs_and_defaults():
    at = check_tabs_are_the_views(SLUG)
    assert not at.warning


def test_every_preset_then_every_step():
    check_every_preset_and_step(SLUG)


def test_the_blind_spot_drawn_is_the_computed_one():
    from engine.autoregressive import blind_spot, field_by_offsets
    at = open_page(PAGE)
    choose_preset(at, SLUG, "The blind spot: 3 layers")
    fig = chart_figure(at, "au_fig_field")
    crosses = next(t for t in fig["data"] if t.get("name") == "blind spot")
    routes = field_by_offsets(11, 3, 3, 6, 5)
    rows, cols = np.nonzero(blind_spot(routes, 3, 3, 6, 5))
    assert sorted(zip(plotly_array(crosses["y"]).astype(int),
                      plotly_array(crosses["x"]).astype(int))) == sorted(zip(rows, cols))
    assert len(rows) == 3 and "blind spot 3" in fig["layout"]["title"]["text"]


def test_the_causal_stack_draws_its_field():
    at = open_view(open_page(PAGE), SLUG, "Causal 1-D (WaveNet)")
    fig = chart_figure(at, "au_fig_causal")
    on = next(t for t in fig["data"] if t.get("name") == "on a route")
    assert (plotly_array(on["y"]) == 0).sum() == 16
    assert "16 samples (1.00 ms at 16 kHz)" in fig["layout"]["title"]["text"]


@pytest.mark.parametrize("settings, words", [
    ({"au_layers": 0}, "0 layers"),
    ({"au_size": 5, "au_row": 9, "au_col": 9}, "outside"),
    ({"au_row": 0, "au_col": 0}, "comes first in raster order"),
])
def test_fields_it_cannot_draw_get_words(settings, words):
    at = set_values(open_page(PAGE), **settings)
    shown = " ".join(m.value for m in [*at.info, *at.warning])
    assert words in shown and not at.error


def test_a_field_longer_than_the_sequence_is_said():
    at = open_view(open_page(PAGE), SLUG, "Causal 1-D (WaveNet)")
    set_values(at, au_sched="1,2,4,8,16,32", au_len=16)
    assert any("longer than the sequence" in m.value for m in at.warning) and not at.error


def test_step_trains_the_live_view_and_temperature_0_is_said():
    at = open_view(open_page(PAGE), SLUG, "PixelCNN")
    set_values(at, au_hidden=16, au_blocks=1, au_temp=0.0)
    assert any("Temperature 0" in m.value for m in at.info)
    at.button(key="au_train__step").click().run()
    assert not at.exception
    view = at.session_state["au_train__view"]
    assert view.steps > 0
    samples = chart_figure(at, "au_fig_samples")
    assert f"iteration {view.steps}," in samples["layout"]["title"]["text"]
    bars = next(t for t in chart_figure(at, "au_fig_bits")["data"]
                if t.get("name") == "p(level)")
    heights = plotly_array(bars["y"])
    assert abs(np.nansum(heights) - 1) < 1e-5


def test_the_vq_tab_draws_the_usage_it_measures():
    from topics.autoregressive.compute import code_usage
    at = open_page(PAGE)
    choose_preset(at, SLUG, "VQ-VAE: 16 codes, some dead")
    s = _module().STATE.resolve(_module().PRESETS["VQ-VAE: 16 codes, some dead"].settings)
    fig = chart_figure(at, "au_fig_usage")
    used = round(code_usage(s) * 16)
    assert fig["layout"]["title"]["text"] == f"{used} of 16 codes used"
    dead = next(t for t in fig["data"] if t.get("name") == "dead codes")
    assert len(plotly_array(dead["x"])) == 16 - used


@pytest.mark.parametrize("test_bits, diverged_at, words", [
    (float("nan"), 7, "diverged at iteration 7"),
    (1.5, None, "still worse than independent pixels"),
])
def test_a_run_that_does_not_learn_is_said_in_words(test_bits, diverged_at, words):
    from types import SimpleNamespace

    from engine.autoregressive import PixelCNNTrainer, Snapshot
    from engine.training import History
    trainer = PixelCNNTrainer(levels=4, hidden=8, layers=1)
    history = History()
    history.log(5, {"bits": 1.4})
    view = SimpleNamespace(snapshot=lambda: Snapshot(150, test_bits, 1.126, 4), steps=150,
                           diverged_at=diverged_at, history=history)
    parts = _module().train_frame_parts(view, lambda fn, *a: fn(trainer), mode="free",
                                        temperature=1.0, digit=0, prow=3, pcol=2, setup="x")
    assert words in parts["au_caption"].text


def test_the_live_pixelcnn_opens_on_the_shipped_model():
    from engine.autoregressive.pretrained import PIXELCNN_STEPS
    at = open_view(open_page(PAGE), SLUG, "PixelCNN")
    view = at.session_state["au_train__view"]
    assert view.steps == PIXELCNN_STEPS
    assert f"iteration {PIXELCNN_STEPS}," in chart_figure(at, "au_fig_samples")["layout"][
        "title"]["text"]


def test_a_click_on_a_pixel_shows_its_distribution_and_the_sampler_has_64_steps():
    from topics.autoregressive.compute import shipped_trainer
    from engine.autoregressive.reads import predictive_of
    at = open_view(open_page(PAGE), SLUG, "Sampling pixel by pixel")
    steps = chart_figure(at, "au_fig_steps")
    assert len(steps["frames"]) == 64 and len(steps["layout"]["sliders"][0]["steps"]) == 64
    drawn = plotly_array(steps["frames"][10]["data"][0]["z"])
    assert np.isfinite(drawn).sum() == 11             # pixels 0..10 drawn at step 10
    click_chart(at, "au_fig_pixel", {"curve_number": 1, "point_number": 0, "x": 6, "y": 4})
    assert (at.session_state["au_prow"], at.session_state["au_pcol"]) == (4, 6)
    bars = next(t for t in chart_figure(at, "au_fig_pixel")["data"]
                if t.get("name") == "p(level)")
    expected = predictive_of(shipped_trainer("plain"), 0, 4, 6).probs
    np.testing.assert_allclose(plotly_array(bars["y"]), expected, rtol=1e-6)


def test_the_wavenet_tab_keeps_the_prompt_and_generates_the_rest():
    from engine.autoregressive.wavenet import HELD_OUT_SEED, vowels
    at = open_view(open_page(PAGE), SLUG, "WaveNet on a vowel")
    set_values(at, au_prompt=32, au_vowel=3)
    fig = chart_figure(at, "au_fig_wave")
    real = next(t for t in fig["data"] if t["name"] == "real vowel")
    made = next(t for t in fig["data"] if t["name"] == "generated")
    np.testing.assert_allclose(plotly_array(real["y"]), vowels(16, HELD_OUT_SEED)[3],
                               rtol=1e-6)
    assert len(plotly_array(made["y"])) == 256 - 31
    assert "32 samples given, 224 generated" in fig["layout"]["title"]["text"]
