"""The graphs page's engine: Â against its formula (dense numpy) and against PyTorch
Geometric's gcn_norm written out edge by edge, permutation equivariance, over-smoothing, and
the trainer (a seed repeats a run, a saved state resumes it)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.graphs import (GCN, GraphsTrainer, labelled_nodes, make_graph, node_features,
                           normalized_adjacency, permutation_error, propagate, spread_by_depth)
from engine.graphs.graphs import karate_labels


def _random_adjacency(n: int, p: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, 1)
    return (upper | upper.T).astype(float)


@pytest.mark.parametrize("kind", ["karate", "grid", "ring", "random"])
def test_a_hat_equals_its_formula(kind):
    a = make_graph(kind, 20, 0.2, seed=1).adjacency
    a_tilde = a + np.eye(len(a))
    d = np.diag(a_tilde.sum(1))
    expected = np.linalg.inv(np.sqrt(d)) @ a_tilde @ np.linalg.inv(np.sqrt(d))
    got = normalized_adjacency(torch.as_tensor(a)).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert np.allclose(got, got.T)


def _pyg_gcn_conv(x: np.ndarray, adjacency: np.ndarray) -> np.ndarray:
    """PyTorch Geometric's GCNConv propagation without weights, written out: gcn_norm adds a
    self-loop of weight 1 to every node, deg = scatter_add(edge_weight, col), norm =
    deg^-1/2[row] * edge_weight * deg^-1/2[col], and each edge (row -> col) adds
    norm * x[row] to out[col]."""
    n = len(adjacency)
    row, col = np.nonzero(adjacency)
    row = np.concatenate([row, np.arange(n)])
    col = np.concatenate([col, np.arange(n)])
    weight = np.ones(len(row))
    deg = np.zeros(n)
    np.add.at(deg, col, weight)
    inv = np.where(deg > 0, deg ** -0.5, 0.0)
    norm = inv[row] * weight * inv[col]
    out = np.zeros_like(x)
    for r, c, w in zip(row, col, norm):
        out[c] += w * x[r]
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_message_passing_matches_pyg_gcn_norm(seed):
    a = _random_adjacency(15, 0.25, seed)
    a[0, :] = a[:, 0] = 0                          # an isolated node too
    x = node_features(15, 3, seed)
    a_hat = normalized_adjacency(torch.as_tensor(a))
    np.testing.assert_allclose((a_hat @ torch.as_tensor(x)).numpy(), _pyg_gcn_conv(x, a),
                               atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_message_passing_is_permutation_equivariant(seed):
    a = torch.as_tensor(_random_adjacency(25, 0.2, seed))
    x = torch.as_tensor(node_features(25, 2, seed))
    perm = torch.randperm(25, generator=torch.Generator().manual_seed(seed))
    h = propagate(normalized_adjacency(a), x, 5)                             # (6, n, 2)
    h_p = propagate(normalized_adjacency(a[perm][:, perm]), x[perm], 5)
    torch.testing.assert_close(h_p, h[:, perm], rtol=0, atol=1e-12)
    torch.manual_seed(seed)
    model = GCN(2, 8, 3)
    assert permutation_error(model, x.float(), a.float(), seed) < 1e-5


def test_features_over_smooth_on_a_connected_graph():
    g = make_graph("karate")
    spread = spread_by_depth(g.adjacency, node_features(g.n, 2, 0), 64)
    assert spread[0] == 1 and np.all(np.diff(spread) < 1e-12) and spread[-1] < 1e-3


def test_an_isolated_node_keeps_its_feature():
    a = _random_adjacency(10, 0.5, 3)
    a[4, :] = a[:, 4] = 0
    a_hat = normalized_adjacency(torch.as_tensor(a))
    assert float(a_hat[4, 4]) == 1.0 and float(a_hat[4].sum()) == 1.0
    assert spread_by_depth(a, node_features(10, 2, 0), 50)[-1] > 0.05


def test_one_node_and_no_edges_give_no_spread():
    assert np.isnan(spread_by_depth(np.zeros((1, 1)), np.ones((1, 2)), 3)).all()


def test_the_leaders_are_labelled_first():
    g = make_graph("karate")
    assert g.n == 34 and (karate_labels() == 1).sum() == 17
    assert np.flatnonzero(labelled_nodes(g.adjacency, g.labels, 1)).tolist() == [0, 33]
    assert labelled_nodes(g.adjacency, g.labels, 17).all()
    assert not labelled_nodes(g.adjacency, g.labels, 0).any()


def test_no_label_is_refused():
    with pytest.raises(ValueError, match="no node is labelled"):
        GraphsTrainer(per_class=0)


def test_loss_is_the_labelled_nodes_cross_entropy():
    tr = GraphsTrainer(per_class=2, seed=0)
    with torch.no_grad():
        m = tr.model
        hidden = torch.relu(tr.a_hat @ tr.x @ m.lin1.weight.T + m.b1)        # (n, 16)
        logits = tr.a_hat @ hidden @ m.lin2.weight.T + m.b2                   # (n, 2)
        logp = torch.log_softmax(logits.double(), -1)
        expected = -logp[tr.mask, tr.y[tr.mask]].mean()
    assert abs(float(tr.loss().detach()) - float(expected)) < 1e-6


def test_all_labelled_leaves_no_accuracy():
    tr = GraphsTrainer(per_class=17, seed=0)
    tr.step(2)
    assert np.isnan(tr.snapshot().accuracy)


def test_training_repeats_with_a_seed():
    a, b = GraphsTrainer(per_class=1, seed=1), GraphsTrainer(per_class=1, seed=1)
    first = float(a.loss().detach())
    a.step(30)
    b.step(30)
    assert float(a.loss().detach()) < first
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)


def test_a_saved_state_resumes_the_same_run():
    a = GraphsTrainer(per_class=2, features="random", seed=2)
    a.step(10)
    saved = a.state_dict()
    a.step(10)
    b = GraphsTrainer(per_class=2, features="random", seed=2)
    b.load_state_dict(saved)
    b.step(10)
    assert b.steps == a.steps == 20
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb)


def test_the_gcn_beats_the_edge_blind_mlp():
    gcn, mlp = GraphsTrainer(per_class=1), GraphsTrainer(per_class=1, model="mlp")
    gcn.step(100)
    mlp.step(100)
    assert gcn.snapshot().accuracy >= mlp.snapshot().accuracy + 0.3
