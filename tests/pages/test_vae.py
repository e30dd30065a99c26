"""The VAE page through AppTest (page skeleton): defaults, every preset and tour step in order,
every view, training, widgets that must change what is shown, the ELBO view, the AE-vs-PCA
view, the replay, and bad input."""
import json
import re
from unittest import mock

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from engine.vae import VAETrainer
from tests.apptest import (live_components, chart_figure, choose_preset, click_chart, metric, open_page,
                           open_view, plotly_array, rerun_fragment, show_step)
from topics.vae.compute import replay_extent

REPLAY = "vae_replay_player"      # the replay's fragment key
SLUG = "vae"
VIEWS = ["Latent space", "Brush the codes", "Replay & interpolation", "Why the ELBO", "Autoencoder vs PCA"]


def _page(view: str | None = None, **query) -> AppTest:
    at = open_page("topics/vae/page.py", query)
    return open_view(at, SLUG, view) if view else at


def _chart_spec(at: AppTest, key: str) -> str:
    return next(c.proto.spec for c in at.get("plotly_chart") if c.proto.id.endswith(key))


def _decoded(at: AppTest) -> tuple[str, str]:
    """(caption, url) of the image of the digit decoded at the sliders' z."""
    img = next(i for e in at.get("image") for i in e.proto.imgs
               if i.caption.startswith("Decoded at z"))
    return img.caption, img.url



def _gap_line(at):
    return next(m.value for m in at.markdown if m.value.startswith("log p(x) ="))


def _numbers(text):
    return [float(v) for v in re.findall(r"-?\d+\.\d+", text)]


def _brush_view_links_its_charts_to_the_trainers_codes(at: AppTest) -> None:
    """The brushing tab: one Vega-Lite chart whose scatter declares the interval selection
    "brush" and whose other views filter by it (client-side linking: no on_select, so a
    brush move reruns nothing), drawn from the live trainer's test codes."""
    import json

    from topics.vae.compute import brush_data_of
    open_view(at, SLUG, "Brush the codes")
    (chart,) = at.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    assert spec["params"][0]["name"] == "brush"
    assert spec["params"][0]["select"]["type"] == "interval"
    linked = [v for row in spec["vconcat"] for v in row["hconcat"]
              if {"filter": {"param": "brush"}} in v.get("transform", [])]
    assert len(linked) == 3                    # the label bars, the digits, the decoded means
    assert not chart.proto.selection_mode     # no server-side selection: no rerun per brush
    data = brush_data_of(at.session_state["vae_live__trainer"])
    assert f"iteration {data.steps:,}" in json.dumps(spec)
    assert spec["config"]["axis"]["labelFontSize"] == 12     # the light theme's tick size


def test_defaults_show_the_shipped_model_and_all_views():
    at = _page()
    assert [t.label for t in at.tabs] == VIEWS
    # the shipped VAE: trained 120 epochs, test ELBO far above an untrained net's
    assert float(metric(at, "Epoch")) > 100
    assert float(metric(at, "Test ELBO (nats)")) > -35
    assert float(metric(at, "‖∂recon/∂encoder‖")) > 0
    # the scatter's title carries the test KL the tour's words point to (first screen)
    assert f"test KL {metric(at, 'Test KL (nats)')} nats" in _chart_spec(at, "vae_scatter")
    assert not at.error and not at.warning
    _brush_view_links_its_charts_to_the_trainers_codes(at)
    open_view(at, SLUG, "Replay & interpolation")
    # the replay slider holds the shipped model's training snapshots
    snap = at.slider(key="vae_snap")
    assert snap.max >= 50 and snap.value == snap.max
    last = _chart_spec(at, "vae_replay")
    assert "Latent means at epoch 120" in last
    snap.set_value(0).run()
    first = _chart_spec(at, "vae_replay")
    assert "Latent means at epoch 2.1" in first and first != last
    open_view(at, SLUG, "Autoencoder vs PCA")
    assert "PCA (top direction): MSE" in _chart_spec(at, "vae_manifold")
    assert "nonlinear autoencoder" not in _chart_spec(at, "vae_manifold")
    assert not at.error and not at.warning


