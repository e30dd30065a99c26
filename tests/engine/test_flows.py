"""engine/flows: each layer's log-determinant against autograd's Jacobian, the inverse, the
Gaussian base's closed form, the density's integral, the data sets and seeded training."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine import flows
from engine.flows.reads import build_trainer


def _points(n=64, seed=0, scale=1.5):
    return torch.randn(n, 2, generator=torch.Generator().manual_seed(seed)) * scale


def _randomised(layer):
    """A coupling layer whose zero-initialised last layer is given random weights."""
    torch.manual_seed(1)
    with torch.no_grad():
        layer.net[-1].weight.normal_(0, 0.5)
        layer.net[-1].bias.normal_(0, 0.5)
    return layer


LAYERS = {
    "net keep 0": lambda: _randomised(flows.AffineCoupling(0, hidden=16)),
    "net keep 1": lambda: _randomised(flows.AffineCoupling(1, hidden=16)),
    "slider keep 0": lambda: flows.SliderCoupling(0, a=0.3, b=0.9, c=0.7, w=2.0),
    "slider keep 1 clamped": lambda: flows.SliderCoupling(1, a=5.0, b=4.0, c=-1.0),
}


@pytest.mark.parametrize("make", LAYERS.values(), ids=LAYERS.keys())
def test_log_det_equals_autograd_jacobian(make):
    layer = make()
    x = _points()
    own, auto = flows.logdet_vs_autograd(layer, x)
    assert np.allclose(own, auto, atol=1e-5)
    # and with torch.autograd.functional.jacobian on single points
    for xi in x[:5]:
        jac = torch.autograd.functional.jacobian(lambda v: layer(v[None])[0][0], xi)
        _, ld = layer(xi[None])
        assert float(ld.detach()) == pytest.approx(float(torch.linalg.slogdet(jac)[1]), abs=1e-5)


@pytest.mark.parametrize("make", LAYERS.values(), ids=LAYERS.keys())
def test_inverse_of_forward_is_the_identity(make):
    layer = make()
    x = _points()
    y, ld = layer(x)
    back, ld_inv = layer.inverse(y)
    assert torch.allclose(back, x, atol=1e-5)
    assert torch.allclose(ld + ld_inv, torch.zeros_like(ld), atol=1e-6)


def test_log_scale_is_bounded_and_finite():
    layer = flows.SliderCoupling(0, a=1e3, b=1e3)
    y, ld = layer(_points(scale=10))
    assert torch.isfinite(y).all() and (ld.abs() <= flows.S_MAX).all()
    with pytest.raises(ValueError, match="not a finite number"):
        flows.SliderCoupling(0, a=math.inf)


def test_stack_log_det_and_inverse():
    torch.manual_seed(0)
    flow = flows.RealNVP(layers=4, hidden=16)
    for layer in flow.layers:
        _randomised(layer)
    x = _points()
    own, auto = flows.logdet_vs_autograd(flow, x)
    assert np.allclose(own, auto, atol=1e-4)
    assert flows.inverse_error(flow, x) < 1e-5
    assert [l.keep for l in flow.layers] == [0, 1, 0, 1]


def test_identity_flow_log_likelihood_is_the_gaussians():
    flow = flows.RealNVP(layers=3, hidden=8)       # zero-initialised: the identity
    x = _points()
    expected = (-0.5 * (x.double() ** 2).sum(1) - math.log(2 * math.pi)).float()
    assert torch.allclose(flow.log_prob(x), expected, atol=1e-6)
    assert flows.RealNVP(layers=0).log_prob(x).allclose(expected, atol=1e-6)
    from scipy.stats import multivariate_normal
    ref = multivariate_normal(np.zeros(2), np.eye(2)).logpdf(x.numpy())
    assert np.allclose(flow.log_prob(x).detach().numpy(), ref, atol=1e-5)


def test_density_integrates_to_one():
    torch.manual_seed(0)
    flow = flows.RealNVP(layers=4, hidden=16)
    for layer in flow.layers:
        _randomised(layer)
    grid = flows.density_grid(flow, 20.0, 800)      # random layers spread the mass wide
    assert grid.integral == pytest.approx(1.0, abs=0.002)
    assert grid.density.shape == (800, 800)


@pytest.mark.parametrize("name", list(flows.GENERATORS))
def test_data_sets_are_seeded_and_standardised(name):
    a, b = flows.flow_data(name, 300, 100, seed=3), flows.flow_data(name, 300, 100, seed=3)
    assert np.array_equal(a.train, b.train) and a.held_out.shape == (100, 2)
    both = np.concatenate([a.train, a.held_out])
    assert np.allclose(both.mean(0), 0, atol=1e-5) and both.std() == pytest.approx(1, abs=1e-4)
    with pytest.raises(ValueError, match="unknown data set"):
        flows.flow_data("banana")


def test_seeded_training_is_reproducible_and_lowers_the_nll():
    runs = []
    for _ in range(2):
        tr = build_trainer("moons", 2, 16, 5e-3, 7, "cpu")
        start = tr.nlls()["train"]
        tr.step(40)
        runs.append((tr.history.last("train"), tr.snapshot().samples))
    assert runs[0][0] == runs[1][0] and np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][0] < start


def test_state_dict_round_trip():
    tr = build_trainer("rings", 2, 8, 2e-3, 0, "cpu")
    tr.step(5)
    state = tr.state_dict()
    tr.step(5)
    after = tr.history.last("train")
    other = build_trainer("rings", 2, 8, 2e-3, 0, "cpu")
    other.load_state_dict(state)
    other.step(5)
    assert other.history.last("train") == after


def test_stages_end_at_the_flows_z():
    from engine.flows.reads import STAGE_POINTS, stages_of
    tr = build_trainer("moons", 3, 8, 5e-3, 0, "cpu")
    tr.step(5)
    st = stages_of(tr)
    assert st.points.shape == (4, STAGE_POINTS, 2) and st.keeps == (0, 1, 0)
    z, _ = tr.model(tr.x[:STAGE_POINTS])
    assert np.allclose(st.points[-1], z.detach().numpy())
    assert np.array_equal(st.points[0], tr.x[:STAGE_POINTS].numpy())
