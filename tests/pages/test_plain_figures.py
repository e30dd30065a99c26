"""The figures that live frames redraw are built without Plotly's validation
(ui/fastfig.py). Each one, built from real engine output, must be a valid figure:
rebuilt WITH validation it gives the same JSON (a misspelt or invalid property would raise or
be dropped), its colour scales are explicit, and its numeric arrays go out as float32."""
from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from engine.gan import GANTrainer, make_target
from engine.gan.reads import frame_of
from engine.vae import VAETrainer
from topics.gan import figures as G
from topics.vae import figures as V
from ui.fastfig import colorscale, validated


def _gan_figures():
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu",
                    g_hidden=(16,), d_hidden=(16,), eval_every=5)
    tr.step(20)
    return G.live_figures(frame_of(tr), tr.snapshot(), tr.history.copy(),
                          setup="ring of 8, σ = 0.05 · G 1×16, D 1×16")


def _vae_figures():
    tr = VAETrainer(seed=0, device="cpu")
    tr.step(30)
    snap = tr.snapshot()
    means = snap.codes.means
    h = tr.history
    return {"scatter": V.latent_scatter(means[:, :2], snap.codes.labels, grid=snap.grid,
                                        picked=(0.5, -0.5)),
            "grid": V.grid_figure(snap.grid), "digit": V.digit_figure(snap.grid.images[0, 0]),
            "strip": V.strip_figure(snap.grid.images[0], "t", [str(i) for i in range(15)]),
            "curves": V.loss_curves({k: h.as_arrays(k) for k in h.values},
                                    tr.steps_per_epoch)}


def _diffusion_figures():
    from engine import diffusion as D
    from topics.diffusion import figures as F
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(300, 2))
    frames = rng.normal(size=(5, 40, 2)).astype(np.float32)
    grid = np.stack(np.meshgrid(np.linspace(-3, 3, 3), np.linspace(-3, 3, 3)), -1).reshape(-1, 2)
    table = {n: {"alpha_bar": f().alpha_bars.numpy(), "snr": f().snr().numpy()}
             for n, f in D.SCHEDULES.items()}
    return {"forward": F.forward_scatter(x0, x0 * 0.5, 250, 0.5),
            "schedules": F.schedule_curves(table, 250),
            "reverse": F.reverse_animation(frames, np.arange(5)[::-1], np.arange(3), grid,
                                           rng.normal(size=(5, 9, 2))),
            "train": F.samples_vs_data(x0[:50], x0),
            "loss": F.loss_curve(np.arange(1, 1001), rng.uniform(size=1000))}


def _flows_figures():
    from engine.flows import FlowTrainer, flow_data
    from engine.flows.reads import stages_of
    from topics.flows import figures as F
    from topics.flows.compute import BASE, coupling_of
    from topics.flows.page import STATE
    r = coupling_of(STATE.resolve({}))
    d = flow_data("moons", 200, 100)
    tr = FlowTrainer(d.train, d.held_out, layers=2, hidden=8, res=20, n_samples=50)
    tr.step(3)
    snap = tr.snapshot()
    return {"coupling": F.coupling_figure(r.lines, r.image, r.back, r.nodes, r.node_image,
                                          r.logdet, 0, BASE),
            "density": F.density_figure(snap.density.xs, snap.density.density, d.train, 4.0,
                                        snap.density.integral),
            "samples": F.samples_figure(snap.samples, snap.warped, d.train, 4.0),
            "stages": F.stages_figure(stages_of(tr).points, stages_of(tr).keeps, 4.0),
            "families": F.families_figure([("a", snap.density.xs, snap.density.density)] * 2,
                                          d.train, 4.0),
            "digits": F.digits_figure(np.linspace(0, 16, 5 * 64).reshape(5, 8, 8), 3, "t"),
            "bits": F.bits_figure({"a": 2.0, "b": 2.5}),
            "nll": F.nll_figure({"train": tr.history.as_arrays("train"),
                                 "held-out": tr.history.as_arrays("held_out")})}


@pytest.mark.parametrize("build", [_gan_figures, _vae_figures, _diffusion_figures,
                                   _flows_figures], ids=["gan", "vae", "diffusion", "flows"])
def test_plain_figures_are_valid_and_send_float32(build):
    for name, fig in build().items():
        spec = json.loads(pio.to_json(fig, validate=False))
        assert json.loads(pio.to_json(validated(fig), validate=False)) == spec, name
        for trace in spec["data"]:
            assert not isinstance(trace.get("colorscale", []), str), name   # explicit scale
            for axis in ("x", "y", "z"):
                if isinstance(trace.get(axis), dict):                     # a typed array
                    assert trace[axis]["dtype"] in ("f4", "i1", "i2", "i4", "u1"), (name, axis)


def _live_view_ids():
    from tests.e2e.live_frames import live_views
    return list(live_views())


@pytest.mark.slow
@pytest.mark.parametrize("view_id", _live_view_ids())
def test_every_live_frames_figures_are_valid(view_id):
    """Every live tab (declared by its page, ui/live_tabs.py), its frame after two Steps: each
    figure it pushes is a valid figure, rebuilt WITH validation to the same JSON."""
    from tests.e2e.live_frames import capture, live_views
    for slot, part in capture(live_views()[view_id], steps=2):
        spec = json.loads(pio.to_json(part.fig, validate=False))
        assert json.loads(pio.to_json(validated(part.fig), validate=False)) == spec, slot


def test_named_colour_scales_are_plotly_pythons():
    """plotly.js's own "RdBu" runs blue -> red; Plotly.py's (what the figures were designed
    with) runs red -> blue: the scale is sent explicitly."""
    scale = colorscale("RdBu")
    assert scale[0][0] == 0.0 and scale[-1][0] == 1.0
    assert scale[0][1] == "rgb(103,0,31)" and scale[-1][1] == "rgb(5,48,97)"


def test_decoded_grid_goes_out_as_uint8_levels_of_the_images():
    from engine.vae import tile
    from tests.apptest import plotly_array
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, (3, 3, 8, 8)).astype(np.float32)
    grid = V.LatentGrid(images, np.linspace(-1, 1, 3), np.linspace(-1, 1, 3), (0, 1), "linear")
    heat = json.loads(pio.to_json(V.grid_figure(grid), validate=False))["data"][0]
    assert heat["z"]["dtype"] == "u1" and (heat["zmin"], heat["zmax"]) == (0, V.LEVELS)
    z = plotly_array(heat["z"]) / V.LEVELS * (1 - V.GUTTER) + V.GUTTER     # back to values
    np.testing.assert_allclose(z, tile(images, V.PAD, flip_rows=True, fill=V.GUTTER),
                               atol=0.5 * (1 - V.GUTTER) / V.LEVELS + 1e-6)