def test_autoencoder_grid_follows_its_codes_and_shows_no_elbo():
    """The autoencoder's codes spread to |z| ~ 12; its grid spans them (not the
    N(0,1) quantiles' ±1.64), and it shows no KL/ELBO (it has none)."""
    at = _page(vae_model="autoencoder")
    grid = chart_figure(at, "vae_gridfig")
    ticks = [float(t) for t in grid["layout"]["xaxis"]["ticktext"]]
    tr = at.session_state["vae_live__trainer"]
    means = tr.snapshot().codes.means
    r = np.percentile(np.abs(means[:, :2]), 99)
    assert min(ticks) == pytest.approx(-r, abs=0.01) and max(ticks) == pytest.approx(r, abs=0.01)
    assert r > 8
    labels = [m.label for m in at.metric]
    assert "Test ELBO (nats)" not in labels and "Test KL (nats)" not in labels
    assert "Test recon (nats)" in labels
    assert any("no ELBO" in c.value for c in at.caption)
    assert at.slider(key="vae_z1").max >= 10          # decode anywhere the codes are
    at.selectbox(key="vae_model").select("VAE").run()
    grid = chart_figure(at, "vae_gridfig")
    assert max(float(t) for t in grid["layout"]["xaxis"]["ticktext"]) == pytest.approx(1.64,
                                                                                       abs=0.01)
    assert "Test ELBO (nats)" in [m.label for m in at.metric]


def test_every_preset_then_every_step_then_every_view():
    at = _page()
    names = list(at.selectbox(key="vae__preset").options)
    assert len(names) >= 8
    seen = set()
    for name in names:
        choose_preset(at, SLUG, name)
        assert not at.error, (name, [e.value for e in at.error])
        assert at.info, name      # the preset's explanation is shown: widgets match it
        seen.add((at.session_state["vae_view"], at.session_state["vae_model"],
                  at.session_state["vae_beta"], at.session_state["vae_dim"],
                  at.session_state["vae_reparam"], at.session_state["vae_start"]))
    assert len(seen) == len(names)   # each preset is a different configuration
    from topics.vae.page import STEPS
    for i, step in enumerate(STEPS):
        show_step(at, SLUG, i)
        assert not at.error, (step.title, [e.value for e in at.error])
        assert at.session_state["vae_view"] in VIEWS
    for view in VIEWS:
        open_view(at, SLUG, view)
        assert not at.error, view


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
    caption, url = _decoded(at)
    at.slider(key="vae_z1").set_value(2.0).run()
    assert _decoded(at)[0] == "Decoded at z = (2.00, 0.00)" and _decoded(at)[1] != url
    assert not at.exception


def test_higher_latent_dim_and_bad_dims_warn():
    at = _page(vae_dim="8", vae_start="from scratch")
    assert at.selectbox(key="vae_dim").value == 8
    at.selectbox(key="vae_dy").select(0).run()
    assert not at.exception
    assert any("two different latent dimensions" in w.value for w in at.warning)
    assert any("per latent dim: z1" in c.value and "z8" in c.value for c in at.caption)


def test_elbo_view_gap_equals_kl_and_fit_q_shrinks_it():
    at = _page("Why the ELBO", vae_x="0.0", vae_qm="1.5", vae_qs="0.5")
    lp, elbo, gap, kl = _numbers(_gap_line(at))[:4]
    assert elbo <= lp and abs(gap - (lp - elbo)) < 2e-4
    assert abs(gap - kl) < 2e-4
    at.button(key="vae_fitq").click().run()           # from m = 1.5: lands at 0, not 1.72
    assert not at.exception
    assert at.slider(key="vae_qm").value == pytest.approx(0.0, abs=0.01)
    assert "Posterior modes at z = -1.72, 0.00, 1.72" in _gap_line(at)
    assert 0.1 < _numbers(_gap_line(at))[2] < gap
    at.slider(key="vae_qs").set_value(1.5).run()
    gap_before = _numbers(_gap_line(at))[2]
    at.button(key="vae_fitq").click().run()
    assert _numbers(_gap_line(at))[2] < gap_before
    assert at.slider(key="vae_qs").value != 1.5


