"""K VAE trainers stepped as one batch equal the same trainers stepped alone (float32
tolerance): weights, Adam moments, steps, the logged training averages and deferred test
measures, the latent snapshots; a masked member waits; a member taken out trains on."""
from __future__ import annotations

import numpy as np
import pytest

from engine.vae import VAETrainer
from engine.vae.batched import BatchedVAE, batch_key
from tests.engine.batched_checks import (assert_members, assert_same_weights_and_moments,
                                         assert_trains_on_alone, step_both)

TOL = dict(rtol=1e-4, atol=1e-5)
MEMBERS = [dict(seed=0, beta=1.0, lr=1e-3), dict(seed=1, beta=0.5, lr=2e-3),
           dict(seed=2, beta=2.0, lr=5e-4)]


def _trainer(**over) -> VAETrainer:
    return VAETrainer(**{"hidden": (32, 16), "batch_size": 64, "log_every": 6,
                         "snapshot_every": 8, **over})


def _assert_same(a: VAETrainer, b: VAETrainer) -> None:
    assert (a.steps, a.diverged_at) == (b.steps, b.diverged_at)
    assert_same_weights_and_moments(a.model, a.opt, b.model, b.opt, TOL)
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
    step_both(alone, batch, (7, 20))
    assert_members(alone, batch, _assert_same)


def test_a_masked_member_waits_and_a_member_taken_out_trains_on():
    alone = [_trainer(**m) for m in MEMBERS]
    batch = BatchedVAE([_trainer(**m) for m in MEMBERS])
    step_both(alone, batch, (15,), [True, True, False])
    assert_members(alone, batch, _assert_same)
    assert_trains_on_alone(alone[0], batch.unstack(0), _assert_same, 9)


def test_shapes_and_likelihoods_do_not_mix():
    a = _trainer(**MEMBERS[0])
    assert batch_key(a) == batch_key(_trainer(**MEMBERS[1]))
    assert batch_key(a) != batch_key(_trainer(**MEMBERS[0], likelihood="gaussian"))
    assert batch_key(a) != batch_key(_trainer(**MEMBERS[0], hidden=(16, 16)))
    with pytest.raises(ValueError, match="batch_key"):
        BatchedVAE([a, _trainer(**MEMBERS[0], reparam=False)])
