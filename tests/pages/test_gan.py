"""topics/gan/page.py under AppTest: defaults, every preset / step / view in order, live
stepping, Step D/G, the smoothed coverage badge, a bad upload, the Dirac-GAN and
parallel-lines views, and the one widget -> engine mapping."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.gan import LIVE_DEFAULTS, PRETRAINED, TRAINER_DEFAULTS
from tests.apptest import (chart_figure, choose_preset, metric, open_page, open_view,
                           plotly_array, show_step)
from topics.gan.compute import settings_of
from topics.gan.summary import badges_of
from topics.gan.tour import BIG

PAGE = "topics/gan/page.py"
SLUG = "gan"
BADGE = "Modes covered (mean of last 5 checks)"


def _page() -> AppTest:
    return open_page(PAGE)


def _trainer(at: AppTest):
    return at.session_state["gan__trainer"]


def _summary(at: AppTest) -> str:
    """The live frame's one summary element (topics/gan/summary.py): note, badges, losses."""
    return next(m.value for m in at.markdown if 'class="gan-summary"' in m.value)


def badge(at: AppTest, label: str) -> str:
    """The value of the summary badge `label` (else the first whose label starts with it)."""
    badges = badges_of(_summary(at))
    return badges[label] if label in badges else next(
        v for k, v in badges.items() if k.startswith(label))


def _losses(at: AppTest) -> str:
    return re.search(r"L_D / L_G[^<]*", _summary(at)).group(0)


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _module():
    import topics.gan.page as gan_page
    return gan_page


def test_engine_kwargs_are_derived_from_the_state_table_both_ways():
    g = _module()
    for kwargs in (TRAINER_DEFAULTS, LIVE_DEFAULTS,
                   {**TRAINER_DEFAULTS, "loss": "wgan-gp", "g_hidden": (16, 16, 16),
                    "d_hidden": (256,), "unrolled_steps": 3, "pack": 2, "lr_d": 3e-4}):
        s = g.STATE.resolve(settings_of("5x5 grid", 0.1, kwargs))
        assert g.trainer_kwargs(s) == kwargs
        assert settings_of("5x5 grid", 0.1, g.trainer_kwargs(s)) == {
            k: s[k] for k in settings_of("5x5 grid", 0.1, kwargs)}
    assert g.trainer_kwargs(g.STATE.defaults) == LIVE_DEFAULTS
    collapse = g.STATE.resolve(g.PRESETS["Collapse: one-layer D, one blob"].settings)
    for name, key, value in (("Cure 1: unroll D (k = 5)", "gan_unroll", 5),
                             ("Cure 2: a two-layer D", "gan_d_depth", 2),
                             ("Cure 3: 5 D steps per G step", "gan_d_steps", 5)):
        cure = g.STATE.resolve(g.PRESETS[name].settings)
        assert {k for k in cure if cure[k] != collapse[k]} == {key}, name   # ONE setting
        assert cure[key] == value and cure["gan_std"] == collapse["gan_std"] == 0.05


def test_defaults_show_the_pretrained_ring():
    at = _page()
    assert at.title[0].value == "GAN mode collapse"
    assert badge(at, BADGE).endswith("/ 8") and badge(at, "Modes covered now").endswith("/ 8")
    assert not at.error


def test_first_paint_is_the_labelled_pretrained_gan_and_reset_trains_from_scratch():
    at = _page()
    t = _trainer(at)
    spec = PRETRAINED["default"]
    assert t.pretrained is not None and t.steps == spec.steps
    covered = int(badge(at, "Modes covered now").split(" / ")[0])
    assert covered >= 7 and covered == t.coverage().modes_covered
    # the samples figure's title counts them too (the tour's words point there: on the
    # projector's first screen, where the badges are not)
    title = chart_figure(at, "gan_fig_samples")["layout"]["title"]["text"]
    assert title.endswith(f" · modes covered now: {covered} of 8"), title
    _, modes = t.history.as_arrays("modes")
    assert badge(at, BADGE) == f"{np.mean(modes[-5:]):.1f} / 8"      # the smoothed badge
    assert "Pretrained snapshot" in _summary(at) and "Reset" in _summary(at)
    config = json.loads(at.session_state["gan__config"])
    for key, value in spec.kwargs.items():          # the page's defaults are the snapshot's
        assert config[key] == (list(value) if isinstance(value, tuple) else value), key
    rings = [tr for fig in _charts(at) for tr in fig["data"]
             if tr.get("name", "").startswith("covered mode")]
    gaps = np.isnan(plotly_array(rings[0]["x"])).sum()       # circles are separated by NaN
    assert len(rings) == 1 and gaps == covered                      # one circle per mode
    at.button(key="gan__play").click().run()        # Play continues the snapshot live
    assert _trainer(at).steps > spec.steps
    assert "Continued from a" in _summary(at)
    at.button(key="gan__reset").click().run()       # Reset: a fresh GAN, no label
    t = _trainer(at)
    assert t.steps == 0 and t.pretrained is None and not at.exception
    assert "pretrained snapshot" not in _summary(at).lower()
    assert badge(at, "Modes covered now") == f"{t.coverage().modes_covered} / 8"


