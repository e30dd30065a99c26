import io

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

from engine import conv, weights
from engine.conv import (KERNELS, KERNEL_SUMS, STACKS, LayerSpec, build_cnn, conv_animation_frames,
                         conv_output_size, conv_parameters, convolve, effective_receptive_field,
                         input_region, layers_from_model, load_upload, receptive_field,
                         shift_equivariance)
from tests.engine.package_checks import long_files, missing_names


# ---------------------------------------------------------------- output size


def test_output_size_matches_torch_for_random_geometries():
    rng = np.random.default_rng(0)
    checked = 0
    while checked < 60:
        n, k, s, d = (int(v) for v in (rng.integers(1, 30), rng.integers(1, 6),
                                       rng.integers(1, 4), rng.integers(1, 4)))
        p = int(rng.integers(0, 4))
        if n + 2 * p < d * (k - 1) + 1:
            with pytest.raises(ValueError):
                conv_output_size(n, k, s, p, d)
            continue
        y = nn.Conv2d(1, 1, k, s, p, d)(torch.zeros(1, 1, n, n))
        assert conv_output_size(n, k, s, p, d) == y.shape[-1]
        checked += 1


def test_output_size_closed_forms_and_errors():
    assert conv_output_size(32, 3, 1, 1) == 32             # "same" padding p = (k-1)/2
    assert conv_output_size(32, 5, 1, 2) == 32
    assert conv_output_size(7, 3, 2, 1) == 4               # floor((7 + 2 - 3)/2) + 1
    assert conv_output_size(10, 3, 1, 0, 2) == 6           # d(k-1)+1 = 5 wide
    with pytest.raises(ValueError):
        conv_output_size(3, 5)
    with pytest.raises(ValueError):
        conv_output_size(8, 3, stride=0)


# ---------------------------------------------------------------- receptive field arithmetic


def test_receptive_field_closed_forms():
    assert receptive_field(STACKS["three 3x3"])[-1].size == 7 == receptive_field(STACKS["one 7x7"])[-1].size
    assert conv_parameters(STACKS["three 3x3"], 16, 16) == [9 * 256] * 3      # 27 c^2 in total
    assert sum(conv_parameters(STACKS["one 7x7"], 16, 16)) == 49 * 256
    wave = receptive_field(STACKS["dilated 1-2-4-8 (WaveNet, k=2)"])
    assert [i.size for i in wave] == [1, 2, 4, 8, 16]
    vgg = receptive_field(STACKS["VGG block"], 32)
    assert [i.size for i in vgg] == [1, 3, 5, 6, 10, 14, 16]
    assert [i.jump for i in vgg] == [1, 1, 1, 2, 2, 2, 4]
    assert [i.out_size for i in vgg] == [32, 32, 32, 16, 16, 16, 8]
    # L stride-1 k x k layers: 1 + L(k-1)
    assert receptive_field([LayerSpec("conv", 5)] * 4)[-1].size == 1 + 4 * 4


def test_layer_specs_from_dicts_and_bad_specs():
    rows = [{"kind": "conv", "kernel": 3, "stride": 2, "padding": 1, "dilation": 1},
            {"kind": "pool", "kernel": 2, "stride": 2, "padding": 0, "dilation": 1}]
    with pytest.raises(ValueError):
        receptive_field(rows)             # unknown kind
    rows[1]["kind"] = " MaxPool "         # case and spaces are forgiven
    info = receptive_field(rows)
    assert (info[-1].size, info[-1].jump) == (5, 4)
    with pytest.raises(ValueError):
        LayerSpec("conv", kernel=0)
    with pytest.raises(ValueError):
        LayerSpec("avgpool", 2, dilation=2)


def test_layers_from_model_reads_real_modules():
    model = nn.Sequential(nn.Conv2d(3, 8, 5, stride=2, padding=2), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.Sequential(nn.MaxPool2d(3, 2, 1), nn.Conv2d(8, 8, 3, dilation=2)),
                          nn.AvgPool2d(2), nn.Flatten(), nn.Linear(8, 2))
    assert layers_from_model(model) == [LayerSpec("conv", 5, 2, 2, 1, 8),
                                        LayerSpec("maxpool", 3, 2, 1, 1),
                                        LayerSpec("conv", 3, 1, 0, 2, 8),
                                        LayerSpec("avgpool", 2, 2, 0, 1)]
    assert layers_from_model(nn.Sequential(nn.Conv1d(1, 2, 7, 3))) == [LayerSpec("conv", 7, 3, 0, 1, 2)]
    with pytest.raises(ValueError):
        layers_from_model(nn.Sequential(nn.Conv2d(1, 1, 3), nn.Upsample(scale_factor=2)))
    for name, stack in STACKS.items():
        assert [(s.kind, s.kernel, s.stride, s.padding, s.dilation) for s in
                layers_from_model(build_cnn(stack))] == \
               [(s.kind, s.kernel, s.stride, s.padding, s.dilation) for s in stack], name


