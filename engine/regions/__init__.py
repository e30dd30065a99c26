"""ReLU networks are piecewise linear: the exact linear regions of a small MLP on 2-D inputs.

A ReLU MLP  f(x) = W_L+1 h_L + b_L+1,  h_l = relu(W_l h_l-1 + b_l),  h_0 = x
is affine on every set where the on/off pattern of all hidden units is fixed. On such a set,
with D_l = diag(pattern of layer l),

    h_l = M_l x + c_l,   M_l = D_l W_l M_l-1,   c_l = D_l (W_l c_l-1 + b_l),   M_0 = I, c_0 = 0,

so every pre-activation z_l = W_l h_l-1 + b_l = (W_l M_l-1) x + (W_l c_l-1 + b_l) is affine and
each hidden unit cuts a region along a straight line. `linear_regions` computes the exact
partition of a box by cutting convex polygons with one unit's line after another, layer by
layer, vectorized over all polygons at once (padded vertex arrays, numpy float64).

Bounds on the number of regions for input dimension d (docs/MATH.md): the trivial 2^(#ReLUs);
one layer of n units is an arrangement of n hyperplanes, at most sum_{i=0..d} C(n, i)
(Zaslavsky); deep nets at most prod_l sum_{i=0..d_l-1} C(d_l, i) (Raghu et al. / Serra et al.).

Layout (one job per module; every name is importable from engine.regions as before):
    engine/regions/geometry.py   make_mlp, partition (exact regions), edges, parse_widths
    engine/regions/measures.py   1-D pieces and the sawtooth, region-count bounds, budget study
    engine/regions/trainer.py    TASKS, RegionTrainer (regions while training)
"""
from __future__ import annotations

from engine.regions.geometry import (Box, count_regions, distinct_maps, edge_layers, Edges,
                                     evaluate_grid, grid_patterns, hidden_widths, INITS,
                                     linear_regions, make_mlp, MAX_LAYERS, MAX_WIDTH, mlp_layers,
                                     parse_widths, Partition, partition, polygon_area,
                                     polygon_centroid, Region)
from engine.regions.measures import (BOUNDS, breakpoints, budget_study, BudgetRow,
                                     linear_pieces_1d, Pieces1D, product_bound, sawtooth_net,
                                     split_budget, trivial_bound, zaslavsky_bound)
from engine.regions.trainer import (LOSSES, RegionSnapshot, RegionTrainer, Task, TASKS)

__all__ = ['Box', 'count_regions', 'distinct_maps', 'edge_layers', 'Edges', 'evaluate_grid',
           'grid_patterns', 'hidden_widths', 'INITS', 'linear_regions', 'make_mlp', 'MAX_LAYERS',
           'MAX_WIDTH', 'mlp_layers', 'parse_widths', 'Partition', 'partition', 'polygon_area',
           'polygon_centroid', 'Region', 'BOUNDS', 'breakpoints', 'budget_study', 'BudgetRow',
           'linear_pieces_1d', 'Pieces1D', 'product_bound', 'sawtooth_net', 'split_budget',
           'trivial_bound', 'zaslavsky_bound', 'LOSSES', 'RegionSnapshot', 'RegionTrainer', 'Task',
           'TASKS']
