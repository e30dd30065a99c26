"""AppTest of topics/generalization/page.py: defaults, every view, every preset and tour step,
widget changes that must change what is drawn, bad URL values, and every claim on a second
seed (tests/test_claims.py checks seed 0)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.apptest import (chart_figure, choose_preset, metric, open_page, open_view, plotly_array,
                           show_step)
from topics.generalization import compute, page
from ui.page_keys import view_key

PAGE = "topics/generalization/page.py"
SLUG = "generalization"


def _traces(fig: dict, name: str) -> list[dict]:
    return [t for t in fig["data"] if t.get("name") == name]


def _valid(at, key: str) -> go.Figure:
    """The drawn chart passes plotly's validation (figures are built as dicts: ui/fastfig.py)."""
    return go.Figure(chart_figure(at, key))


def _heatmap(fig: dict) -> dict:
    return next(t for t in fig["data"] if t["type"] == "heatmap")


def _flipped_count(at) -> int:
    flipped = _traces(chart_figure(at, "gen_overfit_fig"), "flipped label")
    return len(plotly_array(flipped[0]["x"])) if flipped else 0


@pytest.fixture(scope="module")
def fresh():
    return open_page(PAGE)


def test_defaults_draw_the_boundary_and_untrained_curves(fresh):
    assert not fresh.error
    fig = chart_figure(fresh, "gen_overfit_fig")
    kinds = [t["type"] for t in fig["data"]]
    assert "heatmap" in kinds and "contour" in kinds
    assert _flipped_count(fresh) == sum(page.generalization.make_split(n_train=100, noise=0.2, label_noise=0.2).y_train
                                        != page.generalization.make_split(n_train=100, noise=0.2).y_train)
    assert metric(fresh, "Train accuracy") and metric(fresh, "‖θ‖")
    assert len(fresh.get("download_button")) == 2
    texts = [a.get("text", "") for a in fig["layout"].get("annotations", [])]
    assert not any("best val loss" in t for t in texts)    # nothing is a best before training
    assert not fig["layout"].get("shapes")


def test_train_to_1000_shows_the_gap_the_preset_names():
    at = open_page(PAGE)
    at.button(key="gen_overfit__to1000").click().run()
    assert not at.exception
    gap = float(metric(at, "Gap"))
    assert gap == pytest.approx(compute.gap_at(page.STATE.resolve({})), abs=0.006)   # shown to 2 decimals
    assert gap >= 0.15
    fig = chart_figure(at, "gen_overfit_fig")
    val = _traces(fig, "validation")[0]
    assert plotly_array(val["x"]).max() == 1000
    shapes = fig["layout"]["shapes"]                     # best-val and early-stop lines
    assert len(shapes) >= 2
    assert any("best val loss: " in a.get("text", "") for a in fig["layout"]["annotations"])
    assert _valid(at, "gen_overfit_fig").layout.shapes[0].xref == "x2"
    # the best-validation boundary (early stopping) differs from the overfitted one
    z_now = plotly_array(_heatmap(fig)["z"])
    at.session_state["gen_boundary"] = "best-validation model"
    at.run()
    best = chart_figure(at, "gen_overfit_fig")
    titles = [a.get("text", "") for a in best["layout"]["annotations"]]
    assert any("best-validation model" in t for t in titles)
    assert abs(plotly_array(_heatmap(best)["z"]) - z_now).max() > 0.3


def test_label_noise_slider_changes_the_ringed_points():
    at = open_page(PAGE)
    before = _flipped_count(at)
    at.slider(key="gen_label_noise").set_value(0.0).run()
    assert before > 10 and _flipped_count(at) == 0


@pytest.mark.parametrize("title, key", [("Random labels", "gen_random_fig"),
                                        ("L2 vs AdamW", "gen_decay_fig"),
                                        ("Double descent", "gen_double_fig")])
def test_every_view_draws_its_figure_and_only_the_open_view_runs(title, key):
    at = open_view(open_page(PAGE), SLUG, title)
    assert not at.error
    assert chart_figure(at, key)["data"] and _valid(at, key).data
    assert len(at.get("download_button")) == 2                   # CSV + JSON export
    with pytest.raises(Exception):
        chart_figure(at, "gen_overfit_fig")