def test_every_preset_then_every_step_then_every_view_in_order():
    """As a teacher does: every preset one after the other, then every step's Show me, then
    every tab, with no exception or error box; each training preset builds its settings."""
    g = _module()
    at = _page()
    for name, preset in g.PRESETS.items():
        choose_preset(at, SLUG, name)
        assert not at.exception and not at.error, name
        assert at.session_state["gan_view"] == next(v.title for v in g.VIEWS
                                                    if v.key == preset.view), name
        assert any(preset.description[:40] in i.value for i in at.info), name
        if preset.view == "train":
            config = json.loads(at.session_state["gan__config"])
            s = g.STATE.resolve(preset.settings)
            for key, value in g.trainer_kwargs(s).items():
                assert config[key] == (list(value) if isinstance(value, tuple) else value), \
                    (name, key)
            assert config["target"] == s["gan_target"] and config["std"] == s["gan_std"]
            t = _trainer(at)
            cov = t.coverage()
            expected = "n/a" if cov is None else f"{cov.modes_covered} / {cov.n_modes}"
            label = "Modes covered now" if cov is not None else "Modes covered"
            assert badge(at, label) == expected and t.steps == 0, name
    for i, step in enumerate(g.STEPS):
        show_step(at, SLUG, i)
        assert not at.error, step.title
        assert at.session_state["gan_view"] == next(v.title for v in g.VIEWS
                                                    if v.key == step.view), step.title
        assert step.body, step.title
    for view in g.VIEWS:
        open_view(at, SLUG, view.title)
        assert not at.error, view.title


def test_step_trains_and_target_change_rebuilds():
    at = _page()
    at.slider(key="gan__spf").set_value(3).run()
    steps_before = _trainer(at).steps
    loss_before = _losses(at)
    at.button(key="gan__step").click().run()
    assert not at.exception
    assert _trainer(at).steps == steps_before + 3
    assert _losses(at) != loss_before
    at.selectbox(key="gan_target").select("5x5 grid").run()
    assert _trainer(at).steps == 0 and badge(at, "Modes covered now").endswith("/ 25")


def test_step_d_and_step_g_update_one_side():
    at = _page()
    at.button(key="gan__reset").click().run()
    t = _trainer(at)
    at.button(key="gan_step_d").click().run()
    assert t.steps == 0 and len(t.history.values["loss_d"]) == 1 and "loss_g" not in t.history.values
    at.button(key="gan_step_g").click().run()
    assert len(t.history.values["loss_g"]) == 1
    assert not at.exception


def test_kl_is_only_shown_when_samples_are_near_the_modes():
    """A fresh GAN has (almost) no sample near a mode: the KL of those few would be noise,
    so the badge shows '–'; the trained snapshot shows a number near 0 (evenly spread)."""
    at = _page()
    assert float(badge(at, "KL(near-mode samples")) < 0.1
    at.button(key="gan__reset").click().run()
    cov = _trainer(at).coverage()
    assert cov.high_quality_fraction < 0.05
    assert badge(at, "KL(near-mode samples") == "–"


def test_malformed_points_get_a_clear_error():
    at = _page()
    at.selectbox(key="gan_target").select("your points (CSV)").run()
    at.text_area(key="gan_points").input("x,y\nfoo,bar\n1,2\n").run()
    assert not at.exception
    assert any("Could not use these points" in e.value for e in at.error)
    assert badge(at, "Modes covered now").endswith("/ 8")       # falls back to the ring
    good = "\n".join(f"{i / 10},{(i % 3) / 5}" for i in range(30))
    at.text_area(key="gan_points").input(good).run()
    assert not at.error and badge(at, "Modes covered") == "n/a"
    assert len(_trainer(at).target.points) == 30 and not at.exception