def test_bad_query_values_fall_back_to_defaults():
    at = _page(vae_beta="banana", vae_dim="7", vae_gridn="999", vae_lik="nope", classroom="1")
    assert at.select_slider(key="vae_beta").value == 1.0
    assert at.selectbox(key="vae_dim").value == 2
    assert at.slider(key="vae_gridn").value == 20                  # 999: clamped to the maximum
    assert any("vae_gridn=999 is not valid; using 20" in w.value.replace("\\", "")
               for w in at.warning)
    assert at.selectbox(key="vae_lik").value == "bernoulli"
    assert not at.error


def test_autoencoder_vs_pca_view_trains_and_the_nonlinear_one_wins():
    at = _page("Autoencoder vs PCA", vae_mfit="true")
    spec = _chart_spec(at, "vae_manifold")
    mse = {name: float(v) for name, v in re.findall(r'"name":"([a-zA-Z ()]+): MSE ([0-9.]+)"', spec)}
    assert set(mse) == {"PCA (top direction)", "linear autoencoder", "nonlinear autoencoder"}
    assert abs(mse["linear autoencoder"] - mse["PCA (top direction)"]) < 0.02 * mse["PCA (top direction)"]
    assert mse["nonlinear autoencoder"] < 0.5 * mse["PCA (top direction)"]


def test_click_on_the_latent_scatter_moves_the_decode_sliders():
    """The scatter and the z sliders are drawn inside the live-training fragment: a click
    must move the sliders (rounded, clipped to the codes' range, ±4 for the VAE) and decode
    at the clicked point."""
    at = _page()
    click_chart(at, "vae_scatter", {"x": 1.234, "y": -5.0, "curve_number": 0,
                                    "point_number": 0, "point_index": 0})
    assert not at.exception
    assert at.slider(key="vae_z1").value == 1.23 and at.slider(key="vae_z2").value == -4.0
    assert _decoded(at)[0] == "Decoded at z = (1.23, -4.00)"


# ---------------------------------------------------------------- replay of the snapshots

def _tick(at: AppTest, stale=None) -> AppTest:
    """One run_every tick of the replay's fragment; `stale`: a widget state the browser still
    sends with it (the slider's value from before Play)."""
    return rerun_fragment(at, REPLAY, extra_states=[stale] if stale is not None else ())


def _replay_figure(at: AppTest) -> tuple[np.ndarray, np.ndarray, tuple, tuple, str]:
    """(points (n, 2), digit of each point, x range, y range, title) of the replay scatter."""
    fig = chart_figure(at, "vae_replay")
    traces = [t for t in fig["data"] if t.get("name", "").isdigit()]
    pts = np.concatenate([np.stack([plotly_array(t["x"]), plotly_array(t["y"])], 1) for t in traces])
    digits = np.concatenate([np.full(len(plotly_array(t["x"])), int(t["name"])) for t in traces])
    lay = fig["layout"]
    return (pts, digits, tuple(lay["xaxis"]["range"]), tuple(lay["yaxis"]["range"]),
            lay["title"]["text"])


def _assert_shows(at: AppTest, k: int, r: float) -> None:
    """The replay shows snapshot k: its points are the trainer's stored means (per digit, in
    test order), its axes are the fixed +-r, the caption names it."""
    tr = at.session_state["vae_live__trainer"]
    step, means = tr.snapshots[k]
    labels = tr.data.y_test
    pts, digits, xr, yr, title = _replay_figure(at)
    order = np.concatenate([np.flatnonzero(labels == d) for d in range(10)])
    np.testing.assert_array_equal(digits, labels[order])
    np.testing.assert_allclose(pts, means[order][:, :2], rtol=0, atol=1e-6)
    assert xr == pytest.approx((-r, r)) and yr == pytest.approx((-r, r))
    assert f"epoch {step / tr.steps_per_epoch:.1f}" in title
    assert any(c.value.startswith(f"Snapshot {k + 1} of {len(tr.snapshots)}: iteration {step:,}")
               for c in at.caption)


