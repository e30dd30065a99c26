"""The backpropagation page's presets and tour steps with the claims that check what each one
says (topics/backpropagation/page.py imports PRESETS and STEPS; the measurements are in
topics/backpropagation/compute.py)."""
from __future__ import annotations

import numpy as np

from engine import autodiff
from topics.backpropagation.compute import (
    DEFAULT_EXPR, DEFAULT_VALUES, graph_of, gradcheck_of, layer_of, modes_of, grad,
    torch_gap, node_value, contributions_into, sigmoid_local, max_abs_grad)
from ui.claims import Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
COURSE = {"bp_expr": DEFAULT_EXPR, "bp_values": DEFAULT_VALUES}
NEURON = {"bp_expr": "sigmoid(w0*x0 + w1*x1 + w2)",
          "bp_values": "w0 = 2, x0 = -1, w1 = -3, x1 = -2, w2 = -3"}
TWICE = {"bp_expr": "x * y + x", "bp_values": "x = 3, y = -2"}
RELU = {"bp_expr": "relu(w * x + b) * 3", "bp_values": "w = -1, x = 2, b = 0.5"}
ROUTER = {"bp_expr": "max(x, y) * z", "bp_values": "x = 4, y = 1, z = 2"}
END = {"bp_step": autodiff.MAX_NODES}          # clamped to the last step of the graph
CHECK = {**NEURON, "bp_step": 0}
LAYER = {"bp_lin_in": 5, "bp_lin_out": 3, "bp_batch": 4, "bp_loss": "cross_entropy"}
SCALAR_LOSS = {"bp_n": 100, "bp_m": 1}
WIDE_OUT = {"bp_n": 2, "bp_m": 64}

EXACT = 1e-12


def _equals(what: str, fn, value: float, tol: float = EXACT) -> Claim:
    return Claim(what, fn, lo=value - tol, hi=value + tol)


def _shown_grads(s) -> np.ndarray:
    """The gradients the graph figure prints at the settings' backward step (NaN: none)."""
    return graph_of(s).grads_at_step(int(s["bp_step"]))


C_TORCH = Claim("max |ours − torch.autograd|", torch_gap, hi=EXACT)
C_COURSE = (_equals("f", lambda s: graph_of(s).output, -12.0),
            _equals("∂f/∂x", lambda s: grad(s, "x"), -4.0),
            _equals("∂f/∂y", lambda s: grad(s, "y"), -4.0),
            _equals("∂f/∂z", lambda s: grad(s, "z"), 3.0), C_TORCH)
C_NEURON = (Claim("σ(1 − σ) at the output", sigmoid_local, lo=0.1966, hi=0.1967),
            *[Claim(f"∂f/∂{w} − σ(1 − σ)·{x}",
                    lambda s, w=w, x=x: grad(s, w) - sigmoid_local(s) *
                    autodiff.parse_values(s["bp_values"])[x], lo=-EXACT, hi=EXACT)
              for w, x in (("w0", "x0"), ("w1", "x1"))],
            _equals("∂f/∂w2 (the bias: σ(1 − σ) × 1)", lambda s: grad(s, "w2"),
                    0.19661193324148185, 1e-15),
            _equals("∂f/∂w0", lambda s: grad(s, "w0"), -0.19661193324148185, 1e-15), C_TORCH)
C_TWICE = (_equals("number of gradients flowing into x", lambda s: len(contributions_into(s,
                                                                                          "x")),
                   2, 0),
           _equals("their sum − ∂f/∂x", lambda s: sum(contributions_into(s, "x")) -
                   grad(s, "x"), 0.0),
           _equals("∂f/∂x = y + 1", lambda s: grad(s, "x"), -1.0), C_TORCH)
C_RELU = (Claim("pre-activation w·x + b", lambda s: node_value(s, "+"), hi=-1e-9),
          _equals("largest |gradient| of any input", max_abs_grad, 0.0, 0.0), C_TORCH)
C_ROUTER = (_equals("∂f/∂x (the larger input)", lambda s: grad(s, "x"), 2.0),
            _equals("∂f/∂y (the smaller input)", lambda s: grad(s, "y"), 0.0, 0.0),
            _equals("∂f/∂z", lambda s: grad(s, "z"), 4.0), C_TORCH)
