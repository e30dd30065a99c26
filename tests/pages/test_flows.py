"""AppTest of the flows page: the coupling tab's numbers against the engine, every preset and
tour step in order, extreme sliders that give a message and no traceback, a training step on
the live tab, and its plain figures."""
from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import chart_figure, choose_preset, metric, open_page, open_view, show_step
from ui.fastfig import validated

PAGE = "topics/flows/page.py"
SLUG = "flows"


def _module():
    import topics.flows.page as page
    return page


def _page() -> AppTest:
    return open_page(PAGE)


def _view(at: AppTest) -> str:
    return at.session_state["flows_view"]


def test_coupling_tab_shows_the_engines_numbers():
    from topics.flows.compute import coupling_of
    page = _module()
    at = _page()
    assert [t.label for t in at.tabs] == ["One coupling layer", "Real NVP on 2-D data"]
    r = coupling_of(page.STATE.resolve({}))
    assert metric(at, "Inverse error") == f"{r.inverse_error:.2e}"
    assert float(metric(at, "Inverse error")) < 1e-5
    assert float(metric(at, "∫ p_Y")) == pytest.approx(1.0, abs=0.02)
    fig = chart_figure(at, "fl_fig_coupling")
    assert len(fig["data"]) == 6
    at.slider(key="fl_c").set_value(0.0).run()
    at.slider(key="fl_b").set_value(0.0).run()
    at.slider(key="fl_a").set_value(1.0).run()
    assert not at.exception and not at.error
    assert float(metric(at, "log-det vs autograd")) < 1e-5


def test_extreme_sliders_give_a_message_not_a_traceback():
    at = _page()
    for key, value in (("fl_a", 6.0), ("fl_b", 6.0), ("fl_a", -6.0), ("fl_b", -6.0)):
        at.slider(key=key).set_value(value).run()
        assert not at.exception and not at.error, (key, value)
    assert any("bounds it" in w.value for w in at.warning)
    assert np.isfinite(float(metric(at, "Inverse error")))
    at.slider(key="fl_a").set_value(0.0).run()
    at.slider(key="fl_b").set_value(0.4).run()
    assert not any("bounds it" in w.value for w in at.warning)


def test_every_preset_then_every_step_in_order():
    page = _module()
    at = _page()
    for name, preset in page.PRESETS.items():
        choose_preset(at, SLUG, name)
        assert not at.exception and not at.error, name
        assert _view(at) == next(v.title for v in page.VIEWS if v.key == preset.view), name
    for i, step in enumerate(page.STEPS):
        show_step(at, SLUG, i)
        assert not at.exception and not at.error, step.title
        assert _view(at) == next(v.title for v in page.VIEWS if v.key == step.view)


def test_train_step_advances_and_reports_the_nll():
    at = open_view(_page(), SLUG, "Real NVP on 2-D data")
    assert float(metric(at, "∫ p on the plot")) == pytest.approx(1.0, abs=0.02)
    at.select_slider(key="fl_layers").set_value(2).run()
    at.button(key="fl_train__step").click().run()
    assert not at.exception and not at.error
    trainer = at.session_state["fl_train__trainer"]
    assert trainer.steps > 0
    assert np.isfinite(float(metric(at, "Held-out NLL")))
    for data in ("rings", "checkerboard", "spiral"):
        at.selectbox(key="fl_data").select(data).run()
        assert not at.exception and not at.error, data


def test_plain_figures_are_valid_and_send_float32():
    from engine.flows import FlowTrainer, flow_data
    from topics.flows import figures as F
    from topics.flows.compute import BASE, coupling_of
    page = _module()
    r = coupling_of(page.STATE.resolve({}))
    d = flow_data("moons", 200, 100)
    tr = FlowTrainer(d.train, d.held_out, layers=2, hidden=8, res=20, n_samples=50)
    tr.step(3)
    snap = tr.snapshot()
    figures = {"coupling": F.coupling_figure(r.lines, r.image, r.nodes, r.node_image,
                                             r.logdet, 0, BASE),
               "density": F.density_figure(snap.density.xs, snap.density.density, d.train, 4.0,
                                           snap.density.integral),
               "samples": F.samples_figure(snap.samples, snap.warped, d.train, 4.0),
               "nll": F.nll_figure({"train": tr.history.as_arrays("train")})}
    for name, fig in figures.items():
        spec = json.loads(pio.to_json(fig, validate=False))
        assert json.loads(pio.to_json(validated(fig), validate=False)) == spec, name
        for trace in spec["data"]:
            assert not isinstance(trace.get("colorscale", []), str), name
            for axis in ("x", "y", "z"):
                if isinstance(trace.get(axis), dict):
                    assert trace[axis]["dtype"] in ("f4", "i1", "i2", "i4", "u1"), (name, axis)