def test_dirac_view_defaults_and_controls_change_the_numbers():
    at = open_view(_page(), SLUG, "Dirac-GAN")
    # simultaneous minimax spirals out, R1 γ = 1 converges
    assert float(metric(at, "Distance to (0, 0) after 300 it. (γ = 0)")) > 1.414
    assert float(metric(at, "Distance to (0, 0) after 300 it. (R1")) < 1e-3
    assert list(at.selectbox(key="gan_dirac_loss").options) == ["minimax", "nonsaturating",
                                                                "hinge", "wgan-clip"]
    at.select_slider(key="gan_dirac_gamma").set_value(0.0).run()
    assert not any(m.label.startswith("Distance to (0, 0) after 300 it. (R1") for m in at.metric)
    at.checkbox(key="gan_dirac_sim").uncheck().run()
    d = float(metric(at, "Distance to (0, 0) after 300 it. (γ = 0)"))
    assert 1.2 < d < 1.414   # alternating updates circle: close to the start distance √2
    at.selectbox(key="gan_dirac_loss").select("nonsaturating").run()
    assert float(metric(at, "Distance to (0, 0) after 300 it. (γ = 0)")) < 0.6
    assert any("converges slowly even without a penalty" in c.value for c in at.caption)
    # WGAN with clipping and 5 critic steps per generator step: θ still swings
    at.selectbox(key="gan_dirac_loss").select("wgan-clip").run()
    at.slider(key="gan_dirac_nd").set_value(5).run()
    assert float(metric(at, "Distance to (0, 0) after 300 it. (γ = 0)")) > 0.4    # a cycle
    assert not at.exception


def test_wasserstein_view_numbers():
    at = open_view(_page(), SLUG, "Why Wasserstein")
    assert metric(at, "JSD at this θ") == "0.6931" and metric(at, "W₁ at this θ") == "1.0000"
    at.slider(key="gan_theta").set_value(0.0).run()
    assert metric(at, "JSD at this θ") == "0.0000" and metric(at, "W₁ at this θ") == "0.0000"
    assert not at.exception


def test_generator_losses_view_numbers():
    at = open_view(_page(), SLUG, "Generator losses")
    assert not at.exception
    assert float(metric(at, "Signal to G at D(G(z)) = 0.01 (minimax)")) == pytest.approx(0.01)
    assert float(metric(at, "Signal to G at D(G(z)) = 0.01 (non-saturating)")) == \
        pytest.approx(0.99)
    at.select_slider(key="gan_gl_at").set_value(0.9).run()
    assert float(metric(at, "Signal to G at D(G(z)) = 0.9 (non-saturating)")) == \
        pytest.approx(0.1)
    names = {t["name"] for t in chart_figure(at, "gan_fig_glosses")["data"] if t.get("name")}
    assert names == {"minimax: log(1 − D)", "non-saturating: −log D"}


def test_optimal_discriminator_vs_critic_view_numbers():
    at = open_view(_page(), SLUG, "Optimal D vs critic")
    assert not at.exception
    assert float(metric(at, "|f′| at the fake mean")) == 1.0
    assert float(metric(at, "|dD*/dx| at the fake mean")) < 2e-3              # distance 4
    at.select_slider(key="gan_oc_gap").set_value(1.0).run()
    assert float(metric(at, "|dD*/dx| at the fake mean")) > 0.2
    names = {t["name"] for t in chart_figure(at, "gan_fig_critic")["data"]}
    assert {"D* = p_r/(p_r + p_f)", "critic f (scaled to ±1)", "|dD*/dx|", "|f′|"} <= names


def test_long_curves_are_drawn_as_block_means():
    """A long live run keeps its curves figure small: at most MAX_CURVE_POINTS points, each
    the mean of a block of consecutive values at the block's last step."""
    from ui.screen import MAX_CURVE_POINTS, block_means as _thin
    steps, values = np.arange(1, 1001), np.arange(1000.0)
    s, v = _thin(steps, values)
    assert len(s) <= MAX_CURVE_POINTS and s[-1] == 1000
    b = s[0]                                           # block length: first block ends at b
    np.testing.assert_allclose(v[:3], [(b - 1) / 2, b + (b - 1) / 2, 2 * b + (b - 1) / 2])
    short = np.arange(5)
    assert _thin(short, short * 1.0)[0] is short


