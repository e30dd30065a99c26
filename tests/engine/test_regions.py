"""Exact linear regions of ReLU MLPs (engine/regions/): geometry, counts, bounds, sawtooth."""
import itertools
import math

import numpy as np
import pytest
import torch

from engine import regions as R

BOX = (-2.0, 2.0, -2.0, 2.0)


def _distinct_rows(bits):
    packed = np.packbits(bits, axis=1)
    return len(np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel()))


def _forward(layers, x):
    h = x
    for W, b in layers[:-1]:
        h = np.maximum(h @ W.T + b, 0.0)
    W, b = layers[-1]
    return h @ W.T + b


def _arrangement_count(W, b, box):
    """1 + lines crossing the box interior + pairwise intersection points inside it."""
    xmin, xmax, ymin, ymax = box
    corners = np.array([[xmin, ymin], [xmax, ymin], [xmax, ymax], [xmin, ymax]])
    vals = corners @ W.T + b                       # (4, n)
    crossing = (vals.max(0) > 0) & (vals.min(0) < 0)
    inside = 0
    for i, j in itertools.combinations(range(len(b)), 2):
        A = W[[i, j]]
        if abs(np.linalg.det(A)) < 1e-12:
            continue
        p = np.linalg.solve(A, -b[[i, j]])
        inside += (xmin < p[0] < xmax) and (ymin < p[1] < ymax)
    return 1 + int(crossing.sum()) + inside


@pytest.mark.parametrize("n_units,seed", [(1, 0), (5, 1), (12, 2), (20, 3)])
def test_one_layer_count_equals_line_arrangement(n_units, seed):
    model = R.make_mlp([n_units], seed=seed)
    W, b = R.mlp_layers(model)[0]
    assert R.count_regions(model, BOX) == _arrangement_count(W, b, BOX)


def test_three_lines_in_general_position_give_seven_regions():
    # x = 0, y = 0, x + y = 1 all cross inside the box: 1 + 3 + 3 = 7 = sum_{i<=2} C(3, i)
    layers = [(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([0.0, 0.0, -1.0])),
              (np.ones((1, 3)), np.zeros(1))]
    assert R.partition(layers, BOX).count == 7 == R.zaslavsky_bound(3, 2)


@pytest.mark.parametrize("widths,seed", [((8,), 0), ((16, 16, 16), 1), ((6, 6, 6, 6), 2),
                                         ((3, 10, 2), 3)])
def test_partition_geometry_and_affine_maps(widths, seed):
    model = R.make_mlp(widths, seed=seed)
    layers = R.mlp_layers(model)
    part = R.partition(model, BOX)
    assert part.area.sum() == pytest.approx(16.0, rel=1e-12)
    assert part.area.min() > 0
    # every region convex, counter-clockwise, inside the box, pattern unique
    for r in range(part.count):
        v = part.polygon(r)
        e = np.roll(v, -1, 0) - v
        turn = e[:, 0] * np.roll(e[:, 1], -1) - e[:, 1] * np.roll(e[:, 0], -1)
        assert turn.min() > -1e-9
        assert R.polygon_area(v) == pytest.approx(part.area[r])
        assert v.min() >= -2.0 - 1e-12 and v.max() <= 2.0 + 1e-12
    assert len(np.unique(part.patterns, axis=0)) == part.count
    # the network equals the region's affine map at every vertex and at the centroid
    for r in range(part.count):
        pts = np.vstack([part.polygon(r), part.centroid[r]])
        np.testing.assert_allclose(pts @ part.out_w[r].T + part.out_b[r], _forward(layers, pts),
                                   atol=1e-9)


def test_pattern_matches_forward_pass_at_centroids():
    model = R.make_mlp((8, 8), seed=5)
    part = R.partition(model, BOX)
    bits = []
    h = part.centroid
    for W, b in R.mlp_layers(model)[:-1]:
        z = h @ W.T + b
        bits.append(z > 0)
        h = np.maximum(z, 0)
    np.testing.assert_array_equal(np.concatenate(bits, 1), part.patterns)


@pytest.mark.parametrize("widths,seed", [((8, 8), 0), ((6, 6, 6), 1)])
def test_exact_count_at_least_grid_patterns_and_close(widths, seed):
    model = R.make_mlp(widths, seed=seed)
    exact = R.count_regions(model, BOX)
    seen = _distinct_rows(R.grid_patterns(model, BOX, res=400))
    assert exact >= seen >= 0.85 * exact


