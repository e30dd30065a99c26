"""K ReLU-region trainers stepped as one batch equal the same trainers stepped alone (float32
tolerance): weights, Adam moments, step counts, loss history, the counted steps' regions."""
from __future__ import annotations

import pytest
import torch

from engine.regions import RegionTrainer
from engine.regions.batched import BatchedRegions, batch_key
from tests.engine.batched_checks import (assert_members, assert_same_weights_and_moments,
                                         assert_trains_on_alone, step_both)

TOL = dict(rtol=1e-5, atol=1e-5)
MEMBERS = [("bump (regression)", 0, 0.01), ("ridge (regression)", 1, 0.02),
           ("ripple (regression)", 2, 0.005)]


def _trainer(task: str, seed: int, lr: float, widths=(8, 8)) -> RegionTrainer:
    return RegionTrainer(list(widths), task=task, seed=seed, lr=lr, n=200, count_every=10)


def _assert_same(a: RegionTrainer, b: RegionTrainer) -> None:
    assert (a.steps, a.diverged_at) == (b.steps, b.diverged_at)
    assert_same_weights_and_moments(a.model, a.opt, b.model, b.opt, TOL)
    ha, hb = a.history, b.history
    assert ha.steps == hb.steps
    torch.testing.assert_close(torch.tensor(hb.values["loss"]), torch.tensor(ha.values["loss"]),
                               **TOL)
    diffs = [abs(x - y) for x, y in zip(ha.values["regions"], hb.values["regions"])]
    assert max(diffs) <= 1, (ha.values["regions"], hb.values["regions"])


@pytest.mark.parametrize("tasks", [MEMBERS, [("circles (classification)", 0, 0.01),
                                             ("spiral (classification)", 3, 0.03)]],
                         ids=["regression", "classification"])
def test_batched_members_equal_trainers_stepped_alone(tasks):
    alone, batch = [_trainer(*m) for m in tasks], BatchedRegions([_trainer(*m) for m in tasks])
    step_both(alone, batch, (13, 22))
    assert_members(alone, batch, _assert_same)


def test_a_masked_member_waits_and_a_member_taken_out_trains_on():
    alone, batch = [_trainer(*m) for m in MEMBERS], BatchedRegions([_trainer(*m) for m in MEMBERS])
    step_both(alone, batch, (12,), [True, True, False])
    assert batch.members[2].steps == 0
    assert_members(alone, batch, _assert_same)
    for k in (0, 1):             # torch.optim.Adam from the written-back state
        assert_trains_on_alone(alone[k], batch.unstack(k), _assert_same, 7)


def test_shapes_and_loss_kinds_do_not_mix():
    a, b = _trainer("bump (regression)", 0, 0.01), _trainer("bump (regression)", 0, 0.01, (4, 4))
    c = _trainer("circles (classification)", 0, 0.01)
    assert batch_key(a) != batch_key(b) and batch_key(a) != batch_key(c)
    assert batch_key(a) == batch_key(_trainer("ripple (regression)", 5, 0.1))
    with pytest.raises(ValueError, match="batch_key"):
        BatchedRegions([a, c])
