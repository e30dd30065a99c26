"""engine/gan/manifold.py: the latent grid, its prior weights, the mode of each mapped node,
the shares per mode, the Jacobian's sign (folds), and manifold_of on a GAN whose G is a map
with known shares (no training)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from engine.gan import GANTrainer, make_target
from engine.gan.manifold import (fold_share, jacobian_det, largest_share, latent_grid,
                                 manifold_of, mode_assignment, mode_shares, modes_reached)

EPS = np.finfo(np.float64).eps


def test_latent_grid_is_the_plane_of_the_first_two_latents_laid_out_like_an_image():
    g = latent_grid(4, res=5, extent=2.0)
    assert g.z.shape == (5, 5, 4) and g.weights.shape == (5, 5)
    np.testing.assert_allclose(g.u, [-2, -1, 0, 1, 2])
    assert tuple(g.z[1, 3]) == (1.0, -1.0, 0.0, 0.0)       # row i: z₂ = u_i; column j: z₁ = u_j
    assert g.weights.sum() == pytest.approx(1.0, abs=10 * EPS)
    # the N(0, I) prior: the centre node outweighs a corner by exp(−½(2² + 2²)) = e⁻⁴
    assert g.weights[2, 2] / g.weights[0, 0] == pytest.approx(math.exp(4), rel=1e-12)
    np.testing.assert_allclose(g.weights, g.weights.T, rtol=0, atol=EPS)


def test_a_one_dimensional_latent_is_one_line():
    g = latent_grid(1, res=7)
    assert g.z.shape == (1, 7, 1) and g.weights.shape == (1, 7)
    assert g.weights.sum() == pytest.approx(1.0, abs=10 * EPS)
    with pytest.raises(ValueError):
        latent_grid(0)


def test_mode_assignment_and_shares():
    centers = np.array([[0.0, 0.0], [3.0, 0.0]])
    pts = np.array([[[0.1, 0.0], [2.9, 0.1]], [[1.5, 0.0], [np.nan, 0.0]]])   # (2, 2, 2)
    a = mode_assignment(pts, centers, radius=0.5)
    np.testing.assert_array_equal(a, [[0, 1], [-1, -1]])
    np.testing.assert_array_equal(mode_assignment(pts, centers), [[0, 1], [0, -1]])  # cells
    w = np.array([[0.4, 0.3], [0.2, 0.1]])
    np.testing.assert_allclose(mode_shares(a, w, 2), [0.4, 0.3], rtol=0, atol=EPS)


def test_jacobian_of_a_linear_map_is_its_determinant_and_it_never_folds():
    g = latent_grid(2, res=9)
    A = np.array([[2.0, 1.0], [0.5, 3.0]])
    mapped = g.z @ A.T                                            # x = A z
    det = jacobian_det(mapped, g.u)
    np.testing.assert_allclose(det, np.linalg.det(A), rtol=1e-12)
    assert fold_share(det, g.weights) == 0.0
    assert fold_share(jacobian_det(mapped[..., ::-1], g.u), g.weights) == 0.0  # a mirror


def test_a_map_folded_along_z1_turns_half_the_plane_over():
    g = latent_grid(2, res=40)                       # even: no node on the fold line z₁ = 0
    mapped = np.stack([np.abs(g.z[..., 0]), g.z[..., 1]], -1)     # x = (|z₁|, z₂)
    assert fold_share(jacobian_det(mapped, g.u), g.weights) == pytest.approx(0.5, abs=1e-12)


class _Halves(nn.Module):
    """z₁ < 0 -> mode 0's centre, z₁ > 0 -> mode 4's (the ring's opposite mode)."""

    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = torch.as_tensor(a), torch.as_tensor(b)

    def forward(self, z):
        left = (z[:, :1] < 0).to(z.dtype)                              # (n, 1)
        return left * self.a.to(z.dtype) + (1 - left) * self.b.to(z.dtype)


def _gan(latent_dim=2):
    return GANTrainer(make_target("ring of 8", 0.05, 0), g_hidden=(8,), d_hidden=(8,),
                      latent_dim=latent_dim, eval_n=50)


def test_manifold_of_a_generator_that_splits_the_plane_between_two_modes():
    t = _gan()
    c = t.target.centers
    t.G = _Halves(c[0], c[4])
    m = manifold_of(t, res=40, arrow_every=5)
    expected = np.zeros(8)
    expected[[0, 4]] = 0.5
    np.testing.assert_allclose(m.shares, expected, rtol=0, atol=1e-12)
    assert largest_share(m) == pytest.approx(0.5) and modes_reached(m) == 2
    assert m.on_mode == pytest.approx(1.0, abs=1e-12) and m.near.all()
    assert m.mapped.shape == (40, 40, 2) and m.assign.shape == (40, 40)
    assert m.arrows.shape == m.arrows_at.shape == (64, 2)
    np.testing.assert_allclose(m.arrows, t.fake_gradients(m.arrows_at.astype(np.float32)),
                               rtol=1e-6)


def test_manifold_of_a_collapsed_generator_sends_the_whole_grid_to_one_mode():
    t = _gan(latent_dim=3)
    c = t.target.centers
    t.G = _Halves(c[2], c[2])
    m = manifold_of(t, res=11)
    assert largest_share(m) == pytest.approx(1.0, abs=1e-12) and modes_reached(m) == 1
    assert m.latent_dim == 3 and math.isnan(m.fold)   # a constant map has det 0: no sign


def test_manifold_of_a_trained_step_is_finite():
    t = _gan(latent_dim=1)
    t.step(2)
    m = manifold_of(t)
    assert m.mapped.shape == (1, 41, 2) and np.isfinite(m.mapped).all()
    assert math.isnan(m.fold) and 0.0 <= m.on_mode <= 1.0
    assert m.shares.sum() == pytest.approx(1.0, abs=1e-12)     # every node is in some cell
