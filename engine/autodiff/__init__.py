"""Automatic differentiation you can step through: parse an expression into a computational
graph, run it forward, backpropagate node by node, and check the result against finite
differences and torch.autograd.

    parser.py     parse(text) -> Graph (ast with a whitelist; never eval)
    ops.py        OPS: name -> forward, local gradients, torch reference
    graph.py      Graph.forward / backward / trace / torch_gradients; layout for drawing
    gradcheck.py  finite_difference, gradcheck_curve (the U-shaped error curve)
    layers.py     linear_layer_grads, layer_example, cost_forward_vs_reverse
    results.py    differentiate(text, env): everything the page draws, as one result
    nonfinite.py  notes(d): where an inf/NaN starts and why, in words
"""
from engine.autodiff.gradcheck import (DEFAULT_HS, DIFFERENCES, EPS, GradcheckCurve,
                                       finite_difference, gradcheck_curve, relative_error)
from engine.autodiff.graph import Edge, Graph, Layout, Node, TraceStep, layout
from engine.autodiff.layers import (LOSSES, JacobianCost, LayerExample, LinearGrads,
                                    cost_forward_vs_reverse, layer_example, linear_layer_grads)
from engine.autodiff.nonfinite import notes as nonfinite_notes
from engine.autodiff.ops import FUNCTIONS, OPS, Op
from engine.autodiff.parser import MAX_CHARS, MAX_DEPTH, MAX_NODES, parse, parse_values
from engine.autodiff.results import Differentiation, differentiate

__all__ = ["DEFAULT_HS", "DIFFERENCES", "EPS", "FUNCTIONS", "LOSSES", "MAX_CHARS", "MAX_DEPTH",
           "MAX_NODES", "OPS", "Differentiation", "Edge", "GradcheckCurve", "Graph",
           "JacobianCost", "LayerExample", "Layout", "LinearGrads", "Node", "Op", "TraceStep",
           "cost_forward_vs_reverse", "differentiate", "finite_difference", "gradcheck_curve",
           "layer_example", "layout", "linear_layer_grads", "nonfinite_notes", "parse", "parse_values",
           "relative_error"]
