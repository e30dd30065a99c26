"""The VAE scatter's grid is one unbroken lattice path (one SVG node, not one per
decode position) whose crossings are exactly the grid's decode positions."""
from __future__ import annotations

import numpy as np
import pytest

from topics.vae.figures import lattice


def _segments(x, y):
    return list(zip(zip(x[:-1], y[:-1]), zip(x[1:], y[1:])))


@pytest.mark.parametrize("n, m", [(15, 15), (4, 3), (3, 4), (2, 2), (5, 6)])
def test_lattice_is_one_path_over_every_grid_line_and_nothing_else(n, m):
    xs = np.sort(np.random.default_rng(n).normal(size=n)).astype(np.float32)
    ys = np.sort(np.random.default_rng(m).normal(size=m)).astype(np.float32)
    x, y = lattice(xs, ys)
    assert np.isfinite(x).all() and np.isfinite(y).all()          # no gap: one SVG path
    assert len(x) == len(y) == 2 * (n + m)
    rows, cols = set(), set()
    for (x0, y0), (x1, y1) in _segments(x, y):
        if y0 == y1 and x0 != x1:                 # horizontal: along a grid row, inside
            assert y0 in ys and min(x0, x1) >= xs[0] and max(x0, x1) <= xs[-1]
            if {x0, x1} == {xs[0], xs[-1]}:
                rows.add(float(y0))
        elif x0 == x1 and y0 != y1:               # vertical: along a grid column, inside
            assert x0 in xs and min(y0, y1) >= ys[0] and max(y0, y1) <= ys[-1]
            if {y0, y1} == {ys[0], ys[-1]}:
                cols.add(float(x0))
        else:
            assert x0 == x1 and y0 == y1          # a repeated point (no diagonal, ever)
    assert rows == {float(v) for v in ys} and cols == {float(v) for v in xs}   # every line


def test_the_scatter_draws_the_grid_as_one_line_trace():
    from engine.vae import LatentGrid
    from topics.vae.figures import latent_scatter
    z = np.linspace(-1.5, 1.5, 15)
    grid = LatentGrid(np.zeros((15, 15, 8, 8), np.float32), z, z, (0, 1), "quantiles")
    fig = latent_scatter(np.zeros((10, 2)), np.arange(10), grid=grid)
    traces = [t for t in fig.data if t.name == "grid"]
    assert len(traces) == 1 and traces[0].mode == "lines"
    assert np.isfinite(np.asarray(traces[0].x, float)).all()


def test_collapsed_codes_stay_visible_over_the_decoded_marker():
    """β = 8 puts every code at 0, where the decoded point's star sits: the star used to be
    drawn last, filled, and hid every dot. It is an open star drawn under the dots now."""
    from topics.vae.figures import latent_scatter
    fig = latent_scatter(np.zeros((20, 2)), np.arange(20) % 10, picked=(0.0, 0.0))
    names = [t.name for t in fig.data]
    star = names.index("decoded")
    assert star < min(names.index(str(c)) for c in range(10))
    assert fig.data[star].marker.symbol == "star-open"