def test_double_descent_controls_move_the_peak_and_the_ridge_curve():
    at = open_view(open_page(PAGE), SLUG, "Double descent")
    assert metric(at, "Peak at p") == "100"
    ridge_before = metric(at, "… with ridge 0.01")
    at.slider(key="gen_dd_n").set_value(60).run()
    assert metric(at, "Peak at p") == "60"
    at.select_slider(key="gen_dd_ridge").set_value(1e-4).run()
    assert metric(at, "… with ridge 0.0001") != ridge_before
    fig = chart_figure(at, "gen_double_fig")
    assert {t["name"] for t in fig["data"]} >= {"test, min-norm (ridge 0)", "test, ridge 0.0001"}
    # the threshold line at p = n = 60 (plotly.js: a shape on a log axis in data units) and
    # its label at log10(60) (an annotation there is in log10 units); it was drawn at p = 1.8
    assert [s["x0"] for s in fig["layout"]["shapes"]] == [60.0, 60.0]
    label = next(a for a in fig["layout"]["annotations"] if a["text"] == "p = n = 60")
    assert label["x"] == pytest.approx(np.log10(60))


def test_polynomial_fit_interpolates_at_degree_n_minus_1_and_validation_shows_it():
    at = open_view(open_page(PAGE), SLUG, "Polynomial fit")
    assert not at.exception and not at.error
    assert float(metric(at, "Training error (MSE)")) < 1e-20          # degree 12, 13 points
    names = {t["name"] for t in chart_figure(at, "gen_poly_fig")["data"]}
    assert "validation points" not in names
    at.toggle(key="gen_pf_val").set_value(True).run()
    assert float(metric(at, "Validation error (MSE)")) > 1
    at.slider(key="gen_pf_degree").set_value(3).run()
    assert 0.05 < float(metric(at, "Validation error (MSE)")) < 0.1
    fig = chart_figure(at, "gen_poly_fig")
    assert {"validation points", "validation error"} <= {t["name"] for t in fig["data"]}


def test_every_preset_applies_and_opens_its_view():
    at = open_page(PAGE)
    titles = {v.key: v.title for v in page.VIEWS}
    for name, preset in page.PRESETS.items():
        choose_preset(at, SLUG, name)
        assert not at.error, (name, [e.value for e in at.error])
        assert at.session_state[view_key(SLUG)] == titles[preset.view]
        assert any(name in i.value for i in at.info), name       # the text beside the figure


def test_every_tour_step_shows_its_view():
    at = open_page(PAGE)
    titles = {v.key: v.title for v in page.VIEWS}
    for i, step in enumerate(page.STEPS):
        show_step(at, SLUG, i)
        assert not at.error, (step.title, [e.value for e in at.error])
        assert at.session_state[view_key(SLUG)] == titles[step.view]


def test_bad_url_values_fall_back_without_a_traceback():
    at = open_page(PAGE, {"gen_n": "5", "gen_data": "nope", "gen_lr": "7"})
    assert not at.exception and not at.error
    assert at.slider(key="gen_n").value == 20                     # out of range: clamped
    assert any("gen_n=5 is not valid; using 20" in w.value.replace("\\", "") for w in at.warning)
    assert at.selectbox(key="gen_data").value == "two_moons"


CLAIMS = [(f"preset {name}", p.settings, c) for name, p in page.PRESETS.items() for c in p.claims]
CLAIMS += [(f"step {st.title}", st.settings, c) for st in page.STEPS for c in st.claims]


@pytest.mark.slow
@pytest.mark.parametrize("source, settings, claim", CLAIMS,
                         ids=[f"{src}: {c.what}" for src, _, c in CLAIMS])
def test_every_claim_also_holds_on_seed_1(source, settings, claim, monkeypatch):
    from topics.generalization import compute as generalization_compute
    monkeypatch.setattr(generalization_compute, "CLAIM_SEED", 1)   # read there at call time
    value, ok = claim.check(page.STATE.resolve(settings))
    assert ok, f"{source}: {claim.what} = {value:.4g} on seed 1, expected {claim.threshold}"


@pytest.fixture
def push(monkeypatch):
    """The frame route's switch forced on (trainers stay inline here), a private frame budget
    and the fragments' run_every recorded."""
    from tests.apptest import push_on
    return push_on(monkeypatch)


