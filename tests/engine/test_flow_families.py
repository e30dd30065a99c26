"""engine/flows: planar, radial and neural-ODE flows (log-determinant against autograd's
Jacobian, the exact trace and Hutchinson's estimator), their fit on the same data, and the
digits Real NVP (masked couplings, dequantisation, temperature sampling)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine import flows
from engine.flows import digits
from engine.flows.compare import build_flow, fit_flow
from engine.flows.ode import ODEFlow, hutchinson_trace
from engine.flows.simple import PlanarLayer, RadialLayer, SimpleFlow


def _points(n=64, seed=0, scale=1.5):
    return torch.randn(n, 2, generator=torch.Generator().manual_seed(seed)) * scale


def _randomised_ode(steps=8):
    torch.manual_seed(2)
    flow = ODEFlow(hidden=16, steps=steps)
    with torch.no_grad():
        flow.field.l3.weight.normal_(0, 0.5)
        flow.field.l3.bias.normal_(0, 0.5)
    return flow


LAYERS = {
    "planar": lambda: (torch.manual_seed(0), PlanarLayer())[1],
    "planar stack": lambda: (torch.manual_seed(1), SimpleFlow("planar", 6))[1],
    "radial": lambda: (torch.manual_seed(0), RadialLayer())[1],
    "radial stack": lambda: (torch.manual_seed(1), SimpleFlow("radial", 6))[1],
}


@pytest.mark.parametrize("make", LAYERS.values(), ids=LAYERS.keys())
def test_planar_and_radial_log_det_equal_autograd(make):
    own, auto = flows.logdet_vs_autograd(make(), _points())
    assert np.allclose(own, auto, atol=1e-5)


def test_planar_layer_stays_invertible_whatever_u():
    layer = PlanarLayer()
    with torch.no_grad():
        layer.w.copy_(torch.tensor([1.0, 0.0]))
        layer.u.copy_(torch.tensor([-5.0, 0.0]))       # w . u = -5 would fold the plane
    assert float((layer.u_hat() @ layer.w).detach()) >= -1
    _, ld = layer(_points())
    assert torch.isfinite(ld).all()


def test_ode_exact_trace_is_the_jacobians_trace():
    field = _randomised_ode().field
    z = _points(32)
    _, tr = field.with_trace(z, 0.3)
    jac = field.jacobian(z, 0.3)
    assert torch.allclose(tr, jac.diagonal(dim1=1, dim2=2).sum(1), atol=1e-5)
    single = torch.autograd.functional.jacobian(lambda v: field(v[None], 0.3)[0], z[0])
    assert float(tr[0]) == pytest.approx(float(torch.trace(single)), abs=1e-5)


def test_hutchinson_estimator_is_unbiased_for_the_exact_trace():
    field = _randomised_ode().field
    z = _points(8)
    _, exact = field.with_trace(z, 0.5)
    gen = torch.Generator().manual_seed(0)
    one = hutchinson_trace(field, z, 0.5, gen, probes=1)
    many = hutchinson_trace(field, z, 0.5, gen, probes=4000)
    jac = field.jacobian(z, 0.5)
    off = (jac[:, 0, 1] + jac[:, 1, 0]).abs()           # eps1 eps2 (J12 + J21): the noise
    assert torch.all((one - exact).abs() <= off + 1e-5)
    assert torch.allclose(many, exact.detach(), atol=0.05 * float(off.max()) + 1e-4)


def test_ode_log_det_matches_the_discrete_maps_jacobian_and_inverts():
    flow = _randomised_ode(steps=16)
    x = _points(32, scale=1.0)
    own, auto = flows.logdet_vs_autograd(flow, x)
    assert np.abs(own - auto).max() < 1e-3              # RK4's error on the trace integral
    assert flows.inverse_error(flow, x) < 1e-3
    assert torch.allclose(ODEFlow(8, 4)(x)[0], x)       # g starts at zero: the identity


def test_families_fit_the_same_data_and_report_their_cost():
    d = flows.flow_data("moons", 300, 100)
    for family, layers in (("planar", 4), ("radial", 4), ("coupling", 2), ("ode", 0)):
        r = fit_flow(family, layers, d.train, d.held_out, steps=3, hidden=8, res=20,
                     ode_steps=2)
        assert r.params == sum(p.numel() for p in build_flow(family, layers, 8, 2).parameters())
        assert r.seconds_per_step > 0 and np.isfinite(r.held_nll) and len(r.curve) == 3
    with pytest.raises(ValueError, match="unknown flow family"):
        build_flow("glow", 2)


def _random_digits_flow():
    torch.manual_seed(0)
    model = digits.DigitsRealNVP(layers=4, hidden=16)
    with torch.no_grad():
        for layer in model.layers:
            layer.net[-1].weight.normal_(0, 0.05)
    return model


def test_digits_coupling_log_det_equals_autograd_and_inverts():
    model = _random_digits_flow()
    x = torch.randn(3, digits.PIXELS, generator=torch.Generator().manual_seed(0))
    z, ld = model(x)
    for i in range(3):
        jac = torch.autograd.functional.jacobian(lambda v: model(v[None])[0][0], x[i])
        assert float(ld[i]) == pytest.approx(float(torch.linalg.slogdet(jac.double())[1]),
                                             abs=1e-4)
    assert torch.allclose(model.inverse(z)[0], x, atol=1e-5)


def test_dequantised_log_prob_of_the_identity_flow_is_closed_form():
    v = torch.tensor(digits.digit_levels()[1][:5])
    u = torch.full(v.shape, 0.5)
    x, ld_pre = digits.to_logit(v, u)
    y = ((v + 0.5) / 17).double()
    p = digits.ALPHA + (1 - 2 * digits.ALPHA) * y
    expected = (-0.5 * torch.log(p / (1 - p)) ** 2 - 0.5 * math.log(2 * math.pi)
                + math.log(1 - 2 * digits.ALPHA) - torch.log(p * (1 - p))
                - math.log(17)).sum(1)
    identity = digits.DigitsRealNVP(layers=2, hidden=8)
    got = digits.log_prob_levels(identity, v, u)
    assert torch.allclose(got.double(), expected, atol=1e-3)
    assert torch.allclose(digits.to_grey(x), (v + 0.5) / 17 * 16, atol=1e-4)


def test_temperature_zero_gives_one_image_and_higher_more_spread():
    model = _random_digits_flow()
    flat = digits.sample_digits(model, 6, 0.0)
    assert np.allclose(flat, flat[0]) and digits.sample_stats(flat).spread < 1e-5
    low, high = (digits.sample_stats(digits.sample_digits(model, 64, t)) for t in (0.5, 1.0))
    assert low.spread < high.spread
    with pytest.raises(ValueError, match="temperature"):
        digits.sample_digits(model, 2, -1.0)


def test_digits_training_lowers_the_bits_per_pixel(monkeypatch):
    monkeypatch.setattr(digits, "MODEL_CONFIG", {"layers": 2, "hidden": 16})
    _, start = digits.train_digits_flow(0)
    _, after = digits.train_digits_flow(15, lr=3e-3)
    assert after["test_bits"] < start["test_bits"]
