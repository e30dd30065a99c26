"""K diffusion trainers stepped as one batch equal the same trainers stepped alone (float32
tolerance): weights (class tables included), Adam moments, steps, loss history; a masked
member waits; a member taken out trains on as if it had never been batched."""
from __future__ import annotations

import pytest
import torch

from engine.diffusion import SCHEDULES, DiffusionTrainer
from engine.diffusion.batched import BatchedDiffusion, batch_key
from engine.diffusion.data import DIFFUSION_DATA
from tests.engine.batched_checks import (assert_members, assert_same_weights_and_moments,
                                         assert_trains_on_alone, step_both)

TOL = dict(rtol=1e-5, atol=1e-5)
MEMBERS = [("mixture", "linear", 0, 2e-3), ("two_moons", "cosine", 1, 4e-3),
           ("ring", "linear", 2, 1e-3)]


def _trainer(data: str, schedule: str, seed: int, lr: float, labels: bool = False,
             hidden: int = 16) -> DiffusionTrainer:
    d = DIFFUSION_DATA[data](n=300, seed=seed)
    return DiffusionTrainer(d.points, d.labels % 2 if labels else None, SCHEDULES[schedule](),
                            hidden=hidden, lr=lr, batch=64, seed=seed)


def _assert_same(a: DiffusionTrainer, b: DiffusionTrainer) -> None:
    assert (a.steps, a.diverged_at) == (b.steps, b.diverged_at)
    assert_same_weights_and_moments(a.model, a.opt, b.model, b.opt, TOL)
    assert a.history.steps == b.history.steps
    torch.testing.assert_close(torch.tensor(b.history.values.get("loss", [])),
                               torch.tensor(a.history.values.get("loss", [])), **TOL)


@pytest.mark.parametrize("labels", [False, True], ids=["unconditional", "class-conditional"])
def test_batched_members_equal_trainers_stepped_alone(labels):
    alone = [_trainer(*m, labels=labels) for m in MEMBERS]
    batch = BatchedDiffusion([_trainer(*m, labels=labels) for m in MEMBERS])
    step_both(alone, batch, (9, 14))
    assert_members(alone, batch, _assert_same)


def test_a_masked_member_waits_and_a_member_taken_out_trains_on():
    alone = [_trainer(*m) for m in MEMBERS]
    batch = BatchedDiffusion([_trainer(*m) for m in MEMBERS])
    step_both(alone, batch, (10,), [False, True, True])
    assert_members(alone, batch, _assert_same)
    assert_trains_on_alone(alone[1], batch.unstack(1), _assert_same)


def test_shapes_do_not_mix():
    a = _trainer(*MEMBERS[0])
    assert batch_key(a) == batch_key(_trainer(*MEMBERS[1]))
    assert batch_key(a) != batch_key(_trainer(*MEMBERS[0], hidden=8))
    assert batch_key(a) != batch_key(_trainer(*MEMBERS[0], labels=True))
    with pytest.raises(ValueError, match="batch_key"):
        BatchedDiffusion([a, _trainer(*MEMBERS[0], hidden=8)])