def test_degenerate_cuts_keep_area_and_make_no_slivers():
    # lines through box corners, through each other's crossing, parallel and duplicated
    W = np.array([[1.0, -1.0], [1.0, 1.0], [1.0, -1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0],
                  [2.0, -2.0]])
    b = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0])
    layers = [(W, b), (np.ones((1, 7)), np.zeros(1))]
    part = R.partition(layers, BOX)
    assert part.area.sum() == pytest.approx(16.0, rel=1e-12)
    assert part.area.min() > 1e-6
    # distinct lines: x=y, x=-y, x=y-1, x=0 (twice), y=-2 (box edge), x=y (again): 4 lines
    # x=y, x=-y, x=0 concurrent at 0: 6 regions; x=y-1 adds crossings with x=-y and x=0: +3
    assert part.count == 9


def test_breakpoints_of_one_layer_net():
    model = R.make_mlp([3], input_dim=1, seed=0)
    W, b = R.mlp_layers(model)[0]
    roots = np.sort(-b / W[:, 0])
    inside = roots[(roots > -2) & (roots < 2)]
    np.testing.assert_allclose(R.breakpoints(model, (-2, 2)), inside, atol=1e-12)
    pieces = R.linear_pieces_1d(model, (-2, 2))
    assert pieces.count == len(inside) + 1 <= 4   # one layer of n units: at most n + 1 pieces
    x = np.linspace(-2, 2, 1001)
    idx = np.clip(np.searchsorted(pieces.edges, x, side="right") - 1, 0, pieces.count - 1)
    y = model(torch.tensor(x[:, None], dtype=torch.float32))[:, 0].detach().numpy()
    np.testing.assert_allclose(pieces.slope[idx] * x + pieces.intercept[idx], y, atol=1e-5)


@pytest.mark.parametrize("depth", [1, 2, 3, 5, 8])
def test_sawtooth_has_two_to_the_depth_pieces(depth):
    net = R.sawtooth_net(depth)
    pieces = R.linear_pieces_1d(net, (0.0, 1.0))
    assert pieces.count == 2 ** depth
    assert len(pieces.kinks()) == 2 ** depth - 1
    np.testing.assert_allclose(np.abs(pieces.slope), 2.0 ** depth, rtol=1e-6)
    np.testing.assert_allclose(pieces.edges, np.linspace(0, 1, 2 ** depth + 1), atol=1e-12)
    # the tent map composed depth times, checked against torch at random points
    x = torch.rand(257, 1, generator=torch.Generator().manual_seed(depth), dtype=torch.float64)
    t = x.clone()
    for _ in range(depth):
        t = torch.where(t < 0.5, 2 * t, 2 - 2 * t)
    np.testing.assert_allclose(net.double()(x).detach().numpy(), t.numpy(), atol=1e-9)


def test_bounds_closed_forms():
    assert R.zaslavsky_bound(3, 2) == 7
    assert R.zaslavsky_bound(24, 2) == 1 + 24 + 276
    assert R.zaslavsky_bound(3, 1) == 4          # 1 input, 3 ReLUs -> 4 regions (docs/MATH.md)
    assert R.product_bound((12, 12), 2) == 79 * 2 ** 12
    assert R.product_bound((12, 12), 2, effective=True) == 79 ** 2
    assert R.product_bound((24,), 2) == 301
    assert R.trivial_bound((8, 8, 8)) == 2 ** 24
    assert R.split_budget(24) == [(24,), (12, 12), (8, 8, 8), (6, 6, 6, 6), (4,) * 6]


@pytest.mark.parametrize("widths", [(4,), (3, 3), (5, 4, 3), (2, 2, 2, 2)])
def test_counts_never_exceed_bounds(widths):
    for seed in range(4):
        count = R.count_regions(R.make_mlp(widths, seed=seed, init_scale=2.0), (-6, 6, -6, 6))
        tight = R.product_bound(widths, 2, effective=True)
        assert count <= tight <= R.product_bound(widths, 2) and count <= R.trivial_bound(widths)


def test_make_mlp_seeded_and_kaiming_scale():
    a, b = R.make_mlp((16, 8), seed=3), R.make_mlp((16, 8), seed=3)
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)
    big = R.make_mlp((4000,), seed=0)
    W1, b1 = R.mlp_layers(big)[0]
    assert W1.std() == pytest.approx(math.sqrt(2 / 2), rel=0.03)   # N(0, 2/fan_in)
    assert np.abs(b1).min() > 0
    with pytest.raises(KeyError):
        R.make_mlp((4,), init="nope")


def test_parse_widths():
    assert R.parse_widths("16, 8,4") == (16, 8, 4)
    assert R.parse_widths("16x8") == (16, 8)
    for bad in ["", "a, b", "0, 4", "33", "1,1,1,1,1,1,1", "16, x, 4", "16,,4"]:
        with pytest.raises(ValueError):
            R.parse_widths(bad)


