"""The ReLU-regions page through AppTest (page skeleton): defaults, every view, every preset
and tour step in order, widgets that change the numbers, bad input, training, exports."""
import numpy as np
import pytest

from engine import regions as R
from tests.apptest import (live_components, chart_figure, chart_titles, choose_preset, metric, open_page, open_view,
                           show_step)

PAGE = "topics/relu_regions/page.py"
SLUG = "relu_regions"


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
    for bad in ("6, banana", "16, x, 4"):
        page.text_input(key="rr_widths").input(bad).run()
        assert not page.exception
        assert any("Per-layer widths ignored" in w.value for w in page.warning), bad
        depth, width = page.slider(key="rr_depth").value, page.slider(key="rr_width").value
        assert metric(page, "ReLUs") == str(depth * width)   # falls back to depth x width
    assert any("empty entry" in w.value for w in page.warning)      # says why, not (16, 4)
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
    assert len(page.get("download_button")) == 2              # export: in the notes


def test_export_is_outside_the_live_fragment():
    """The export buttons are drawn in the view's notes, after live_training has
    returned, so a training tick (a rerun of the live fragment only) writes no media file."""
    import inspect
    from topics.relu_regions import page as page_module
    draw_src = inspect.getsource(page_module.regions_view)
    inner = draw_src[draw_src.index("def draw("):draw_src.index("trainer = None")]
    assert "export_buttons" not in inner and "export_buttons" in draw_src


def test_views_draw_only_their_controls():
    at = _open()
    open_view(at, SLUG, "Depth vs width")
    keys = {w.key for w in at.slider} | {w.key for w in at.selectbox} | \
        {w.key for w in at.select_slider}
    assert "rr_budget" in keys
    assert not keys & {"rr_depth", "rr_width", "rr_task", "rr_lr"}    # they do nothing here
    assert any("ReLUs as depth × width" in t for t in chart_titles(at))
    open_view(at, SLUG, "1-D & sawtooth")
    assert metric(at, "Linear pieces") == "32"
    at.slider(key="rr_saw").set_value(7).run()
    assert metric(at, "Linear pieces") == "128"
    assert not {w.key for w in at.selectbox} & {"rr_task"}


def test_every_preset_then_every_step_then_every_view():
    at = _open()
    names = at.selectbox(key="relu_regions__preset").options
    assert len(names) == 5
    seen = {}
    for name in names:
        choose_preset(at, SLUG, name)
        assert not at.error, (name, [e.value for e in at.error])
        assert at.info, name            # the preset's explanation is shown: it still matches
        seen[name] = (list(at.metric), at.table)
        if name == "Training concentrates regions where the target bends":
            caption = next(c.value for c in at.caption if "of the regions lie within 0.3"
                           in c.value)
            share = caption.split("**")[1]          # "**23%** of the regions lie within"
            # the same share in the regions figure's title (on the projector's first screen)
            title = chart_figure(at, "rr_fig_regions")["layout"]["title"]["text"]
            assert title.endswith(f" · {share} near the bend"), (title, share)
        if name.startswith("Same 24 neurons"):
            df = at.table[0].value.reset_index()
            assert list(df["architecture"]) == ["24", "12x12", "8x8x8", "6x6x6x6", "4x4x4x4x4x4"]
            assert list(df["product bound (Raghu/Serra)"])[:2] == [301, 79 * 2 ** 12]
            first = R.count_regions(R.make_mlp((24,), seed=0), (-2, 2, -2, 2))
            assert df["count seed 0"].iloc[0] == first
            means = df.set_index("architecture")["mean"]
            assert means["24"] == pytest.approx(205.33, abs=0.01)       # the text's numbers
            assert means["4x4x4x4x4x4"] == pytest.approx(56.33, abs=0.01)
    saw = [m.value for m in seen["The sawtooth: 2^depth pieces from 2 units per layer"][0]]
    assert "64" in saw
    line = [m.value for m in seen["One hidden layer = a line arrangement"][0]]
    assert line[0] == str(R.count_regions(R.make_mlp((8,), seed=0), (-2, 2, -2, 2)))
    from topics.relu_regions.page import STEPS
    for i in range(len(STEPS)):
        show_step(at, SLUG, i)
        assert not at.error, (i, [e.value for e in at.error])
    for title in ("2-D regions", "Depth vs width", "1-D & sawtooth"):
        open_view(at, SLUG, title)
        assert not at.error, title


