"""K GANs stepped as one batch equal the same K GANs stepped alone, member by member: weights,
Adam moments, step counts, loss history, mode checks; a masked member does not move; a member
taken out trains on as if it had never been batched.

Tolerances (engine/gan/batched.py, "What trained together guarantees"): in float32 a batched
step equals the member's own step to float32 rounding, and the tests here run <= 40 steps,
where the drift stays <= ~1e-6 (TOL 1e-5); over hundreds of steps a float32 GAN's trajectory
amplifies rounding chaotically (two runs alone, one weight apart by one ulp, part as far), so
the strict check of many steps and a class of 16 runs in float64 (TOL_64)."""
from __future__ import annotations

import pytest
import torch

from engine.gan import LIVE_DEFAULTS, GANTrainer, make_target
from engine.gan.batched import BatchedGAN, batch_key, unbatchable_reason

TOL = dict(rtol=1e-5, atol=1e-5)
# float64, 16 members: measured <= 5.3e-15 through step 200 (<= 5e-13 after 1,000); a member
# stepped on another's data or with another's learning rate is off by > 1e-3 after one step
# (python -m scripts.batched_divergence --dtype float64 --members 16 --lr 2.5e-4)
TOL_64 = dict(rtol=0, atol=1e-12)
SETTINGS = [("ring of 8", 0, 1e-3), ("5x5 grid", 1, 2e-3), ("ring of 8", 2, 5e-4)]


def _trainer(target: str, seed: int, lr: float, **over) -> GANTrainer:
    cfg = {**LIVE_DEFAULTS, "lr_g": lr, "lr_d": lr, "batch_size": 64, "eval_every": 10, **over}
    return GANTrainer(make_target(target, 0.05, seed=0), seed=seed, eval_n=400, **cfg)


def _pairs(static: bool | None = False, **over) -> tuple[list[GANTrainer], BatchedGAN]:
    alone = [_trainer(*s, **over) for s in SETTINGS]
    return alone, BatchedGAN([_trainer(*s, **over) for s in SETTINGS], static=static)


def _assert_same(a: GANTrainer, b: GANTrainer, tol: dict = TOL) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert (sa["steps"], sa["diverged_at"]) == (sb["steps"], sb["diverged_at"])
    for net in ("G", "D"):
        for name, value in sa[net].items():
            torch.testing.assert_close(sb[net][name], value, **tol, msg=f"{net}.{name}")
    for opt in ("opt_g", "opt_d"):
        for i, st in sa[opt]["state"].items():
            other = sb[opt]["state"][i]
            assert float(other["step"]) == float(st["step"])
            for key in ("exp_avg", "exp_avg_sq"):
                torch.testing.assert_close(other[key], st[key], **tol)
    assert sa["history"]["steps"] == sb["history"]["steps"]
    for name, values in sa["history"]["values"].items():
        torch.testing.assert_close(torch.tensor(sb["history"]["values"][name]),
                                   torch.tensor(values), equal_nan=True, **tol)
    assert sa["evals"]["steps"] == sb["evals"]["steps"]


@pytest.mark.parametrize("over", [{}, {"loss": "lsgan", "optimizer": "sgd", "lr_g": 0.05},
                                  {"loss": "minimax", "d_steps": 2, "g_steps": 2}],
                         ids=["adam-nonsaturating", "sgd-lsgan", "minimax-2-d-2-g-steps"])
@pytest.mark.parametrize("static", [False, True], ids=["rows", "static-padded"])
def test_batched_members_equal_trainers_stepped_alone(over, static):
    """static: the form a CUDA graph captures (padded to 8 rows, every row computed, masked),
    run eagerly here: the CPU twin of the GPU path."""
    alone, batch = _pairs(static, **over)
    for n in (7, 16):            # two calls: one history entry each, eval at 10 and 20
        for t in alone:
            t.step(n)
        batch.step(n)
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))
    assert alone[0].state_dict()["G"]["0.weight"].ne(
        alone[1].state_dict()["G"]["0.weight"]).any()         # the members really differ


@pytest.mark.parametrize("static", [False, True], ids=["rows", "static-padded"])
def test_in_float64_a_class_of_16_equals_its_members_stepped_alone_over_150_steps(static):
    """The strict check: learning rates 2.5e-4 to 4e-3 (where float32 trajectories part
    within a few hundred steps), every member to float64 rounding after 150 steps."""
    settings = [("ring of 8", k + 1, 2.5e-4 * (k + 1)) for k in range(16)]
    alone = [_trainer(*s, dtype=torch.float64) for s in settings]
    batch = BatchedGAN([_trainer(*s, dtype=torch.float64) for s in settings], static=static)
    assert batch.G.params[0].dtype == torch.float64
    for n in (70, 80):
        for t in alone:
            t.step(n)
        batch.step(n)
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k), TOL_64)


