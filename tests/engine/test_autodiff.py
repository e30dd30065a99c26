"""engine/autodiff: the parser's whitelist, gradients against torch.autograd (float64, 200+
random expressions), the recorded backward pass, finite differences and their U-shaped error
curve, linear-layer gradients and the cost of a full Jacobian in forward and reverse mode."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.autodiff import (DEFAULT_HS, EPS, FUNCTIONS, LOSSES, MAX_DEPTH, OPS,
                             cost_forward_vs_reverse, differentiate, finite_difference,
                             gradcheck_curve, layer_example, layout, linear_layer_grads, parse)
from tests.engine.test_purity import FORBIDDEN, _imports

VARIABLES = ("x", "y", "z", "w")
UNARY = ("exp", "log", "sqrt", "tanh", "sigmoid", "relu", "sin", "cos")


# ------------------------------------------------------------------ random expressions

def random_expression(rng: np.random.Generator, depth: int) -> str:
    """A random expression over x, y, z, w using every operator and function (seeded).
    Variables repeat, so gradients must accumulate; log/sqrt/pow may leave their domain,
    which gives NaN/inf that torch must reproduce too."""
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.75:
            return str(rng.choice(VARIABLES))
        return f"{rng.uniform(-3, 3):.3f}"
    kind = rng.choice(["+", "-", "*", "/", "**", "neg", "fn", "fn", "max"])
    a = random_expression(rng, depth - 1)
    if kind == "neg":
        return f"-({a})"
    if kind == "fn":
        fn = str(rng.choice(UNARY))
        if fn in ("log", "sqrt") and rng.random() < 0.7:     # mostly inside the domain
            return f"{fn}(1.5 + ({a}) * ({a}))"
        return f"{fn}({a})"
    b = random_expression(rng, depth - 1)
    if kind == "max":
        return f"max({a}, {b})"
    if kind == "**":
        if rng.random() < 0.6:
            return f"({a}) ** {int(rng.integers(-2, 4))}"
        return f"exp({a}) ** ({b})"
    if kind == "/":
        return f"({a}) / (0.5 + ({b}) * ({b}))" if rng.random() < 0.7 else f"({a}) / ({b})"
    return f"({a}) {kind} ({b})"


def _random_cases(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        text = random_expression(rng, depth=int(rng.integers(1, 6)))
        env = {v: float(rng.uniform(-2, 2)) for v in VARIABLES}
        yield text, env


def _close(ours: float, ref: float, tol: float = 1e-10) -> bool:
    if math.isnan(ref) or math.isnan(ours):
        return math.isnan(ref) and math.isnan(ours)
    if math.isinf(ref) or math.isinf(ours):
        return ours == ref
    return abs(ours - ref) <= tol * max(1.0, abs(ref))


def test_random_expressions_match_torch_autograd_in_float64():
    finite = 0
    ops_seen: set[str] = set()
    for text, env in _random_cases(400):
        graph = parse(text)
        out = graph.forward(env)
        grads = graph.backward()
        t_out, t_grads = graph.torch_gradients(env)
        assert _close(out, t_out), (text, env, out, t_out)
        assert set(grads) == set(t_grads) and set(grads) <= set(VARIABLES)
        for name in grads:
            assert _close(grads[name], t_grads[name]), (text, env, name, grads, t_grads)
        if math.isfinite(out) and all(math.isfinite(g) for g in grads.values()):
            finite += 1
            ops_seen |= {n.op for n in graph.nodes}
    assert finite >= 200                     # >= 200 expressions with finite gradients
    assert set(OPS) <= ops_seen              # and every operation was exercised


def test_trace_contributions_sum_to_the_gradients():
    for text, env in _random_cases(150, seed=1):
        graph = parse(text)
        graph.forward(env)
        node_grads = graph.node_gradients()
        total = np.zeros(len(graph.nodes))
        total[graph.output] = 1.0                       # the seed dL/dL
        for step in graph.trace():
            # the upstream is complete when the node is processed: it is the final gradient
            assert _close(step.upstream, float(node_grads[step.node])), (text, step)
            selects = OPS[graph.nodes[step.node].op].selects
            for i, loc, c in zip(step.inputs, step.local, step.contribution):
                expected = 0.0 if selects and loc == 0 else step.upstream * loc
                assert _close(c, expected, 1e-15)   # downstream = upstream x local
                total[i] += c
        for n in graph.nodes:
            if n.op == "input":
                assert _close(total[n.id], float(node_grads[n.id]), 1e-12), (text, n)


def test_trace_steps_run_in_reverse_topological_order_and_record_arrivals():
    d = differentiate("(x + y) * z", {"x": -2.0, "y": 5.0, "z": -4.0})
    order = [s.node for s in d.trace]
    assert order == sorted(order, reverse=True)
    first, second = d.trace
    assert (first.upstream, first.local, first.contribution) == (1.0, (-4.0, 3.0), (-4.0, 3.0))
    assert (second.upstream, second.local, second.contribution) == (-4.0, (1.0, 1.0),
                                                                    (-4.0, -4.0))
    labels = [n.label for n in d.nodes]
    x, z, plus = labels.index("x"), labels.index("z"), labels.index("+")
    assert np.isnan(first.grads_after[x]) and first.grads_after[z] == 3.0
    assert first.grads_after[plus] == -4.0 and second.grads_after[x] == -4.0
    assert np.isnan(d.grads_at_step(0)[x]) and d.grads_at_step(0)[-1] == 1.0
    np.testing.assert_array_equal(d.grads_at_step(99), second.grads_after)


# ------------------------------------------------------------------------ worked examples

def test_course_example_gradients():
    d = differentiate("(x + y) * z", {"x": -2.0, "y": 5.0, "z": -4.0})
    assert d.output == -12.0
    assert d.gradients == {"x": -4.0, "y": -4.0, "z": 3.0} == d.torch_gradients
    assert d.max_torch_diff == 0.0


def test_sigmoid_neuron_gradients_are_sigma_one_minus_sigma_times_inputs():
    env = {"w0": 2.0, "x0": -1.0, "w1": -3.0, "x1": -2.0, "w2": -3.0}
    d = differentiate("sigmoid(w0*x0 + w1*x1 + w2)", env)
    s = 1 / (1 + math.exp(-(2 * -1 + -3 * -2 - 3)))
    assert d.output == pytest.approx(0.7310585786300049, abs=1e-15)
    local = s * (1 - s)
    for w, x in (("w0", "x0"), ("w1", "x1")):
        assert d.gradients[w] == pytest.approx(local * env[x], abs=1e-15)
        assert d.gradients[x] == pytest.approx(local * env[w], abs=1e-15)
    assert d.gradients["w2"] == pytest.approx(local, abs=1e-15)
    assert d.gradients["w0"] == pytest.approx(-0.19661193324148185, abs=1e-15)  # cs231n


def test_a_variable_used_twice_receives_the_sum_of_both_paths():
    d = differentiate("x * y + x", {"x": 3.0, "y": -2.0})
    assert d.gradients == {"x": -1.0, "y": 3.0}             # y + 1 and x
    x = [n.label for n in d.nodes].index("x")
    into_x = [c for s in d.trace for i, c in zip(s.inputs, s.contribution) if i == x]
    assert sorted(into_x) == [-2.0, 1.0]                   # two terms, summed
    square = differentiate("x * x", {"x": 3.0})
    assert square.gradients == {"x": 6.0} and square.trace[0].contribution == (3.0, 3.0)
    assert sum(n.op == "input" for n in square.nodes) == 1  # one node per variable


@pytest.mark.parametrize("x, grad", [(-1.5, 0.0), (0.0, 0.0), (0.5, 3.0)])
def test_relu_passes_no_gradient_where_it_is_flat(x, grad):
    d = differentiate("relu(3 * x)", {"x": x})
    assert d.gradients["x"] == grad == d.torch_gradients["x"]


@pytest.mark.parametrize("x, y, gx, gy", [(2.0, 1.0, 5.0, 0.0), (-1.0, 4.0, 0.0, 5.0),
                                          (3.0, 3.0, 2.5, 2.5)])
def test_max_routes_the_gradient_to_the_larger_input(x, y, gx, gy):
    d = differentiate("max(x, y) * 5", {"x": x, "y": y})
    assert (d.gradients["x"], d.gradients["y"]) == (gx, gy)
    assert d.torch_gradients == d.gradients                 # ties split in half, as torch


def test_division_by_zero_and_log_of_a_negative_are_results_not_crashes():
    g = parse("1 / x + log(y)")
    assert math.isinf(g.forward({"x": 0.0, "y": 1.0}))
    assert math.isnan(g.forward({"x": 1.0, "y": -1.0}))
    assert g.backward()["y"] == -1.0 == g.torch_gradients({"x": 1.0, "y": -1.0})[1]["y"]
    d = differentiate("1 / x", {"x": 0.0})
    assert math.isinf(d.output) and math.isinf(d.gradients["x"])
    assert d.max_torch_diff == 0.0


def test_forward_broadcasts_over_array_inputs():
    g = parse("tanh(x) * y + x ** 2")
    xs = np.linspace(-2, 2, 7)
    batched = g.forward({"x": xs, "y": 3.0})
    grads = g.backward()
    for i, x in enumerate(xs):
        # numpy's vector and scalar paths may round differently: float64 tolerance
        assert batched[i] == pytest.approx(g.forward({"x": x, "y": 3.0}), rel=1e-12)
        assert grads["x"][i] == pytest.approx(g.backward()["x"], rel=1e-12)


def test_backward_needs_a_forward_pass_and_every_variable():
    g = parse("x + y")
    with pytest.raises(RuntimeError, match="forward"):
        g.backward()
    with pytest.raises(ValueError, match="'y'"):
        g.forward({"x": 1.0})


# ------------------------------------------------------------------------------ parser

@pytest.mark.parametrize("text, message", [
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("(x + y", r"'\(' was never closed"),
    ("x + y)", r"column 6: unmatched '\)'"),
    ("foo(x)", "unknown function 'foo' at column 1"),
    ("x + exp(y).real", "attribute access 'exp\\(y\\).real' at column 5"),
    ("lambda: x", "lambda 'lambda: x' at column 1"),
    ("__import__('os')", "unknown function '__import__' at column 1"),
    ("x + __builtins__", "name '__builtins__' at column 5"),
    ("(1).__class__", "attribute access"),
    ("x" * 10_240, "too long: 10,240 characters"),
    ("-" * 250 + "x", f"deeper than {MAX_DEPTH} levels at column {MAX_DEPTH + 2}"),
    ("exp(" * 250 + "x" + ")" * 250, "too many nested parentheses"),
    ("(" * 201 + "x" + ")" * 201, "too many nested parentheses"),
    ("x ^ 2", r"operator '\^' at column 3 .*write x\*\*2"),
    ("x[0]", "subscript 'x\\[0\\]' at column 1"),
    ("x < y", "comparison"),
    ("'text'", "string 'text' at column 1 is not a number"),
    ("True", "'True' at column 1 is not a number"),
    ("exp", "'exp' is a function"),
    ("exp(x, y)", r"exp\(\) takes 1 argument, got 2"),
    ("max(x)", r"max\(\) takes 2 arguments, got 1"),
    ("max(x, y, key=z)", "keyword arguments"),
    ("x; y", "syntax error at column 2"),
    ("x if y else z", "if-expression"),
    ("[x for x in y]", "comprehension"),
    ("1e999", "'1e999' at column 1 is too large"),
    ("os.system('ls')", "call of 'os.system' at column 1"),
])
def test_bad_input_raises_value_error_naming_the_token_and_position(text, message):
    with pytest.raises(ValueError, match=message):
        parse(text)


def test_parser_accepts_the_whole_whitelist():
    text = "  +x - -y * 2.5e-1 / z ** 2 + " + " + ".join(f"{f}(x)" for f in FUNCTIONS
                                                         if f != "max") + " + max(x, y)"
    g = parse(text)
    assert g.input_names == ("x", "y", "z")
    assert {n.op for n in g.nodes} == set(OPS) | {"input", "const"}
    env = {"x": 0.7, "y": -1.3, "z": 2.0}
    assert g.forward(env) == pytest.approx(g.torch_gradients(env)[0], rel=1e-14)
    assert parse("(" * 150 + "x" + ")" * 150).forward({"x": 2.0}) == 2.0   # deep but allowed
    assert parse("-" * MAX_DEPTH + "x").forward({"x": 2.0}) == 2.0


def test_node_columns_point_into_the_typed_text():
    g = parse("  (a + b) * exp(c)")
    by_label = {n.label: n.column for n in g.nodes}
    assert by_label["a"] == 4 and by_label["b"] == 8 and by_label["exp"] == 13


# ------------------------------------------------------------------------------ layout

def test_layout_draws_left_to_right_without_overlaps():
    for text, _ in _random_cases(60, seed=2):
        g = parse(text)
        pos = layout(g)
        assert pos.x[g.output] == pos.x.max()
        for e in g.edges:
            assert pos.x[e.src] < pos.x[e.dst], text
        points = set(zip(pos.x.tolist(), pos.y.tolist()))
        assert len(points) == len(g.nodes), text


def test_tree_layout_puts_arguments_in_order_and_parents_between_them():
    g = parse("(x + y) * z")
    pos = layout(g)
    x, y, plus, z, times = range(5)
    assert pos.y[x] < pos.y[y] < pos.y[z]
    assert pos.y[plus] == (pos.y[x] + pos.y[y]) / 2
    assert pos.x.tolist() == [0, 0, 1, 1, 2]


# --------------------------------------------------------------------------- gradcheck

GRADCHECK_CASES = [
    ("sin(x) * exp(y)", {"x": 1.0, "y": 0.5}),
    ("tanh(x) * y + x ** 3", {"x": 0.3, "y": -1.2}),
    ("sigmoid(w0*x0 + w1*x1 + w2)", {"w0": 2.0, "x0": -1.0, "w1": -3.0, "x1": -2.0,
                                     "w2": -3.0}),
    ("log(1 + x * x) / y", {"x": 2.0, "y": 3.0}),
    ("exp(x) * cos(y)", {"x": 5.0, "y": 4.0}),
]


@pytest.mark.parametrize("text, env", GRADCHECK_CASES)
def test_gradcheck_minimum_lies_within_a_decade_of_theory(text, env):
    c = gradcheck_curve(parse(text), env)
    assert c.theory_h["central"] == pytest.approx(EPS ** (1 / 3) * c.scale)
    assert c.theory_h["forward"] == pytest.approx(EPS ** 0.5 * c.scale)
    for kind in ("central", "forward"):
        ratio = c.best_h[kind] / c.theory_h[kind]
        assert 0.1 <= ratio <= 10, (kind, c.best_h, c.theory_h)
    assert c.best_error["central"] < 1e-9 < c.best_error["forward"] < 1e-6
    assert c.truncation_slope["central"] == pytest.approx(2.0, abs=0.15)
    assert c.truncation_slope["forward"] == pytest.approx(1.0, abs=0.15)
    for kind in ("central", "forward"):
        assert c.roundoff_slope[kind] == pytest.approx(-1.0, abs=0.25)


def test_finite_differences_equal_the_closed_forms():
    g = parse("x ** 3 * y")
    env = {"x": 2.0, "y": 1.0}
    h = 1e-2
    central = finite_difference(g, env, h, "central")
    forward = finite_difference(g, env, h, "forward")
    assert central["x"] == pytest.approx(12.0 + h ** 2, rel=1e-9)   # (x+h)^3-(x-h)^3 / 2h
    assert forward["x"] == pytest.approx(12.0 + 6 * h + h ** 2, rel=1e-9)
    assert central["y"] == pytest.approx(8.0, rel=1e-12)
    batched = finite_difference(g, env, DEFAULT_HS[:5], "central")["x"]
    assert batched.shape == (5,) and batched[0] == pytest.approx(12.0 + 0.01, rel=1e-9)
    with pytest.raises(ValueError, match="unknown difference"):
        finite_difference(g, env, h, "sideways")


def test_linear_functions_have_no_truncation_error():
    c = gradcheck_curve(parse("(x + y) * z"), {"x": -2.0, "y": 5.0, "z": -4.0})
    assert c.errors["central"][0] < 1e-14 and c.errors["forward"][0] < 1e-14


# ----------------------------------------------------------------------------- layers

def test_linear_layer_grads_match_autograd_and_have_the_parameter_shapes():
    rng = np.random.default_rng(0)
    W, x, delta = rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=3)
    g = linear_layer_grads(W, x, delta)
    tW, tx = torch.tensor(W, requires_grad=True), torch.tensor(x, requires_grad=True)
    dW, dx = torch.autograd.grad(tW @ tx, (tW, tx), torch.tensor(delta))
    np.testing.assert_allclose(g.dW, dW.numpy(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(g.dx, dx.numpy(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(g.dW, np.outer(delta, x))       # delta x^T
    assert g.dW.shape == W.shape and g.dx.shape == x.shape and g.db.shape == delta.shape
    with pytest.raises(ValueError, match="shapes do not fit"):
        linear_layer_grads(W, rng.normal(size=4), delta)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("batch", [1, 8])
def test_layer_example_equals_autograd(loss, batch):
    ex = layer_example(6, 4, batch=batch, loss=loss, seed=3)
    assert ex.max_abs_diff < 1e-14
    assert ex.loss == pytest.approx(ex.torch_loss, rel=1e-14)
    assert ex.shapes["dL/dW"] == ex.shapes["W"] == (4, 6)
    assert ex.shapes["dL/dx"] == ex.shapes["x"] == (batch, 6)
    assert ex.shapes["dL/db"] == ex.shapes["b"] == (4,)
    other = layer_example(6, 4, batch=batch, loss=loss, seed=4)
    assert not np.allclose(other.grads.dW, ex.grads.dW)


@pytest.mark.parametrize("n_in, n_out", [(1, 1), (5, 1), (3, 7), (20, 2)])
def test_full_jacobian_costs_n_forward_or_m_reverse_passes(n_in, n_out):
    c = cost_forward_vs_reverse(n_in, n_out)
    assert (c.forward_passes, c.reverse_passes) == (n_in, n_out)
    assert c.jacobian_forward.shape == c.jacobian_reverse.shape == (n_out, n_in)
    assert c.max_error < 1e-14
    assert c.cheaper == ("tie" if n_in == n_out else "reverse" if n_out < n_in else "forward")


# ------------------------------------------------------------------------------ purity

@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[2] / "engine" /
                                         "autodiff").glob("*.py")), ids=lambda p: p.name)
def test_autodiff_package_imports_no_ui_library(path):
    # tests/engine/test_purity.py looks at engine/*.py only, not into packages
    assert not (_imports(path) & FORBIDDEN)


def test_parse_values_reads_name_number_pairs_and_names_bad_items():
    from engine.autodiff import parse_values
    assert parse_values(" x = -2, y=5 ; z = -4e0,") == {"x": -2.0, "y": 5.0, "z": -4.0}
    assert parse_values("") == {}
    for bad, message in (("x -2", "cannot read 'x -2'"), ("x = two", "number in 'x = two'"),
                         ("__class__ = 1", "cannot read"), ("x = inf", "finite"),
                         ("x = __import__('os')", "number in")):
        with pytest.raises(ValueError, match=message):
            parse_values(bad)


def test_jacobian_cost_is_safe_in_concurrent_threads():
    # the app runs each session in its own thread; forward-mode AD levels are process-global
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(4) as pool:
        costs = list(pool.map(lambda n: cost_forward_vs_reverse(n, 3), [40, 41, 42, 43] * 3))
    assert [c.forward_passes for c in costs] == [40, 41, 42, 43] * 3
    assert max(c.max_error for c in costs) < 1e-14


# ---- flat chains, long inputs, inf/NaN explained ---------------------------------------------

def test_a_flat_sum_or_product_is_not_nested():
    """x0 + x1 + ... is a chain, not nesting: 400 terms parse (the nesting limit is 200) and
    compute what Python computes, in the same node order as a nested walk."""
    from engine.autodiff import differentiate
    names = [f"x{i}" for i in range(400)]
    env = {n: float(i) for i, n in enumerate(names)}
    d = differentiate("+".join(names), env)
    assert d.output == sum(env.values()) and d.gradients["x7"] == 1.0
    g = parse("a - b + c * d / e - 2")
    assert [(n.op, n.inputs) for n in g.nodes] == [
        ("input", ()), ("input", ()), ("sub", (0, 1)), ("input", ()), ("input", ()),
        ("mul", (3, 4)), ("input", ()), ("div", (5, 6)), ("add", (2, 7)), ("const", ()),
        ("sub", (8, 9))]
    assert parse("x * y / z * 2").forward({"x": 3, "y": 4, "z": 6}) == 4.0
    with pytest.raises(ValueError, match="'%'"):
        parse("x + y % z + w")


def test_messages_never_echo_a_long_input():
    from engine.autodiff import parse_values
    with pytest.raises(ValueError) as exc:
        parse_values("a" * 10_000)
    assert len(str(exc.value)) < 150 and "10,000 characters" in str(exc.value)
    with pytest.raises(ValueError) as exc:
        parse_values("x = " + "9" * 5000 + "z")
    assert len(str(exc.value)) < 150


@pytest.mark.parametrize("expr, env, expected", [
    ("log(x)", {"x": -1.0}, ["log of a negative number (-1) at node 1 (log, column 1): NaN"]),
    ("log(x) * y", {"x": 0.0, "y": 1.0}, ["log of 0 (it is -inf) at node 1 (log, column 1): -inf"]),
    ("9**9**9", {}, ["9 ** 3.874e+08 overflows (more than 1.8e+308) at node 4 (^, column 1): inf"]),
    ("exp(x) + 1", {"x": 1000.0}, ["exp(1000) overflows (more than 1.8e+308: a > 709.78) at "
                                   "node 1 (exp, column 1): inf"]),
    ("x / y", {"x": 1.0, "y": 0.0}, ["division by zero (1 / 0) at node 2 (÷, column 1): inf"]),
    ("sqrt(x)", {"x": -4.0}, ["square root of a negative number (-4) at node 1 (√, column 1): NaN"]),
    ("(0 - 8) ** 0.5", {}, ["a negative number to a non-integer power ((-8) ** 0.5) at node 4 "
                            "(^, column 1): NaN"]),
    ("x * y", {"x": 1e200, "y": 1e200}, ["the result overflows float64 at node 2 (×, column 1): inf"]),
    ("sqrt(x)", {"x": 0.0}, ["the local gradient of node 1 (√, column 1) with respect to node 0 "
                             "is inf: the gradient node 0 receives is inf"]),
    ("x * y + 1", {"x": 2.0, "y": 3.0}, []),
])
def test_an_inf_or_nan_is_explained_once_where_it_starts(expr, env, expected):
    from engine.autodiff import differentiate, nonfinite_notes
    assert nonfinite_notes(differentiate(expr, env)) == expected
