"""Measurements of a ReLU MLP's linear regions that the ReLU-regions page states as facts (its
claims) or draws, as pure numpy on (W, b) layer lists (engine.regions.mlp_layers): no torch
module crosses into the page, so a live frame can draw from plain data fetched next to the
trainer (`trainer_layers`, run by live.controls.read_trainer, possibly in a worker process).

    forward(layers, x)      = W_L relu(... relu(W_1 x + b_1) ...) + b_L
    arrangement_count       = 1 + (lines crossing the box) + (crossing points inside it)
                              (Euler's formula for lines in general position, one hidden layer)
    bent_units              = units whose zero-set edges take more than one direction
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from engine.regions import Box, Partition, edge_layers, mlp_layers

Layers = Sequence[tuple[np.ndarray, np.ndarray]]


def trainer_layers(trainer) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (W, b) float64 arrays of a RegionTrainer's model: what read_trainer fetches for a
    frame (module-level, so it pickles by reference to a worker process)."""
    return mlp_layers(trainer.model)


def forward(layers: Layers, x: np.ndarray) -> np.ndarray:
    """The network's output (n, out) at the points x (n, in), in float64."""
    h = np.asarray(x, np.float64)
    for W, b in layers[:-1]:
        h = np.maximum(h @ np.asarray(W).T + b, 0.0)
    W, b = layers[-1]
    return h @ np.asarray(W).T + b


def output_grid(layers: Layers, box: Box, res: int = 80
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xs (res,), ys (res,), f (res, res) indexed [iy, ix]): the first output on a grid
    (engine.regions.evaluate_grid without torch)."""
    xs = np.linspace(box[0], box[1], res)
    ys = np.linspace(box[2], box[3], res)
    xx, yy = np.meshgrid(xs, ys)
    f = forward(layers, np.stack([xx.ravel(), yy.ravel()], 1))[:, 0]
    return xs, ys, f.reshape(res, res)


def arrangement_count(layers: Layers, box: Box) -> int:
    """Regions of the line arrangement of a one-hidden-layer network's units in the box:
    1 + (lines w·x + b = 0 crossing the box) + (pairwise crossing points inside it)."""
    W, b = (np.asarray(a, np.float64) for a in layers[0])
    xmin, xmax, ymin, ymax = map(float, box)
    corners = np.array([[xmin, ymin], [xmin, ymax], [xmax, ymin], [xmax, ymax]])
    side = corners @ W.T + b                          # (4, n) signs at the corners
    crossing = (side.min(0) < 0) & (side.max(0) > 0)
    points = 0
    for i in range(len(W)):
        for j in range(i + 1, len(W)):
            A = np.stack([W[i], W[j]])
            if abs(np.linalg.det(A)) < 1e-12:
                continue
            p = np.linalg.solve(A, -np.array([b[i], b[j]]))
            points += int(xmin < p[0] < xmax and ymin < p[1] < ymax)
    return 1 + int(crossing.sum()) + points


def bent_units(layers: Layers, part: Partition) -> tuple[int, int]:
    """(units of layer 1 whose edges take more than one direction, units of layers >= 2 that
    do): layer 1 cuts along straight lines, later layers along polylines that kink. A unit
    bends when the spread of its edge angles (mod pi, also measured shifted by pi/2 so a
    near-vertical line does not wrap) exceeds 1e-3 rad."""
    edges = edge_layers(layers, part)
    d = edges.end - edges.start
    keep = (edges.unit >= 0) & (np.hypot(d[:, 0], d[:, 1]) > 1e-6)
    angle = np.mod(np.arctan2(d[keep, 1], d[keep, 0]), np.pi)
    units, layer_of = edges.unit[keep], edges.layer[keep]
    out = [0, 0]
    for u in np.unique(units):
        a = angle[units == u]
        spread = min(np.ptp(a), np.ptp(np.mod(a + np.pi / 2, np.pi)))
        if spread > 1e-3:
            out[int(layer_of[units == u][0] > 0)] += 1
    return out[0], out[1]