def test_url_reproduces_view_and_bad_values_fall_back():
    at = _open({"rr_depth": "1", "rr_width": "4", "rr_box": "3.0"})
    expected = R.count_regions(R.make_mlp((4,), seed=0), (-3, 3, -3, 3))
    assert metric(at, "Regions") == f"{expected:,}"
    at = _open({"rr_width": "999", "rr_task": "nope", "rr_widths": "3, banana", "classroom": "1"})
    assert not at.exception and at.slider(key="rr_width").value == 32      # clamped to max
    assert at.selectbox(key="rr_task").value == "bump (regression)"
    assert any("rr_width=999 is not valid; using 32" in w.value.replace("\\", "")  # plain text
               for w in at.warning)
    assert any("Per-layer widths ignored" in w.value for w in at.warning)


def test_figure_outlines_and_surface_follow_the_partition():
    from topics.relu_regions import figures as F
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


def test_arrangement_count_is_an_independent_count():
    """The one-layer claim compares the exact partition with Euler's count for lines: a
    different computation (a broken partition would fail it)."""
    from topics.relu_regions.compute import arrangement_count, partition_of
    from topics.relu_regions.page import STATE
    for width, box in ((8, 2.0), (5, 4.0), (12, 1.0)):
        s = STATE.resolve({"rr_depth": 1, "rr_width": width, "rr_box": box})
        assert partition_of(s).count == arrangement_count(s)
    s = STATE.resolve({"rr_depth": 1, "rr_width": 8})
    assert arrangement_count(s) > 9


def test_region_hover_carries_each_regions_numbers_compactly():
    """The hover of a region sends its pattern as text and (area, w1, w2, b) as one
    float32 typed array, formatted in the browser; the numbers are the partition's."""
    import json
    from topics.relu_regions import figures as F
    part = R.partition(R.make_mlp((8, 8, 8), seed=0), (-2, 2, -2, 2))
    spec = json.loads(F.regions_figure(part).to_json())
    hover = next(t for t in spec["data"] if t.get("name") == "regions")
    from tests.apptest import plotly_array
    numbers = plotly_array(hover["customdata"])
    assert hover["customdata"]["dtype"] == "f4" and numbers.shape == (part.count, 4)
    np.testing.assert_allclose(numbers, np.column_stack([part.area, part.out_w[:, 0, 0],
                                                         part.out_w[:, 0, 1], part.out_b[:, 0]]),
                               rtol=1e-6, atol=1e-6)
    assert hover["text"][0] == F.pattern_string(part.patterns[0], part.widths)
    assert "%{customdata[3]" in hover["hovertemplate"]


def test_fills_and_edges_are_one_path_shape_each():
    """Plotly draws every NaN-separated piece of a scatter line as its own SVG
    element; fills (one per colour) and edges (one per layer) are single path shapes whose
    pieces are exactly the region polygons."""
    from topics.relu_regions import figures as F
    model = R.make_mlp((6, 6), seed=1)
    part = R.partition(model, (-2, 2, -2, 2))
    fig = F.regions_figure(part, edges=R.edge_layers(model, part))
    # the only trace is the hover trace: one unbroken invisible line through the centroids
    assert [t.name for t in fig.data] == ["regions"] and fig.data[0].line.width == 0
    assert np.isfinite(np.asarray(fig.data[0].x, float)).all()
    colours = np.unique(F.region_colors(part))
    fills = [s for s in fig.layout.shapes if s.fillcolor]
    assert len(fills) == len(colours) and len(fig.layout.shapes) == len(colours) + 2
    assert sum(s.path.count("M") for s in fills) == part.count       # one closed piece each
    assert F.svg_path([0, 1, np.nan, 2, 3], [0, 1, np.nan, 2, 3], True) == "M0,0L1,1ZM2,2L3,3Z"


