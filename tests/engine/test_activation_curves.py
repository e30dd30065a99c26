"""engine/signal/activations.py: φ′ by autograd agrees with the closed forms."""
import numpy as np

from engine.signal.activations import ACTIVATIONS, activation_curves


def test_autograd_slopes_match_closed_forms():
    z, c = activation_curves(["sigmoid", "tanh", "relu", "leaky_relu", "swish"], 4.0, 201)
    sig = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(c["sigmoid"][1], sig * (1 - sig), atol=1e-12)
    np.testing.assert_allclose(c["tanh"][1], 1 - np.tanh(z) ** 2, atol=1e-12)
    assert np.all(c["relu"][1][z > 0] == 1) and np.all(c["relu"][1][z < 0] == 0)
    np.testing.assert_allclose(c["leaky_relu"][1][z < 0], 0.1, atol=1e-12)
    np.testing.assert_allclose(c["swish"][1], sig + z * sig * (1 - sig), atol=1e-12)


def test_every_activation_has_a_finite_curve():
    z, c = activation_curves(list(ACTIVATIONS), 10.0, 101)
    assert len(z) == 101 and set(c) == set(ACTIVATIONS)
    assert all(np.isfinite(p).all() and np.isfinite(d).all() for p, d in c.values())