def test_trainer_defaults_match_the_big_presets():
    g = _module()
    assert g.trainer_kwargs(g.STATE.resolve(BIG)) == TRAINER_DEFAULTS


def test_export_is_built_only_when_asked_for():
    """A rerun of the view builds no files (ui.on_demand); the button builds the samples CSV,
    the settings JSON and the coverage history as of the trainer's iteration."""
    at = _page()
    assert not at.get("download_button")
    at.button(key="gan_export").click().run()
    assert len(at.get("download_button")) == 3 and not at.exception
    assert any(c.value == f"As of iteration {_trainer(at).steps:,}." for c in at.caption)


def test_arrows_toggle_sits_outside_the_live_frame_and_hides_the_arrows():
    at = _page()
    names = lambda: [t.get("name") for t in chart_figure(at, "gan_fig_samples")["data"]]  # noqa: E731
    assert "−∇ generator loss" in names()
    at.toggle(key="gan_arrows").set_value(False).run()
    assert "−∇ generator loss" not in names() and not at.exception
    at.toggle(key="gan_arrows").set_value(True).run()
    assert "−∇ generator loss" in names()


def test_a_live_frame_emits_few_elements(monkeypatch):
    """The browser re-renders every element a playing frame emits, so the frame
    draws two figures (the samples; the mode histogram with the curves) and ONE summary
    element, nothing else (19 deltas before): the arrows toggle and the explanation sit
    outside the fragment."""
    import contextlib
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
    import live.frame_steps
    counts, inside = [], [False]
    enqueue, frame = ScriptRunContext.enqueue, live.frame_steps.live_frame

    def counting_enqueue(self, msg):
        if inside[0] and msg.HasField("delta"):
            counts[-1] += 1
        return enqueue(self, msg)

    @contextlib.contextmanager
    def counted(playing):
        counts.append(0)
        inside[0] = True
        try:
            with frame(playing):
                yield
        finally:
            inside[0] = False

    monkeypatch.setattr(ScriptRunContext, "enqueue", counting_enqueue)
    monkeypatch.setattr(live.frame_steps, "live_frame", counted)
    at = _page()
    at.button(key="gan__play").click().run()
    assert counts and max(counts) == 3, counts
    summary = _summary(at)
    assert set(badges_of(summary)) == {BADGE, "Modes covered now", "High-quality samples",
                                       "KL(near-mode samples ‖ uniform)"}
    assert "L_D / L_G" in summary and "Continued from a" in summary


def test_samples_are_two_path_shapes_with_one_square_per_point():
    """First paint: the ~900 samples are two path shapes (one SVG element each),
    not marker traces (one SVG element per point); the legend still names both kinds."""
    at = _page()
    fig = chart_figure(at, "gan_fig_samples")
    t = _trainer(at)
    snap = t.snapshot()
    points = [len(plotly_array(tr["x"])) for tr in fig["data"]
              if "markers" in tr.get("mode", "") and tr.get("type") == "scatter"]
    assert max(points) <= 1, points                # the legend entries only
    paths = {sh["line"]["color"]: sh["path"] for sh in fig["layout"]["shapes"]}
    from topics.gan.figures import FAKE, REAL, REAL_SHOWN
    assert paths[FAKE].count("M") == int(np.isfinite(snap.fake).all(1).sum()) > 100
    assert paths[REAL].count("M") == min(REAL_SHOWN, len(snap.real))
    colors = [sh["line"]["color"] for sh in fig["layout"]["shapes"]]
    widths = {sh["line"]["color"]: sh["line"]["width"] for sh in fig["layout"]["shapes"]}
    assert colors.index(REAL) > colors.index(FAKE)          # the grey data drawn above ...
    assert widths[REAL] < widths[FAKE]                      # ... and smaller: both visible
    names = [tr.get("name") for tr in fig["data"]]
    assert "real data" in names and "generated" in names


