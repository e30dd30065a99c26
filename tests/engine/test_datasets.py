import numpy as np
import pytest

from engine.datasets import (DATASETS, SAMPLE_PHOTOS, digits_split, load_digits, make_dataset,
                             ring, grid, sample_photo)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_shapes_types_and_seeding(name):
    a = make_dataset(name, 300, seed=1)
    b = make_dataset(name, 300, seed=1)
    c = make_dataset(name, 300, seed=2)
    assert a.points.shape == (300, 2) and a.points.dtype == np.float32
    assert a.labels.shape == (300,) and a.labels.dtype == np.int64
    assert np.array_equal(a.points, b.points) and np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.points, c.points)
    assert np.isfinite(a.points).all()
    assert np.abs(a.points).max() < 4.0  # every generator lives in a box of about [-3, 3]^2


def test_ring_geometry():
    d = ring(n=4000, seed=0, noise=0.02, k=8, radius=2.0)
    assert d.centers.shape == (8, 2) and d.std == 0.02
    np.testing.assert_allclose(np.linalg.norm(d.centers, axis=1), 2.0, rtol=1e-6)
    # every sample sits within 5 std of its own centre; the modes are equally likely
    dist = np.linalg.norm(d.points - d.centers[d.labels], axis=1)
    assert dist.max() < 5 * 0.02 * 2
    counts = np.bincount(d.labels, minlength=8)
    assert counts.min() > 4000 / 8 * 0.8
    # the empirical std of each coordinate equals the component std
    np.testing.assert_allclose((d.points - d.centers[d.labels]).std(0), 0.02, rtol=0.1)


def test_grid_is_centred_lattice():
    d = grid(n=100, seed=0, k=5, spacing=1.0)
    assert d.centers.shape == (25, 2)
    np.testing.assert_allclose(d.centers.mean(0), 0.0, atol=1e-6)
    assert sorted(set(np.round(d.centers[:, 0], 6))) == [-2.0, -1.0, 0.0, 1.0, 2.0]


def test_circles_radii():
    d = make_dataset("circles", 2000, seed=0, noise=0.0, factor=0.5)
    r = np.linalg.norm(d.points, axis=1)
    np.testing.assert_allclose(r[d.labels == 0], 1.0, atol=1e-5)
    np.testing.assert_allclose(r[d.labels == 1], 0.5, atol=1e-5)


def test_moons_noise_free_on_half_circles():
    d = make_dataset("two_moons", 1000, seed=3, noise=0.0)
    upper = d.points[d.labels == 0]
    np.testing.assert_allclose(np.linalg.norm(upper, axis=1), 1.0, atol=1e-5)
    assert (upper[:, 1] >= -1e-6).all()


def test_unknown_name_and_bad_n():
    with pytest.raises(KeyError, match="unknown dataset"):
        make_dataset("banana", 10)
    with pytest.raises(ValueError):
        make_dataset("ring", 0)


def test_digits_bundled_and_scaled():
    d = load_digits()
    assert d.images.shape == (1797, 8, 8)
    assert d.images.min() == 0.0 and d.images.max() == 1.0
    assert np.array_equal(np.unique(d.labels), np.arange(10))
    train, test = digits_split(0.2, seed=0)
    assert len(train.labels) + len(test.labels) == 1797 and len(test.labels) == 359
    train2, _ = digits_split(0.2, seed=0)
    assert np.array_equal(train.labels, train2.labels)


@pytest.mark.parametrize("name", SAMPLE_PHOTOS)
def test_sample_photos(name):
    rgb = sample_photo(name)
    gray = sample_photo(name, grayscale=True)
    assert rgb.shape == (427, 640, 3) and gray.shape == (427, 640)
    assert 0.0 <= rgb.min() and rgb.max() <= 1.0
    np.testing.assert_allclose(gray, rgb @ np.array([0.299, 0.587, 0.114]), atol=1e-5)
    with pytest.raises(KeyError):
        sample_photo("moon")