@pytest.mark.parametrize("title, key, slots", [
    ("Overfitting", "gen_overfit", {"gen_overfit_fig", "gen_overfit_metrics"}),
    ("Random labels", "gen_random", {"gen_random_fig", "gen_random_metrics"}),
    ("L2 vs AdamW", "gen_decay", {"gen_decay_fig", "gen_decay_metrics"})])
def test_a_playing_view_mounts_its_slots_once_and_the_route_serves_its_frames(
        push, title, key, slots):
    """Paused the parts are checked drawable; on Play the fragment gets no run_every, every
    slot (the figure, the metric row as one element, the status line) is a live component
    bound to the page's token, and the route answers that token with the same slots. Pause
    draws Plotly and the st.metric row again."""
    from tests.apptest import pause_and_forget, play_and_fetch
    at = open_view(open_page(PAGE), SLUG, title)
    mounted, frame = play_and_fetch(at, key, slots, push)
    assert "spec" in mounted[f"{key}_fig"] and "dlplay-metrics" in mounted[f"{key}_metrics"]["html"]
    assert not at.get("plotly_chart") and not at.metric
    assert "alidation" in frame["slots"][f"{key}_metrics"]["html"]
    pause_and_forget(at, key)
    assert chart_figure(at, f"{key}_fig")["data"] and len(at.metric) == 4


def test_the_weight_norm_axis_labels_decades_before_training():
    """One logged value per run (iteration 0): Plotly's own two decades around it labelled
    every digit ("5 6 7 8 9 100", piled up on a tall screen); the panel labels decades until
    the runs hold a curve, then Plotly's ticks come back."""
    from engine.generalization import GeneralizationSnapshot
    from topics.generalization.figures import compare_figure

    def snap(k: int) -> GeneralizationSnapshot:
        a = np.linspace(1.0, 40.0, k)
        return GeneralizationSnapshot(k, np.arange(k), a, a, a / 40, a / 40, a, None, None, None)

    def norm_axis(fig: go.Figure):
        return next(fig.layout[n] for n in fig.layout if n.startswith("yaxis")
                    and fig.layout[n].type == "log")

    fresh = compare_figure({"Adam + L2": snap(1), "AdamW": snap(1)})
    trained = compare_figure({"Adam + L2": snap(30), "AdamW": snap(30)})
    assert norm_axis(fresh).dtick == 1 and norm_axis(trained).dtick is None


@pytest.mark.parametrize("name, step", [("Random labels are memorized", compute.RANDOM_STEP),
                                        ("Same λ: Adam + L2 shrinks the weights far more than "
                                         "AdamW", compute.NAMED_STEP)])
def test_the_pair_tabs_claims_read_the_live_pair(name, step):
    """The Random-labels and L2-vs-AdamW claims are read on the tab's live pair of runs
    (ui.claims.OnRun): before the named iteration the card counts it; a run on another seed
    than the claims' says so."""
    from topics.generalization.tour import PRESETS
    claims = PRESETS[name].claims
    at = choose_preset(open_page(PAGE, {"seed": "0"}), SLUG, name)
    text = "\n".join(m.value for m in at.markdown)
    assert all(c.run is not None for c in claims)
    for c in claims:
        assert f"{c.what}: *this run: 0 / {step:,} iterations" in text, text
    at = choose_preset(open_page(PAGE, {"seed": "1"}), SLUG, name)
    text = "\n".join(m.value for m in at.markdown)
    assert f"{claims[0].what}: *read on seed 0 (this run: seed 1" in text, text


class _Pair:
    """A live pair's view as the card reads it: steps and the runs' snapshots."""
    def __init__(self, steps, snaps):
        self.steps, self._snaps = steps, snaps

    def snapshot(self):
        return self._snaps


@pytest.mark.slow
def test_the_random_labels_claims_read_on_a_run_give_their_measured_values():
    """On the claims' seed, what the card reads on the live pair at iteration 400 is the
    claim's own measurement (the same runs, trained here as the page trains them)."""
    from topics.generalization.tour import C_RANDOM, RANDOM
    settings = page.STATE.resolve(RANDOM)
    snaps = {run: compute.trained(cfg, 0, compute.RANDOM_STEP)
             for run, cfg in compute.random_configs(settings).items()}
    view = _Pair(compute.RANDOM_STEP, snaps)
    for c in C_RANDOM:
        step, value = c.run.read(view)
        assert step == compute.RANDOM_STEP
        assert value == pytest.approx(c.measure(settings), rel=1e-12), c.what
