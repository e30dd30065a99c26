"""engine/series.py: bounded logs and block means."""
from __future__ import annotations

import numpy as np

from engine.series import block_means, thin_older_half


def test_thin_older_half_keeps_the_newer_half_and_every_second_older_entry():
    a, b = list(range(10)), [str(i) for i in range(10)]
    thin_older_half(a, b)
    assert a == [0, 2, 4, 5, 6, 7, 8, 9]
    assert b == [str(i) for i in a]


def test_block_means_of_a_curve_and_of_rows():
    steps = np.arange(1, 11)
    s, v = block_means(steps, steps * 1.0, n=5)
    assert s.tolist() == [2, 4, 6, 8, 10] and v.tolist() == [1.5, 3.5, 5.5, 7.5, 9.5]
    rows = np.stack([steps, -steps], 1)
    s, r = block_means(steps, rows, n=4)                       # b = 3: blocks 3, 3, 3, 1
    assert s.tolist() == [3, 6, 9, 10]
    np.testing.assert_allclose(r, [[2, -2], [5, -5], [8, -8], [10, -10]])
    short = np.arange(3)
    assert block_means(short, short, n=5)[0] is short
