"""A computational graph: nodes in topological order, a forward pass that stores every
node's value, and reverse-mode differentiation (backpropagation) that records each step.

Chain rule at node v with inputs u_i (reverse topological order, starting with dL/dL = 1):

    upstream      g_v = dL/dv                      (complete: every consumer of v came first)
    local         l_i = dv/du_i                    (engine/autodiff/ops.py)
    contribution  c_i = g_v * l_i                  (the "downstream" gradient on edge u_i -> v)
    accumulate    g_{u_i} += c_i                   (a node used twice receives two terms)

Inputs are one node per variable name, so a variable used twice has two outgoing edges and
its gradient is the sum of their contributions. Constants and constant-only subgraphs get no
gradient (as in PyTorch, where they do not require grad).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, NamedTuple

import numpy as np
import torch

from engine.autodiff.ops import OPS

LEAF_OPS = ("input", "const")


class Node(NamedTuple):
    id: int
    op: str                    # "input", "const" or a key of OPS
    inputs: tuple[int, ...]    # ids of the argument nodes, in argument order
    label: str                 # variable name, number, or the op's symbol
    column: int = 0            # 1-based position in the source text (0: not from text)
    value: float = 0.0         # the number of a "const" node


class Edge(NamedTuple):
    src: int                   # the argument node
    dst: int                   # the node that consumes it
    slot: int                  # which argument of dst (0 = a, 1 = b)


@dataclass(frozen=True)
class TraceStep:
    """One node of the backward pass: dL/d(node) times d(node)/d(input) per input."""
    node: int
    upstream: float                    # g_v
    inputs: tuple[int, ...]            # the input nodes that receive a gradient
    slots: tuple[int, ...]             # their argument positions
    local: tuple[float, ...]           # l_i
    contribution: tuple[float, ...]    # c_i = g_v * l_i
    grads_after: np.ndarray            # every node's accumulated dL/d(node) after this step
                                       # (NaN where no gradient has arrived yet)


class Graph:
    """Build with engine.autodiff.parse(text). forward(env) -> output value;
    backward() -> {input name: dL/d name}; trace() -> the backward pass step by step."""

    def __init__(self, nodes: tuple[Node, ...], source: str = ""):
        self.nodes = nodes
        self.source = source
        self.output = len(nodes) - 1
        self.edges = tuple(Edge(src, n.id, slot) for n in nodes
                           for slot, src in enumerate(n.inputs))
        self.input_names = tuple(n.label for n in nodes if n.op == "input")
        needs = [n.op == "input" for n in nodes]
        for n in nodes:
            needs[n.id] = needs[n.id] or any(needs[i] for i in n.inputs)
        self.requires_grad = tuple(needs)
        self._values: list[np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    # ------------------------------------------------------------------------ forward
    def forward(self, env: Mapping[str, float]) -> float | np.ndarray:
        """Evaluate every node in topological order (NumPy float64; the env values may be
        arrays, then every node holds the broadcast array). Division by zero, log of a
        negative number and overflow give inf/NaN values, not exceptions."""
        missing = [name for name in self.input_names if name not in env]
        if missing:
            raise ValueError(f"no value given for {', '.join(repr(m) for m in missing)}")
        values: list[np.ndarray] = []
        with np.errstate(all="ignore"):
            for n in self.nodes:
                if n.op == "input":
                    values.append(np.asarray(env[n.label], dtype=np.float64))
                elif n.op == "const":
                    values.append(np.asarray(n.value, dtype=np.float64))
                else:
                    values.append(np.asarray(OPS[n.op].forward(*(values[i] for i in n.inputs)),
                                             dtype=np.float64))
        self._values = values
        return _scalar(values[self.output])

    @property
    def values(self) -> tuple[np.ndarray, ...]:
        """Each node's forward value (after forward())."""
        return tuple(self._require_forward())

    def _require_forward(self) -> list[np.ndarray]:
        if self._values is None:
            raise RuntimeError("call forward(env) before reading values or gradients")
        return self._values

    # ----------------------------------------------------------------------- backward
    def node_gradients(self) -> list[np.ndarray]:
        """dL/d(node) for every node, L = the output (zero for constant subgraphs)."""
        return [np.asarray(g, dtype=np.float64) for g in self._backprop(record=False)[0]]

    def backward(self) -> dict[str, float | np.ndarray]:
        """dL/d(name) for every input variable."""
        grads = self._backprop(record=False)[0]
        return {n.label: _scalar(np.asarray(grads[n.id], dtype=np.float64))
                for n in self.nodes if n.op == "input"}

    def trace(self) -> tuple[TraceStep, ...]:
        """The backward pass as recorded steps, one per operation node that passes a gradient
        on, in the order they run (reverse topological). Scalar forward values only."""
        if any(np.ndim(v) for v in self._require_forward()):
            raise ValueError("trace() needs a forward pass with scalar inputs")
        return self._backprop(record=True)[1]

    def _backprop(self, record: bool) -> tuple[list[np.ndarray], tuple[TraceStep, ...]]:
        values = self._require_forward()
        out = values[self.output]
        grads: list = [0.0] * len(self.nodes)        # broadcasts against any shape
        grads[self.output] = np.ones_like(out)
        arrived = np.zeros(len(self.nodes), dtype=bool)
        arrived[self.output] = True
        steps = []
        with np.errstate(all="ignore"):
            for n in reversed(self.nodes):
                if n.op in LEAF_OPS or not self.requires_grad[n.id]:
                    continue
                args = [values[i] for i in n.inputs]
                local = OPS[n.op].local(values[n.id], *args)
                flows = OPS[n.op].contributions(grads[n.id], values[n.id], *args)
                slots = tuple(s for s, i in enumerate(n.inputs) if self.requires_grad[i])
                contribution = [flows[s] for s in slots]
                for s, c in zip(slots, contribution):
                    grads[n.inputs[s]] = grads[n.inputs[s]] + c
                    arrived[n.inputs[s]] = True
                if record:
                    after = np.where(arrived, np.array([float(g) for g in grads]), np.nan)
                    steps.append(TraceStep(
                        n.id, float(grads[n.id]), tuple(n.inputs[s] for s in slots), slots,
                        tuple(float(local[s]) for s in slots),
                        tuple(float(c) for c in contribution), after))
        return grads, tuple(steps)

    # -------------------------------------------------------------------------- torch
    def torch_gradients(self, env: Mapping[str, float]) -> tuple[float, dict[str, float]]:
        """The reference: the same graph evaluated with torch float64 tensors and
        differentiated by torch.autograd. Returns (output, {name: gradient})."""
        leaves = {name: torch.tensor(float(env[name]), dtype=torch.float64, requires_grad=True)
                  for name in self.input_names}
        values: list[torch.Tensor] = []
        for n in self.nodes:
            if n.op == "input":
                values.append(leaves[n.label])
            elif n.op == "const":
                values.append(torch.tensor(n.value, dtype=torch.float64))
            else:
                values.append(OPS[n.op].torch_fn(*(values[i] for i in n.inputs)))
        out = values[self.output]
        if not leaves:
            return float(out.detach()), {}
        grads = torch.autograd.grad(out, list(leaves.values()), allow_unused=True)
        return float(out.detach()), {name: (0.0 if g is None else float(g))
                            for name, g in zip(leaves, grads)}