def test_replay_plays_the_snapshots_pauses_and_stops_at_the_last():
    at = _page("Replay & interpolation", vae_snap_speed="8")
    tr = at.session_state["vae_live__trainer"]
    n = len(tr.snapshots)
    last = n - 1
    r = replay_extent([m[:, :2] for _, m in tr.snapshots])
    # the shipped model's 57 snapshots spread from ~0 to ~3: one range that holds them all
    assert n >= 50 and 3.5 < r < 6
    assert at.slider(key="vae_snap").value == last
    _assert_shows(at, last, r)
    stale = at.slider(key="vae_snap")._widget_state
    with mock.patch.object(st, "fragment", wraps=st.fragment) as frag:
        at.button(key="vae_snap_play").click().run()          # Play at the last starts over
    (kw,) = [c.kwargs for c in frag.call_args_list if c.kwargs.get("key") == REPLAY]
    assert kw["run_every"] == pytest.approx(1 / 8)
    assert at.button(key="vae_snap_play").label == "Pause"
    assert at.session_state["vae_snap_at"] == 0                # the Play run itself does not move
    assert "vae_snap" not in [s.key for s in at.slider]       # a progress bar while playing
    _assert_shows(at, 0, r)
    with mock.patch.object(VAETrainer, "snapshot", autospec=True,      # called by full runs
                           side_effect=VAETrainer.snapshot) as full_runs:   # only
        for k in (1, 2, 3):
            _tick(at, stale if k == 1 else None)   # the browser's first tick: slider at the end
            assert at.session_state["vae_snap_at"] == k
            _assert_shows(at, k, r)
            assert abs(at.progress[0].value - 100 * k / last) < 1    # (percent)
        assert full_runs.call_count == 0                       # a tick reruns only the replay
        assert any("delivering" in c.value for c in at.caption)  # the rate actually shown
    assert at.session_state["vae_live__trainer"] is tr and tr.steps == 1348   # no training
    at.run()                                # a full rerun while playing is a tick too (and
    assert at.session_state["vae_snap_at"] == 4   # brings back the elements outside the fragment)
    with mock.patch.object(st, "fragment", wraps=st.fragment) as frag:
        at.button(key="vae_snap_play").click().run()          # Pause
    (kw,) = [c.kwargs for c in frag.call_args_list if c.kwargs.get("key") == REPLAY]
    assert kw["run_every"] is None                             # no more ticks
    assert at.button(key="vae_snap_play").label == "Play" and at.slider(key="vae_snap").value == 4
    _tick(at)
    _tick(at)
    assert at.session_state["vae_snap_at"] == 4                # paused: nothing moves
    _assert_shows(at, 4, r)
    at.run()
    # from near the end: the ticks reach the last snapshot and play stops by itself
    at.slider(key="vae_snap").set_value(last - 2).run()
    at.button(key="vae_snap_play").click().run()
    assert at.session_state["vae_snap_at"] == last - 2
    _tick(at)
    assert at.session_state["vae_snap_at"] == last - 1 and at.session_state["vae_snap_playing"]
    _tick(at)                           # the last one: stop, and one full run shows Play again
    assert at.session_state["vae_snap_at"] == last
    assert at.session_state["vae_snap_playing"] is False
    assert at.button(key="vae_snap_play").label == "Play"
    assert at.slider(key="vae_snap").value == last
    _assert_shows(at, last, r)
    _tick(at)
    assert at.session_state["vae_snap_at"] == last             # stopped: a tick does not move
    assert not at.exception and not at.error


