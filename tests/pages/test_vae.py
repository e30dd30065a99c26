"""The VAE page through AppTest: defaults, every preset, training, widgets that must change
what is shown, the ELBO tab, the AE-vs-PCA tab, and bad input."""
import re

from streamlit.testing.v1 import AppTest
from tests.apptest import click_chart, metric, open_page



def _page(**query) -> AppTest:
    return open_page("topic_pages/vae.py", query)




def _gap_line(at):
    return next(m.value for m in at.markdown if m.value.startswith("log p(x) ="))


def _numbers(text):
    return [float(v) for v in re.findall(r"-?\d+\.\d+", text)]


def test_defaults_show_the_shipped_model_and_all_tabs():
    at = _page()
    assert [t.label for t in at.tabs] == ["Latent space", "Why the ELBO", "Autoencoder vs PCA"]
    # the shipped VAE: trained 120 epochs, test ELBO far above an untrained net's
    assert float(metric(at, "Epoch")) > 100
    assert float(metric(at, "Test ELBO (nats)")) > -35
    assert float(metric(at, "‖∂recon/∂encoder‖")) > 0
    # the replay slider holds the shipped model's training snapshots
    snap = at.slider(key="vae_snap")
    assert snap.max >= 50 and snap.value == snap.max
    last = next(c.proto.spec for c in at.get("plotly_chart") if "Latent means at epoch 120" in c.proto.spec)
    snap.set_value(0).run()
    first = next(c.proto.spec for c in at.get("plotly_chart") if "Latent means at epoch 2.1" in c.proto.spec)
    assert first != last
    assert "PCA (top direction): MSE" in at.get("plotly_chart")[-1].proto.spec
    assert "nonlinear autoencoder" not in at.get("plotly_chart")[-1].proto.spec
    assert not at.error and not at.warning


def test_every_preset_runs_and_sets_its_widgets():
    at = _page()
    names = list(at.selectbox(key="vae_preset").options)
    assert len(names) >= 6
    seen = set()
    for name in names:
        at.selectbox(key="vae_preset").select(name).run()
        assert not at.exception, (name, at.exception)
        assert not at.error, (name, [e.value for e in at.error])
        assert at.info, name      # the preset's explanation is shown: widgets match it
        seen.add((at.selectbox(key="vae_model").value, at.select_slider(key="vae_beta").value,
                  at.selectbox(key="vae_dim").value, at.toggle(key="vae_reparam").value,
                  at.selectbox(key="vae_start").value))
    assert len(seen) == len(names)   # each preset is a different configuration


def test_step_trains_and_widgets_change_the_view():
    at = _page(vae_start="from scratch")
    assert float(metric(at, "Epoch")) == 0.0
    elbo0 = float(metric(at, "Test ELBO (nats)"))
    at.button(key="vae_live__step").click().run()
    assert not at.exception
    assert float(metric(at, "Epoch")) > 4          # 60 minibatches of 128 digits
    assert float(metric(at, "Test ELBO (nats)")) > elbo0 + 5
    # a new beta is a new run: back to epoch 0
    at.select_slider(key="vae_beta").set_value(4.0).run()
    assert float(metric(at, "Epoch")) == 0.0
    # reparameterization off: the encoder gets no reconstruction gradient
    at.toggle(key="vae_reparam").set_value(False).run()
    at.button(key="vae_live__step").click().run()
    assert float(metric(at, "‖∂recon/∂encoder‖")) == 0.0
    # the Gaussian likelihood trains too (its -log density is on another scale)
    at.toggle(key="vae_reparam").set_value(True).run()
    at.selectbox(key="vae_lik").select("gaussian").run()
    assert float(metric(at, "Epoch")) == 0.0
    at.button(key="vae_live__step").click().run()
    assert not at.exception and float(metric(at, "Epoch")) > 4


def test_grid_and_decode_controls_change_the_figures():
    at = _page()
    before = [c.proto.spec for c in at.get("plotly_chart")]
    at.slider(key="vae_gridn").set_value(6).run()
    after = [c.proto.spec for c in at.get("plotly_chart")]
    assert before[1] != after[1]      # the decoded grid
    at.slider(key="vae_z1").set_value(2.0).run()
    assert "z = (2.00, 0.00)" in at.get("plotly_chart")[2].proto.spec
    assert not at.exception


def test_higher_latent_dim_and_bad_dims_warn():
    at = _page(vae_dim="8", vae_start="from scratch")
    assert at.selectbox(key="vae_dim").value == 8
    at.selectbox(key="vae_dy").select(0).run()
    assert not at.exception
    assert any("two different latent dimensions" in w.value for w in at.warning)
    assert any("per latent dim: z1" in c.value and "z8" in c.value for c in at.caption)


def test_elbo_tab_gap_equals_kl_and_fit_q_shrinks_it():
    at = _page(vae_x="0.0", vae_qm="1.5", vae_qs="0.5")
    lp, elbo, gap, kl = _numbers(_gap_line(at))
    assert elbo <= lp and gap == round(lp - elbo, 4) or abs(gap - (lp - elbo)) < 2e-4
    assert abs(gap - kl) < 2e-4
    at.slider(key="vae_qs").set_value(1.5).run()
    assert _numbers(_gap_line(at))[2] != gap
    gap_before = _numbers(_gap_line(at))[2]
    at.button(key="vae_fitq").click().run()
    assert not at.exception
    assert _numbers(_gap_line(at))[2] < gap_before
    assert at.slider(key="vae_qs").value != 1.5


def test_bad_query_values_fall_back_to_defaults():
    at = _page(vae_beta="banana", vae_dim="7", vae_gridn="999", vae_lik="nope", classroom="1")
    assert at.select_slider(key="vae_beta").value == 1.0
    assert at.selectbox(key="vae_dim").value == 2
    assert at.slider(key="vae_gridn").value == 15
    assert at.selectbox(key="vae_lik").value == "bernoulli"
    assert not at.error


def test_autoencoder_vs_pca_tab_trains_and_the_nonlinear_one_wins():
    at = _page(vae_mfit="true")
    spec = at.get("plotly_chart")[-1].proto.spec
    mse = {name: float(v) for name, v in re.findall(r'"name":"([a-zA-Z ()]+): MSE ([0-9.]+)"', spec)}
    assert set(mse) == {"PCA (top direction)", "linear autoencoder", "nonlinear autoencoder"}
    assert abs(mse["linear autoencoder"] - mse["PCA (top direction)"]) < 0.02 * mse["PCA (top direction)"]
    assert mse["nonlinear autoencoder"] < 0.5 * mse["PCA (top direction)"]


def test_click_on_the_latent_scatter_moves_the_decode_sliders():
    """The scatter is drawn inside the live-training fragment, the z sliders outside it: a
    click must redraw the sliders (rounded, clipped to ±4) and decode at the clicked point."""
    at = _page()
    click_chart(at, "vae_scatter", {"x": 1.234, "y": -5.0, "curve_number": 0, "point_number": 0,
                                    "point_index": 0}, in_fragment=True)
    assert not at.exception
    assert at.slider(key="vae_z1").value == 1.23 and at.slider(key="vae_z2").value == -4.0
    assert "z = (1.23, -4.00)" in at.get("plotly_chart")[2].proto.spec
