"""The shared init registry and MLP builder (engine/nets.py): variances and bounds from the
formulas, orthogonality, determinism, and the region page's schemes drawn through it."""
import math

import numpy as np
import pytest
import torch
from torch import nn

from engine import nets
from engine import regions as R
from engine.device import make_generator

FAN_IN, FAN_OUT = 300, 200


def _draw(name, gain=1.0, fan_in=FAN_IN, fan_out=FAN_OUT, seed=0):
    return nets.init_weight(name, fan_in, fan_out, make_generator(seed), gain)


@pytest.mark.parametrize("name,variance", [
    ("normal", 1.0 / FAN_IN),
    ("xavier_normal", 2.0 / (FAN_IN + FAN_OUT)),
    ("xavier_uniform", 2.0 / (FAN_IN + FAN_OUT)),
    ("kaiming_normal", 2.0 / FAN_IN),
    ("kaiming_uniform", 2.0 / FAN_IN),
    ("orthogonal", 1.0 / max(FAN_IN, FAN_OUT)),
])
def test_entry_variance_matches_the_formula(name, variance):
    w = _draw(name, gain=1.5)
    assert w.shape == (FAN_OUT, FAN_IN) and w.dtype == torch.float32
    # 60,000 entries: the sample variance has a relative standard error of ~0.6%
    assert float(w.var()) == pytest.approx(1.5 ** 2 * variance, rel=0.03)
    assert abs(float(w.mean())) < 4 * 1.5 * math.sqrt(variance / w.numel())
    assert nets.INITS[name].std(FAN_IN, FAN_OUT) == pytest.approx(math.sqrt(variance))


def test_xavier_uniform_bound_is_sqrt6_over_sqrt_fan_sum():
    w = _draw("xavier_uniform")
    bound = math.sqrt(6.0) / math.sqrt(FAN_IN + FAN_OUT)
    assert float(w.abs().max()) <= bound
    assert float(w.abs().max()) > 0.99 * bound          # the support reaches the bound
    hist = np.histogram(w.numpy(), bins=10, range=(-bound, bound))[0]
    assert hist.min() > 0.9 * hist.mean()                 # flat, not bell-shaped


def test_kaiming_uniform_bound():
    w = _draw("kaiming_uniform")
    bound = math.sqrt(6.0 / FAN_IN)
    assert bound * 0.99 < float(w.abs().max()) <= bound


@pytest.mark.parametrize("fan_in,fan_out", [(50, 50), (80, 30), (30, 80)])
def test_orthogonal_has_orthonormal_rows_or_columns(fan_in, fan_out):
    w = _draw("orthogonal", gain=2.0, fan_in=fan_in, fan_out=fan_out).double() / 2.0
    gram = w @ w.T if fan_out <= fan_in else w.T @ w
    np.testing.assert_allclose(gram.numpy(), np.eye(min(fan_in, fan_out)), atol=1e-6)


def test_zeros_and_unknown_name():
    assert float(_draw("zeros").abs().max()) == 0.0
    with pytest.raises(KeyError, match="unknown init"):
        _draw("glorot")


def test_same_seed_same_weights_other_seed_different():
    for name in nets.INITS:
        if name == "zeros":
            continue
        assert torch.equal(_draw(name, seed=3), _draw(name, seed=3))
        assert not torch.equal(_draw(name, seed=3), _draw(name, seed=4))


def test_mlp_structure_and_init():
    model = nets.mlp((64, 32, 32, 10), "tanh", "kaiming_normal", gain=1.0, norm="batchnorm",
                     bias_std=0.0, seed=1)
    kinds = [type(m) for m in model]
    assert kinds == [nn.Linear, nn.BatchNorm1d, nn.Tanh, nn.Linear, nn.BatchNorm1d, nn.Tanh,
                     nn.Linear]
    assert model(torch.zeros(5, 64)).shape == (5, 10)
    first = model[0]
    assert float(first.bias.detach().abs().max()) == 0.0
    g = make_generator(1)
    assert torch.equal(first.weight, nets.init_weight("kaiming_normal", 64, 32, g))
    with pytest.raises(KeyError, match="activation"):
        nets.mlp((2, 3, 1), activation="swishy")
    with pytest.raises(ValueError):
        nets.mlp((2,))


def test_regions_schemes_are_drawn_through_the_registry():
    """The region page's kaiming/xavier/lecun are nets.INITS entries: same weights, same seed."""
    for name, shared in R.INITS.items():
        model = R.make_mlp((7, 5), seed=2, init=name, init_scale=1.3)
        g = make_generator(2)
        w1 = nets.INITS[shared](2, 7, g, 1.3)
        assert torch.equal(model[0].weight, w1)
    assert R.INITS == {"kaiming": "kaiming_normal", "xavier": "xavier_normal",
                       "lecun": "normal"}
