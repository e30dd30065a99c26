"""K diffusion trainers stepped as one batch equal the same trainers stepped alone (float32
tolerance): weights (class tables included), Adam moments, steps, loss history; a masked
member waits; a member taken out trains on as if it had never been batched."""
from __future__ import annotations

import pytest
import torch

from engine.diffusion import SCHEDULES, DiffusionTrainer
from engine.diffusion.batched import BatchedDiffusion, batch_key
from engine.diffusion.data import DIFFUSION_DATA

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
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        torch.testing.assert_close(q, p, **TOL, msg=name)
        sa, sb = a.opt.state.get(p, {}), b.opt.state.get(q, {})
        assert bool(sa) == bool(sb)
        if sa:
            assert float(sa["step"]) == float(sb["step"])
            torch.testing.assert_close(sb["exp_avg"], sa["exp_avg"], **TOL)
            torch.testing.assert_close(sb["exp_avg_sq"], sa["exp_avg_sq"], **TOL)
    assert a.history.steps == b.history.steps
    torch.testing.assert_close(torch.tensor(b.history.values.get("loss", [])),
                               torch.tensor(a.history.values.get("loss", [])), **TOL)


@pytest.mark.parametrize("labels", [False, True], ids=["unconditional", "class-conditional"])
def test_batched_members_equal_trainers_stepped_alone(labels):
    alone = [_trainer(*m, labels=labels) for m in MEMBERS]
    batch = BatchedDiffusion([_trainer(*m, labels=labels) for m in MEMBERS])
    for n in (9, 14):
        for t in alone:
            t.step(n)
        batch.step(n)
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))


def test_a_masked_member_waits_and_a_member_taken_out_trains_on():
    alone = [_trainer(*m) for m in MEMBERS]
    batch = BatchedDiffusion([_trainer(*m) for m in MEMBERS])
    for t in alone[1:]:
        t.step(10)
    batch.step(10, active=[False, True, True])
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))
    member = batch.unstack(1)
    alone[1].step(6)
    member.step(6)
    _assert_same(alone[1], member)


def test_shapes_do_not_mix():
    a = _trainer(*MEMBERS[0])
    assert batch_key(a) == batch_key(_trainer(*MEMBERS[1]))
    assert batch_key(a) != batch_key(_trainer(*MEMBERS[0], hidden=8))
    assert batch_key(a) != batch_key(_trainer(*MEMBERS[0], labels=True))
    with pytest.raises(ValueError, match="batch_key"):
        BatchedDiffusion([a, _trainer(*MEMBERS[0], hidden=8)])
