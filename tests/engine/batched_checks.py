"""Shared steps of the batched-trainer tests: the same calls on trainers stepped alone and on
their batch, then member by member the same state (each test's own `same(alone, member)`)."""
from __future__ import annotations

from typing import Callable, Sequence


def step_both(alone: list, batch, calls: Sequence[int], mask: list[bool] | None = None) -> None:
    """Each call n: every trainer the mask leaves on steps n alone; the batch steps n."""
    for n in calls:
        for k, t in enumerate(alone):
            if mask is None or mask[k]:
                t.step(n)
        batch.step(n, mask)


def assert_members(alone: list, batch, same: Callable) -> None:
    for k, t in enumerate(alone):
        same(t, batch.unstack(k))


def assert_trains_on_alone(alone, member, same: Callable, n: int = 6) -> None:
    """A member taken out of its batch and its twin step n more alone: still the same."""
    alone.step(n)
    member.step(n)
    same(alone, member)


def assert_same_weights_and_moments(a_model, a_opt, b_model, b_opt, tol: dict) -> None:
    """Same parameters and, where one has stepped, the same Adam step count and moments."""
    import torch
    for (name, p), q in zip(a_model.named_parameters(), b_model.parameters()):
        torch.testing.assert_close(q, p, **tol, msg=name)
        sa, sb = a_opt.state.get(p, {}), b_opt.state.get(q, {})
        assert bool(sa) == bool(sb), name
        if sa:
            assert float(sa["step"]) == float(sb["step"]), name
            torch.testing.assert_close(sb["exp_avg"], sa["exp_avg"], **tol, msg=name)
            torch.testing.assert_close(sb["exp_avg_sq"], sa["exp_avg_sq"], **tol, msg=name)
