"""AppTest of the network page: its tabs, every preset and tour step, a Step of its live
training, the frame's parts (every neuron drawn, regions counted, divergence named) and the
bad inputs (no feature, no hidden layer)."""
from __future__ import annotations

import numpy as np

from tests.apptest import check_every_preset_and_step, check_tabs_are_the_views, open_page

PAGE = "topics/network/page.py"
SLUG = "network"


def _module():
    import topics.network.page as page
    return page


def test_tabs_and_defaults():
    at = check_tabs_are_the_views(SLUG)
    assert not at.warning


def test_every_preset_then_every_step():
    check_every_preset_and_step(SLUG)


def test_step_trains_the_live_view():
    at = open_page(PAGE)
    at.button(key="ne_train__step").click().run()
    assert not at.exception
    assert at.session_state["ne_train__view"].steps > 0


def test_no_feature_gives_a_message():
    at = open_page(PAGE)
    at.multiselect(key="ne_features").set_value([]).run()
    assert not at.exception
    assert any("No input feature" in w.value for w in at.warning)


class _View:
    """A TrainerView stand-in over a real trainer (what live_parts hands the frame)."""

    def __init__(self, trainer):
        self.trainer, self.steps = trainer, trainer.steps
        self.diverged_at, self.history = trainer.diverged_at, trainer.history

    def snapshot(self):
        return self.trainer.snapshot()


def _parts(config, steps, knocked=frozenset(), show_test=True):
    from topics.network.compute import build_trainer
    trainer = build_trainer(config, 0, "cpu")
    trainer.step(steps)
    return _module().network_frame_parts(_View(trainer), None, knocked=knocked,
                                         show_test=show_test, discretize=False)


def _config(**change):
    base = {"dataset": "xor", "noise": 0.0, "train_share": 0.5, "features": ("x1", "x2"),
            "hidden": (8,) * 6, "activation": "relu", "lr": 0.03, "regularization": "none",
            "reg_rate": 0.0, "batch": 10}
    return {**base, **change}


def _blocks(z, res):
    """The maps stacked in a column image (top first), split at its NaN gap rows."""
    from topics.network.figures import gap_rows
    z = np.asarray(z, float)
    n = (len(z) + gap_rows(res)) // (res + gap_rows(res))
    return [z[(n - 1 - j) * (res + gap_rows(res)):][:res] for j in range(n)]


def test_the_frame_draws_every_neuron_and_its_edges():
    from topics.network.compute import frame_maps
    config = _config()
    parts = _parts(config, 5)
    fig = parts["ne_fig_net"].fig
    columns = [t for t in fig.data if t.type == "heatmap" and t.xaxis == "x"]
    assert len(columns) == 1 + 6 + 1                 # inputs, six hidden layers, output neuron
    assert len(fig.data) < 30                         # few traces: a cheap live frame
    from topics.network.compute import build_trainer
    trainer = build_trainer(config, 0, "cpu")
    trainer.step(5)
    snap = trainer.snapshot()
    maps = frame_maps(snap.layers, snap.activation, snap.features, set())
    for drawn, true in zip(columns[1:7], maps.hidden):
        blocks = _blocks(drawn.z, true.shape[-1])
        assert len(blocks) == 8
        for block, m in zip(blocks, true):            # each map on its own scale, top first
            scale = np.abs(m).max() or 1.0
            np.testing.assert_allclose(block, m / scale, rtol=1e-5, atol=1e-6)
    edges = [t for t in fig.data if t.type == "scatter" and t.mode == "lines"
             and t.xaxis == "x"]
    n_edges = sum(len(t.x) // 3 for t in edges)
    assert n_edges == 2 * 8 + 5 * 8 * 8 + 8
    assert "linear regions" not in parts["ne_caption"].text   # 48 ReLUs: over the cap


def test_the_caption_counts_regions_and_the_knocked_out_loss():
    from topics.network.figures import SILENCED
    parts = _parts(_config(hidden=(4, 4)), 20, knocked=frozenset({(0, 1)}))
    text = parts["ne_caption"].text
    assert "linear regions" in text and "knocked out" in text
    layer1 = [t for t in parts["ne_fig_net"].fig.data if t.type == "heatmap"][1]
    blocks = _blocks(layer1.z, 20)
    assert [bool((b == SILENCED).all()) for b in blocks] == [False, True, False, False]


def test_no_hidden_layer_is_said_to_be_linear():
    parts = _parts(_config(hidden=()), 3)
    assert "linear model" in parts["ne_caption"].text


def test_divergence_is_named_and_no_nan_reaches_the_screen():
    parts = _parts(_config(dataset="circle", activation="linear", hidden=(4, 2), lr=1.0,
                           features=("x1", "x2", "x1²", "x2²", "x1x2", "sin x1", "sin x2")),
                   40)
    text = parts["ne_caption"].text
    assert "Diverged" in text and "nan" not in text.lower()
    fig = parts["ne_fig_net"].fig
    assert "nan" not in fig.layout.title.text.lower()
    for t in fig.data:
        if t.type == "heatmap":            # NaN only in whole gap rows (drawn transparent)
            z = np.asarray(t.z, float)
            assert np.isfinite(z[np.isfinite(z).any(1)]).all()


def test_a_click_on_a_neuron_knocks_it_out_and_a_second_brings_it_back(monkeypatch):
    page = _module()
    state = {"ne_knock": ["L2 n1"],
             "ne_fig_net": {"selection": {"points": [{"customdata": "L1 n3"}]}}}
    monkeypatch.setattr(page.st, "session_state", state)
    page._on_click_neuron()
    assert state["ne_knock"] == ["L2 n1", "L1 n3"]
    page._on_click_neuron()
    assert state["ne_knock"] == ["L2 n1"]
    dots = [t for t in _parts(_config(hidden=(4, 4)), 1)["ne_fig_net"].fig.data
            if t.name == "neurons"]
    assert list(dots[0].customdata) == [f"L{i} n{j}" for i in (1, 2) for j in (1, 2, 3, 4)]


def test_each_layers_width_typed_or_refused_in_words():
    from topics.network.compute import hidden_of
    page = _module()
    s = page.STATE.resolve({"ne_layers": 2, "ne_units": 4})
    assert hidden_of({**s, "ne_widths": "8, 3, 1"}) == ((8, 3, 1), None)
    assert hidden_of({**s, "ne_widths": "0"}) == ((), None)
    widths, reason = hidden_of({**s, "ne_widths": "9, 2"})
    assert widths == (4, 4) and "between 1 and 8" in reason
    at = open_page(PAGE)
    at.text_input(key="ne_widths").set_value("3, x").run()
    assert not at.exception
    assert any("sliders" in w.value for w in at.warning)
