"""differentiate(text, env): one call that gives everything the backpropagation page draws:
the graph and its layout, every node's forward value and gradient, the recorded backward
pass, and torch.autograd's answer for the same expression."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from engine.autodiff.graph import Edge, Graph, Layout, Node, TraceStep, layout
from engine.autodiff.parser import parse


@dataclass(frozen=True)
class Differentiation:
    source: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    layout: Layout
    values: np.ndarray                 # forward value of every node
    grads: np.ndarray                  # dL/d(node) of every node (0 for constants)
    trace: tuple[TraceStep, ...]
    output: float
    input_names: tuple[str, ...]
    gradients: dict[str, float]        # ours: dL/d(name)
    torch_output: float
    torch_gradients: dict[str, float]  # torch.autograd's

    @property
    def max_torch_diff(self) -> float:
        """max |ours - torch| over the output and every input gradient (NaN == NaN counts
        as agreement; 0 for an expression without inputs)."""
        pairs = [(self.output, self.torch_output)] + \
            [(self.gradients[n], self.torch_gradients[n]) for n in self.input_names]
        diffs = [0.0 if (np.isnan(a) and np.isnan(b)) or a == b else abs(a - b)
                 for a, b in pairs]
        return float(max(diffs))

    def grads_at_step(self, k: int) -> np.ndarray:
        """Accumulated dL/d(node) after the first k backward steps (k = 0: only the output
        has its gradient, 1; NaN: not reached yet)."""
        if k <= 0 or not self.trace:
            g = np.full(len(self.nodes), np.nan)
            g[-1] = 1.0
            return g
        return self.trace[min(k, len(self.trace)) - 1].grads_after


def differentiate(text_or_graph: str | Graph, env: Mapping[str, float]) -> Differentiation:
    graph = parse(text_or_graph) if isinstance(text_or_graph, str) else text_or_graph
    output = graph.forward(env)
    node_grads = graph.node_gradients()
    trace = graph.trace()
    t_out, t_grads = graph.torch_gradients(env)
    return Differentiation(
        graph.source, graph.nodes, graph.edges, layout(graph),
        np.array([float(v) for v in graph.values]), np.array([float(g) for g in node_grads]),
        trace, float(output), graph.input_names, graph.backward(), t_out, t_grads)
