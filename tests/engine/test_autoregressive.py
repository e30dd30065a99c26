"""The autoregressive page's engine: masks against their definition, causality of the masked
and causal layers and of the whole PixelCNN (changing pixels at or after i never moves the
prediction of pixel i), receptive fields by gradient = by mask algebra = by brute-force
perturbation, the blind spot against its closed form, the digits' baseline, sampling with a
seed, and the trainer (a seed repeats a run, a saved state resumes it)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.autoregressive import (CausalConv1d, MaskedConv2d, PixelCNN, PixelCNNTrainer,
                                   bits_per_pixel, blind_spot, blind_spot_formula, causal_field,
                                   causal_field_size, field_by_gradient, field_by_offsets,
                                   field_by_perturbation, future_leak, independent_bits,
                                   kernel_mask, quantised_digits, sample)
from engine.autoregressive.reads import predictive_of, samples_of


@pytest.mark.parametrize("k", [1, 3, 5, 7])
def test_masks_keep_the_taps_before_the_centre(k):
    p = k // 2
    for kind, centre in (("A", 0), ("B", 1)):
        m = kernel_mask(k, kind).numpy()
        order = np.arange(k * k).reshape(k, k)
        centre_index = p * k + p
        np.testing.assert_array_equal(m[order < centre_index], 1)
        np.testing.assert_array_equal(m[order > centre_index], 0)
        assert m[p, p] == centre


def test_even_kernels_and_unknown_types_are_refused():
    with pytest.raises(ValueError, match="odd"):
        kernel_mask(4, "A")
    with pytest.raises(ValueError, match="unknown mask"):
        kernel_mask(3, "C")


def _raster_changes(x: torch.Tensor, i: int, include_i: bool, seed: int) -> torch.Tensor:
    """x with every pixel after raster index i (and i itself if include_i) redrawn."""
    h, w = x.shape[-2], x.shape[-1]
    order = torch.arange(h * w).view(h, w)
    later = order >= i if include_i else order > i
    noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(seed),
                        dtype=x.dtype)
    return torch.where(later, noise, x)


@pytest.mark.parametrize("kind", ["A", "B"])
def test_a_masked_layer_never_reads_the_future(kind):
    torch.manual_seed(0)
    layer = MaskedConv2d(2, 3, 5, kind).double()
    x = torch.randn(1, 2, 6, 6, dtype=torch.float64)
    for i in (0, 7, 20, 35):
        r, c = divmod(i, 6)
        changed = _raster_changes(x, i, include_i=(kind == "A"), seed=i)
        before, after = layer(x)[..., r, c], layer(changed)[..., r, c]
        torch.testing.assert_close(after, before, rtol=0, atol=1e-12)
    if kind == "B":                            # type B reads pixel i itself
        bumped = x.clone()
        bumped[..., 3, 3] += 1
        assert not torch.allclose(layer(bumped)[..., 3, 3], layer(x)[..., 3, 3])


@pytest.mark.parametrize("conditional, gated", [(False, False), (True, False), (False, True),
                                                (True, True)])
def test_the_pixelcnn_prediction_of_pixel_i_ignores_pixels_from_i_on(conditional, gated):
    torch.manual_seed(1)
    model = PixelCNN(4, hidden=8, layers=3, conditional=conditional, gated=gated)
    x = torch.randint(0, 4, (2, 8, 8))
    y = torch.tensor([3, 7]) if conditional else None
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for i in (0, 9, 31, 63):
            r, c = divmod(i, 8)
            order = torch.arange(64).view(8, 8)
            changed = torch.where(order >= i, torch.randint(0, 4, x.shape, generator=gen), x)
            torch.testing.assert_close(model(changed, y)[:, :, r, c], model(x, y)[:, :, r, c],
                                       rtol=0, atol=0)


@pytest.mark.parametrize("k, layers, row, col", [(3, 1, 5, 5), (3, 2, 5, 5), (3, 4, 6, 3),
                                                 (5, 3, 7, 7), (3, 3, 0, 4), (3, 3, 9, 9),
                                                 (7, 2, 4, 0)])
def test_the_field_by_gradient_is_the_mask_algebra_and_the_brute_force(k, layers, row, col):
    g = field_by_gradient("pixelcnn", 10, k, layers, row, col)
    np.testing.assert_array_equal(g, field_by_offsets(10, k, layers, row, col))
    np.testing.assert_array_equal(g > 0, field_by_perturbation("pixelcnn", 10, k, layers,
                                                               row, col))
    assert future_leak(g, row, col, centre=False) == 0


@pytest.mark.parametrize("k, layers", [(3, 1), (3, 2), (3, 3), (3, 5), (5, 2), (5, 3),
                                       (7, 2)])
def test_the_blind_spot_has_its_closed_form_size(k, layers):
    size = 2 * layers * (k // 2) + 3
    row = col = size // 2 + 1
    g = field_by_gradient("pixelcnn", size, k, layers, row, col)
    spot = blind_spot(g, k, layers, row, col)
    assert spot.sum() == blind_spot_formula(k, layers)
    if k == 3:
        assert spot.sum() == layers * (layers - 1) // 2
    rows, cols = np.nonzero(spot)
    assert (rows < row).all() and (cols > col).all()          # above and to the right


@pytest.mark.parametrize("k, layers", [(3, 3), (5, 2)])
def test_the_two_stack_has_no_blind_spot_and_no_future(k, layers):
    g = field_by_gradient("two-stack", 12, k, layers, 8, 6)
    assert blind_spot(g, k, layers, 8, 6).sum() == 0
    assert future_leak(g, 8, 6, centre=False) == 0 and g[8, 6] == 0
    np.testing.assert_array_equal(g > 0, field_by_perturbation("two-stack", 12, k, layers,
                                                               8, 6))


@pytest.mark.parametrize("args, words", [((10, 3, 0, 5, 5), "at least one layer"),
                                         ((10, 3, 2, 10, 5), "outside"),
                                         ((10, 3, 2, 3, -1), "outside"),
                                         ((10, 4, 2, 3, 3), "odd")])
def test_fields_it_cannot_compute_are_refused_in_words(args, words):
    with pytest.raises(ValueError, match=words):
        field_by_gradient("pixelcnn", *args)


@pytest.mark.parametrize("k, dilations", [(2, (1, 2, 4, 8)), (2, (1, 1, 1, 1)),
                                          (3, (1, 2, 4)), (2, (1, 2, 4, 8, 16))])
def test_a_causal_stack_reaches_one_plus_k_minus_1_times_the_dilations(k, dilations):
    length = 80
    field = causal_field(length, k, dilations, length - 1)
    np.testing.assert_array_equal(field[-1], np.eye(length)[length - 1])
    reached = np.flatnonzero(field[0] > 0)
    size = causal_field_size(k, dilations)
    assert len(reached) == size and reached[0] == length - size and reached[-1] == length - 1
    if dilations == (1, 2, 4, 8):
        assert size == 16 == 2 ** len(dilations)


def test_a_causal_convolution_never_reads_the_future():
    torch.manual_seed(0)
    conv = CausalConv1d(1, 1, 3, dilation=2).double()
    x = torch.randn(1, 1, 20, dtype=torch.float64)
    changed = x.clone()
    changed[..., 11:] = torch.randn(9, dtype=torch.float64)
    torch.testing.assert_close(conv(changed)[..., :11], conv(x)[..., :11], rtol=0, atol=0)


def test_the_digits_and_their_independent_baseline():
    for levels in (2, 4, 17):
        d = quantised_digits(levels)
        assert d.train.min() == 0 and d.train.max() == levels - 1
        assert len(d.train) + len(d.test) == 1797
        bits = independent_bits(d.train, d.test, levels)
        assert 0 < bits < math.log2(levels)
    raw = quantised_digits(17)
    from sklearn.datasets import load_digits
    assert sorted(map(tuple, raw.train.reshape(len(raw.train), -1)))[0] in \
        set(map(tuple, load_digits().images.reshape(1797, -1).astype(int)))
    with pytest.raises(ValueError, match="grey levels"):
        quantised_digits(1)


def test_bits_per_pixel_is_the_mean_negative_log2_likelihood():
    torch.manual_seed(0)
    model = PixelCNN(4, hidden=8, layers=1)
    x = torch.randint(0, 4, (3, 8, 8))
    with torch.no_grad():
        logp = torch.log_softmax(model(x).double(), 1)                    # (3, 4, 8, 8)
        expected = -logp.gather(1, x[:, None]).mean() / math.log(2)
        assert abs(float(bits_per_pixel(model, x)) - float(expected)) < 1e-6


def test_sampling_repeats_with_a_seed_and_temperature_0_is_greedy():
    torch.manual_seed(0)
    model = PixelCNN(4, hidden=8, layers=1)
    a, pa = sample(model, 3, 1.0, seed=5)
    b, _ = sample(model, 3, 1.0, seed=5)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    greedy, probs = sample(model, 2, 0.0, seed=1)
    torch.testing.assert_close(greedy, probs.argmax(-1), rtol=0, atol=0)
    torch.testing.assert_close(pa.sum(-1), torch.ones(3, 8, 8))
    given = torch.randint(0, 4, (3, 8, 8))
    done, _ = sample(model, 3, 1.0, seed=2, given=given, given_rows=4)
    torch.testing.assert_close(done[:, :4], given[:, :4], rtol=0, atol=0)
    with pytest.raises(ValueError, match="temperature"):
        sample(model, 1, -1.0)


def test_training_lowers_the_bits_and_repeats_with_a_seed():
    a = PixelCNNTrainer(levels=4, hidden=8, layers=2, lr=1e-2, seed=1)
    b = PixelCNNTrainer(levels=4, hidden=8, layers=2, lr=1e-2, seed=1)
    first = a.snapshot().test_bits
    a.step(15)
    b.step(15)
    assert a.snapshot().test_bits < first
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)


def test_a_saved_state_resumes_the_same_run():
    a = PixelCNNTrainer(levels=4, hidden=8, layers=1, conditional=True, seed=2)
    a.step(3)
    saved = a.state_dict()
    a.step(3)
    b = PixelCNNTrainer(levels=4, hidden=8, layers=1, conditional=True, seed=2)
    b.load_state_dict(saved)
    b.step(3)
    assert b.steps == a.steps == 6
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb)


def test_the_reads_give_samples_and_a_distribution():
    tr = PixelCNNTrainer(levels=4, hidden=8, layers=1, conditional=True, seed=0)
    s = samples_of(tr, "complete", 1.0)
    np.testing.assert_array_equal(s.images[:, :4], s.originals[:, :4])
    free = samples_of(tr, "free", 1.0)
    assert free.given_rows == 0 and list(free.labels) == list(range(10))
    p = predictive_of(tr, 3, 2, 5)
    assert p.probs.shape == (4,) and abs(float(p.probs.sum()) - 1) < 1e-6


def test_vq_picks_the_nearest_code_and_its_losses():
    from engine.autoregressive.vqvae import VectorQuantizer
    torch.manual_seed(0)
    vq = VectorQuantizer(6, 3)
    z_e = torch.randn(2, 3, 4, 4)
    z_st, codes, cb, commit = vq(z_e)
    flat = z_e.permute(0, 2, 3, 1).reshape(-1, 3)                        # (32, 3)
    brute = torch.cdist(flat, vq.codebook.weight).argmin(1)
    torch.testing.assert_close(codes.flatten(), brute, rtol=0, atol=0)
    z_q = vq.codebook.weight[brute].view(2, 4, 4, 3).permute(0, 3, 1, 2)
    torch.testing.assert_close(z_st, z_q)
    expected = ((z_e - z_q) ** 2).mean()
    torch.testing.assert_close(cb, expected)
    torch.testing.assert_close(commit, expected)


def test_vq_straight_through_gradient_is_the_identity():
    from engine.autoregressive.vqvae import VectorQuantizer
    torch.manual_seed(1)
    vq = VectorQuantizer(5, 2).double()
    z_e = torch.randn(1, 2, 3, 3, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(1, 2, 3, 3, dtype=torch.float64)
    z_st, _, cb, _ = vq(z_e)
    (z_st * upstream).sum().backward()
    torch.testing.assert_close(z_e.grad, upstream, rtol=0, atol=0)
    z_e.grad = None
    _, _, cb, _ = vq(z_e)
    cb.backward()                           # the codebook term moves the codes, not z_e
    assert z_e.grad is None or float(z_e.grad.abs().max()) == 0


def test_a_short_vq_run_reports_usage_and_bits():
    from engine.autoregressive.vqvae import code_grid_bits, train_vqvae
    r = train_vqvae(levels=4, codes=8, steps=3, batch=16, prior_steps=2, n_samples=2)
    assert r.samples.shape == (2, 8, 8) and 0 <= r.samples.min() and r.samples.max() < 4
    assert 0 < r.prior_bits
    assert r.usage.sum() == 359 * 16 and len(r.usage) == 8
    assert r.reconstructions.shape == r.originals.shape == (5, 8, 8)
    assert math.isfinite(r.recon_bits) and len(r.losses) == 3
    uniform, entropy = code_grid_bits(r.usage)
    assert uniform == 16 * 3 and 0 <= entropy <= uniform + 1e-9
