"""A worker steps the playing GANs of one shape as one batch (live/batching.py, live/worker_loop.py)
and every member ends where it would have alone: same weights after the same iterations, each
at its own pace and cap; a student's Reset touches no one else; a GAN that cannot be batched,
or DLPLAY_BATCH=0, trains alone.

The GANs here train in float64: a worker steps each for as many iterations as its time slices
allow, a machine-dependent count, and over hundreds of iterations a float32 GAN's trajectory
amplifies rounding chaotically (engine/gan/batched.py), while in float64 the batch equals its
members stepped alone to <= 5e-13 after 1,000 iterations (TOL 1e-10). A member stepped on
another's data or with another's learning rate is off by > 1e-3 after one iteration."""
from __future__ import annotations

import math

import cloudpickle
import pytest
import torch

from engine.gan import LIVE_DEFAULTS, GANTrainer, make_target
from live import batching
from live.worker_loop import Worker

TOL = dict(rtol=0, atol=1e-10)
TOL_32 = dict(rtol=1e-5, atol=1e-5)    # float32 trainers capped at a few dozen steps


class _Pipe:
    """The web side of a worker's pipe, in-process: keeps what the worker sends."""

    def __init__(self):
        self.sent: list[tuple] = []

    def send_bytes(self, data: bytes) -> None:
        self.sent.append(cloudpickle.loads(data))

    def poll(self, timeout: float = 0.0) -> bool:
        return False


def _gan(seed: int, lr: float = 1e-3, **over) -> GANTrainer:
    return GANTrainer(make_target("ring of 8", 0.05, seed=0), seed=seed, eval_n=400,
                      dtype=torch.float64,
                      **{**LIVE_DEFAULTS, "batch_size": 64, "lr_g": lr, "lr_d": lr, **over})


def _worker(batch: bool = True) -> Worker:
    return Worker(_Pipe(), chunk_s=0.02, publish_s=10.0, batch=batch)


def _host(worker: Worker, tid: int, factory, cap: int, rate: float = math.inf) -> None:
    worker.handle(("create", tid, 1, cloudpickle.dumps(factory)))
    worker.handle(("cmd", tid, 2, "pace", (rate, cap)))
    worker.handle(("cmd", tid, 3, "play", None))


def _run(worker: Worker, turns: int = 10_000) -> None:
    for _ in range(turns):
        if not worker.one_turn():
            return


def _same_weights(a: GANTrainer, b: GANTrainer) -> None:
    assert a.steps == b.steps
    for net in ("G", "D"):
        for (name, p), q in zip(getattr(a, net).named_parameters(),
                                getattr(b, net).parameters()):
            torch.testing.assert_close(q, p, **TOL, msg=f"{net}.{name}")


def test_a_class_of_gans_is_stepped_as_one_batch_and_each_ends_as_if_alone():
    worker = _worker()
    caps = {1: 30, 2: 30, 3: 12}                     # the third student stops earlier
    for tid, cap in caps.items():
        _host(worker, tid, lambda tid=tid: _gan(tid, 1e-3 * tid), cap)
    _run(worker)
    assert worker.batched_turns >= 1
    for tid, cap in caps.items():
        alone = _gan(tid, 1e-3 * tid)
        alone.step(cap)
        _same_weights(alone, worker.slots[tid].trainer)
        assert not worker.slots[tid].playing             # stopped at its own cap


def test_one_students_reset_leaves_the_others_numbers_alone():
    worker = _worker()
    _host(worker, 1, lambda: _gan(1), 40)
    _host(worker, 2, lambda: _gan(2), 40)
    for _ in range(3):
        worker.one_turn()
    worker.handle(("cmd", 2, 9, "close", None))          # Reset: a new trainer in a new slot
    _host(worker, 3, lambda: _gan(5, 3e-3), 25)
    _run(worker)
    alone = _gan(1)
    alone.step(40)
    _same_weights(alone, worker.slots[1].trainer)
    fresh = _gan(5, 3e-3)
    fresh.step(25)
    _same_weights(fresh, worker.slots[3].trainer)


