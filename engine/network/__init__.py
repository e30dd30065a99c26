"""A network you build (TensorFlow Playground's view): the page's maths, free of any UI
(engine/ never imports Streamlit or Plotly).

    data.py      the playground's datasets (circle, XOR, two Gaussians, spiral), noise, split
    features.py  the input features x1, x2, x1^2, x2^2, x1 x2, sin x1, sin x2
    model.py     the MLP, its L1/L2 penalty, every neuron's map over the plane in one pass
    trainer.py   NetworkTrainer, minibatch SGD (engine.training.TrainerBase)"""
from __future__ import annotations

from engine.network.data import BOX, DATASETS, make_dataset, split
from engine.network.features import FEATURE_NAMES, FEATURES, feature_matrix, ordered
from engine.network.model import (ACTIVATIONS, MAX_LAYERS, MAX_UNITS, REGULARIZERS,
                                  NeuronMaps, PlaygroundNet, bce, grid_points, layer_outputs,
                                  neuron_maps, weight_norm)
from engine.network.trainer import N_POINTS, NetworkTrainer, Snapshot

__all__ = ["ACTIVATIONS", "BOX", "DATASETS", "FEATURES", "FEATURE_NAMES", "MAX_LAYERS",
           "MAX_UNITS", "N_POINTS", "NetworkTrainer", "NeuronMaps", "PlaygroundNet",
           "REGULARIZERS", "Snapshot", "bce", "feature_matrix", "grid_points", "layer_outputs",
           "make_dataset", "neuron_maps", "ordered", "split", "weight_norm"]
