import math


from engine.datasets import make_dataset
from engine.training import History, MLPClassifierTrainer, Trainer, run_for


def _trainer(device, lr=0.5, seed=0):
    d = make_dataset("circles", 200, seed=0, noise=0.05)
    return MLPClassifierTrainer(d.points, d.labels, hidden=16, lr=lr, seed=seed, device=device)


def test_follows_protocol(device):
    assert isinstance(_trainer(device), Trainer)


def test_training_lowers_loss_and_learns_circles(device):
    t = _trainer(device)
    first = t.step(1)["loss"]
    assert abs(first - math.log(2)) < 0.3      # an untrained net is near chance: BCE ≈ log 2
    t.step(600)
    assert t.history.last("loss") < 0.2 * first
    assert t.accuracy() > 0.95
    assert t.steps == 601


def test_same_seed_same_run(device):
    a, b = _trainer(device, seed=3), _trainer(device, seed=3)
    a.step(20), b.step(20)
    assert a.history.values["loss"] == b.history.values["loss"]
    c = _trainer(device, seed=4)
    c.step(20)
    assert c.history.values["loss"] != a.history.values["loss"]


def test_state_dict_roundtrip_continues_identically(device):
    a = _trainer(device)
    a.step(10)
    state = a.state_dict()
    b = _trainer(device, seed=99)
    b.load_state_dict(state)
    assert b.steps == 10
    a.step(5), b.step(5)
    assert a.history.values["loss"][-1] == b.history.values["loss"][-1]


def test_divergence_is_a_result(device):
    t = _trainer(device, lr=1e38)   # the first update overflows float32
    t.step(50)
    assert t.diverged_at is not None and t.diverged_at <= 50
    steps = t.steps
    t.step(10)                                 # no more progress after divergence
    assert t.steps == steps


def test_run_for_respects_step_limit_and_budget(device):
    t = _trainer(device)
    tick = run_for(t, 37, budget_s=10.0)
    assert tick.steps_done == 37 and t.steps == 37 and "loss" in tick.metrics
    tick = run_for(t, 10_000, budget_s=0.0, chunk=5)  # budget spent after the first chunk
    assert tick.steps_done == 5


def test_snapshot_probability_grid(device):
    t = _trainer(device)
    t.step(300)
    s = t.snapshot(res=21)
    assert s.probability.shape == (21, 21) and s.grid_x.shape == (21,)
    assert ((0 <= s.probability) & (s.probability <= 1)).all()
    # circles: label 1 is the inner circle, so the centre of the plane is class 1
    assert s.probability[10, 10] > 0.9 and s.probability[0, 0] < 0.1


def test_history_roundtrip():
    h = History()
    h.log(1, {"loss": 2.0})
    h.log(2, {"loss": 1.0, "acc": 0.5})
    steps, values = h.as_arrays("loss")
    assert steps.tolist() == [1, 2] and values.tolist() == [2.0, 1.0]
    h2 = History.from_state_dict(h.state_dict())
    assert h2.last("acc") == 0.5 and math.isnan(h2.last("missing"))


# ---- the trainer base ------------------------------------------------------------------

import copy  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from engine.training import TrainerBase  # noqa: E402


class _AdamTrainer(TrainerBase):
    """A tiny regression trainer with a real torch optimizer (Adam keeps moment tensors) and
    its own RNG, to test what the base saves: y = x w* + noise, mini-batches of 8; `seed`
    draws the initial weights and the batch order (the data are fixed)."""

    def __init__(self, seed=0, log_every=None, lr=0.05):
        super().__init__()
        self.log_every = log_every
        g = torch.Generator().manual_seed(0)          # the data: the same for every seed
        self.x = torch.randn(64, 3, generator=g)
        self.y = self.x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(64, generator=g)
        g = torch.Generator().manual_seed(seed)       # the seed: initial weights, batches
        self.model = nn.Linear(3, 1)
        with torch.no_grad():
            self.model.weight.copy_(torch.randn(1, 3, generator=g))
            self.model.bias.zero_()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.gen = torch.Generator().manual_seed(seed + 1)
        self.loaded_extra = None

    def _iteration(self):
        idx = torch.randint(64, (8,), generator=self.gen)
        loss = nn.functional.mse_loss(self.model(self.x[idx])[:, 0], self.y[idx])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"loss": float(loss.detach()), "t": float(self.steps)}

    def snapshot(self):
        return float(self.model.weight.detach().sum())

    def _modules(self):
        return {"model": self.model}

    def _optimizers(self):
        return {"opt": self.opt}

    def _extra_state(self):
        return {"gen": self.gen.get_state()}

    def _load_extra_state(self, state):
        self.loaded_extra = state
        self.gen.set_state(state["gen"])