@pytest.mark.parametrize("batch, over, batched", [
    (True, {"pack": 2}, False), (False, {}, False), (True, {}, True)],
    ids=["packed-D-trains-alone", "batching-off", "batching-on"])
def test_what_is_not_batched_trains_alone(batch, over, batched):
    worker = _worker(batch)
    _host(worker, 1, lambda: _gan(1, **over), 15)
    _host(worker, 2, lambda: _gan(2, **over), 15)
    _run(worker)
    assert (worker.batched_turns > 0) == batched
    for tid in (1, 2):
        alone = _gan(tid, **over)
        alone.step(15)
        _same_weights(alone, worker.slots[tid].trainer)


def test_why_a_trainer_trains_alone_is_a_sentence():
    assert batching.why_not(_gan(0)) is None
    assert "packing" in batching.why_not(_gan(0, pack=2))
    assert "one at a time" in batching.why_not(object())
    assert batching.key_of(_gan(0)) == batching.key_of(_gan(3, 5e-3))
    assert batching.key_of(_gan(0)) != batching.key_of(_gan(0, g_hidden=(16, 16)))
    assert batching.enabled({"DLPLAY_BATCH": "0"}) is False
    assert batching.enabled({}) is True


def test_the_view_and_its_status_line_say_who_trained_together():
    from live.controls import status_text
    worker = _worker()
    for tid in (1, 2, 3):
        _host(worker, tid, lambda tid=tid: _gan(tid), 10)
    _run(worker)
    worker.publish(1, worker.slots[1])
    kind, tid, _seq, data = worker.conn.sent[-1]
    view = cloudpickle.loads(data)
    assert (kind, tid, view.batched_with) == ("view", 1, 2)
    assert "trained in one batch with 2 other models" in status_text(view, None)
    alone = _worker(batch=False)
    _host(alone, 1, lambda: _gan(1), 5)
    _run(alone)
    alone.publish(1, alone.slots[1])
    view = cloudpickle.loads(alone.conn.sent[-1][3])
    assert view.batched_with == 0 and "batch" not in status_text(view, None)


def test_relu_region_trainers_are_batched_too():
    from engine.regions import RegionTrainer

    def make(seed: int) -> RegionTrainer:
        return RegionTrainer([8, 8], task="ridge (regression)", seed=seed, lr=0.01 * (1 + seed),
                             n=200, count_every=10)
    worker = _worker()
    for tid in (1, 2):
        _host(worker, tid, lambda tid=tid: make(tid), 20)
    _run(worker)
    assert worker.batched_turns >= 1
    for tid in (1, 2):
        alone = make(tid)
        alone.step(20)
        trainer = worker.slots[tid].trainer
        assert trainer.steps == 20
        for p, q in zip(alone.params, trainer.params):
            torch.testing.assert_close(q, p, **TOL_32)


def test_a_model_trained_alone_beside_others_says_why():
    from live.controls import status_text
    worker = _worker()
    _host(worker, 1, lambda: _gan(1, pack=2), 10 ** 6)      # PacGAN: D mixes rows; plays on
    _host(worker, 2, lambda: _gan(2), 6)
    _host(worker, 3, lambda: _gan(3, g_hidden=(16, 16)), 6)  # another shape
    worker.one_turn()
    worker.one_turn()
    worker.one_turn()
    reasons = {}
    for tid in (1, 2, 3):
        worker.publish(tid, worker.slots[tid])
        reasons[tid] = status_text(cloudpickle.loads(worker.conn.sent[-1][3]), None)
    assert "trained alone: D mixes rows" in reasons[1]
    assert "trained alone: the other models here differ" in reasons[2]
    assert "trained alone: the other models here differ" in reasons[3]