def test_lazy_expanders_draw_their_widgets_only_when_open_and_keep_values():
    """The 15 network / remedy widgets are drawn only while their expander is open (fewer
    elements for the browser to re-render per frame); a value set there survives closing it
    and a rerun, and still builds the trainer."""
    at = _page()
    assert "gan_unroll" not in {w.key for w in at.slider}
    assert "gan_d_depth" not in {w.key for w in at.select_slider} | {w.key for w in at.slider}
    at.session_state["gan_more_fix"] = True
    at.run()
    at.slider(key="gan_unroll").set_value(3).run()
    assert json.loads(at.session_state["gan__config"])["unrolled_steps"] == 3
    at.session_state["gan_more_fix"] = False
    at.run()
    assert "gan_unroll" not in {w.key for w in at.slider}
    at.selectbox(key="gan_loss").select("hinge").run()     # another widget: a new trainer
    config = json.loads(at.session_state["gan__config"])
    assert config["unrolled_steps"] == 3 and config["loss"] == "hinge" and not at.exception


def test_steps_per_frame_survive_a_tab_round_trip():
    """The slider fell back from 500 to 50 after visiting another tab (Streamlit drops a
    widget's state while its tab is closed)."""
    at = _page()
    at.slider(key="gan__spf").set_value(500).run()
    open_view(at, "gan", "Dirac-GAN")
    open_view(at, "gan", "Train a GAN")
    assert at.slider(key="gan__spf").value == 500


def test_a_fresh_gan_says_why_its_curve_axes_are_empty():
    at = _page()
    at.button(key="gan__reset").click().run()
    texts = [a.get("text", "") for fig in _charts(at) for a in fig["layout"].get("annotations", [])]
    assert any("Press Play<br>or Step" in t for t in texts), texts
    at.button(key="gan__step").click().run()
    texts = [a.get("text", "") for fig in _charts(at) for a in fig["layout"].get("annotations", [])]
    assert not any("Press Play" in t for t in texts)


def test_the_dirac_metric_shows_r1_reaching_one_millionth():
    """'R1 reaches (0, 0) to 1e-6' against a metric with 3 decimals (0.000)."""
    at = choose_preset(_page(), "gan", "Dirac-GAN: non-saturating converges slowly")
    value = metric(at, "Distance to (0, 0) after 1000 it. (R1")
    assert value != "0.000" and float(value) < 1e-6


def test_the_samples_subtitle_names_the_target_and_the_networks():
    from topics.gan import page as g
    from engine.gan import GANTrainer, make_target
    from engine.gan.reads import frame_of
    from topics.gan.figures import live_figures
    collapse = g.STATE.resolve(g.PRESETS["Collapse: one-layer D, one blob"].settings)
    deep = g.STATE.resolve(g.PRESETS["Cure 2: a two-layer D"].settings)
    assert g.gan_setup(collapse).startswith("ring of 8, σ = 0.05 · G 2×128, D 1×128")
    assert "D 2×128" in g.gan_setup(deep)
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu", g_hidden=(16,),
                    d_hidden=(16,), eval_every=5)
    fig = live_figures(frame_of(tr), tr.snapshot(), tr.history.copy(),
                       setup=g.gan_setup(collapse))["gan_fig_samples"]
    assert fig.layout.title.subtitle.text == g.gan_setup(collapse)


def test_the_manifold_tab_draws_the_same_run_as_train_with_its_grid_shares():
    """The Manifold tab shares the Train tab's trainer (live key "gan"): switching keeps the
    run, Step there trains it, and the badges are the grid's shares of that trainer."""
    from engine.gan.manifold import largest_share, manifold_of, modes_reached
    at = _page()
    at.slider(key="gan__spf").set_value(2).run()
    at.button(key="gan__step").click().run()
    trainer, steps = _trainer(at), _trainer(at).steps
    open_view(at, SLUG, "Manifold")
    assert _trainer(at) is trainer and trainer.steps == steps
    at.button(key="gan__step").click().run()
    assert not at.exception and trainer.steps == steps + 2
    block = next(m.value for m in at.markdown if 'class="gan-manifold"' in m.value)
    got, m = badges_of(block), manifold_of(trainer)
    assert got["Modes the grid reaches"] == f"{modes_reached(m)} / 8"
    assert got["Largest share of the grid in one mode"] == f"{largest_share(m):.0%}"
    assert "Share of the grid per mode: 0: " in block
    fig = next(f for f in _charts(at) if "latent grid" in json.dumps(f["layout"]["title"]))
    assert f"Iteration {trainer.steps:,}" in fig["layout"]["title"]["text"]
