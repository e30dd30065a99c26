"""LSTM gating page: gate trace, gradient flow, trainer throughput vs a plain PyTorch loop."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time
from engine import recurrent as R

DELAY, HIDDEN, BATCH, STEPS, ROUNDS = 40, 16, 64, 30, 15
TASK_PARAMS = {"n_symbols": 4, "distract": 1.0}


def trace_64x500() -> Measurement:
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(8, 64)
    x = torch.randn(500, 8)
    t = median_time(lambda: R.lstm_trace(lstm, x), repeat=5)
    return Measurement(t * 1e3, "ms", "lstm_trace, 64 units, T=500 (target < 100 ms)")


def flow_three_kinds() -> Measurement:
    def run():
        for kind in ("rnn", "gru", "lstm"):
            R.gradient_flow(kind, T=200, hidden=32, forget_bias=1.0)
    t = median_time(run, repeat=3)
    return Measurement(t, "s", "gradient_flow rnn+gru+lstm, T=200, 32 units, float64 "
                               "(target < 1 s)")


def _trainer() -> R.SequenceTrainer:
    return R.SequenceTrainer("lstm", length=DELAY, hidden=HIDDEN, batch=BATCH, seed=0,
                             task_params=TASK_PARAMS)


def _plain_loop():
    """The trainer's network rebuilt from torch.nn (an LSTM and a linear readout of its last
    hidden state, the trainer's initial weights), Adam at the trainer's settings, the same
    batch size, on one fixed pre-generated batch."""
    tr = _trainer()
    lstm = torch.nn.LSTM(tr.net.rnn.input_size, HIDDEN, batch_first=True)
    lstm.load_state_dict(tr.net.rnn.state_dict())
    head = torch.nn.Linear(HIDDEN, tr.net.head.out_features)
    head.load_state_dict(tr.net.head.state_dict())
    group = tr.opt.param_groups[0]
    opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=group["lr"],
                           betas=group["betas"])
    b = R.make_task_batch("delayed_recall", BATCH, DELAY, seed=1, **TASK_PARAMS)
    loss_fn = torch.nn.functional.cross_entropy

    def run():
        for _ in range(STEPS):
            loss = loss_fn(head(lstm(b.x)[0][:, -1]), b.y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        float(loss.detach())
    return run


_CACHE: dict[str, float] = {}


def _rates() -> dict[str, float]:
    """it/s of the trainer and the plain loop, and the trainer's wall and CPU time per
    iteration relative to the plain loop (medians over ROUNDS alternating rounds)."""
    if not _CACHE:
        tr = _trainer()
        times = alternating_times({"trainer": lambda: tr.step(STEPS), "plain": _plain_loop()},
                                  ROUNDS)
        for name, rows in times.items():
            _CACHE[name] = STEPS / statistics.median(wall for wall, _ in rows)
        for i, what in enumerate(("wall", "cpu")):
            _CACHE[what] = statistics.median(t[i] / p[i] for t, p in zip(times["trainer"],
                                                                         times["plain"]))
    return _CACHE


def trainer_its() -> Measurement:
    return Measurement(_rates()["trainer"], "it/s", f"SequenceTrainer LSTM-{HIDDEN}, delayed "
                                                    f"recall D={DELAY}, batch {BATCH}")


def trainer_vs_plain() -> Measurement:
    r = _rates()
    return Measurement(r["wall"], "x slower than plain loop",
                       f"plain loop {r['plain']:,.0f} it/s on a fixed batch; median of {ROUNDS} "
                       f"alternating rounds; CPU-time ratio {r['cpu']:.2f} (target <= 1.2x)")


BENCHMARKS = {
    "lstm_gating: trace 64-unit LSTM, 500 steps": trace_64x500,
    "lstm_gating: gradient flow, 3 kinds, T=200": flow_three_kinds,
    "lstm_gating: trainer it/s": trainer_its,
    "lstm_gating: trainer vs plain loop": trainer_vs_plain,
}