def _losses(tr, n):
    return [tr.step(1)["loss"] for _ in range(n)]


def test_base_trainer_follows_protocol_and_counts_steps():
    t = _AdamTrainer()
    assert isinstance(t, Trainer)
    m = t.step(5)
    assert t.steps == 5 and m["t"] == 5.0          # _iteration sees steps already counting it
    assert t.history.steps["loss"] == [5]           # log_every=None: once per step(n) call


def test_saved_optimizer_state_never_aliases_the_live_one():
    """Save, train on, load the saved state back into the SAME trainer: the next steps equal
    the first continuation bit for bit (with a state_dict that shared the live Adam moments,
    training on would have rewritten the saved moments and the second run would differ)."""
    t = _AdamTrainer()
    t.step(10)
    saved = t.state_dict()
    before = copy.deepcopy(saved)
    first = _losses(t, 10)
    t.load_state_dict(saved)
    second = _losses(t, 10)
    assert first == second                          # bit for bit
    assert t.steps == 20
    # and the saved dict itself is untouched by all that training
    for k, v in before["opt"]["state"][0].items():
        assert torch.equal(saved["opt"]["state"][0][k], v)
    assert torch.equal(saved["model"]["weight"], before["model"]["weight"])


def test_one_saved_state_loaded_into_two_trainers_runs_twice_the_same():
    a = _AdamTrainer()
    a.step(7)
    saved = a.state_dict()
    b, c = _AdamTrainer(seed=5), _AdamTrainer(seed=6)
    b.load_state_dict(saved)
    run_b = _losses(b, 8)                           # b trains: must not reach c's start
    c.load_state_dict(saved)
    assert _losses(c, 8) == run_b == _losses(a, 8)
    assert b.history.values["loss"] == a.history.values["loss"]


def test_state_dict_layout_and_extra_state_roundtrip():
    t = _AdamTrainer()
    t.step(3)
    state = t.state_dict()
    assert {"model", "opt", "steps", "diverged_at", "history", "gen"} <= set(state)
    u = _AdamTrainer(seed=9)
    u.load_state_dict(state)
    assert set(u.loaded_extra) == {"gen"}           # only the extra keys, as a copy
    assert u.loaded_extra["gen"] is not state["gen"]
    assert u.steps == 3 and u.diverged_at is None


def test_extra_state_may_not_shadow_a_declared_part():
    class Clash(_AdamTrainer):
        def _extra_state(self):
            return {"model": 1}
    with pytest.raises(KeyError, match="model"):
        Clash().state_dict()


def test_log_every_logs_every_kth_iteration():
    t = _AdamTrainer(log_every=4)
    t.step(3), t.step(7)
    assert t.history.steps["loss"] == [4, 8]


def test_base_divergence_stops_at_the_first_nonfinite_iteration():
    class Blows(_AdamTrainer):
        def _iteration(self):
            m = super()._iteration()
            return {**m, "loss": math.inf} if self.steps == 4 else m
    t = Blows()
    assert t.step(10)["loss"] == math.inf
    assert t.diverged_at == 4 and t.steps == 4
    assert t.step(5) == {} and t.steps == 4
    assert t.history.steps["loss"] == [4]           # the diverging metrics are logged
    u = _AdamTrainer()
    u.load_state_dict(t.state_dict())
    assert u.diverged_at == 4 and u.step(3) == {}


def test_empty_metrics_are_neither_logged_nor_returned():
    class Quiet(_AdamTrainer):
        def _iteration(self):
            m = super()._iteration()
            return m if self.steps % 3 == 0 else {}
    t = Quiet()
    assert t.step(4)["t"] == 3.0
    assert t.step(1) == {} and t.history.steps["loss"] == [4]


