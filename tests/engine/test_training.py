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
