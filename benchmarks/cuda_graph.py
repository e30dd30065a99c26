"""Benchmark helpers: one small classifier's training step (eager, or captured in a CUDA graph
by engine.cuda_graph.GraphedStep) for `python -m benchmarks devices` and
scripts/device_check.sh. The batched trainers capture their own step the same way
(engine/gan/batched.py).
"""
from __future__ import annotations

import torch
from torch import nn

from engine.cuda_graph import GraphedStep, StepFn, use_cuda_graph  # noqa: F401 - re-exported


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
