"""Graph neural networks: the page's maths, free of any UI (engine/ never imports Streamlit or
Plotly).

    graphs.py    the graphs as arrays (karate club, grid, ring, random) and their drawing
    gcn.py       a_hat = D^-1/2 (A + I) D^-1/2, message passing, over-smoothing, GCN and MLP
    trainer.py   GraphsTrainer, semi-supervised node classification (engine.training.TrainerBase)
    physics.py   balls joined by springs (exact, velocity Verlet) and the interaction network
    simulator.py SimulatorTrainer, the interaction network fitted to exact accelerations"""
from __future__ import annotations

from engine.graphs.gcn import (GCN, MLP, normalized_adjacency, permutation_error, propagate,
                               spread_by_depth)
from engine.graphs.graphs import KINDS, Graph, make_graph, node_features
from engine.graphs.physics import (InteractionNetwork, simulate, spring_acceleration,
                                   spring_energy, spring_system)
from engine.graphs.simulator import (Rollouts, SimulatorTrainer, exact_rollout, learned_rollout,
                                     network_of)
from engine.graphs.trainer import FEATURES, GraphsTrainer, Snapshot, labelled_nodes

__all__ = ["FEATURES", "GCN", "Graph", "GraphsTrainer", "InteractionNetwork", "KINDS", "MLP",
           "Rollouts", "SimulatorTrainer", "Snapshot", "exact_rollout", "learned_rollout",
           "network_of", "simulate", "spring_acceleration", "spring_energy", "spring_system",
           "labelled_nodes", "make_graph", "node_features", "normalized_adjacency",
           "permutation_error", "propagate", "spread_by_depth"]
