"""engine/recurrent/ (package): traces equal PyTorch's modules, gates behave as the equations say,
gradient flow follows ρᵏ for a linear RNN, tasks are what they claim, the shipped nets work."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from engine import recurrent as R
from engine import weights
from engine.training import Trainer
from tests.engine.package_checks import long_files, missing_names

WEIGHTS = Path(__file__).resolve().parents[2] / "assets" / "weights"


@pytest.fixture(autouse=True)
def full_float32_cudnn():
    """cuDNN's RNN kernels use TF32 by default on Ampere and later GPUs: nn.LSTM on CUDA then
    differs from the exact recurrence by ~2e-4 (measured on an H200). The references these
    tests compare against must be plain float32, so TF32 is off for cuDNN here."""
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        yield


def _random_module(cls, seed, device, **kw):
    torch.manual_seed(seed)
    m = cls(3, 6, **kw)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.7)          # larger than default: gates far from 1/2
    return m.to(device)


@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_trace_equals_nn_lstm(device, batch_first):
    m = _random_module(torch.nn.LSTM, 1, device, batch_first=batch_first)
    x = torch.randn(25, 3, generator=torch.Generator().manual_seed(2)).to(device)
    h0 = torch.randn(1, 6).to(device)
    c0 = torch.randn(1, 6).to(device)
    out, (hT, cT) = m(x, (h0, c0))
    tr = R.lstm_trace(m, x, h0=h0, c0=c0)
    np.testing.assert_allclose(tr.h, out.detach().cpu().numpy(), atol=1e-5)
    np.testing.assert_allclose(tr.c[-1], cT.detach().cpu().numpy()[0], atol=1e-5)
    # every c_t: rerun the module prefix by prefix
    for t in (0, 7, 24):
        _, (_, ct) = m(x[:t + 1], (h0, c0))
        np.testing.assert_allclose(tr.c[t], ct.detach().cpu().numpy()[0], atol=1e-5)
    # the recurrence c_t = f c_{t-1} + i g and h_t = o tanh(c_t) hold on the trace
    np.testing.assert_allclose(tr.c, tr.f * tr.c_prev() + tr.i * tr.g, atol=1e-6)
    np.testing.assert_allclose(tr.h, tr.o * np.tanh(tr.c), atol=1e-6)


def test_gates_lie_in_their_ranges_and_use_pytorch_order():
    m = _random_module(torch.nn.LSTM, 3, "cpu")
    with torch.no_grad():   # make the g block (3rd of i, f, g, o) very negative
        m.bias_ih_l0[12:18] = -20.0
        m.bias_ih_l0[6:12] = 20.0     # f block saturates at 1
    tr = R.lstm_trace(m, torch.randn(40, 3) * 3)
    for name in "ifo":
        v = getattr(tr, name)
        assert v.min() >= 0.0 and v.max() <= 1.0
    assert tr.g.min() >= -1.0 and tr.g.max() <= 1.0
    assert tr.g.max() < -0.99 and tr.f.min() > 0.99


def test_clamping_forget_1_input_0_keeps_the_cell_constant():
    m = _random_module(torch.nn.LSTM, 4, "cpu")
    c0 = np.linspace(-1, 1, 6)
    tr = R.lstm_trace(m, torch.randn(30, 3) * 2, c0=c0, clamp={"f": 1.0, "i": 0.0})
    np.testing.assert_allclose(tr.c, np.broadcast_to(c0, (30, 6)), atol=1e-6)
    free = R.lstm_trace(m, torch.randn(30, 3) * 2, c0=c0)
    assert np.abs(free.c - c0).max() > 0.1            # without the clamp it moves
    # output gate 0 hides the cell: h = 0 whatever c holds
    hidden = R.lstm_trace(m, torch.randn(30, 3), c0=c0, clamp={"o": 0.0})
    assert np.abs(hidden.h).max() == 0.0 and np.abs(hidden.c).max() > 0.1


def test_gru_and_rnn_traces_equal_pytorch(device):
    x = torch.randn(20, 3, generator=torch.Generator().manual_seed(5)).to(device)
    gru = _random_module(torch.nn.GRU, 6, device)
    out, _ = gru(x)
    tr = R.gru_trace(gru, x)
    np.testing.assert_allclose(tr.h, out.detach().cpu().numpy(), atol=1e-5)
    assert tr.z.min() >= 0 and tr.z.max() <= 1 and np.abs(tr.n).max() <= 1
    # h_t = (1 - z) n + z h_{t-1}  (PyTorch's form)
    h_prev = np.concatenate([tr.h0[None], tr.h[:-1]])
    np.testing.assert_allclose(tr.h, (1 - tr.z) * tr.n + tr.z * h_prev, atol=1e-6)
    rnn = _random_module(torch.nn.RNN, 7, device)
    out, _ = rnn(x)
    # cuDNN sums in another order; this tanh RNN (weights ~ N(0, 0.7)) amplifies the float32
    # rounding to 1.7e-5 over 20 steps on an H200 (3 of 120 values above 1e-5).
    np.testing.assert_allclose(R.rnn_trace(rnn, x).h, out.detach().cpu().numpy(),
                               atol=1e-5 if device == "cpu" else 5e-5)


def test_gru_update_gate_clamped_to_one_keeps_h():
    gru = _random_module(torch.nn.GRU, 8, "cpu")
    h0 = np.linspace(-0.5, 0.5, 6)
    tr = R.gru_trace(gru, torch.randn(15, 3), h0=h0, clamp={"z": 1.0})
    np.testing.assert_allclose(tr.h, np.broadcast_to(h0, (15, 6)), atol=1e-6)


def test_trace_rejects_bad_input():
    with pytest.raises(ValueError):
        R.lstm_trace(torch.nn.LSTM(3, 4), torch.zeros(5, 2))
    with pytest.raises(ValueError):
        R.lstm_trace(torch.nn.LSTM(3, 4, num_layers=2), torch.zeros(5, 3))


@pytest.mark.parametrize("rho", [0.8, 1.1])
def test_linear_rnn_gradient_is_exactly_rho_power_k_for_scaled_orthogonal(rho, device):
    gf = R.gradient_flow("linear", T=60, hidden=12, spectral_radius=rho, init="orthogonal",
                         device=device)
    np.testing.assert_allclose(gf.norms, rho ** gf.lags, rtol=1e-5)
    assert gf.spectral_radius == pytest.approx(rho, rel=1e-6)


def test_linear_rnn_gradient_decays_like_rho_power_k_for_random_w():
    gf = R.gradient_flow("linear", T=200, hidden=24, spectral_radius=0.9, seed=3)
    k = gf.lags[100:]
    slope = np.polyfit(k, np.log(gf.norms[100:]), 1)[0]   # log ‖W^k‖ ≈ k log ρ + const
    assert slope == pytest.approx(math.log(0.9), abs=0.01)


def test_lstm_with_forget_bias_2_keeps_gradients_far_larger_than_rnn():
    lstm = R.gradient_flow("lstm", T=101, hidden=32, forget_bias=2.0, seed=0)
    lstm0 = R.gradient_flow("lstm", T=101, hidden=32, forget_bias=0.0, seed=0)
    rnn = R.gradient_flow("rnn", T=101, hidden=32, seed=0)
    assert lstm.norms[100] > 1e6 * rnn.norms[100]
    assert lstm.norms[100] > 100 * lstm0.norms[100]   # the bias, not just the architecture
    assert np.all(np.isfinite(rnn.norms)) and rnn.norms[100] > 0   # float64: no underflow


def test_clipping_bounds_the_exploding_gradient():
    free = R.gradient_flow("rnn", T=80, hidden=16, spectral_radius=3.0)
    clipped = R.gradient_flow("rnn", T=80, hidden=16, spectral_radius=3.0, clip=1.0)
    assert free.norms.max() > 1e3
    assert clipped.norms.max() <= 1.0 + 1e-9
    assert clipped.clip == 1.0


def test_scalar_cell_memory_decays_as_forget_gate_power():
    lstm = R.scalar_lstm({"f": (0.0, 0.0, 1.5)})
    x = R.pulse(30, at=3, amplitude=1.0)[:, None]
    tr = R.lstm_trace(lstm, x)
    f = 1 / (1 + math.exp(-1.5))
    ratio = tr.c[5:, 0] / tr.c[4:-1, 0]          # x = 0 after the pulse: i·g = i·tanh(0) = 0
    np.testing.assert_allclose(ratio, f, rtol=1e-5)
    assert R.memory_half_life(f) == pytest.approx(math.log(0.5) / math.log(f))
    assert R.memory_half_life(1.0) == math.inf


def test_delayed_recall_task_layout():
    b = R.make_task_batch("delayed_recall", 50, 7, seed=1, distract=0.5)
    assert b.x.shape == (50, 9, 5)
    np.testing.assert_array_equal(b.x[:, 0, :4].argmax(1).numpy(), b.y.numpy())
    assert torch.all(b.x[:, -1, 4] == 1) and torch.all(b.x[:, :-1, 4] == 0)
    assert torch.all(b.x[:, -1, :4] == 0)
    same = R.make_task_batch("delayed_recall", 50, 7, seed=1, distract=0.5)
    assert torch.equal(b.x, same.x)


def test_adding_and_parity_targets():
    b = R.make_task_batch("adding", 40, 20, seed=2)
    v, m = b.x[..., 0], b.x[..., 1]
    assert torch.all(m[:, :10].sum(1) == 1) and torch.all(m[:, 10:].sum(1) == 1)
    torch.testing.assert_close(b.y, (v * m).sum(1))
    p = R.make_task_batch("parity", 40, 9, seed=3)
    torch.testing.assert_close(p.y, p.x[..., 0].sum(1).long() % 2)


def test_encode_recall():
    x = R.encode_recall("b..?")
    assert x.shape == (4, 5) and x[0, 1] == 1 and x[3, 4] == 1 and x[1:3].sum() == 0
    assert R.recall_text(2, 3) == "C...?"
    with pytest.raises(ValueError):
        R.encode_recall("AZ?")


def test_signals():
    x = R.signal_input("step", 10, 5, channel=4, at=3)
    assert x.shape == (10, 5) and x[:, :4].sum() == 0 and list(x[:, 4]) == [0] * 3 + [1] * 7
    assert R.pulse(5, at=1).tolist() == [0, 1, 0, 0, 0]


def test_trainer_follows_protocol_learns_and_is_deterministic():
    def make():
        return R.SequenceTrainer("lstm", "delayed_recall", length=2, hidden=8, lr=0.03,
                                 batch=16, seed=4)
    a, b = make(), make()
    assert isinstance(a, Trainer)
    first = a.step(1)["loss"]
    a.step(39)
    b.step(40)
    assert a.history.last("loss") == b.history.last("loss")
    assert a.history.last("loss") < 0.5 * first
    state = a.state_dict()
    c = make()
    c.load_state_dict(state)
    assert a.step(3) == c.step(3)


def test_race_trainer_and_curriculum_raise_level():
    race = R.RaceTrainer(("rnn", "lstm"), task="delayed_recall", length=1, hidden=8, lr=0.05,
                         batch=16, seed=0, curriculum=True, max_length=9, grow=2)
    m = race.step(40)
    assert set(m) >= {"rnn/accuracy", "lstm/accuracy", "lstm/level"}
    assert race.steps == 40 and race.snapshot().racers["lstm"].level > 1


def test_race_logs_each_racers_held_out_accuracy_at_its_eval_steps():
    """eval_every: step(n) stops at each multiple and logs "<kind>/heldout", the accuracy
    reads.race_accuracy measures on the same racer trained alone (whatever the chunks)."""
    from engine.recurrent.reads import race_accuracy
    race = R.RaceTrainer(("rnn", "lstm"), eval_every=10, eval_n=64, task="delayed_recall",
                         length=4, max_length=4, hidden=16, lr=0.01, batch=64, seed=3,
                         forget_bias=2.0, task_params={"n_symbols": 4, "distract": 1.0})
    for n in (7, 7, 9, 1):                 # 24 iterations in uneven chunks
        race.step(n)
    steps, values = race.history.as_arrays("lstm/heldout")
    assert list(steps) == [10, 20] and race.steps == 24
    race.step(6)
    for kind in ("rnn", "lstm"):
        steps, values = race.history.as_arrays(f"{kind}/heldout")
        assert steps[-1] == 30
        expected = race_accuracy(kind, 3, False, 4, 30, 4)       # 256 sequences
        got = R.accuracy_by_length(race.racers[kind].net, "delayed_recall", [4], n=256,
                                   seed=3, distract=1.0)[0]
        assert got == pytest.approx(expected, abs=1e-9)           # the same trajectory
        assert values[-1] == pytest.approx(R.accuracy_by_length(
            race.racers[kind].net, "delayed_recall", [4], n=64, seed=3, distract=1.0)[0])


@pytest.fixture(scope="module")
def shipped():
    path = WEIGHTS / "lstm_gating_lstm.pt"
    if not path.exists():
        pytest.skip("run `python -m scripts.pretrain lstm_gating` first")
    return {k: R.load_net(WEIGHTS / f"lstm_gating_{k}.pt") for k in ("lstm", "rnn")}


def test_shipped_lstm_solves_recall_rnn_fails_at_long_delay(shipped):
    lstm, meta = shipped["lstm"]
    params = {"distract": meta["distract"]}
    acc = R.accuracy_by_length(lstm, "delayed_recall", [meta["delay"]], n=512, **params)
    assert acc[0] >= 0.95
    rnn, rmeta = shipped["rnn"]
    long = R.accuracy_by_length(rnn, "delayed_recall", [rmeta["long_delay"]], n=512, **params)
    assert long[0] < 0.6
    assert lstm.rnn.hidden_size == rnn.rnn.hidden_size


def _delayed_recall_one_hot(B, D, g, K=4, distract=0.0):
    """delayed_recall as first written: one_hot, masked, copied into slices."""
    s = torch.randint(0, K, (B,), generator=g)
    x = torch.zeros(B, D + 2, K + 1)
    x[torch.arange(B), 0, s] = 1.0
    if distract > 0 and D > 0:
        show = torch.rand(B, D, generator=g) < distract
        sym = torch.randint(0, K, (B, D), generator=g)
        x[:, 1:D + 1, :K] = torch.nn.functional.one_hot(sym, K).float() * show[..., None]
    x[:, D + 1, K] = 1.0
    return x, s


@pytest.mark.parametrize("D,K,distract", [(0, 4, 1.0), (1, 4, 0.0), (7, 3, 0.5), (40, 4, 1.0)])
def test_delayed_recall_equals_the_one_hot_construction(D, K, distract):
    """Same generator draws in the same order, same tensor: the scatter form trains on
    exactly the batches the one-hot form made."""
    ga, gb = R.make_generator(5, "cpu"), R.make_generator(5, "cpu")
    for _ in range(3):
        b = R.delayed_recall(32, D, ga, n_symbols=K, distract=distract)
        x, s = _delayed_recall_one_hot(32, D, gb, K, distract)
        assert b.x.is_contiguous() and b.x.dtype == torch.float32
        assert torch.equal(b.x, x) and torch.equal(b.y, s)


@pytest.mark.parametrize("task,params", [("delayed_recall", {"distract": 1.0}), ("adding", {})])
def test_trainer_step_is_the_plain_adam_loop(task, params):
    """SequenceTrainer.step(n) updates the net exactly as the textbook loop on the same
    batches (its generator seeded with seed + 1) and reports the last step's loss/accuracy."""
    kw = dict(kind="lstm", task=task, length=6, hidden=8, lr=0.02, batch=16, seed=3,
              task_params=params)
    tr, ref = R.SequenceTrainer(**kw), R.SequenceTrainer(**kw)
    metrics = tr.step(7)
    g = R.make_generator(3 + 1, "cpu")
    for _ in range(7):
        b = R.TASKS[task].make(16, 6, g, "cpu", **params)
        out = ref.net(b.x)
        loss, acc = R.task_metrics(task, out, b.y)
        ref.opt.zero_grad(set_to_none=True)
        loss.backward()
        ref.opt.step()
    for p, q in zip(tr.net.parameters(), ref.net.parameters()):
        assert torch.equal(p, q)
    last = float(loss.detach())
    assert metrics == {"loss": last, "accuracy": float(acc), "level": 6.0}
    assert tr.history.last("loss") == last and tr.steps == 7