def _random_stack(rng, pools=("avgpool",), padded=True):
    while True:
        layers = []
        for _ in range(int(rng.integers(1, 5))):
            kind = str(rng.choice(["conv", "conv", *pools]))
            k = int(rng.integers(1, 5))
            s = int(rng.integers(1, 3))
            d = int(rng.integers(1, 3)) if kind != "avgpool" else 1
            p = int(rng.integers(0, k // 2 + 1)) if padded else 0
            layers.append(LayerSpec(kind, max(k, 2) if kind != "conv" else k, s, p, d))
        try:
            n_out = receptive_field(layers, 24)[-1].out_size
        except ValueError:
            continue
        return layers, n_out


def _gradient_support(layers, out_index, n=24, samples=1, seed=0):
    """Which input pixels get a non-zero gradient from one output of a positive-weight net."""
    torch.manual_seed(seed)
    model = build_cnn(layers, channels=1, activation=None)
    with torch.no_grad():
        for m in model:
            if isinstance(m, nn.Conv2d):
                m.weight.uniform_(0.5, 1.5)
    x = torch.rand(samples, 1, n, n, requires_grad=True)
    model(x)[:, 0, out_index[0], out_index[1]].sum().backward()
    return (x.grad.abs().sum((0, 1)) > 0).numpy()


@pytest.mark.parametrize("seed", range(12))
def test_receptive_field_box_equals_brute_force_gradient(seed):
    """Conv + avg pool (+ dilation, stride, padding), positive weights: the pixels with a
    non-zero gradient lie in the box, and their bounding box IS the (clipped) box."""
    rng = np.random.default_rng(seed)
    layers, n_out = _random_stack(rng)
    idx = (int(rng.integers(0, n_out)), int(rng.integers(0, n_out)))
    support = _gradient_support(layers, idx)
    reg = input_region(layers, idx, 24)
    rows, cols = np.nonzero(support)
    assert (rows.min(), cols.min()) == reg.clip_lo and (rows.max(), cols.max()) == reg.clip_hi
    assert reg.hi[0] - reg.lo[0] + 1 == reg.size
    assert reg.lo[0] <= reg.clip_lo[0] and reg.clip_hi[1] <= reg.hi[1]


@pytest.mark.parametrize("seed", range(6))
def test_theoretical_box_is_exact_without_padding(seed):
    """No padding anywhere: every window lies on real pixels, so the gradient support's
    bounding box is exactly centre +- (r-1)/2 with r, j, start from the recursion."""
    rng = np.random.default_rng(50 + seed)
    layers, n_out = _random_stack(rng, padded=False)
    for idx in [(0, n_out - 1), (n_out - 1, n_out // 2)]:
        rows, cols = np.nonzero(_gradient_support(layers, idx))
        reg = input_region(layers, idx, 24)
        assert (rows.min(), cols.min(), rows.max(), cols.max()) == (*reg.lo, *reg.hi)
        assert rows.max() - rows.min() + 1 == reg.size


@pytest.mark.parametrize("seed", range(6))
def test_receptive_field_with_max_pools(seed):
    """Max pooling routes the gradient to one input per window: a single sample is a subset
    of the box; the union over many random inputs fills it to the same bounding box."""
    rng = np.random.default_rng(100 + seed)
    layers, n_out = _random_stack(rng, pools=("maxpool", "avgpool"))
    idx = (n_out // 2, n_out // 2)
    reg = input_region(layers, idx, 24)
    box = np.zeros((24, 24), bool)
    box[reg.clip_lo[0]:reg.clip_hi[0] + 1, reg.clip_lo[1]:reg.clip_hi[1] + 1] = True
    one = _gradient_support(layers, idx, samples=1, seed=seed)
    assert one.any() and not (one & ~box).any()
    union = _gradient_support(layers, idx, samples=256, seed=seed)
    rows, cols = np.nonzero(union)
    assert (rows.min(), cols.min()) == reg.clip_lo and (rows.max(), cols.max()) == reg.clip_hi


def test_input_region_padding_and_bad_index():
    reg = input_region([LayerSpec("conv", 3, 1, 1)] * 3, (0, 5), 10)
    assert reg.lo == (-3, 2) and reg.hi == (3, 8)
    assert reg.clip_lo == (0, 2) and reg.pad_before == (3, 0) and reg.pad_after == (0, 0)
    with pytest.raises(ValueError):
        input_region([LayerSpec("conv", 3)], (8, 0), 10)       # output is only 8 wide


# ---------------------------------------------------------------- effective receptive field


def test_erf_is_inside_box_peaked_and_seeded(device):
    layers = STACKS["strided 6-layer"]
    model = build_cnn(layers, seed=0)
    erf = effective_receptive_field(model, (1, 40, 40), None, seed=1, n_samples=4, device=device)
    assert erf.heatmap.max() == pytest.approx(1.0)
    assert erf.fraction_in_box == pytest.approx(1.0)
    reg = erf.region
    outside = erf.heatmap.copy()
    outside[reg.clip_lo[0]:reg.clip_hi[0] + 1, reg.clip_lo[1]:reg.clip_hi[1] + 1] = 0
    assert outside.max() == 0
    assert erf.radius_2sigma < reg.size / 2                 # much smaller than the box
    again = effective_receptive_field(model, (1, 40, 40), None, seed=1, n_samples=4, device=device)
    np.testing.assert_array_equal(erf.heatmap, again.heatmap)


def test_erf_uniform_weights_is_gaussian_like():
    """Uniform 3x3 weights, no nonlinearity: the ERF is the n-fold box convolution, a
    discrete Gaussian-like bump: maximal at the centre, decreasing outwards, variance L*2/3."""
    layers = [LayerSpec("conv", 3, 1, 1)] * 6
    model = build_cnn(layers, channels=1, activation=None, init="uniform")
    erf = effective_receptive_field(model, (1, 31, 31), (15, 15), n_samples=2)
    row = erf.heatmap[15]
    assert row.argmax() == 15
    assert np.all(np.diff(row[15:22]) < 0) and row[22] == 0 and row[21] > 0
    # independent per-axis variance of a sum of 6 uniform{-1,0,1}: 6 * 2/3 = 4 -> 2 sigma = 4
    assert erf.radius_2sigma == pytest.approx(4.0, rel=1e-4)


# ---------------------------------------------------------------- convolution


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2), (3, 0, 1)])
def test_animation_products_sum_to_conv2d(stride, padding, dilation):
    rng = np.random.default_rng(stride + 10 * padding)
    img = rng.standard_normal((9, 11)).astype(np.float32)
    ker = rng.standard_normal((3, 3)).astype(np.float32)
    fr = conv_animation_frames(img, ker, stride, padding, dilation)
    ref = F.conv2d(torch.tensor(img)[None, None], torch.tensor(ker)[None, None], stride=stride,
                   padding=padding, dilation=dilation)[0, 0].numpy()
    np.testing.assert_allclose(fr.output, ref, atol=1e-5)
    np.testing.assert_allclose(fr.products, fr.windows * ker, atol=1e-6)
    # the window of output u starts at its corner and is the padded image at dilated taps
    u = len(fr.sums) - 1
    r, c = fr.corners[u]
    np.testing.assert_array_equal(fr.windows[u], fr.padded[r:r + 3 * dilation:dilation,
                                                           c:c + 3 * dilation:dilation])


@pytest.mark.parametrize("size,stride,padding,dilation", [(2, 2, 0, 1), (3, 2, 1, 1), (2, 1, 0, 1),
                                                         (2, 1, 1, 2)])
def test_pooling_frames_match_torch_pooling(size, stride, padding, dilation):
    img = np.random.default_rng(size + stride).random((8, 9)).astype(np.float32)  # >= 0
    x = torch.tensor(img)[None, None]
    fmax = conv.pool_animation_frames(img, size, stride, padding, dilation, "max")
    ref = F.max_pool2d(x, size, stride, padding, dilation)[0, 0].numpy()
    np.testing.assert_allclose(fmax.output, ref, atol=1e-6)
    assert fmax.op == "max" and fmax.products.shape[1:] == (size, size)
    if dilation == 1:                        # F.avg_pool2d has no dilation
        favg = conv.pool_animation_frames(img, size, stride, padding, dilation, "avg")
        ref = F.avg_pool2d(x, size, stride, padding)[0, 0].numpy()
        np.testing.assert_allclose(favg.output, ref, atol=1e-6)
        np.testing.assert_allclose(favg.products.sum(axis=(1, 2)), favg.sums, atol=1e-6)
    with pytest.raises(ValueError, match="unknown pooling"):
        conv.pool_animation_frames(img, 2, 2, op="min")


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 0, 1), (2, 1, 1), (1, 1, 2)])
def test_transposed_frames_match_conv_transpose2d_and_the_conv_backward(stride, padding,
                                                                        dilation):
    rng = np.random.default_rng(stride + 3 * padding + 7 * dilation)
    g = rng.standard_normal((4, 5)).astype(np.float32)
    ker = rng.standard_normal((3, 3)).astype(np.float32)
    fr = conv.transposed_animation_frames(g, ker, stride, padding, dilation)
    ref = F.conv_transpose2d(torch.tensor(g)[None, None], torch.tensor(ker)[None, None],
                             stride=stride, padding=padding, dilation=dilation)[0, 0].numpy()
    np.testing.assert_allclose(fr.output, ref, atol=1e-5)
    # ... which is the gradient of a convolution's input, the upstream gradient being g
    x = torch.zeros((1, 1, *ref.shape), requires_grad=True)
    y = F.conv2d(x, torch.tensor(ker)[None, None], stride=stride, padding=padding,
                 dilation=dilation)
    assert y.shape[-2:] == g.shape
    (dx,) = torch.autograd.grad(y, x, grad_outputs=torch.tensor(g)[None, None])
    np.testing.assert_allclose(fr.output, dx[0, 0].numpy(), atol=1e-5)
    np.testing.assert_allclose(fr.partial[0].sum(), g[0, 0] * ker.sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="crops the whole"):
        conv.transposed_animation_frames(g[:1, :1], ker[:1, :1], 1, 1)