def test_a_batch_that_fails_leaves_its_members_training_alone(monkeypatch):
    from engine.gan import batched as gan_batched
    calls = {"n": 0}
    real_step = gan_batched.BatchedGAN.step

    def fails_on_the_second_call(self, n=1, active=None):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("a kernel failed")
        return real_step(self, n, active)
    monkeypatch.setattr(gan_batched.BatchedGAN, "step", fails_on_the_second_call)
    worker = _worker()
    _host(worker, 1, lambda: _gan(1), 30)
    _host(worker, 2, lambda: _gan(2), 30)
    _run(worker)
    assert calls["n"] >= 2
    assert all(s.batch_key is None for s in worker.slots.values())   # alone from then on
    for tid in (1, 2):                      # nothing lost: each ends as if stepped alone
        alone = _gan(tid)
        alone.step(30)
        _same_weights(alone, worker.slots[tid].trainer)


@pytest.mark.parametrize("kind", ["regions", "diffusion", "vae"])
def test_a_trainer_whose_optimizer_is_not_plain_adam_or_sgd_is_not_batched(kind):
    from engine.diffusion import DiffusionTrainer
    from engine.regions import RegionTrainer
    from engine.vae import VAETrainer
    make = {"regions": lambda: RegionTrainer([4], n=50),
            "diffusion": lambda: DiffusionTrainer(_gan(0).target.points[:100], hidden=8, batch=16),
            "vae": lambda: VAETrainer(hidden=(8,), batch_size=16)}[kind]
    plain, other = make(), make()
    assert batching.why_not(plain) is None and batching.key_of(plain) is not None
    other.opt = torch.optim.RMSprop(other.opt.param_groups[0]["params"], lr=1e-3)
    assert batching.why_not(other) == "the optimizer is not Adam or SGD"
    assert batching.key_of(other) is None


def test_a_batch_is_kept_while_its_members_do_not_change_and_built_again_after_a_message():
    worker = _worker()
    for tid in (1, 2, 3):
        _host(worker, tid, lambda tid=tid: _gan(tid, 1e-3 * tid), 10 ** 6)
    for _ in range(4):
        worker.one_turn()
    assert (worker.batched_turns, worker.batches_built) == (4, 1)
    worker.handle(("read", 2, 7, cloudpickle.dumps(lambda t: t.steps)))   # may touch it
    worker.one_turn()
    assert worker.batches_built == 2
    worker.handle(("cmd", 3, 8, "pace", (math.inf, 10 ** 6)))             # touches no trainer
    worker.one_turn()
    assert worker.batches_built == 2
    for tid in (1, 2, 3):
        trainer = worker.slots[tid].trainer
        alone = _gan(tid, 1e-3 * tid)
        alone.step(trainer.steps)
        _same_weights(alone, trainer)          # written back after every turn, kept or not


def test_a_member_with_no_tokens_stays_in_the_batch_masked_out():
    worker = _worker()
    _host(worker, 1, lambda: _gan(1), 20)
    _host(worker, 2, lambda: _gan(2), 20)
    _host(worker, 3, lambda: _gan(3), 20, rate=1e-9)     # its bucket never fills
    for _ in range(3):
        worker.one_turn()
    assert worker.batches_built == 1 and len(worker.batches) == 1
    (who, _batch), = worker.batches.values()
    assert [tid for tid, _ in who] == [1, 2, 3]          # a member, masked out
    _run(worker)
    assert worker.slots[3].trainer.steps == 0
    for tid in (1, 2):
        alone = _gan(tid)
        alone.step(20)
        _same_weights(alone, worker.slots[tid].trainer)


def test_a_closed_trainer_is_held_by_no_kept_batch():
    worker = _worker()
    for tid in (1, 2):
        _host(worker, tid, lambda tid=tid: _gan(tid), 10 ** 6)
    worker.one_turn()
    assert worker.batches
    worker.handle(("cmd", 2, 9, "close", None))
    assert not worker.batches