C_CHECK = (Claim("best central h / (ε^(1/3) · scale)",
                 lambda s: gradcheck_of(s).best_h["central"] / gradcheck_of(s).theory_h[
                     "central"], lo=0.1, hi=10),
           Claim("ε^(1/3) · scale", lambda s: gradcheck_of(s).theory_h["central"],
                 lo=1.8e-5, hi=1.85e-5),
           Claim("√ε · scale", lambda s: gradcheck_of(s).theory_h["forward"],
                 lo=4.4e-8, hi=4.5e-8),
           Claim("smallest central relative error", lambda s: gradcheck_of(s).best_error[
               "central"], lo=1e-12, hi=1e-10),
           Claim("smallest forward relative error", lambda s: gradcheck_of(s).best_error[
               "forward"], lo=2e-9, hi=1e-8),
           Claim("best forward h / (√ε · scale)",
                 lambda s: gradcheck_of(s).best_h["forward"] / gradcheck_of(s).theory_h[
                     "forward"], lo=0.1, hi=10),
           Claim("forward slope for large h (truncation ∝ h)",
                 lambda s: gradcheck_of(s).truncation_slope["forward"], lo=0.8, hi=1.2),
           Claim("central slope for large h (truncation ∝ h²)",
                 lambda s: gradcheck_of(s).truncation_slope["central"], lo=1.8, hi=2.2),
           Claim("central slope for small h (round-off ∝ 1/h)",
                 lambda s: gradcheck_of(s).roundoff_slope["central"], lo=-1.3, hi=-0.7))
C_LAYER = (_equals("max |ours − torch.autograd| over dW, dx, db",
                   lambda s: layer_of(s).max_abs_diff, 0.0, 1e-12),
           _equals("rows of dL/dW − rows of W", lambda s: layer_of(s).grads.dW.shape[0] -
                   layer_of(s).W.shape[0], 0, 0),
           _equals("columns of dL/dW − columns of W", lambda s: layer_of(s).grads.dW.shape[1] -
                   layer_of(s).W.shape[1], 0, 0))
C_SCALAR = (_equals("reverse-mode passes", lambda s: modes_of(s)[2].reverse_passes, 1, 0),
            _equals("forward-mode passes", lambda s: modes_of(s)[2].forward_passes, 100, 0),
            Claim("max |J_forward − J_reverse| vs the closed form",
                  lambda s: modes_of(s)[2].max_error, hi=1e-12))
C_WIDE = (_equals("forward-mode passes", lambda s: modes_of(s)[2].forward_passes, 2, 0),
          _equals("reverse-mode passes", lambda s: modes_of(s)[2].reverse_passes, 64, 0))

PRESETS = {
    "Course example: (x + y)·z": Preset(
        {**COURSE, **END}, "x = −2, y = 5, z = −4: q = x + y = 3 and f = q·z = −12. Backward: "
        "∂f/∂z = q = 3 and ∂f/∂q = z = −4; the + node passes −4 unchanged to both x and y. "
        "torch.autograd gives the same −4, −4, 3.", "graph", C_COURSE),
    "Sigmoid neuron": Preset(
        {**NEURON, **END}, "σ(w0·x0 + w1·x1 + w2) = σ(1) = 0.731. The sigmoid's local gradient "
        "is σ(1 − σ) = 0.197, so each weight's gradient is 0.197 × its input "
        "(∂f/∂w0 = 0.197 × (−1) = −0.197) and the bias gets 0.197 itself.", "graph", C_NEURON),
    "A variable used twice: gradients add": Preset(
        {**TWICE, **END}, "x feeds both the × node and the final +: two gradients flow back "
        "into it, y = −2 from the product and 1 from the sum. They add: ∂f/∂x = y + 1 = −1.",
        "graph", C_TWICE),
    "ReLU's zero-gradient region": Preset(
        {**RELU, **END}, "w·x + b = −1.5 < 0, so the ReLU outputs 0 and its local gradient "
        "is 0: every input gradient is exactly 0, whatever happens after it.", "graph",
        C_RELU),
    "max as a gradient router": Preset(
        {**ROUTER, **END}, "max(4, 1) = 4: the local gradient is 1 for the larger input and 0 "
        "for the other, so all of ∂f/∂max = z = 2 goes to x and none to y.", "graph",
        C_ROUTER),
    "Gradient check on the sigmoid neuron": Preset(
        CHECK, "Central differences reach a relative error of about 1e-11, at an h within a "
        "decade of ε^(1/3)·scale = 1.8e-5 (red dotted line; scale = the largest |input| = 3); "
        "forward differences only get down to about 5e-9, near √ε·scale = 4.5e-8 (blue). Right "
        "of each minimum (larger h) the error grows as h² (central) or h (forward): "
        "truncation; left of it (smaller h) it grows as 1/h: round-off.", "gradcheck", C_CHECK),
    "Linear layer + cross-entropy": Preset(
        LAYER, "y = W x + b on a batch of 4: dL/dW = δᵀx has W's shape (3, 5), dL/dx = δW has "
        "x's shape (4, 5), dL/db sums δ over the batch; autograd agrees to 1e-12.", "layers",
        C_LAYER),
    "Scalar loss, 100 inputs: reverse mode": Preset(
        SCALAR_LOSS, "A loss is one number (m = 1): reverse mode gets the whole gradient in 1 "
        "backward pass, forward mode needs 100 passes, one per input. This is why training "
        "uses backpropagation.", "modes", C_SCALAR),
    "Few inputs, many outputs: forward mode": Preset(
        WIDE_OUT, "f: ℝ² → ℝ⁶⁴: forward mode needs 2 passes, reverse mode 64.", "modes",
        C_WIDE),
}

