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


# ---- user points (one validator for the GAN and diffusion pages) ----------------------------

def _rows(pairs) -> str:
    return "\n".join(",".join(str(v) for v in p) for p in pairs)


def test_parse_points_csv_reads_numbers_with_or_without_header_and_separators():
    from engine.datasets import parse_points_csv
    pts = [(i / 4, -2.5 * i) for i in range(12)]
    plain = parse_points_csv(_rows(pts))
    assert plain.points.dtype == np.float32 and plain.labels.tolist() == [0] * 12
    np.testing.assert_array_equal(plain.points, np.array(pts, np.float32))
    for text in ("x1,x2\n" + _rows(pts),                          # header row
                 "\ufeffx;y\n" + _rows(pts).replace(",", ";"),     # BOM, semicolons
                 _rows(pts).replace(",", "\t") + "\n\n",           # tabs, blank lines
                 ("x, y\n" + _rows(pts).replace(",", ", ")).encode()):   # bytes, spaces
        np.testing.assert_array_equal(parse_points_csv(text).points, plain.points)
    labelled = parse_points_csv("x,y,c\n" + _rows((i, i, i % 3) for i in range(12)),
                                label_column=True)
    assert labelled.labels.tolist() == [i % 3 for i in range(12)]


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ("  \n\n", "empty"),
    ("x,y\n" + "1,2\n" * 5 + "foo,3\n" + "1,2\n" * 6, "row 7, column 1: 'foo' is not a number"),
    ("\n".join(str(i) for i in range(20)), "2 columns .x, y.; the first has 1 column$"),
    (_rows((i, i, i) for i in range(12)), "2 columns .x, y.; the first has 3 columns"),
    ("1,2\n" * 11 + "1,2,3\n", "row 12 has 3 columns; expected 2"),
    ("x,y\n1,2\n3,4\n", "at least 10 rows of x,y values, got 2"),
    ("1,2\n" * 50_001, "at most 50,000 rows"),
    ("1,2\n" * 11 + "nan,2\n", "row 12 holds NaN or infinite"),
    ("1,2\n" * 3 + "1,-inf\n" + "1,2\n" * 8, "row 4 holds NaN or infinite"),
    ("1,2\n" * 11 + "1e300,2\n", r"row 12: coordinates must lie within ±1e\+06"),
    ("1,2\n" * 11 + "3,-2000000\n", "row 12: coordinates must lie within"),
])
def test_parse_points_csv_rejects_malformed_files_with_a_clear_reason(text, message):
    from engine.datasets import parse_points_csv
    with pytest.raises(ValueError, match=message):
        parse_points_csv(text)


def test_parse_points_csv_label_column_must_hold_class_integers():
    from engine.datasets import parse_points_csv
    for bad in ("1.5", "-1", "10"):
        with pytest.raises(ValueError, match="class column must hold integers 0..9"):
            parse_points_csv("1,2,0\n" * 11 + f"1,2,{bad}\n", label_column=True)
    with pytest.raises(ValueError, match=r"2 columns \(x, y\) or 3 \(x, y, class\)"):
        parse_points_csv("1,2,0,5\n" * 12, label_column=True)
