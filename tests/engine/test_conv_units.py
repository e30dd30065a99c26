"""engine/conv/units.py: the window and kernel behind a unit of the shipped digits CNN give
back the unit's value in engine.conv.feature_maps (every layer, corner and inner units)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.conv import feature_maps, load_digits_cnn
from engine.conv.units import unit_computation
from engine.datasets import digits_split

TOL = 1e-5      # float32 sums of up to 16·3·3 products


def test_every_layers_units_are_recomputed_from_their_window():
    model = load_digits_cnn()
    image = digits_split()[0].images[3]
    maps, _ = feature_maps(model, image)
    for layer, fm in enumerate(maps):
        c, h, w = fm.maps.shape
        for ch, r, q in {(0, 0, 0), (c - 1, h - 1, w - 1), (c // 2, h // 2, w // 3)}:
            u = unit_computation(model, image, layer, ch, r, q)
            assert u.value == pytest.approx(float(fm.maps[ch, r, q]), abs=TOL)
            expected = max(u.pre, 0.0) if u.relu else u.pre
            assert u.value == pytest.approx(expected, abs=TOL), (layer, ch, r, q)
            if u.kind == "conv":
                assert u.kernel is not None and u.kernel.shape == u.window.shape
            else:
                assert u.window.shape[0] == 1 and u.pre == pytest.approx(u.window.max())
    first = unit_computation(model, image, 0, 0, 0, 0)        # a corner of conv1 (padding 1)
    assert first.origin == (-1, -1)
    np.testing.assert_array_equal(first.window[0, 0], 0.0)     # the padded row is zeros
    np.testing.assert_allclose(first.window[0, 1:, 1:], image[:2, :2], rtol=0, atol=0)
    with pytest.raises(IndexError):
        unit_computation(model, image, len(maps), 0, 0, 0)