def test_training_points_are_squares_coloured_by_their_target():
    """The training points are small squares in one path shape per colour level
    (not one marker element each): every point is drawn once, centred on the point, in the
    colour of its target's level (low blue, high red), and the plain-dict figures equal
    Plotly's validated build."""
    import json
    import re
    from topics.relu_regions import figures as F
    from ui.fastfig import validated
    model = R.make_mlp((6, 6), seed=1)
    part = R.partition(model, (-2, 2, -2, 2))
    rng = np.random.default_rng(0)
    pts = rng.uniform(-2, 2, (300, 2))
    y = pts[:, 0]                                     # the target grows to the right
    fig = F.regions_figure(part, pts, y, edges=R.edge_layers(model, part))
    squares = [s for s in fig.layout.shapes if s.layer == "above"]
    assert sum(s.path.count("M") for s in squares) == len(pts)
    centres = []
    for s in squares:
        for x0, y0, x1, y1 in re.findall(r"M([-\d.e]+),([-\d.e]+)L([-\d.e]+),[-\d.e]+"
                                         r"L[-\d.e]+,([-\d.e]+)L", s.path):
            centres.append(((float(x0) + float(x1)) / 2, (float(y0) + float(y1)) / 2))
    dist = np.hypot(*(np.array(centres)[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
    assert dist.min(0).max() < 2e-3 and dist.min(1).max() < 2e-3      # each point, once
    left = min(squares, key=lambda s: float(s.path[1:].split(",")[0]))
    right = max(squares, key=lambda s: float(s.path[1:].split(",")[0]))
    red = lambda c: [int(v) for v in re.findall(r"\d+", c)][0]          # noqa: E731
    assert red(right.fillcolor) > red(left.fillcolor)
    from engine.regions import reads as M
    heat = F.heatmap_figure(*M.output_grid(R.mlp_layers(model), (-2, 2, -2, 2), 20), part)
    from live import canvas as live_canvas                       # a playing frame can be painted
    for f in (fig, heat):
        assert live_canvas.supported(live_canvas.figure_dict(f))
    sub = heat.layout.title.subtitle.text            # the colour range, in words
    assert not heat.data[0].showscale and f"{heat.data[0].z.min():.3g}" in sub \
        and f"{heat.data[0].z.max():.3g}" in sub
    for f in [fig, heat, F.budget_figure(R.budget_study(6, seeds=(0,), box=(-2, 2, -2, 2)), 6),
              F.count_history_figure(np.arange(3), np.ones(3), np.arange(3), np.ones(3))]:
        assert json.loads(validated(f).to_json()) == json.loads(f.to_json())


def test_a_playing_frame_emits_few_elements():
    """A live frame's browser cost grows with the elements it re-emits: playing, the five
    metrics are one html element, the two captions one, every figure a canvas."""
    at = _open()
    choose_preset(at, SLUG, "Training concentrates regions where the target bends")
    paused = {"metrics": len(at.metric), "captions": len(at.caption)}
    at.session_state["rr_train__playing"] = True
    at.run()
    assert not at.exception
    assert not at.metric and not at.get("plotly_chart")
    row = [h.proto.body for h in at.get("html") if "dlplay-metrics" in h.proto.body]
    assert len(row) == 1 and all(k in row[0] for k in ("Regions", "Bound", "Distinct maps"))
    assert len(live_components(at)) == 3
    assert paused["metrics"] == 5 and len(at.caption) <= paused["captions"]
    caption = next(c.value for c in at.caption if c.value.startswith("Architecture"))
    assert "of the regions lie within" in caption            # merged into one element


def test_the_sawtooth_caption_never_calls_more_relus_fewer():
    """At depth 1 it said 'only 2 ReLUs; a one-hidden-layer network needs 1'."""
    from topics.relu_regions.compute import sawtooth_caption
    at = open_page("topics/relu_regions/page.py", {"rr_saw": "1"})
    open_view(at, SLUG, "1-D & sawtooth")
    caption = next(c.value for c in at.caption if "ReLUs" in c.value)
    assert "only 2 ReLUs" not in caption and "needs only 1" in caption
    assert "needs only" in sawtooth_caption(2) and "needs 63." in sawtooth_caption(6)


def test_gradient_tab_draws_the_step_derivative_and_counts_its_sign_changes():
    at = open_view(open_page("topics/relu_regions/page.py", {"rr_depth": "1", "rr_width": "32"}),
                   "relu_regions", "Gradient df/dx")
    assert not at.exception and not at.error
    shallow = int(metric(at, "Sign changes of df/dx"))
    (trace,) = chart_figure(at, "rr_fig_slope")["data"]
    assert trace["line"]["shape"] == "hv"
    at.slider(key="rr_depth").set_value(6).run()
    assert int(metric(at, "Sign changes of df/dx")) > shallow
    assert int(metric(at, "Linear pieces")) > 100