def test_trainer_stops_at_the_diverging_step():
    tr = R.SequenceTrainer("rnn", "adding", length=5, hidden=8, lr=1e3, batch=16, seed=0)
    with torch.no_grad():
        tr.net.head.bias.fill_(float("inf"))
    m = tr.step(5)
    assert tr.diverged_at == 1 and tr.steps == 1 and not math.isfinite(m["loss"])
    assert tr.step(3) == {} and tr.steps == 1


# ---------------------------------------------------------------- weights file (engine/weights.py)

def test_save_net_round_trips_through_the_weights_format(tmp_path):
    net = R.RecurrentNet("gru", 3, 5, 2)
    R._init_net(net, 4, 1.0)
    path = R.save_net(net, tmp_path / "gru.pt", task="parity", accuracy=0.5)
    w = weights.load(path)
    assert w.model_config == {"kind": "gru", "input_size": 3, "hidden": 5, "n_out": 2}
    back, meta = R.load_net(path)
    assert meta == {**w.model_config, "task": "parity", "accuracy": 0.5}
    assert back.kind == "gru" and not back.training
    for k, v in net.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k


def test_load_net_rejects_truncated_random_and_legacy_files(tmp_path):
    good = R.save_net(R.RecurrentNet("lstm", 5, 4, 4), tmp_path / "good.pt")
    data = good.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "random.pt").write_bytes(np.random.default_rng(0).bytes(4096))
    for name in ("truncated", "random"):
        with pytest.raises(weights.CorruptWeightsError, match="scripts.pretrain"):
            R.load_net(tmp_path / f"{name}.pt")
    net = R.RecurrentNet("lstm", 5, 4, 4)
    torch.save({"state": net.state_dict(), "meta": R.net_config(net)}, tmp_path / "legacy.pt")
    with pytest.raises(weights.StaleWeightsError, match="older format"):
        R.load_net(tmp_path / "legacy.pt")
    with pytest.raises(weights.MissingWeightsError):
        R.load_net(tmp_path / "absent.pt")
    # a config that does not fit its tensors (architecture changed since the file was made)
    weights.save(tmp_path / "stale.pt", {**R.net_config(net), "hidden": 8}, net.state_dict())
    with pytest.raises(weights.StaleWeightsError, match="RecurrentNet"):
        R.load_net(tmp_path / "stale.pt")


