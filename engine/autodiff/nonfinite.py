"""Why a value is inf or NaN: the node where it first appears and the reason, in words.

A non-finite value spreads: every node downstream of one is inf/NaN too, so only its origin
is worth a sentence, the first node whose own result is non-finite while all its inputs are
finite (and, for the backward pass, the first step whose local gradient is non-finite while
its upstream gradient is finite). REASONS maps an op to a function of (a[, b], out) giving
the cause; float64 overflows above MAX_FLOAT:

    log   a < 0: log of a negative number     a = 0: log of 0 is -inf
    sqrt  a < 0: square root of a negative number
    div   b = 0: division by zero
    pow   a < 0, b not an integer: a negative number to a non-integer power (NaN)
          a = 0, b < 0: 0 to a negative power;  |out| = inf: a ** b overflows
    exp   a > log(MAX_FLOAT) ~ 709.78: exp overflows
    add / sub / mul / neg / others: the result overflows float64
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

MAX_FLOAT = float(np.finfo(np.float64).max)


def _num(v: float) -> str:
    return f"{v:.4g}"


def _base(v: float) -> str:
    return f"({_num(v)})" if v < 0 else _num(v)


def _log(a, out=None):
    if a < 0:
        return f"log of a negative number ({_num(a)})"
    if a == 0:
        return "log of 0 (it is -inf)"
    return None


def _sqrt(a, out=None):
    return f"square root of a negative number ({_num(a)})" if a < 0 else None


def _div(a, b, out=None):
    return f"division by zero ({_num(a)} / 0)" if b == 0 else None


def _pow(a, b, out=None):
    if a < 0 and b != math.floor(b):
        return f"a negative number to a non-integer power ({_base(a)} ** {_num(b)})"
    if a == 0 and b < 0:
        return f"0 to a negative power (0 ** {_num(b)})"
    if math.isinf(out):
        return f"{_base(a)} ** {_num(b)} overflows (more than {MAX_FLOAT:.3g})"
    return None


def _exp(a, out=None):
    return f"exp({_num(a)}) overflows (more than {MAX_FLOAT:.3g}: a > 709.78)" \
        if a > math.log(MAX_FLOAT) else None


REASONS: dict[str, Callable[..., str | None]] = {
    "log": _log, "sqrt": _sqrt, "div": _div, "pow": _pow, "exp": _exp,
}


def _where(node) -> str:
    col = f", column {node.column}" if getattr(node, "column", 0) else ""
    return f"node {node.id} ({node.label}{col})"


def forward_notes(nodes, values) -> list[str]:
    """A sentence for each node where a non-finite forward value starts."""
    out = []
    values = [float(np.asarray(v).ravel()[0]) if np.size(v) else math.nan for v in values]
    for n in nodes:
        v = values[n.id]
        if math.isfinite(v):
            continue
        if n.op == "input":
            out.append(f"the input {n.label} is {_num(v)}")
            continue
        if n.op == "const":
            out.append(f"the number at {_where(n)} is {_num(v)}")
            continue
        args = [values[i] for i in n.inputs]
        if not all(math.isfinite(a) for a in args):
            continue                      # it only carries a non-finite input along
        reason = REASONS.get(n.op, lambda *a, **k: None)(*args, out=v)
        what = "NaN" if math.isnan(v) else _num(v)
        out.append(f"{reason or 'the result overflows float64'} at {_where(n)}: {what}")
    return out


def backward_notes(nodes, values, trace) -> list[str]:
    """A sentence for each backward step of a node with finite values around it whose local
    gradient makes a finite upstream gradient non-finite (sqrt at 0, x / y at y = 0, ...)."""
    out = []
    values = [float(np.asarray(v).ravel()[0]) if np.size(v) else math.nan for v in values]
    for step in trace:
        n = nodes[step.node]
        if not math.isfinite(step.upstream) or \
                not all(math.isfinite(values[i]) for i in (n.id, *n.inputs)):
            continue
        for i, local, contribution in zip(step.inputs, step.local, step.contribution):
            if not math.isfinite(contribution):
                out.append(f"the local gradient of {_where(n)} with respect to node {i} is "
                           f"{_num(local)}: the gradient node {i} receives is "
                           f"{_num(contribution)}")
    return out


def notes(d) -> list[str]:
    """Every explanation for an autodiff.Differentiation `d` (forward first)."""
    return forward_notes(d.nodes, d.values) + backward_notes(d.nodes, d.values, d.trace)
