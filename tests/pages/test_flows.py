"""AppTest of the flows page: the coupling tab's numbers against the engine, every preset and
tour step in order, extreme sliders that give a message and no traceback, a training step on
the live tab (its plain figures: tests/pages/test_plain_figures.py)."""
from __future__ import annotations

import numpy as np
import pytest

from engine import flows
from streamlit.testing.v1 import AppTest

from tests.apptest import chart_figure, choose_preset, metric, open_page, open_view, show_step

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
    assert [t.label for t in at.tabs] == ["One coupling layer", "Real NVP on 2-D data",
                                          "Planar, radial, ODE vs coupling",
                                          "Real NVP on digits"]
    r = coupling_of(page.STATE.resolve({}))
    assert metric(at, "Inverse error") == f"{r.inverse_error:.2e}"
    assert float(metric(at, "Inverse error")) < 1e-5
    assert float(metric(at, "∫ p_Y")) == pytest.approx(1.0, abs=0.02)
    fig = chart_figure(at, "fl_fig_coupling")
    assert len(fig["data"]) == 7
    back = fig["data"][2]
    assert back["name"] == "f⁻¹(y)"
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
    at.button(key="fl_stages").click().run()
    assert not at.exception and not at.error
    fig = chart_figure(at, "fl_fig_stages")
    assert len(fig["data"]) == 3                          # x, after layer 1, after layer 2 = z
    assert fig["layout"]["annotations"][-1]["text"].endswith("= z")
    for data in ("rings", "checkerboard", "spiral"):
        at.selectbox(key="fl_data").select(data).run()
        assert not at.exception and not at.error, data


def test_a_playing_train_tab_is_served_as_parts(monkeypatch):
    """On Play the density and samples figures are live components bound to the page's token
    and the frame route answers it with the same slots; Pause draws Plotly again."""
    from tests.apptest import pause_and_forget, play_and_fetch, push_on
    asked = push_on(monkeypatch)
    at = open_view(_page(), SLUG, "Real NVP on 2-D data")
    at.select_slider(key="fl_layers").set_value(2).run()
    slots = {"fl_fig_density", "fl_fig_samples", "fl_fig_nll", "fl_metrics", "fl_caption"}
    mounted, frame = play_and_fetch(at, "fl_train", slots, asked)
    assert all("spec" in mounted[s] for s in ("fl_fig_density", "fl_fig_samples"))
    assert frame["slots"]["fl_fig_density"]["spec"]["data"][0]["type"] == "heatmap"
    pause_and_forget(at, "fl_train")
    assert {"fl_fig_density", "fl_fig_samples"} <= {c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")}


def _short_fits(monkeypatch):
    """The comparison tab's fits, 3 steps each on a coarse grid (the real fit_flow)."""
    import topics.flows.families_tab as tab
    from engine.flows.compare import fit_flow
    from topics.flows.families import family_args

    def short(family, data, simple, steps, seed=0):
        layers, hidden = family_args(family, simple)
        d = flows.flow_data(data, 200, 100)
        return fit_flow(family, layers, d.train, d.held_out, 3, hidden=hidden or 16, res=20,
                        ode_steps=2)
    monkeypatch.setattr(tab, "fit_of", short)


def test_families_tab_fits_on_request_and_tabulates_the_cost(monkeypatch):
    _short_fits(monkeypatch)
    at = open_view(_page(), SLUG, "Planar, radial, ODE vs coupling")
    assert any("Press **Fit**" in i.value for i in at.info)
    assert not at.dataframe
    at.button(key="fl_cmp_fit").click().run()
    assert not at.exception and not at.error
    fig = chart_figure(at, "fl_fig_families")
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert [t.split(":")[0] for t in titles] == ["planar", "radial", "coupling (Real NVP)",
                                                 "neural ODE (RK4)"]
    table = at.dataframe[0].value
    assert list(table["parameters"])[0] == 8 * 5 + 4        # K = 8 planar layers + the affine
    assert (table["ms per step"] > 0).all()
    at.select_slider(key="fl_simple").set_value(2).run()    # fitted settings are remembered
    assert any("Press **Fit**" in i.value for i in at.info)


def test_digits_tab_samples_temperatures_and_bits(monkeypatch):
    import topics.flows.digits_tab as tab
    from topics.flows.digits import flow_bits, baseline_bits, stats_at
    at = open_view(_page(), SLUG, "Real NVP on digits")
    assert not at.exception and not at.error
    fig = chart_figure(at, "fl_fig_digits")
    assert fig["data"][0]["type"] == "heatmap"
    assert metric(at, "Spread across samples") == f"{stats_at(0.7).spread:.2f}"
    bars = chart_figure(at, "fl_fig_bits")["data"][0]
    assert list(bars["y"]) == ["Real NVP (dequantised bound)", "independent pixels"]
    assert list(bars["text"]) == [f"{flow_bits():.3f}", f"{baseline_bits():.3f}"]
    at.select_slider(key="fl_temp").set_value(0.0).run()
    assert not at.exception and not at.error
    assert any("every sample is one and the same image" in i.value for i in at.info)
    monkeypatch.setattr(tab, "pixelcnn_bits", lambda: _pixelcnn_bits_after(3))
    at.button(key="fl_pixelcnn").click().run()
    assert not at.exception and not at.error
    bars = chart_figure(at, "fl_fig_bits")["data"][0]
    assert list(bars["y"])[-1] == "PixelCNN (17 levels)"
    assert float(list(bars["text"])[-1]) == pytest.approx(_pixelcnn_bits_after(3), abs=1e-3)


def _pixelcnn_bits_after(steps):
    from topics.flows.digits import pixelcnn_bits
    return getattr(pixelcnn_bits, "__wrapped__", pixelcnn_bits)(steps)


def test_missing_digits_weights_give_a_message(monkeypatch, tmp_path):
    from engine.flows import digits as fd
    from topics.flows.digits import shipped_flow
    shipped_flow.clear()
    monkeypatch.setattr(fd, "WEIGHTS", tmp_path / "none.pt")
    try:
        at = open_view(_page(), SLUG, "Real NVP on digits")
        assert not at.exception
        assert any("not available" in e.value and "pretrain" in e.value for e in at.error)
    finally:
        shipped_flow.clear()
