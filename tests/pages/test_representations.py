"""AppTest of the representation-learning page: its tabs, every preset and tour step, the
numbers its figures show, a Step of its live DEC training, and plain words for the inputs it
cannot use."""
from __future__ import annotations

import pytest

import numpy as np

from tests.apptest import (chart_figure, check_every_preset_and_step, check_tabs_are_the_views,
                           choose_preset, open_page, open_view, plotly_array, set_values)

PAGE = "topics/representations/page.py"
SLUG = "representations"


def _module():
    import topics.representations.page as page
    return page


def test_tabs_and_defaults():
    at = check_tabs_are_the_views(SLUG)
    assert not at.warning


def test_every_preset_then_every_step():
    check_every_preset_and_step(SLUG)


def test_the_panels_print_the_claimed_aris():
    from topics.representations.compute import ari_of
    at = open_page(PAGE)
    choose_preset(at, SLUG, "Moons: k-means cuts, spectral follows")
    s = _module().STATE.resolve(_module().PRESETS["Moons: k-means cuts, spectral follows"]
                                .settings)
    texts = [a["text"] for a in chart_figure(at, "re_fig_shapes")["layout"]["annotations"]]
    assert len(texts) == 5
    assert f"ARI {ari_of(s, 'kmeans'):.2f}" in texts[0] and "ARI 1.00" in texts[2]


@pytest.mark.parametrize("settings, words", [({"re_k": 1}, "One cluster"),
                                             ({"re_n": 5, "re_k": 8}, "8 clusters from 5")])
def test_clusterings_it_cannot_do_get_words(settings, words):
    at = set_values(open_page(PAGE), **settings)
    assert any(words in m.value for m in at.info) and not at.error


@pytest.mark.parametrize("labelled, words", [(0, "no point is labelled"),
                                             (150, "every point is labelled")])
def test_labels_it_cannot_spread_get_words(labelled, words):
    at = open_view(open_page(PAGE), SLUG, "Few labels")
    set_values(at, re_labelled=labelled)
    assert any(words in m.value for m in at.info) and not at.error


def test_step_trains_dec_and_draws_its_frame():
    at = open_view(open_page(PAGE), SLUG, "Deep clustering (DEC)")
    at.button(key="re_dec__step").click().run()
    assert not at.exception
    view = at.session_state["re_dec__view"]
    assert view.steps > 0
    snap = view.snapshot()
    codes = chart_figure(at, "re_fig_codes")
    assert codes["layout"]["title"]["text"] == f"DEC: {snap.accuracy:.1%} right"
    pull = chart_figure(at, "re_fig_pull")
    np.testing.assert_allclose(plotly_array(pull["data"][0]["x"]), snap.q_j, rtol=1e-6)
    np.testing.assert_allclose(plotly_array(pull["data"][0]["y"]), snap.pull_j, rtol=1e-5,
                               atol=1e-7)


def test_the_prototypes_are_the_support_means():
    from topics.representations.compute import prototypes_of
    at = open_page(PAGE)
    choose_preset(at, SLUG, "Prototypes from five labels")
    fig = chart_figure(at, "re_fig_protos")
    r = prototypes_of(5)
    assert fig["layout"]["title"]["text"] == f"Nearest prototype: {r['accuracy']:.1%} right"
    stars = next(t for t in fig["data"] if t.get("name") == "prototypes")
    support = next(t for t in fig["data"] if t.get("name") == "labelled")
    sx, sy = plotly_array(support["x"]), r["support_y"]
    means = [sx[sy == c].mean() for c in r["classes"]]
    np.testing.assert_allclose(plotly_array(stars["x"]), means, rtol=1e-4, atol=1e-5)


def test_step_trains_simclr_and_draws_its_frame():
    at = open_view(open_page(PAGE), SLUG, "Contrastive (SimCLR)")
    at.button(key="re_simclr__step").click().run()
    assert not at.exception
    view = at.session_state["re_simclr__view"]
    assert view.steps > 0
    snap = view.snapshot()
    sim = chart_figure(at, "re_fig_similarity")
    np.testing.assert_allclose(plotly_array(sim["data"][0]["z"]).reshape(16, 16),
                               snap.similarity, rtol=1e-5, atol=1e-6)
    probe = chart_figure(at, "re_fig_probe")
    assert plotly_array(probe["data"][0]["y"])[-1] == pytest.approx(snap.probe, rel=1e-6)


def test_no_augmentation_and_a_perplexity_too_large_get_words():
    at = open_page(PAGE)
    at.session_state["re_aug"] = []
    open_view(at, SLUG, "Contrastive (SimCLR)")
    assert any("no augmentation is on" in m.value for m in at.info) and not at.error
    at = open_page(PAGE)
    at.session_state["re_map_n"], at.session_state["re_perplexity"] = 20, 30
    open_view(at, SLUG, "t-SNE maps")
    assert any("must be smaller than the number of points" in m.value for m in at.info)
    assert not at.error


def test_the_maps_print_their_knn_scores():
    from topics.representations.compute import tsne_of
    at = open_page(PAGE)
    choose_preset(at, SLUG, "t-SNE: every map separates the digits")
    texts = [a["text"] for a in chart_figure(at, "re_fig_maps")["layout"]["annotations"]]
    for text, key in zip(texts, ("contrastive", "code", "pixels")):
        assert f"{tsne_of(key, 300, 30.0)['knn']:.1%}" in text
