"""topic_pages/gan.py under AppTest: defaults, every preset, live stepping, Step D/G, a bad upload,
the Dirac-GAN and parallel-lines tabs."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from engine.gan import PRETRAINED, SCENARIOS
from tests.apptest import metric, open_page



def _page() -> AppTest:
    return open_page("topic_pages/gan.py")




def _trainer(at: AppTest):
    return at.session_state["gan__trainer"]


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_defaults_show_the_ring_and_all_tabs():
    at = _page()
    assert at.title[0].value == "GAN mode collapse"
    assert metric(at, "Modes covered").endswith("/ 8")
    assert metric(at, "JSD at this θ") == "0.6931" and metric(at, "W₁ at this θ") == "1.0000"
    # Dirac tab defaults: simultaneous minimax spirals out, R1 γ = 1 converges
    assert float(metric(at, "Distance to (0, 0) after 300 it. (γ = 0)")) > 1.414
    assert float(metric(at, "Distance to (0, 0) after 300 it. (R1")) < 1e-3
    assert not at.error


def test_first_paint_is_the_labelled_pretrained_gan_and_reset_trains_from_scratch():
    at = _page()
    t = _trainer(at)
    spec = PRETRAINED["default"]
    assert t.pretrained is not None and t.steps == spec.steps
    covered = int(metric(at, "Modes covered").split(" / ")[0])
    assert covered >= 7 and covered == t.coverage().modes_covered
    assert any("Pretrained snapshot" in i.value and "Reset" in i.value for i in at.info)
    config = json.loads(at.session_state["gan__config"])
    for key, value in spec.kwargs.items():          # the page's defaults are the snapshot's
        assert config[key] == (list(value) if isinstance(value, tuple) else value), key
    rings = [tr for fig in _charts(at) for tr in fig["data"]
             if tr.get("name", "").startswith("covered mode")]
    assert len(rings) == 1 and rings[0]["x"].count(None) == covered   # one circle per mode
    at.button(key="gan__play").click().run()        # Play continues the snapshot live
    assert _trainer(at).steps > spec.steps
    assert any("Continued from a" in i.value for i in at.info)
    at.button(key="gan__reset").click().run()       # Reset: a fresh GAN, no label
    t = _trainer(at)
    assert t.steps == 0 and t.pretrained is None and not at.exception
    assert not any("pretrained snapshot" in i.value.lower() for i in at.info)
    assert metric(at, "Modes covered") == f"{t.coverage().modes_covered} / 8"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_preset_builds_its_scenario(name):
    at = _page()
    at.selectbox(key="gan_preset").select(name).run()
    assert not at.exception and not at.error
    config = json.loads(at.session_state["gan__config"])
    sc = SCENARIOS[name]
    for key, value in sc.kwargs.items():
        assert config[key] == (list(value) if isinstance(value, tuple) else value), key
    assert config["target"] == sc.target and config["std"] == sc.std
    assert config["seed"] == sc.seed
    assert any(sc.claim[:40] in i.value for i in at.info)
    t = _trainer(at)
    cov = t.coverage()
    expected = "n/a" if cov is None else f"{cov.modes_covered} / {cov.n_modes}"
    assert metric(at, "Modes covered") == expected and t.steps == 0


def test_step_trains_and_target_change_rebuilds():
    at = _page()
    at.slider(key="gan__spf").set_value(3).run()
    loss_before, steps_before = metric(at, "L_D / L_G"), _trainer(at).steps
    at.button(key="gan__step").click().run()
    assert not at.exception
    assert _trainer(at).steps == steps_before + 3
    assert metric(at, "L_D / L_G") != loss_before
    at.selectbox(key="gan_target").select("5x5 grid").run()
    assert _trainer(at).steps == 0 and metric(at, "Modes covered").endswith("/ 25")


def test_step_d_and_step_g_update_one_side():
    at = _page()
    at.button(key="gan__reset").click().run()
    t = _trainer(at)
    at.button(key="gan_step_d").click().run()
    assert t.steps == 0 and len(t.history.values["loss_d"]) == 1 and "loss_g" not in t.history.values
    at.button(key="gan_step_g").click().run()
    assert len(t.history.values["loss_g"]) == 1
    assert not at.exception


def test_malformed_points_get_a_clear_error():
    at = _page()
    at.selectbox(key="gan_target").select("your points (CSV)").run()
    at.text_area(key="gan_points").input("x,y\nfoo,bar\n1,2\n").run()
    assert not at.exception
    assert any("Could not use these points" in e.value for e in at.error)
    assert metric(at, "Modes covered").endswith("/ 8")       # falls back to the ring
    good = "\n".join(f"{i / 10},{(i % 3) / 5}" for i in range(30))
    at.text_area(key="gan_points").input(good).run()
    assert not at.error and metric(at, "Modes covered") == "n/a"
    assert len(_trainer(at).target.points) == 30 and not at.exception


def test_dirac_and_wasserstein_controls_change_the_numbers():
    at = _page()
    at.select_slider(key="gan_dirac_gamma").set_value(0.0).run()
    assert not any(m.label.startswith("Distance to (0, 0) after 300 it. (R1") for m in at.metric)
    at.checkbox(key="gan_dirac_sim").uncheck().run()
    d = float(metric(at, "Distance to (0, 0) after 300 it. (γ = 0)"))
    assert 1.2 < d < 1.414   # alternating updates circle: close to the start distance √2
    at.slider(key="gan_theta").set_value(0.0).run()
    assert metric(at, "JSD at this θ") == "0.0000" and metric(at, "W₁ at this θ") == "0.0000"
    assert not at.exception


def test_long_curves_are_drawn_as_block_means():
    """A long live run keeps its curves figure small: at most MAX_CURVE_POINTS points, each
    the mean of a block of consecutive values at the block's last step."""
    import numpy as np
    from viz.gan_figures import MAX_CURVE_POINTS, _thin
    steps, values = np.arange(1, 1001), np.arange(1000.0)
    s, v = _thin(steps, values)
    assert len(s) <= MAX_CURVE_POINTS and s[-1] == 1000
    b = s[0]                                           # block length: first block ends at b
    np.testing.assert_allclose(v[:3], [(b - 1) / 2, b + (b - 1) / 2, 2 * b + (b - 1) / 2])
    short = np.arange(5)
    assert _thin(short, short * 1.0)[0] is short
