"""Graph neural networks: the page's maths, free of any UI (engine/ never imports Streamlit or
Plotly).

    graphs.py    the graphs as arrays (karate club, grid, ring, random) and their drawing
    gcn.py       a_hat = D^-1/2 (A + I) D^-1/2, message passing, over-smoothing, GCN and MLP
    trainer.py   GraphsTrainer, semi-supervised node classification (engine.training.TrainerBase)"""
from __future__ import annotations

from engine.graphs.gcn import (GCN, MLP, normalized_adjacency, permutation_error, propagate,
                               spread_by_depth)
from engine.graphs.graphs import KINDS, Graph, make_graph, node_features
from engine.graphs.trainer import FEATURES, GraphsTrainer, Snapshot, labelled_nodes

__all__ = ["FEATURES", "GCN", "Graph", "GraphsTrainer", "KINDS", "MLP", "Snapshot",
           "labelled_nodes", "make_graph", "node_features", "normalized_adjacency",
           "permutation_error", "propagate", "spread_by_depth"]