def test_shipped_nets_are_in_the_weights_format():
    for kind in ("lstm", "rnn"):
        w = weights.load(WEIGHTS / f"lstm_gating_{kind}.pt")
        assert w.version == weights.FORMAT_VERSION
        assert w.model_config["kind"] == kind and w.meta["task"] == "delayed_recall"


# ---------------------------------------------------------------- the package split

# Every name engine/recurrent/ defined or re-exported before it became a package
# (engine/recurrent/), including the helpers pages and scripts reach through it.
OLD_NAMES = """
    CellParams GATES GATE_RANGES GRUTrace GradientFlow LSTMTrace MODULES NET_CONFIG_KEYS
    N_BLOCKS RECALL_ALPHABET RNNTrace RaceSnapshot RaceTrainer RecurrentNet
    SCALAR_DEFAULTS SIGNALS SeqBatch SequenceSnapshot SequenceTrainer TASKS TRACES
    TaskSpec accuracy_by_length adding cell_params delayed_recall encode_recall
    gradient_flow gru_trace head_probs load_net lstm_trace make_generator
    make_task_batch memory_half_life net_config net_from_weights noise parity
    predict_probs pulse recall_labels recall_text resolve_device rnn_trace save_net
    scalar_lstm set_forget_bias set_spectral_radius signal_input spectral_radius step
    task_accuracy task_loss task_metrics to_numpy _init_net
""".split()