def test_mlp_trainer_matches_the_plain_loop_bit_for_bit():
    """The base adds bookkeeping only: the same updates written as a bare loop give the
    same losses to the last bit (the benchmark times exactly this pair)."""
    from benchmarks.bench_training import plain_losses
    d = make_dataset("circles", 64, seed=0)
    t = MLPClassifierTrainer(d.points, d.labels, hidden=8, lr=0.5, seed=2, device="cpu")
    assert [t.step(1)["loss"] for _ in range(30)] == plain_losses(d, 30, hidden=8, seed=2)


def test_mlp_state_is_a_copy_of_the_live_model():
    d = make_dataset("circles", 64, seed=0)
    t = MLPClassifierTrainer(d.points, d.labels, seed=0, device="cpu")
    t.step(3)
    state = t.state_dict()
    w = state["model"]["0.weight"].clone()
    t.step(3)
    assert torch.equal(state["model"]["0.weight"], w)
    assert not np.array_equal(w.numpy(), t.model[0].weight.detach().numpy())


# ---- a group of trainers ------------------------------------------------------------------

from engine.training import TrainerGroup  # noqa: E402


def _blows_at(k):
    class Blows(_AdamTrainer):
        def _iteration(self):
            m = super()._iteration()
            return {**m, "loss": math.nan} if self.steps == k else m
    return Blows()


def test_group_steps_members_and_prefixes_metrics():
    g = TrainerGroup({"a": _AdamTrainer(seed=1), "b": _AdamTrainer(seed=2)})
    m = g.step(4)
    assert isinstance(g, Trainer) and g.steps == 4 and g.diverged_at is None
    assert set(m) == {"a/loss", "a/t", "b/loss", "b/t"}
    assert set(g.snapshot()) == {"a", "b"}
    state = g.state_dict()
    h = TrainerGroup({"a": _AdamTrainer(seed=7), "b": _AdamTrainer(seed=8)})
    h.load_state_dict(state)
    assert h.step(3) == g.step(3)


def test_group_stop_any_vs_all():
    anyg = TrainerGroup({"a": _blows_at(3), "b": _AdamTrainer()}, stop="any")
    anyg.step(5)
    assert anyg.diverged_at == 3 and anyg.steps == 5       # b ran the whole call
    allg = TrainerGroup({"a": _blows_at(3), "b": _blows_at(6)}, stop="all")
    allg.step(5)
    assert allg.diverged_at is None
    allg.step(5)
    assert allg.diverged_at == 6
    with pytest.raises(ValueError):
        TrainerGroup({"a": _AdamTrainer()}, stop="first")


def test_cached_is_computed_once_per_trainer_state():
    t, calls = _AdamTrainer(), []

    def compute():
        calls.append(t.steps)
        return t.snapshot()
    first = t.cached("w", compute)
    assert t.cached("w", compute) == first and calls == [0]      # two frames, one compute
    t.step(2)
    t.cached("w", compute), t.cached("w", compute)
    assert calls == [0, 2]                                         # a step forgets it
    t.load_state_dict(_AdamTrainer().state_dict())
    assert t.cached("w", compute) == first and calls == [0, 2, 0]  # so does a load
    t.forget_cached()
    t.cached("w", compute)
    assert calls == [0, 2, 0, 0]

    class Peek(_AdamTrainer):                                      # and so does each iteration
        def _iteration(self):
            m = super()._iteration()
            return {**m, "w": self.cached("w", self.snapshot)}
    p = Peek()
    ws = [p.step(1)["w"] for _ in range(3)]
    q = Peek()
    assert q.step(3)["w"] == ws[-1] and len(set(ws)) == 3


def test_history_is_bounded_and_keeps_recent_points_at_full_resolution():
    """A trainer left playing for an hour logs ~150k times per metric: the history stays at
    most MAX_POINTS long, its first and last points kept, steps increasing, and the most
    recent MAX_POINTS/2 points contiguous."""
    from engine.training import History
    h = History()
    for k in range(150_000):
        h.log(k, {"loss": 1.0 / (k + 1), "acc": 0.5})
    steps, values = h.as_arrays("loss")
    cap = History.MAX_POINTS
    assert cap // 2 <= len(steps) <= cap
    assert steps[0] == 0 and steps[-1] == 149_999
    assert np.all(np.diff(steps) > 0)
    assert np.array_equal(np.diff(steps[-cap // 2:]), np.ones(cap // 2 - 1))
    assert np.allclose(values, 1.0 / (steps + 1))                 # values stay with their steps
    assert len(h.steps["acc"]) == len(steps)
