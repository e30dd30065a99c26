"""The graphs of the page, as plain arrays: an adjacency matrix A (n, n), a 2-D drawing of the
nodes and, for Zachary's karate club, the two factions. networkx builds the graphs and the
spring layout; everything downstream reads numpy only."""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

KINDS = ("karate", "grid", "ring", "random")


@dataclass(frozen=True)
class Graph:
    adjacency: np.ndarray          # (n, n) float64, symmetric, 0/1, zero diagonal
    positions: np.ndarray          # (n, 2) where each node is drawn
    labels: np.ndarray | None      # (n,) int faction (karate club) or None

    @property
    def n(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def degrees(self) -> np.ndarray:
        return self.adjacency.sum(1)                                 # (n,)

    @property
    def edges(self) -> np.ndarray:
        """(m, 2) node pairs i < j joined by an edge."""
        i, j = np.nonzero(np.triu(self.adjacency, 1))
        return np.stack([i, j], 1)


def _layout(g: nx.Graph, seed: int) -> np.ndarray:
    if g.number_of_nodes() == 0:
        return np.zeros((0, 2))
    pos = nx.spring_layout(g, seed=int(seed))
    return np.array([pos[v] for v in range(g.number_of_nodes())], dtype=float)


def karate_labels() -> np.ndarray:
    """(34,) the faction of each member after the split: 0 = Mr. Hi's, 1 = the Officer's."""
    g = nx.karate_club_graph()
    return np.array([0 if g.nodes[v]["club"] == "Mr. Hi" else 1 for v in g.nodes()])


def make_graph(kind: str, n: int = 20, p: float = 0.15, seed: int = 0) -> Graph:
    """One of KINDS: Zachary's karate club (34 nodes, n ignored), a grid of about n nodes
    (rows x cols, rows = floor(sqrt n)), a ring (cycle) of n nodes, or an Erdős-Rényi graph
    G(n, p) (every pair joined with probability p, seeded); drawn by a seeded spring layout
    (the grid on its own lattice)."""
    n = max(int(n), 1)
    labels = None
    if kind == "karate":
        g = nx.karate_club_graph()
        labels = karate_labels()
    elif kind == "grid":
        rows = max(int(np.floor(np.sqrt(n))), 1)
        cols = max(n // rows, 1)
        g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, cols), ordering="sorted")
        adjacency = nx.to_numpy_array(g, nodelist=range(g.number_of_nodes()), weight=None)
        positions = np.array([(v % cols, -(v // cols)) for v in range(rows * cols)], float)
        return Graph(adjacency, positions, None)
    elif kind == "ring":
        g = nx.cycle_graph(n) if n >= 3 else nx.path_graph(n)
    elif kind == "random":
        g = nx.gnp_random_graph(n, float(p), seed=int(seed))
    else:
        raise ValueError(f"unknown graph {kind!r}: one of {', '.join(KINDS)}")
    adjacency = nx.to_numpy_array(g, nodelist=range(g.number_of_nodes()), weight=None)
    return Graph(adjacency, _layout(g, seed), labels)


def node_features(n: int, dim: int = 2, seed: int = 0) -> np.ndarray:
    """(n, dim) float64 standard normal features, seeded."""
    return np.random.default_rng(int(seed)).standard_normal((int(n), int(dim)))
