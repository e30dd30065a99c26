"""A training step captured in a CUDA graph and replayed (the batched trainers use it on a GPU:
engine/gan/batched.py).

A 2x128 GAN step is ~40 tiny kernels; eager CUDA pays a launch (~5-10 us of CPU each) per
kernel and trained at 275 it/s on an H200, slower than one CPU core (342 it/s). Replaying a
captured graph launches all of them at once: 2,250 it/s measured on the same H200.

The step must be *static*: the same shapes, the same tensors (inputs are copied into fixed
buffers), no host sync (no .item(), float(), branches on values) and optimizer state that
lives on the device (a hand-written update on stacked tensors, or torch.optim's
capturable=True). Random draws are made outside the step and passed in as inputs.

    step = GraphedStep(step_fn, {"x": x0, "y": y0}, warmup=3)
    for batch in batches:
        out = step(**batch)        # exactly one training step per call (eager for the first
                                   # `warmup` calls on a side stream, then capture, then replay)

step_fn(**inputs) runs forward, backward and the update in place and returns a dict of
tensors (e.g. {"loss": loss.detach()}); the returned tensors are the graph's static outputs,
overwritten by the next call (clone to keep them).
"""
from __future__ import annotations

from typing import Callable

import torch

StepFn = Callable[..., dict[str, torch.Tensor]]


def use_cuda_graph(device: str | torch.device) -> bool:
    """Capture only on CUDA (graphs do not exist on CPU/MPS)."""
    return torch.device(device).type == "cuda" and torch.cuda.is_available()


class GraphedStep:
    """Calls step_fn eagerly `warmup` times on a side stream (cuDNN/cuBLAS workspaces and the
    optimizer state get allocated there, as capture requires), then captures one call in a
    torch.cuda.CUDAGraph and replays it. Every call is one real training step, so k calls of
    a GraphedStep equal k eager calls of step_fn (tests/test_bench_cuda_graph.py, on a GPU)."""

    def __init__(self, step_fn: StepFn, example_inputs: dict[str, torch.Tensor],
                 warmup: int = 3):
        if not all(t.is_cuda for t in example_inputs.values()):
            raise ValueError("GraphedStep needs CUDA tensors as inputs")
        self.step_fn, self.warmup = step_fn, max(1, int(warmup))
        self.static = {k: v.detach().clone() for k, v in example_inputs.items()}
        self.graph: torch.cuda.CUDAGraph | None = None
        self.outputs: dict[str, torch.Tensor] = {}
        self.calls = 0
        self._side = torch.cuda.Stream()

    def _load(self, inputs: dict[str, torch.Tensor]) -> None:
        if set(inputs) - set(self.static):
            raise KeyError(f"unknown inputs {sorted(set(inputs) - set(self.static))}")
        for k, v in inputs.items():
            if v.shape != self.static[k].shape:
                raise ValueError(f"input {k!r} has shape {tuple(v.shape)}; the captured step "
                                 f"needs {tuple(self.static[k].shape)} (build a new GraphedStep)")
            self.static[k].copy_(v, non_blocking=True)

    def __call__(self, **inputs: torch.Tensor) -> dict[str, torch.Tensor]:
        self._load(inputs)
        self.calls += 1
        if self.graph is not None:
            self.graph.replay()
            return self.outputs
        if self.calls <= self.warmup:           # eager, on a side stream (capture's rule)
            self._side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self._side):
                out = self.step_fn(**self.static)
            torch.cuda.current_stream().wait_stream(self._side)
            return out
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):           # records the kernels; runs none of them
            self.outputs = self.step_fn(**self.static)
        self.graph = graph
        graph.replay()                          # ... so this call's step happens here
        return self.outputs