def test_replay_axes_hold_every_snapshot_of_an_autoencoder():
    """An autoencoder's codes drift far from 0 while it trains: the replay's one range still
    holds 99 % of every snapshot, so nothing leaves the frame while it plays."""
    at = _page(vae_model="autoencoder", vae_start="from scratch")
    at.button(key="vae_live__step").click().run()
    at.button(key="vae_live__step").click().run()
    open_view(at, SLUG, "Replay & interpolation")
    tr = at.session_state["vae_live__trainer"]
    frames = [m[:, :2] for _, m in tr.snapshots]
    assert len(frames) == 5
    r = replay_extent(frames)
    for f in frames:
        assert np.mean(np.abs(f).max(1) <= r) >= 0.99
    per_frame = [1.08 * max(3.5, float(np.percentile(np.abs(f), 99))) for f in frames]
    assert r == pytest.approx(max(per_frame), rel=1e-6)
    assert per_frame[0] < 0.7 * r         # a per-frame range would have zoomed out as it played
    at.slider(key="vae_snap").set_value(0).run()
    at.button(key="vae_snap_play").click().run()
    _assert_shows(at, 0, r)
    for k in range(1, 5):
        _tick(at)
        _assert_shows(at, k, r)
    assert at.button(key="vae_snap_play").label == "Play"     # stopped at the last
    assert not at.exception


def test_export_is_built_only_when_asked_for():
    at = _page()
    assert not at.get("download_button")
    at.button(key="vae_export").click().run()
    assert len(at.get("download_button")) == 3 and not at.exception       # CSV, JSON, PNG


def test_a_playing_frame_draws_the_scatter_on_the_canvas_and_pause_makes_it_clickable():
    """Playing: the latent scatter (the page's heaviest chart: 359 markers were ~10,000 DOM
    mutations per frame as Plotly SVG) is canvas-drawn with "Press Pause to click" under its
    title, no Plotly chart and no st.metric remain in the live frame (the metric row is one
    element). Paused: the clickable Plotly scatter and the metrics are back."""
    at = _page()
    at.session_state["vae_live__playing"] = True
    at.run()
    assert not at.exception
    canvases = {c.proto.id.rsplit("live-canvas-", 1)[-1]: json.loads(c.proto.json)["spec"]
                for c in live_components(at)}
    assert set(canvases) == {"vae_scatter", "vae_gridfig", "vae_curves"}
    scatter = canvases["vae_scatter"]
    assert scatter["layout"]["title"]["subtitle"]["text"] == "Press Pause to click on this chart"
    assert "star-open" in [t.get("marker", {}).get("symbol") for t in scatter["data"]]
    assert not at.get("plotly_chart") and not at.metric
    row = [h.proto.body for h in at.get("html") if "dlplay-metrics" in h.proto.body]
    assert len(row) == 1 and "Test ELBO (nats)" in row[0] and "Epoch" in row[0]
    at.session_state["vae_live__playing"] = False
    at.run()
    assert not live_components(at)
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("vae_scatter"))
    assert list(chart.proto.selection_mode)                   # clickable again
    assert float(metric(at, "Epoch")) > 100


def test_the_elbo_preset_text_stays_when_its_own_fit_q_is_pressed():
    """The preset asks for Fit q; pressing it changed q's sliders and the card vanished
    ("controls changed"). Its claims keep reading the start the text names."""
    from topics.vae.tour import PRESETS
    name = "ELBO: Fit q finds a local optimum"
    at = choose_preset(_page(), "vae", name)
    at.button(key="vae_fitq").click().run()
    assert not at.exception
    assert any(name in i.value for i in at.info)
    text = "\n".join(m.value for m in at.markdown)
    assert "Controls changed" not in "\n".join(c.value for c in at.caption)
    for c in PRESETS[name].claims:
        assert f"{c.what}: **" in text and "✓" in text, (c.what, text)


def test_kl_text_matches_the_first_epochs_spike():
    """The text said 'KL stays near 0 for the first ~10 epochs' while the curve spikes in
    epochs 1-2; the claims now measure the spike (slow: it trains) and the text names it."""
    from topics.vae.tour import PRESETS, STEPS
    text = PRESETS["Train a VAE from scratch"].description
    assert "stays near 0" not in text and "spike" in text and "spike" in STEPS[1].body
    assert any("largest test KL in the first 10 epochs" in c.what
               for c in PRESETS["Train a VAE from scratch"].claims)
    assert "80 snapshots" not in STEPS[2].body
