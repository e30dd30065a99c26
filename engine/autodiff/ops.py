"""The operations a graph node can perform (registry OPS: name -> Op).

Each op has a NumPy forward (float64, element-wise, so one graph evaluates a whole batch of
inputs at once), the local gradients d out / d input_i written in terms of the inputs a, b
and the output out, and the PyTorch function used as the reference:

    op       out             d out/d a                     d out/d b
    add      a + b           1                             1
    sub      a - b           1                             -1
    mul      a * b           b                             a
    div      a / b           1 / b                         -a / b^2
    pow      a ** b          b a^(b-1)  (0 where b = 0)    out log a  (0 where a = 0, b >= 0)
    max      max(a, b)       1 if a > b, 1/2 if a = b      1 if b > a, 1/2 if a = b
    neg      -a              -1
    exp      e^a             out
    log      ln a            1 / a
    sqrt     sqrt(a)         1 / (2 out)
    tanh     tanh a          1 - out^2
    sigmoid  1/(1 + e^-a)    out (1 - out)
    relu     max(a, 0)       1 if a > 0 else 0
    sin      sin a           cos a
    cos      cos a           -sin a

The conventions at kinks and ties (pow at b = 0 or a = 0, max at a tie, relu at 0) are
PyTorch's, so the gradients equal torch.autograd's everywhere, not only almost everywhere.
The contribution to input i is upstream * local_i, except where PyTorch selects instead of
multiplying (relu, max, pow's zero cases): there a zero local gradient gives an exact 0 even
when the upstream gradient is inf (inf * 0 would be NaN).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

Array = np.ndarray


@dataclass(frozen=True)
class Op:
    name: str
    arity: int
    symbol: str                              # drawn inside the node
    forward: Callable[..., Array]            # (*inputs) -> out
    local: Callable[..., tuple[Array, ...]]  # (out, *inputs) -> d out / d input_i (each
                                             # broadcastable against the output)
    torch_fn: Callable[..., torch.Tensor]    # the reference
    selects: bool = False                    # a zero local gradient blocks the upstream

    def contributions(self, upstream, out, *inputs) -> tuple[Array, ...]:
        """upstream * d out/d input_i for every input (an exact 0 where a selecting op's
        local gradient is 0)."""
        local = self.local(out, *inputs)
        if self.selects:
            return tuple(np.where(l == 0, 0.0, upstream * l) for l in local)
        return tuple(upstream * l for l in local)


def _pow_local(out, a, b):
    da = np.where(b == 0, 0.0, b * np.power(a, b - 1))
    db = np.where((a == 0) & (b >= 0), 0.0, out * np.log(a))
    return da, db


def _max_local(out, a, b):
    """1 for the larger input, 0 for the smaller, 1/2 each at a tie (and 1 for both when a
    comparison fails on NaN, as in PyTorch)."""
    share = np.where(a == b, 0.5, 1.0)
    return np.where(a < b, 0.0, share), np.where(b < a, 0.0, share)


def _sigmoid(a):
    """1/(1 + e^-a), written as e^a/(1 + e^a) for a < 0 so that tiny values keep their
    digits (as torch.sigmoid does)."""
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


BINARY = {
    "add": Op("add", 2, "+", np.add, lambda out, a, b: (1.0, 1.0),
              torch.add),
    "sub": Op("sub", 2, "−", np.subtract,
              lambda out, a, b: (1.0, -1.0), torch.sub),
    "mul": Op("mul", 2, "×", np.multiply, lambda out, a, b: (b, a),
              torch.mul),
    "div": Op("div", 2, "÷", np.divide, lambda out, a, b: (1.0 / b, -a / (b * b)),
              torch.div),
    "pow": Op("pow", 2, "^", np.power, _pow_local, torch.pow, selects=True),
    "max": Op("max", 2, "max", np.maximum, _max_local, torch.maximum, selects=True),
}

UNARY = {
    "neg": Op("neg", 1, "−", np.negative, lambda out, a: (-1.0,), torch.neg),
    "exp": Op("exp", 1, "exp", np.exp, lambda out, a: (out,), torch.exp),
    "log": Op("log", 1, "log", np.log, lambda out, a: (1.0 / a,), torch.log),
    "sqrt": Op("sqrt", 1, "√", np.sqrt, lambda out, a: (1.0 / (2.0 * out),), torch.sqrt),
    "tanh": Op("tanh", 1, "tanh", np.tanh, lambda out, a: (1.0 - out * out,), torch.tanh),
    "sigmoid": Op("sigmoid", 1, "σ", _sigmoid, lambda out, a: (out * (1.0 - out),),
                  torch.sigmoid),
    "relu": Op("relu", 1, "relu", lambda a: np.maximum(a, 0.0),
               lambda out, a: (np.where(a <= 0, 0.0, 1.0),), torch.relu, selects=True),
    "sin": Op("sin", 1, "sin", np.sin, lambda out, a: (np.cos(a),), torch.sin),
    "cos": Op("cos", 1, "cos", np.cos, lambda out, a: (-np.sin(a),), torch.cos),
}

OPS: dict[str, Op] = {**BINARY, **UNARY}

# the names a user may call in an expression: the unary functions (neg is the "-" sign) and max
FUNCTIONS: dict[str, Op] = {name: op for name, op in OPS.items()
                            if name not in ("add", "sub", "mul", "div", "pow", "neg")}
