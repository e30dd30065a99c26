"""K VAE trainers stepped as one batch equal the same trainers stepped alone (float32
tolerance): weights, Adam moments, steps, the logged training averages and deferred test
measures, the latent snapshots; a masked member waits; a member taken out trains on."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.vae import VAETrainer
from engine.vae.batched import BatchedVAE, batch_key

TOL = dict(rtol=1e-4, atol=1e-5)
MEMBERS = [dict(seed=0, beta=1.0, lr=1e-3), dict(seed=1, beta=0.5, lr=2e-3),
           dict(seed=2, beta=2.0, lr=5e-4)]


def _trainer(**over) -> VAETrainer:
    return VAETrainer(**{"hidden": (32, 16), "batch_size": 64, "log_every": 6,
                         "snapshot_every": 8, **over})


def _assert_same(a: VAETrainer, b: VAETrainer) -> None:
    assert (a.steps, a.diverged_at) == (b.steps, b.diverged_at)
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        torch.testing.assert_close(q, p, **TOL, msg=name)
        sa, sb = a.opt.state.get(p, {}), b.opt.state.get(q, {})
        assert bool(sa) == bool(sb)
        if sa:
            assert float(sa["step"]) == float(sb["step"])
            torch.testing.assert_close(sb["exp_avg"], sa["exp_avg"], **TOL)
    ha, hb = a.history, b.history
    assert ha.steps == hb.steps
    for name, values in ha.values.items():
        np.testing.assert_allclose(hb.values[name], values, rtol=1e-4, atol=1e-4, err_msg=name)
    assert [s for s, _ in a.snapshots] == [s for s, _ in b.snapshots]
    for (_, ma), (_, mb) in zip(a.snapshots, b.snapshots):
        np.testing.assert_allclose(mb, ma, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("over", [{}, {"reparam": False}, {"deterministic": True},
                                  {"likelihood": "gaussian"}],
                         ids=["vae", "no-reparam", "autoencoder", "gaussian"])
def test_batched_members_equal_trainers_stepped_alone(over):
    alone = [_trainer(**m, **over) for m in MEMBERS]
    batch = BatchedVAE([_trainer(**m, **over) for m in MEMBERS])
    for n in (7, 20):
        for t in alone:
            t.step(n)
        batch.step(n)
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))


def test_a_masked_member_waits_and_a_member_taken_out_trains_on():
    alone = [_trainer(**m) for m in MEMBERS]
    batch = BatchedVAE([_trainer(**m) for m in MEMBERS])
    for t in alone[:2]:
        t.step(15)
    batch.step(15, active=[True, True, False])
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))
    member = batch.unstack(0)
    alone[0].step(9)
    member.step(9)
    _assert_same(alone[0], member)


def test_shapes_and_likelihoods_do_not_mix():
    a = _trainer(**MEMBERS[0])
    assert batch_key(a) == batch_key(_trainer(**MEMBERS[1]))
    assert batch_key(a) != batch_key(_trainer(**MEMBERS[0], likelihood="gaussian"))
    assert batch_key(a) != batch_key(_trainer(**MEMBERS[0], hidden=(16, 16)))
    with pytest.raises(ValueError, match="batch_key"):
        BatchedVAE([a, _trainer(**MEMBERS[0], reparam=False)])
