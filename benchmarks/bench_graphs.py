"""Graphs page: what a slider move computes (targets on the 2-core CPU): the message passing
of a graph to 16 layers with its spread curve (< 50 ms), the edge-blind MLP's 200 training
iterations (computed once per setting, < 2 s), the live GCN trainer's throughput, and the
learned simulator's frame (two rollouts of 100 steps, < 100 ms) and training throughput."""
from __future__ import annotations

import time

import torch

from benchmarks import Measurement, median_time
from engine.graphs import (GraphsTrainer, SimulatorTrainer, learned_rollout, make_graph,
                           network_of, node_features, normalized_adjacency, propagate,
                           spread_by_depth)


def passing(kind: str = "karate", n: int = 60) -> Measurement:
    def run():
        g = make_graph(kind, n, 0.1, 0)
        a = torch.as_tensor(g.adjacency)
        h0 = node_features(g.n, 2, 0)
        propagate(normalized_adjacency(a), torch.as_tensor(h0), 16)
        spread_by_depth(g.adjacency, h0, 16)
    t = median_time(run, repeat=7)
    return Measurement(t * 1e3, "ms", f"{kind}, graph + layout + 16 layers + spread; "
                                      "target < 50 ms")


def mlp_baseline() -> Measurement:
    def run():
        GraphsTrainer(per_class=1, model="mlp").step(200)
    t = median_time(run, repeat=3)
    return Measurement(t, "s", "200 iterations, one-hot features; target < 2 s")


def gcn_rate() -> Measurement:
    trainer = GraphsTrainer(per_class=1)
    trainer.step(5)
    t0 = time.perf_counter()
    trainer.step(200)
    return Measurement(200 / (time.perf_counter() - t0), "it/s",
                       "GraphsTrainer.step, 2-layer GCN on the karate club")




def simulator_frame() -> Measurement:
    """What a frame of the learned-physics tab computes: the snapshot's network rebuilt and
    rolled out 100 steps on 5 and on 10 balls (the exact paths are cached)."""
    trainer = SimulatorTrainer(balls=5)
    trainer.step(5)
    snap = trainer.snapshot()
    learned_rollout(network_of(snap), 5, 100)
    learned_rollout(network_of(snap), 10, 100)

    def run():
        net = network_of(snap)
        learned_rollout(net, 5, 100)
        learned_rollout(net, 10, 100)
    t = median_time(run, repeat=7)
    return Measurement(t * 1e3, "ms", "two rollouts of 100 steps (5 and 10 balls); "
                                      "target < 100 ms")


def simulator_rate() -> Measurement:
    trainer = SimulatorTrainer(balls=5)
    trainer.step(5)
    t0 = time.perf_counter()
    trainer.step(100)
    return Measurement(100 / (time.perf_counter() - t0), "it/s",
                       "SimulatorTrainer.step, minibatch of 64 states of 5 balls")


BENCHMARKS = {
    "graphs: message passing, karate club": passing,
    "graphs: message passing, random graph of 60": lambda: passing("random", 60),
    "graphs: edge-blind MLP, 200 iterations": mlp_baseline,
    "graphs: GCN training": gcn_rate,
    "graphs: learned simulator frame": simulator_frame,
    "graphs: learned simulator training": simulator_rate,
}
