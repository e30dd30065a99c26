"""The network page's engine: the datasets and features equal their formulas, the L1/L2
gradients equal the closed forms, every neuron's map equals a per-neuron loop and the torch
forward pass, and the trainer repeats and resumes a run."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.network import (DATASETS, FEATURE_NAMES, NetworkTrainer, PlaygroundNet,
                            feature_matrix, grid_points, layer_outputs, make_dataset,
                            neuron_maps, split)


@pytest.mark.parametrize("kind", DATASETS)
def test_datasets_are_seeded_two_class_sets_in_the_box(kind):
    x, y = make_dataset(kind, 200, 0.2, seed=3)
    assert x.shape == (200, 2) and x.dtype == np.float32
    assert set(np.unique(y)) == {0.0, 1.0}
    assert kind == "gauss" or np.abs(x).max() < 6         # Gaussian tails may leave the box
    np.testing.assert_array_equal(x, make_dataset(kind, 200, 0.2, seed=3)[0])


def test_noise_free_labels_follow_their_rules():
    x, y = make_dataset("xor", 300, 0.0, seed=0)
    np.testing.assert_array_equal(y, (x[:, 0] * x[:, 1] >= 0).astype(np.float32))
    x, y = make_dataset("circle", 300, 0.0, seed=0)
    np.testing.assert_array_equal(y, (np.linalg.norm(x, axis=1) < 2.5).astype(np.float32))


def test_split_keeps_every_point_once():
    x, y = make_dataset("gauss", 100, 0.1, seed=0)
    xtr, ytr, xte, yte = split(x, y, 0.3, seed=0)
    assert len(xtr) == 30 and len(xte) == 70
    both = np.concatenate([xtr, xte])
    assert sorted(map(tuple, both)) == sorted(map(tuple, x))


def test_features_equal_their_formulas():
    x = np.array([[0.5, -2.0], [3.0, 1.5]], np.float32)
    f = feature_matrix(x, list(reversed(FEATURE_NAMES)))      # order of FEATURES kept
    a, b = x[:, 0], x[:, 1]
    expected = np.stack([a, b, a * a, b * b, a * b, np.sin(a), np.sin(b)], 1)
    np.testing.assert_allclose(f, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="no input feature"):
        feature_matrix(x, [])


@pytest.mark.parametrize("kind", ["L1", "L2"])
def test_regularisation_gradients_equal_the_closed_forms(kind):
    net = PlaygroundNet(3, (4, 2), "tanh", seed=1)
    rate = 0.07
    net.penalty(kind, rate).backward()
    for lin in net.linears:
        w = lin.weight.detach()
        expected = rate * (torch.sign(w) if kind == "L1" else w)
        torch.testing.assert_close(lin.weight.grad, expected)
        assert lin.bias.grad is None                           # biases are not penalised


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", "linear"])
def test_neuron_maps_equal_a_per_neuron_loop_and_the_forward_pass(activation):
    features = ["x1", "x2", "x1x2", "sin x2"]
    net = PlaygroundNet(len(features), (3, 5, 2), activation, seed=2)
    layers = net.layers()
    box, res = (-6.0, 6.0, -6.0, 6.0), 7
    maps = neuron_maps(layers, activation, features, box, res)
    xs, ys, pts = grid_points(box, res)
    act = {"relu": lambda z: max(z, 0.0), "tanh": np.tanh,
           "sigmoid": lambda z: 1 / (1 + np.exp(-z)), "linear": lambda z: z}[activation]
    for iy in range(res):
        for ix in range(res):
            h = feature_matrix(np.array([[xs[ix], ys[iy]]]), features)[0].astype(np.float64)
            for li, (W, b) in enumerate(layers[:-1]):
                h = np.array([act(float(W[j] @ h + b[j])) for j in range(W.shape[0])])
                np.testing.assert_allclose(maps.hidden[li][:, iy, ix], h, rtol=1e-4,
                                           atol=1e-5)
    with torch.no_grad():
        logit = net(torch.from_numpy(feature_matrix(pts, features))).numpy()
    np.testing.assert_allclose(maps.output.ravel(), 1 / (1 + np.exp(-logit)), rtol=1e-4,
                               atol=1e-6)
    assert maps.inputs.shape == (4, res, res)


def test_a_knocked_out_neuron_outputs_zero_and_changes_the_output():
    net = PlaygroundNet(2, (4,), "tanh", seed=0)
    layers = net.layers()
    h0 = np.array([[1.0, 2.0], [-3.0, 0.5]], np.float32)
    keep = [np.array([1, 0, 1, 1], np.float32)]
    outs = layer_outputs(layers, "tanh", h0, keep)
    assert (outs[0][:, 1] == 0).all()
    W, b = layers[-1]
    np.testing.assert_allclose(outs[-1][:, 0], outs[0] @ W[0] + b[0], rtol=1e-6)


def test_no_hidden_layer_is_a_linear_model():
    net = PlaygroundNet(2, (), "relu", seed=0)
    (W, b), = net.layers()
    x = torch.tensor([[1.0, -2.0]])
    assert float(net(x).detach()) == pytest.approx(float(W[0] @ x[0].numpy() + b[0]), rel=1e-6)


def test_training_lowers_the_loss_repeats_and_resumes():
    kw = dict(dataset="xor", features=("x1", "x2", "x1x2"), hidden=(), lr=0.03)
    a, b = NetworkTrainer(**kw, seed=1), NetworkTrainer(**kw, seed=1)
    first = a.snapshot().train_loss
    a.step(40)
    saved = a.state_dict()
    a.step(30)
    b.load_state_dict(saved)
    b.step(30)
    assert a.snapshot().train_loss < first
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)


def test_a_too_large_step_is_named_diverged():
    t = NetworkTrainer("circle", features=FEATURE_NAMES, hidden=(4, 2), activation="linear",
                       lr=1.0, seed=0)
    t.step(50)
    assert t.diverged_at is not None and t.diverged_at <= 20


def test_bad_architectures_are_refused_in_words():
    with pytest.raises(ValueError, match="hidden layers"):
        PlaygroundNet(2, (9,))
    with pytest.raises(ValueError, match="no input feature"):
        NetworkTrainer(features=())