def test_trainer_reduces_loss_and_logs_counts(device):
    tr = R.RegionTrainer((8, 8), task="ridge (regression)", seed=0, lr=0.02, n=200,
                         count_every=10, device=device)
    loss0 = tr.history.last("loss")
    tr.step(40)
    assert tr.steps == 40 and tr.diverged_at is None
    assert tr.history.last("loss") < 0.6 * loss0
    steps, counts = tr.history.as_arrays("regions")
    np.testing.assert_array_equal(steps, [0, 10, 20, 30, 40])
    snap = tr.snapshot()
    assert snap.partition.count == counts[-1] == R.count_regions(tr.model, tr.box)
    # state round trip
    other = R.RegionTrainer((8, 8), task="ridge (regression)", seed=1, n=200, device=device)
    other.load_state_dict(tr.state_dict())
    assert other.partition().count == snap.partition.count and other.steps == 40


def test_trainer_classification_task_runs(device):
    tr = R.RegionTrainer((6,), task="circles (classification)", seed=0, lr=0.05, n=200,
                         device=device)
    loss0 = tr.history.last("loss")
    tr.step(30)
    assert tr.history.last("loss") < loss0
    assert set(np.unique(tr.snapshot().targets)) == {0.0, 1.0}


def test_trainer_adam_matches_torch_optim_adam():
    tr = R.RegionTrainer((5, 4), task="bump (regression)", seed=2, lr=0.03, n=64,
                         count_every=1000)
    ref = R.make_mlp((5, 4), seed=2).to(tr.x.device)      # the trainer picks the default device
    opt = torch.optim.Adam(ref.parameters(), lr=0.03)
    for _ in range(5):
        opt.zero_grad()
        torch.nn.functional.mse_loss(ref(tr.x)[:, 0], tr.y).backward()
        opt.step()
    tr.step(5)
    for p, q in zip(tr.model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_distinct_maps_merge_regions_that_share_a_plane():
    # units x > 0 and y > 0 make 4 activation regions, but f = relu(x) has only 2 maps
    layers = [(np.eye(2), np.zeros(2)), (np.array([[1.0, 0.0]]), np.zeros(1))]
    part = R.partition(layers, BOX)
    assert part.count == 4 and R.distinct_maps(part) == 2
    generic = R.partition(R.make_mlp((6,), seed=0), BOX)
    assert R.distinct_maps(generic) == generic.count


def test_linear_regions_returns_region_objects():
    model = R.make_mlp((5, 3), seed=4)
    regions = R.linear_regions(model, (-1.0, 3.0, -2.0, 0.5))
    assert len(regions) == R.count_regions(model, (-1.0, 3.0, -2.0, 0.5))
    assert sum(r.area for r in regions) == pytest.approx(4.0 * 2.5, rel=1e-12)
    layers = R.mlp_layers(model)
    for r in regions:
        assert r.vertices.shape[1] == 2 and r.pattern.shape == (8,)
        w, b = r.output_affine
        assert w.shape == (1, 2) and b.shape == (1,)
        np.testing.assert_allclose(r.centroid @ w.T + b, _forward(layers, r.centroid[None])[0],
                                   atol=1e-9)


def test_edge_layers_lie_on_their_units_zero_sets():
    model = R.make_mlp((6, 5, 4), seed=3)
    part = R.partition(model, BOX)
    edges = R.edge_layers(model, part)
    assert len(edges.layer) == len(part.vertices)          # one side per polygon vertex
    assert set(np.unique(edges.layer)) == {-1, 0, 1, 2}
    mid = (edges.start + edges.end) / 2
    z, h = [], mid
    for W, b in R.mlp_layers(model)[:-1]:
        z.append(h @ W.T + b)
        h = np.maximum(z[-1], 0)
    z = np.concatenate(z, 1)
    inner = edges.unit >= 0
    np.testing.assert_allclose(z[inner, edges.unit[inner]], 0.0, atol=1e-9)
    on_box = ~inner
    assert np.all(np.isclose(np.abs(mid[on_box]), 2.0).any(1))
    one = R.make_mlp((7,), seed=0)
    assert set(np.unique(R.edge_layers(one, R.partition(one, BOX)).layer)) == {-1, 0}


def test_training_on_the_ridge_moves_regions_to_the_bend():
    tr = R.RegionTrainer((16, 16), task="ridge (regression)", seed=0, lr=0.01, count_every=300)
    tr.step(600)
    _, near = tr.history.as_arrays("near_bend")
    assert len(near) == 3 and near[-1] > near[0] + 0.1      # measured: 0.22 -> 0.41
    part = tr.partition()
    d = np.abs(part.centroid[:, 0] - 0.5 * part.centroid[:, 1]) / math.sqrt(1.25)
    assert near[-1] == pytest.approx(np.mean(d < tr.NEAR))
    plain = R.RegionTrainer((4,), task="bump (regression)", seed=0)
    assert "near_bend" not in plain.history.values
