"""Backpropagation page: what typing an expression costs. Target: parse + forward
+ backward of a 200-node expression < 5 ms; also the full page computation (trace, layout and
the torch.autograd reference) and the gradient-check curve."""
from __future__ import annotations

import statistics
import time

import numpy as np

from benchmarks import Measurement
from engine import autodiff


def _wall_and_cpu(fn, repeat: int) -> tuple[float, float]:
    """Median wall time and median process CPU time (s) after two warm-up calls: the CPU time
    is what the work costs on an idle core, the wall time also counts waiting for a core on
    a shared machine."""
    fn(), fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _measure(fn, repeat: int, note: str) -> Measurement:
    wall, cpu = _wall_and_cpu(fn, repeat)
    return Measurement(wall * 1e3, "ms", f"{note}; CPU time {cpu * 1e3:.2f} ms")


def expression(n_terms: int = 30, seed: int = 0) -> str:
    """A sum of n_terms terms like tanh(x3 * 0.5 + x1) * x7 over 10 variables (6 nodes per
    term: 30 terms give 202 nodes)."""
    rng = np.random.default_rng(seed)
    fns = ["tanh", "sigmoid", "exp", "sin", "relu"]
    terms = [f"{rng.choice(fns)}(x{rng.integers(10)} * {rng.uniform(-1, 1):.2f} + "
             f"x{rng.integers(10)}) * x{rng.integers(10)}" for _ in range(n_terms)]
    return " + ".join(terms)


TEXT = expression()
ENV = {f"x{i}": 0.1 * (i - 5) for i in range(10)}
N_NODES = len(autodiff.parse(TEXT))


def parse_forward_backward() -> Measurement:
    def run():
        g = autodiff.parse(TEXT)
        g.forward(ENV)
        return g.backward()
    return _measure(run, 30, f"{N_NODES}-node expression, {len(TEXT)} characters; "
                             f"target < 5 ms")


def page_computation() -> Measurement:
    return _measure(lambda: autodiff.differentiate(TEXT, ENV), 10,
                    f"differentiate(): parse, forward, trace of every step, layout, "
                    f"torch.autograd reference; {N_NODES} nodes")


def gradcheck() -> Measurement:
    g = autodiff.parse("sigmoid(w0*x0 + w1*x1 + w2)")
    env = {"w0": 2.0, "x0": -1.0, "w1": -3.0, "x1": -2.0, "w2": -3.0}
    return _measure(lambda: autodiff.gradcheck_curve(g, env), 10,
                    f"{len(autodiff.DEFAULT_HS)} steps h x 5 inputs x forward + central "
                    f"differences, vectorized over h")


BENCHMARKS = {
    "backpropagation: parse + forward + backward, 200 nodes": parse_forward_backward,
    "backpropagation: everything the Graph tab draws, 200 nodes": page_computation,
    "backpropagation: gradient-check curve (111 steps)": gradcheck,
}