def _scalar(v: np.ndarray) -> float | np.ndarray:
    return float(v) if np.ndim(v) == 0 else v


# ----------------------------------------------------------------------------- layout

@dataclass(frozen=True)
class Layout:
    """Left-to-right drawing positions: x = column (the output is rightmost, every node sits
    left of all its consumers), y = row (leaves in depth-first order from the output, top to
    bottom; an operation at the mean row of its arguments)."""
    x: np.ndarray
    y: np.ndarray

    @property
    def width(self) -> int:
        return int(self.x.max()) + 1 if len(self.x) else 0


def layout(graph: Graph, min_gap: float = 1.0) -> Layout:
    n = len(graph.nodes)
    col = np.full(n, np.inf)
    col[graph.output] = 0
    for node in reversed(graph.nodes):                     # consumers before arguments
        for i in node.inputs:
            col[i] = min(col[i], col[node.id] - 1)
    x = col - col.min()
    y = np.full(n, np.nan)
    next_leaf = [0.0]

    def place(i: int) -> float:
        if not np.isnan(y[i]):
            return y[i]
        node = graph.nodes[i]
        if not node.inputs:
            y[i], next_leaf[0] = next_leaf[0], next_leaf[0] + 1
        else:
            y[i] = float(np.mean([place(j) for j in node.inputs]))
        return y[i]

    _place_iteratively(graph, place)
    for c in np.unique(x):                                  # keep nodes of a column apart
        members = np.flatnonzero(x == c)
        members = members[np.argsort(y[members], kind="stable")]
        for a, b in zip(members[:-1], members[1:]):
            y[b] = max(y[b], y[a] + min_gap)
    return Layout(x.astype(np.float64), y)


def _place_iteratively(graph: Graph, place) -> None:
    """Call place() bottom-up in depth-first order from the output without deep recursion:
    leaves are placed when first reached from the output (arguments in order)."""
    order, stack, seen = [], [graph.output], set()
    while stack:                                            # preorder, first argument first
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        order.append(i)
        stack.extend(reversed(graph.nodes[i].inputs))
    for i in order:                                         # leaves in preorder
        if not graph.nodes[i].inputs:
            place(i)
    for i in sorted(order):                                 # operations after their inputs
        place(i)