def test_convolve_matches_conv2d_gray_and_rgb(device):
    rng = np.random.default_rng(0)
    rgb = rng.random((20, 16, 3)).astype(np.float32)
    ker = KERNELS["sobel x"]
    out = convolve(rgb, ker, stride=2, padding=1, device=device)
    for ch in range(3):
        ref = F.conv2d(torch.tensor(rgb[..., ch])[None, None], torch.tensor(ker)[None, None],
                       stride=2, padding=1)[0, 0].numpy()
        np.testing.assert_allclose(out[..., ch], ref, atol=1e-5)
    gray = convolve(rgb[..., 0], KERNELS["identity"], padding=1, device=device)
    np.testing.assert_allclose(gray, rgb[..., 0], atol=1e-6)
    with pytest.raises(ValueError):
        convolve(rgb[:2, :2, 0], np.ones((5, 5)))


def test_kernel_sums_as_documented():
    assert set(KERNELS) == set(KERNEL_SUMS)
    for name, k in KERNELS.items():
        assert k.sum() == pytest.approx(KERNEL_SUMS[name], abs=1e-6), name
    np.testing.assert_allclose(KERNELS["gaussian blur"] * 16, [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    # blur keeps a constant image constant; Sobel maps it to 0 (away from the border)
    flat = np.full((8, 8), 0.5, np.float32)
    np.testing.assert_allclose(convolve(flat, KERNELS["gaussian blur"]), 0.5, atol=1e-6)
    np.testing.assert_allclose(convolve(flat, KERNELS["sobel y"]), 0.0, atol=1e-6)


def test_parse_kernel():
    assert conv.parse_kernel([[1, 2], [3, 4]]).dtype == np.float32
    for bad in ([[1, None], [0, 0]], [1, 2, 3], [[]]):
        with pytest.raises(ValueError):
            conv.parse_kernel(bad)


# ---------------------------------------------------------------- images and uploads


def _encode(arr, fmt):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format=fmt)
    return buf.getvalue()


def test_upload_png_jpeg_and_downscale():
    rng = np.random.default_rng(0)
    big = rng.integers(0, 255, (1200, 2000, 3), dtype=np.uint8)
    img = load_upload(_encode(big, "PNG"), grayscale=True)
    assert img.shape == (307, 512) and img.dtype == np.float32 and 0 <= img.min() <= img.max() <= 1
    small = load_upload(_encode(big[:40, :60], "JPEG"), grayscale=False)
    assert small.shape == (40, 60, 3)


def test_upload_rejects_non_images_other_formats_and_large_files():
    with pytest.raises(ValueError, match="not a PNG or JPEG"):
        load_upload(b"hello, this is a text file")
    with pytest.raises(ValueError, match="only PNG and JPEG"):
        load_upload(_encode(np.zeros((8, 8, 3), np.uint8), "GIF"))
    with pytest.raises(ValueError, match="10 MB"):
        load_upload(b"\x89PNG" + bytes(11 * 2**20))
    with pytest.raises(ValueError, match="empty"):
        load_upload(b"")


def test_square_image_crops_the_centre_and_resizes():
    rng = np.random.default_rng(0)
    img = rng.random((40, 60), dtype=np.float32)
    crop = img[:, 10:50]                                        # centre 40x40 square
    np.testing.assert_array_equal(conv.square_image(img, 40), crop)
    # shrinking by 4: each output pixel is the mean of its 4x4 block
    blocks = crop.reshape(10, 4, 10, 4).mean(axis=(1, 3))
    np.testing.assert_allclose(conv.square_image(img, 10), blocks, atol=1e-6)
    # enlarging 8 -> 32: every pixel becomes a 4x4 block (nearest, no blur)
    digit = conv.load_image("digit (8x8)", max_side=8)
    np.testing.assert_array_equal(conv.square_image(digit, 32), np.kron(digit, np.ones((4, 4))))
    rgb = rng.random((30, 20, 3), dtype=np.float32)
    out = conv.square_image(rgb, 20)
    assert out.shape == (20, 20, 3)
    np.testing.assert_array_equal(out, rgb[5:25])               # tall image: rows 5..24
    with pytest.raises(ValueError):
        conv.square_image(img, 0)


def test_image_registry_shapes_and_range():
    for name in conv.IMAGES:
        g = conv.load_image(name, grayscale=True, max_side=64)
        c = conv.load_image(name, grayscale=False, max_side=64)
        assert g.ndim == 2 and c.shape == (*g.shape, 3) and max(g.shape) <= 64
        assert 0 <= g.min() and g.max() <= 1
    cb = conv.checkerboard(32, 8)
    assert cb[0, 0] == 1 and cb[0, 8] == 0 and cb.mean() == 0.5


# ---------------------------------------------------------------- digits CNN, equivariance


def test_feature_maps_shapes_and_receptive_fields():
    model = conv.digits_cnn(0)
    maps, probs = conv.feature_maps(model, np.zeros((8, 8), np.float32))
    assert [m.maps.shape for m in maps] == [(8, 8, 8), (16, 8, 8), (16, 4, 4), (16, 4, 4), (16, 2, 2)]
    assert [m.rf.size for m in maps] == [3, 5, 6, 10, 12]
    assert probs.shape == (10,) and probs.sum() == pytest.approx(1.0, abs=1e-5)


@pytest.mark.skipif(not conv.DIGITS_WEIGHTS.exists(), reason="weights not built yet")
def test_shipped_digits_cnn_is_trained():
    model = conv.load_digits_cnn()
    _, test = conv.digits_split(0.2, 0)
    assert conv.digits_accuracy(model, test.images, test.labels) > 0.93
    assert conv.DIGITS_WEIGHTS.stat().st_size < 2e6


def test_shift_equivariance_exact_and_pooling_invariance(device):
    img = conv.load_image("shapes", max_side=64)
    eq = shift_equivariance(img, KERNELS["sobel x"], (3, -5), pool=2, device=device)
    assert eq.equivariance_error < 1e-5
    # a shift by a multiple of the pool size shifts the pooled map exactly by shift/pool
    eq4 = shift_equivariance(img, KERNELS["gaussian blur"], (4, 0), pool=4, device=device)
    np.testing.assert_allclose(eq4.pooled_of_shifted, np.roll(eq4.pooled, 1, axis=0), atol=1e-6)
    # a one-pixel shift changes a 4x4 max-pooled map much less than the unpooled map
    eq1 = shift_equivariance(img, KERNELS["sobel x"], (0, 1), pool=4, device=device)
    assert eq1.change_pooled < 0.5 * eq1.change_unpooled
    none = shift_equivariance(img, KERNELS["sobel x"], (0, 0), pool=4, device=device)
    assert none.change_pooled == 0 and none.change_unpooled == 0


def test_central_mass_flat_field_equals_area_share_and_delta_is_all_inside():
    """conv.central_mass: a field flat over the box puts its area share in the central
    square; a field concentrated on the centre pixel puts everything there."""
    import dataclasses
    from engine.conv import central_mass, effective_receptive_field, input_region
    specs = STACKS["three 3x3"]
    erf = effective_receptive_field(build_cnn(specs, init="uniform", activation=None),
                                    (1, 32, 32), (15, 15), 0, 4)
    region = input_region(specs, (15, 15), 32)
    flat = np.zeros((32, 32))
    flat[region.clip_lo[0]:region.clip_hi[0] + 1, region.clip_lo[1]:region.clip_hi[1] + 1] = 1
    mass, area = central_mass(dataclasses.replace(erf, heatmap=flat))
    assert mass == pytest.approx(area) == pytest.approx(9 / 49)   # half-width 1.5: 3x3 of 7x7
    delta = np.zeros((32, 32))
    delta[15, 15] = 1
    assert central_mass(dataclasses.replace(erf, heatmap=delta))[0] == 1.0
    # the measured field (uniform weights: a binomial bump) lies in between
    assert 9 / 49 < central_mass(erf)[0] < 1


# ---------------------------------------------------------------- weights file (engine/weights.py)

def test_digits_cnn_round_trips_through_the_weights_format(tmp_path):
    model = conv.digits_cnn(3)
    path = conv.save_digits_cnn(tmp_path / "d.pt", model, seed=3)
    w = weights.load(path)
    assert w.model_config == conv.DIGITS_MODEL_CONFIG and w.meta == {"seed": 3}
    back = conv.load_digits_cnn(path)
    assert not back.training
    for k, v in model.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k


def test_load_digits_cnn_rejects_truncated_random_legacy_and_stale_files(tmp_path):
    good = conv.save_digits_cnn(tmp_path / "good.pt", conv.digits_cnn(0))
    data = good.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "random.pt").write_bytes(np.random.default_rng(2).bytes(4096))
    for name in ("truncated", "random"):
        with pytest.raises(weights.CorruptWeightsError, match="scripts.pretrain"):
            conv.load_digits_cnn(tmp_path / f"{name}.pt")
    torch.save(conv.digits_cnn(0).state_dict(), tmp_path / "legacy.pt")   # the old bare state dict
    with pytest.raises(weights.StaleWeightsError, match="older format"):
        conv.load_digits_cnn(tmp_path / "legacy.pt")
    with pytest.raises(weights.MissingWeightsError):
        conv.load_digits_cnn(tmp_path / "absent.pt")
    other = {**conv.DIGITS_MODEL_CONFIG, "classes": 11}
    weights.save(tmp_path / "stale.pt", other, conv.digits_cnn(0).state_dict())
    with pytest.raises(weights.StaleWeightsError):
        conv.load_digits_cnn(tmp_path / "stale.pt")