@pytest.mark.parametrize("static", [False, True], ids=["rows", "static-padded"])
def test_a_masked_member_keeps_its_state_and_the_others_go_on(static):
    alone, batch = _pairs(static)
    for t in alone:
        t.step(5)
    batch.step(5)
    for k in (0, 2):
        alone[k].step(8)
    batch.step(8, active=[True, False, True])
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))
    alone[1].step(3)                                       # back in: from where it stopped
    batch.step(3, active=[False, True, False])
    _assert_same(alone[1], batch.unstack(1))


def test_a_member_taken_out_trains_on_as_if_never_batched():
    alone, batch = _pairs()
    for t in alone:
        t.step(12)
    batch.step(12)
    out = batch.unstack(2)
    alone[2].step(9)
    out.step(9)           # torch.optim.Adam from the written-back moments and step count
    _assert_same(alone[2], out)


def test_a_diverging_member_stops_alone():
    over = {"optimizer": "sgd", "loss": "lsgan"}
    alone = [_trainer("ring of 8", 0, 1e-3, **over), _trainer("ring of 8", 1, 1e6, **over)]
    batch = BatchedGAN([_trainer("ring of 8", 0, 1e-3, **over),
                        _trainer("ring of 8", 1, 1e6, **over)])
    for t in alone:
        t.step(30)
    batch.step(30)
    assert alone[1].diverged_at is not None and alone[0].diverged_at is None
    assert batch.unstack(1).diverged_at == alone[1].diverged_at
    _assert_same(alone[0], batch.unstack(0))


@pytest.mark.parametrize("over, why", [
    ({"pack": 2}, "D mixes rows"), ({"minibatch_std": True}, "D mixes rows"),
    ({"spectral_norm": True}, "D mixes rows"), ({"unrolled_steps": 2}, "unrolled"),
    ({"r1_gamma": 1.0}, "R1"), ({"loss": "wgan-gp"}, "Wasserstein"),
    ({"optimizer": "rmsprop"}, "not Adam or SGD")])
def test_what_cannot_be_batched_says_why(over, why):
    t = _trainer("ring of 8", 0, 1e-3, **over)
    assert why in (unbatchable_reason(t) or "")
    with pytest.raises(ValueError, match=why):
        BatchedGAN([t])
    assert unbatchable_reason(_trainer("ring of 8", 0, 1e-3)) is None


def test_members_of_different_shapes_are_refused():
    a = _trainer("ring of 8", 0, 1e-3)
    b = _trainer("ring of 8", 0, 1e-3, g_hidden=(16, 16))
    assert batch_key(a) != batch_key(b)
    assert batch_key(a) == batch_key(_trainer("5x5 grid", 3, 5e-3))   # lr, seed, target free
    with pytest.raises(ValueError, match="batch_key"):
        BatchedGAN([a, b])


def test_a_trainer_that_trained_alone_joins_with_its_moments():
    alone, joining = _trainer("ring of 8", 0, 1e-3), _trainer("ring of 8", 0, 1e-3)
    alone.step(6)
    joining.step(6)
    batch = BatchedGAN([_trainer("5x5 grid", 1, 2e-3), joining])
    alone.step(5)
    batch.step(5)
    _assert_same(alone, batch.unstack(1))


def test_the_static_form_pads_to_a_bucket_and_its_padding_never_moves():
    alone, batch = _pairs(static=True)
    assert len(batch.opt_d.t) == 8 and batch.G.params[0].shape[0] == 8
    pad = [p[3:].clone() for p in batch.G.params + batch.D.params]
    for t in alone:
        t.step(9)
    batch.step(9, active=[True, True, True])
    for before, p in zip(pad, batch.G.params + batch.D.params):
        torch.testing.assert_close(p[3:], before, rtol=0, atol=0)   # where() kept them
    assert batch.opt_d.t[3:] == [0] * 5
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))


def test_a_diverged_member_cannot_spoil_the_static_step_of_the_others():
    over = {"optimizer": "sgd", "loss": "lsgan"}
    alone = [_trainer("ring of 8", 0, 1e-3, **over), _trainer("ring of 8", 1, 1e6, **over)]
    batch = BatchedGAN([_trainer("ring of 8", 0, 1e-3, **over),
                        _trainer("ring of 8", 1, 1e6, **over)], static=True)
    for t in alone:
        t.step(40)
    batch.step(40)
    assert alone[1].diverged_at is not None
    assert batch.unstack(1).diverged_at == alone[1].diverged_at
    _assert_same(alone[0], batch.unstack(0))        # its non-finite row stayed masked out


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="CUDA graphs need a CUDA device; none on this machine (the static "
                           "form is tested on the CPU above; scripts/device_check.sh runs this)")
def test_on_cuda_the_batch_replays_one_graph_and_equals_the_members_stepped_alone():
    alone, batch = _pairs(None, device="cuda")      # None: the device decides (static)
    assert batch.static
    for n in (7, 16):
        for t in alone:
            t.step(n)
        batch.step(n)
    assert batch.graphed is not None and batch.graphed.graph is not None
    for k, t in enumerate(alone):
        _assert_same(t, batch.unstack(k))