STEPS = [
    Step("The forward pass",
         "Each node computes its value from its inputs, left to right: q = x + y = 3, then "
         "f = q·z = −12 (green numbers). The backward walk has not started: the only "
         "gradient in the graph (red) is the seed dL/df = 1 at the output. The table already "
         "lists where the walk will end, ∂f/∂(x, y, z) = (−4, −4, 3).",
         {**COURSE, "bp_step": 0}, "graph",
         (_equals("q = x + y", lambda s: node_value(s, "+"), 3.0),
          _equals("f", lambda s: graph_of(s).output, -12.0),
          _equals("gradients shown in the graph before the first step",
                  lambda s: np.count_nonzero(~np.isnan(_shown_grads(s))), 1, 0),
          _equals("the seed at the output, dL/df", lambda s: _shown_grads(s)[-1], 1.0),
          *C_COURSE[1:4])),
    Step("One backward step",
         "Backprop starts at the output with dL/df = 1. The × node's local gradients are "
         "∂f/∂q = z = −4 and ∂f/∂z = q = 3; multiplied by the upstream 1 they go down its "
         "edges (orange).", {**COURSE, "bp_step": 1}, "graph",
         (_equals("first step: upstream", lambda s: graph_of(s).trace[0].upstream, 1.0),
          _equals("first step: gradient sent to q", lambda s: graph_of(s).trace[0]
                  .contribution[0], -4.0),
          _equals("first step: gradient sent to z", lambda s: graph_of(s).trace[0]
                  .contribution[1], 3.0))),
    Step("Upstream × local = downstream",
         "The + node has local gradient 1 for both inputs, so it copies its upstream −4 to x "
         "and to y. The walk is over: (−4, −4, 3), the same as torch.autograd.",
         {**COURSE, **END}, "graph", C_COURSE),
    Step("Fan-out: gradients add",
         "When a value is used twice, two gradients come back and are summed: in x·y + x, "
         "x receives −2 and 1, ∂f/∂x = −1.", {**TWICE, **END}, "graph", C_TWICE),
    Step("Check a gradient numerically",
         "Finite differences approximate each partial derivative. Too large an h: truncation "
         "error; too small: round-off. Central differences are best near ε^(1/3) times the "
         "inputs' scale, forward differences near √ε times it.",
         CHECK, "gradcheck", C_CHECK),
    Step("Whole layers at once",
         "For y = W x + b the same chain rule gives matrices: dL/dW = δᵀx, dL/dx = δW; each "
         "gradient has the shape of what it differentiates.", LAYER, "layers", C_LAYER),
    Step("Why reverse mode",
         "A full Jacobian of f: ℝⁿ → ℝᵐ costs n forward-mode passes or m reverse-mode "
         "passes. A loss has m = 1: one backward pass gives all n gradients.",
         SCALAR_LOSS, "modes", C_SCALAR),
]
