"""The ReLU-regions page through AppTest: defaults, presets, widgets, bad input, training."""
import pytest
from engine import regions as R
from tests.apptest import metric, open_page

PAGE = "topic_pages/relu_regions.py"


def _open(query=None):
    return open_page(PAGE, query)




@pytest.fixture(scope="module")
def page():
    return _open()


def test_defaults_show_the_exact_count(page):
    expected = R.count_regions(R.make_mlp((8, 8, 8), seed=0), (-2, 2, -2, 2))
    assert metric(page, "Regions") == f"{expected:,}"
    assert metric(page, "Bound") == f"{R.product_bound((8, 8, 8), 2, True):,}"
    assert not page.error and not page.warning


def test_width_and_box_change_the_count(page):
    page.slider(key="rr_width").set_value(5).run()
    assert not page.exception
    expected = R.count_regions(R.make_mlp((5, 5, 5), seed=0), (-2, 2, -2, 2))
    assert metric(page, "Regions") == f"{expected:,}"
    page.slider(key="rr_box").set_value(4.0).run()
    expected = R.count_regions(R.make_mlp((5, 5, 5), seed=0), (-4, 4, -4, 4))
    assert metric(page, "Regions") == f"{expected:,}"
    page.selectbox(key="rr_init").select("xavier").run()
    part = R.partition(R.make_mlp((5, 5, 5), seed=0, init="xavier"), (-4, 4, -4, 4))
    assert metric(page, "Regions") == f"{part.count:,}"
    assert metric(page, "Distinct maps") == f"{R.distinct_maps(part):,}"
    page.selectbox(key="rr_init").select("kaiming").run()
    page.toggle(key="rr_layers").set_value(False).run()
    assert not page.exception and metric(page, "Regions") == f"{expected:,}"
    page.toggle(key="rr_layers").set_value(True).run()


def test_per_layer_widths_and_bad_input(page):
    page.text_input(key="rr_widths").input("6, 4").run()
    assert metric(page, "ReLUs") == "10"
    assert any("Architecture 2 → 6 → 4 → 1" in c.value for c in page.caption)
    page.text_input(key="rr_widths").input("6, banana").run()
    assert not page.exception
    assert any("Per-layer widths ignored" in w.value for w in page.warning)
    depth, width = page.slider(key="rr_depth").value, page.slider(key="rr_width").value
    assert metric(page, "ReLUs") == str(depth * width)   # falls back to depth x width
    page.text_input(key="rr_widths").input("").run()


def test_step_trains_and_updates_history(page):
    before = metric(page, "Loss")
    page.button(key="rr_train__step").click().run()
    assert not page.exception
    assert any("Iteration **25**" in c.value for c in page.caption)
    assert metric(page, "Loss") != before
    trainer = page.session_state["rr_train__trainer"]
    assert list(trainer.history.as_arrays("regions")[0]) == [0, 25]
    page.button(key="rr_train__play").click().run()          # one training frame while playing
    trainer = page.session_state["rr_train__trainer"]
    assert 25 < trainer.steps <= 50 and not page.exception
    page.button(key="rr_train__play").click().run()          # pause: no more steps
    paused_at = page.session_state["rr_train__trainer"].steps
    page.run()
    assert page.session_state["rr_train__trainer"].steps == paused_at
    assert metric(page, "Regions") == f"{trainer.partition().count:,}"


def test_every_preset_runs():
    at = _open()
    names = at.selectbox(key="rr_preset").options
    assert len(names) == 5
    seen = {}
    for name in names:
        at.selectbox(key="rr_preset").select(name).run()
        assert not at.exception, name
        assert not at.error, name
        assert at.info, name            # the preset's explanation is shown: it still matches
        seen[name] = [m.value for m in at.metric]
        if name == "Training concentrates regions where the target bends":
            assert any("of the regions lie within 0.3" in c.value for c in at.caption)
        if name == "Same 24 neurons, deeper: the bounds multiply":
            df = at.dataframe[0].value
            assert list(df["architecture"]) == ["24", "12x12", "8x8x8", "6x6x6x6", "4x4x4x4x4x4"]
            assert list(df["product bound (Raghu/Serra)"])[:2] == [301, 79 * 2 ** 12]
            first = R.count_regions(R.make_mlp((24,), seed=0), (-2, 2, -2, 2))
            assert df["count seed 0"].iloc[0] == first
    saw = seen["The sawtooth: 2^depth pieces from 2 units per layer"]
    assert "64" in saw
    line = seen["One hidden layer = a line arrangement"]
    model = R.make_mlp((8,), seed=0)
    assert line[0] == str(R.count_regions(model, (-2, 2, -2, 2)))


def test_url_reproduces_view_and_bad_values_fall_back():
    at = _open({"rr_depth": "1", "rr_width": "4", "rr_box": "3.0"})
    expected = R.count_regions(R.make_mlp((4,), seed=0), (-3, 3, -3, 3))
    assert metric(at, "Regions") == f"{expected:,}"
    at = _open({"rr_width": "999", "rr_task": "nope", "rr_widths": "3, banana", "classroom": "1"})
    assert not at.exception and at.slider(key="rr_width").value == 8
    assert at.selectbox(key="rr_task").value == "bump (regression)"
    assert any("Per-layer widths ignored" in w.value for w in at.warning)


def test_figure_outlines_and_surface_follow_the_partition():
    import numpy as np
    from viz import relu_regions_figures as F
    part = R.partition(R.make_mlp((6, 6), seed=1), (-2, 2, -2, 2))
    ex, ey = F._nan_joined(part)
    loops = [np.vstack([part.polygon(r), part.polygon(r)[:1]]) for r in range(part.count)]
    assert np.isnan(ex).sum() == part.count
    np.testing.assert_allclose(ex[~np.isnan(ex)], np.concatenate([v[:, 0] for v in loops]))
    np.testing.assert_allclose(ey[~np.isnan(ey)], np.concatenate([v[:, 1] for v in loops]))
    mesh = F.surface_figure(part).data[0]
    assert len(mesh.i) == int((np.diff(part.offsets) - 2).sum())   # fan triangles
    layers = R.mlp_layers(R.make_mlp((6, 6), seed=1))
    h = part.vertices
    for W, b in layers[:-1]:
        h = np.maximum(h @ W.T + b, 0)
    np.testing.assert_allclose(mesh.z, (h @ layers[-1][0].T + layers[-1][1])[:, 0], atol=1e-9)
