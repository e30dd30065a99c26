"""Benchmark helper: one training step captured in a CUDA graph and replayed, against the same
step run eagerly (`python -m benchmarks devices`, scripts/device_check.sh). No page trains this
way: it measures what a graph would buy the small, launch-bound models on a GPU.

A 2x128 GAN step is ~40 tiny kernels; eager CUDA pays a launch (~5-10 us of CPU each) per
kernel and trained at 275 it/s on an H200, slower than one CPU core (342 it/s). Replaying a
captured graph launches all of them at once: 2,250 it/s measured on the same H200.

The step must be *static*: the same shapes, the same tensors (inputs are copied into fixed
buffers), no host sync (no .item(), float(), branches on values) and an optimizer whose state
lives on the device (torch.optim.Adam/AdamW/SGD(..., capturable=True); plain SGD has no state).
Random draws inside the step must come from the default CUDA generator (graph-safe: each replay
advances its Philox offset); a private torch.Generator must be registered with the graph first.

    step = GraphedStep(step_fn, {"x": x0, "y": y0}, warmup=3)
    for batch in batches:
        out = step(**batch)        # exactly one training step per call (eager for the first
                                   # `warmup` calls on a side stream, then capture, then replay)

step_fn(**inputs) must zero the gradients with set_to_none=True, run forward, backward and
optimizer.step(), and return a dict of tensors (e.g. {"loss": loss.detach()}); the returned
tensors are the graph's static outputs, overwritten by the next call (clone to keep them).

How a trainer would opt in: build its
optimizers with capturable=True on CUDA, move the body of `_iteration` that touches tensors into
a step_fn over fixed-size batches, keep `float(loss)` *outside* it (read the returned tensor
only when a frame needs it), and call `GraphedStep(...)` from `_iteration` when
`use_cuda_graph(self.device)` is true; keep the eager path for CPU/MPS and whenever the
settings change shapes (rebuild the GraphedStep then).
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

StepFn = Callable[..., dict[str, torch.Tensor]]


def use_cuda_graph(device: str | torch.device) -> bool:
    """Capture only on CUDA (graphs do not exist on CPU/MPS)."""
    return torch.device(device).type == "cuda" and torch.cuda.is_available()


class GraphedStep:
    """Calls step_fn eagerly `warmup` times on a side stream (cuDNN/cuBLAS workspaces and the
    optimizer state get allocated there, as capture requires), then captures one call in a
    torch.cuda.CUDAGraph and replays it. Every call is one real training step, so k calls of
    a GraphedStep equal k eager calls of step_fn (tested in tests/engine/test_cuda_graph.py)."""

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


def classifier_step_fn(model: torch.nn.Module, opt: torch.optim.Optimizer) -> StepFn:
    """step_fn(x, y) for a logistic classifier (the shape of the 2-D pages' trainers): zero the
    gradients, BCE-with-logits loss of model(x) against y, backward, optimizer step."""
    def step_fn(x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        loss.backward()
        opt.step()
        return {"loss": loss.detach()}
    return step_fn


def sync(device: str) -> None:
    """Wait for queued kernels, so wall time covers the work (CUDA/MPS run asynchronously)."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def mlp_step(device: str, depth: int = 2, width: int = 128, batch: int = 256, seed: int = 0,
             capturable: bool = False):
    """(model, optimizer, x, y, step) for one full-batch Adam step of a depth x width tanh MLP
    on 2-D points (logistic loss). step() zeroes the gradients, runs forward and backward and
    the optimizer, and returns the loss tensor (no host sync). `capturable=True` gives an Adam
    whose state lives on the device, as a CUDA graph needs (GraphedStep above)."""
    g = torch.Generator().manual_seed(int(seed))
    dims = [2] + [int(width)] * int(depth)
    layers: list[nn.Module] = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(dims[-1], 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) / p.shape[-1] ** 0.5)
    model.to(device)
    x = torch.randn(batch, 2, generator=g).to(device)
    y = (x[:, 0] * x[:, 1] > 0).float()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=capturable)

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        loss.backward()
        opt.step()
        return loss.detach()
    return model, opt, x, y, step
