"""engine/{gan,vae,diffusion}/reads.py: what the GAN, VAE and diffusion pages read from a
trainer besides its snapshot (live.controls.read_trainer). Each fn survives cloudpickle (it may run
in a worker process) and returns plain data equal to what the trainer itself computes."""
from __future__ import annotations

import functools

import cloudpickle
import numpy as np
import torch

from engine import diffusion as D
from engine.gan import reads as GM
from engine.vae import reads as VM
from engine.diffusion.reads import model_of, net_of
from engine.gan import GANTrainer, make_target
from engine.vae import VAETrainer, decode_point, latent_grid


def _roundtrip(fn):
    return cloudpickle.loads(cloudpickle.dumps(fn))


def _plain(value) -> bool:
    """No tensor and no module anywhere in a (nested) dataclass / tuple / dict."""
    if isinstance(value, (torch.Tensor, torch.nn.Module)):
        return False
    if hasattr(value, "__dataclass_fields__"):
        return all(_plain(getattr(value, f)) for f in value.__dataclass_fields__)
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    return True


def test_gan_frame_step_part_and_export_are_plain_and_match_the_trainer():
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu",
                    g_hidden=(16,), d_hidden=(16,), eval_every=5)
    tr.step(10)
    frame = _roundtrip(GM.frame_of)(tr)
    assert _plain(frame)
    steps, hists = tr.mode_history()
    np.testing.assert_array_equal(frame.mode_steps, steps)
    np.testing.assert_array_equal(frame.mode_hists, hists)
    assert frame.radius == tr.n_sigma * 0.05 and frame.centers.shape == (8, 2)
    assert frame.n_eval == len(tr.z_eval) and frame.pretrained_steps is None
    _roundtrip(functools.partial(GM.step_part, part="d"))(tr)
    assert tr.steps == 10 and len(tr.history.values["loss_d"]) > len(tr.history.values["loss_g"])
    out = _roundtrip(GM.export_of)(tr)
    np.testing.assert_array_equal(out.fake, tr.sample(GM.EXPORT_SAMPLES, seed=tr.seed + 7))
    assert GM.smoothed_modes(tr.history) == np.mean(tr.history.as_arrays("modes")[1][-5:])


def test_gan_mode_history_stays_bounded_and_a_frame_sends_at_most_mode_columns(monkeypatch):
    """A GAN left playing checks coverage ~4 times a second. Its trainer keeps at most
    MAX_CHECKS checks (the older half thinned), and a frame's GANFrame carries at most
    MODE_COLUMNS of them: block means of consecutive checks, at each block's last check."""
    from engine.gan.trainer import _Eval
    monkeypatch.setattr(_Eval, "MAX_CHECKS", 40)
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu",
                    g_hidden=(8,), d_hidden=(8,), eval_every=1)
    tr.step(100)
    steps, hists = tr.mode_history()
    assert len(steps) <= 40 and steps[-1] == 100 and hists.shape == (len(steps), 8)
    assert np.all(np.diff(steps) > 0)
    assert (steps[-20:] == np.arange(81, 101)).all()           # the newer half at full rate

    tr.evals = _Eval(list(range(1, 1001)), [[i, 0, 0, 0, 0, 0, 0, 2 * i] for i in range(1, 1001)])
    frame = _roundtrip(GM.frame_of)(tr)
    assert len(frame.mode_steps) <= GM.MODE_COLUMNS and frame.mode_steps[-1] == 1000
    b = int(frame.mode_steps[0])                               # first block: checks 1..b
    np.testing.assert_allclose(frame.mode_hists[0, [0, 7]], [(b + 1) / 2, b + 1], rtol=1e-6)
    np.testing.assert_allclose(frame.mode_hists[:, 0] * 2, frame.mode_hists[:, 7], rtol=1e-6)


def test_gan_coverage_export_is_every_kept_check_with_its_metrics():
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu",
                    g_hidden=(8,), d_hidden=(8,), eval_every=5)
    tr.step(20)
    table = _roundtrip(GM.coverage_table_of)(tr)
    steps, hists = tr.mode_history()
    np.testing.assert_array_equal(table["iteration"], steps)
    np.testing.assert_array_equal(np.stack([table[f"mode_{j}"] for j in range(8)], 1), hists)
    s, modes = tr.history.as_arrays("modes")
    at = dict(zip(s.tolist(), modes.tolist()))
    assert table["modes"].tolist() == [at[int(x)] for x in steps]
    assert {len(v) for v in table.values()} == {len(steps)}


def test_vae_frame_is_the_grid_and_point_the_model_decodes():
    tr = VAETrainer(seed=0, device="cpu")
    tr.step(50)                                  # a snapshot of the codes every 24 steps
    means = tr.snapshot().codes.means
    z = np.array([0.5, -1.0], np.float32)
    fn = _roundtrip(functools.partial(VM.frame_of, means=means, dims=(0, 1), n=5,
                                      span="quantiles", z=z))
    frame = fn(tr)
    assert _plain(frame) and frame.steps_per_epoch == tr.steps_per_epoch
    # float32 decodes: compared at float32's tolerance, not bit for bit
    np.testing.assert_allclose(frame.grid.images, latent_grid(tr.model, 5).images,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(frame.decoded, decode_point(tr.model, z), rtol=1e-5, atol=1e-6)
    fit = VM.frame_of(tr, means, (0, 1), 4, VM.FIT, z).grid          # spans ±99th pct of |μ|
    r = np.percentile(np.abs(means[:, :2]), 99)
    np.testing.assert_allclose(fit.zx, np.linspace(-r, r, 4), rtol=1e-6)          # float32
    rep = _roundtrip(VM.replay_of)(tr)
    assert _plain(rep) and len(rep.snapshots) == len(tr.snapshots) >= 2
    assert rep.snapshots[-1][1] is not tr.snapshots[-1][1]                    # a copy


def test_diffusion_net_rebuilds_the_same_eps():
    pts = D.DIFFUSION_DATA["mixture"](n=200, seed=0)
    tr = D.DiffusionTrainer(pts.points, pts.labels, D.SCHEDULES["cosine"](), hidden=32,
                            seed=0, device="cpu")
    tr.step(5)
    tr.data_id = 42
    net = _roundtrip(net_of)(tr)
    assert _plain(net) and net.steps == 5 and net.data_id == 42
    model, sched = model_of(net)
    x = torch.randn(7, 2)
    with torch.no_grad():
        assert torch.equal(model(x, 300, 1), tr.model(x, 300, 1))
    assert sched.name == "cosine" and torch.equal(sched.alpha_bars, tr.schedule.alpha_bars)