def test_shipped_digits_cnn_is_in_the_weights_format():
    w = weights.load(conv.DIGITS_WEIGHTS, expect_config=conv.DIGITS_MODEL_CONFIG)
    assert w.meta["test_accuracy"] > 0.93 and w.meta["seed"] == 0


# ---------------------------------------------------------------- the package split

# Every name engine/conv/ defined or re-exported before it became a package
# (engine/conv/), including the helpers pages and scripts reach through it.
OLD_NAMES = """
    ConvFrames DIGITS_LAYERS DIGITS_MODEL_CONFIG DIGITS_WEIGHTS ERF Equivariance
    FeatureMap IMAGES KERNELS KERNEL_SUMS LAYER_KINDS LayerSpec MAX_UPLOAD_BYTES
    MAX_UPLOAD_SIDE MODULE_READERS PASS_THROUGH POOLS RFInfo Region STACKS TrainReport
    UPLOAD_FORMATS as_spec build_cnn central_mass checkerboard conv_animation_frames
    conv_output_size conv_parameters convolve digits_accuracy digits_cnn
    digits_cnn_from_weights digits_split downscale effective_receptive_field
    feature_maps input_region layers_from_model load_digits load_digits_cnn load_image
    load_upload make_generator numpy_rng parse_kernel receptive_field resolve_device
    sample_photo save_digits_cnn shapes shift_equivariance specs_table square_image
    to_numpy train_digits_cnn
""".split()


def test_every_name_of_the_old_module_is_still_importable_from_engine_conv():
    assert missing_names("conv", OLD_NAMES) == []


def test_no_module_of_the_conv_package_is_over_500_lines():
    assert long_files("conv") == {}