def test_every_name_of_the_old_module_is_still_importable_from_engine_recurrent():
    assert missing_names("recurrent", OLD_NAMES) == []


def test_no_module_of_the_recurrent_package_is_over_500_lines():
    assert long_files("recurrent") == {}


# ---------------------------------------------------------------- on the trainer base

def test_sequence_trainer_state_is_a_copy_and_divergence_stops_at_its_step():
    from engine.training import TrainerBase
    a = R.SequenceTrainer("lstm", length=5, hidden=8, batch=16, seed=2)
    assert isinstance(a, TrainerBase)
    a.step(3)
    saved = a.state_dict()
    before = {f"{i}.{k}": v.numpy().tobytes() for i, s in saved["opt"]["state"].items()
              for k, v in s.items()}
    after = a.step(4)
    assert before == {f"{i}.{k}": v.numpy().tobytes() for i, s in saved["opt"]["state"].items()
                      for k, v in s.items()}
    c = R.SequenceTrainer("lstm", length=5, hidden=8, batch=16, seed=2)
    c.load_state_dict(saved)
    assert c.step(4) == after and list(after) == ["loss", "accuracy", "level"]
    with torch.no_grad():
        c.net.head.bias[0] = float("nan")
    m = c.step(5)
    assert math.isnan(m["loss"]) and c.diverged_at == c.steps == 8 and c.step(1) == {}


def test_race_state_round_trips_and_one_diverged_racer_does_not_stop_the_race():
    make = lambda: R.RaceTrainer(("rnn", "lstm"), length=4, hidden=8, batch=16, seed=1)  # noqa: E731
    a = make()
    a.step(3)
    saved = a.state_dict()
    after = a.step(2)
    c = make()
    c.load_state_dict(saved)
    assert c.steps == 3 and c.step(2) == after and c.history.state_dict() == a.history.state_dict()
    with torch.no_grad():
        c.racers["rnn"].net.head.bias[0] = float("nan")
    c.step(2)
    assert c.racers["rnn"].diverged_at == 6 and c.diverged_at is None
    m = c.step(2)
    assert set(m) == {"lstm/loss", "lstm/accuracy", "lstm/level"} and c.racers["lstm"].steps == 9
    with torch.no_grad():
        c.racers["lstm"].net.head.bias[0] = float("nan")
    c.step(1)
    assert c.diverged_at == 10 and c.step(1) == {}
