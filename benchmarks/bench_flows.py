"""Flows page: the trainer's speed against a plain PyTorch loop doing the same work, one live
frame's snapshot (exact density on the grid, samples, warped grid), and the Coupling tab's
computation of one slider setting."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time, torch_threads
from engine import flows
from engine.flows.reads import build_trainer

ROUND_STEPS = 30
ROUNDS = 7


def one_thread(fn):
    """With one torch thread, as the server runs (docs/ARCHITECTURE.md)."""
    def wrapped() -> Measurement:
        with torch_threads(1):
            return fn()
    return wrapped


def _plain_loop():
    """The same work as FlowTrainer.step without the trainer: run(steps)."""
    d = flows.flow_data("moons")
    torch.manual_seed(0)
    model = flows.RealNVP(8, 64)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    x = torch.as_tensor(d.train)
    g = torch.Generator().manual_seed(0)

    def run(steps: int) -> None:
        for _ in range(steps):
            idx = torch.randint(0, len(x), (256,), generator=g)
            loss = -model.log_prob(x[idx]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
    return run


def training_ratio() -> Measurement:
    """Trainer and plain loop in alternating rounds; the median of the per-round speed ratios
    (the trainer also logs the NLL of all training and held-out points once per call)."""
    tr = build_trainer("moons", 8, 64, 2e-3, 0, "cpu")
    plain = _plain_loop()
    times = alternating_times({"plain": lambda: plain(ROUND_STEPS),
                               "trainer": lambda: tr.step(ROUND_STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    rate = lambda name: ROUND_STEPS / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"FlowTrainer {rate('trainer'):,.0f} it/s vs plain loop "
                       f"{rate('plain'):,.0f} it/s (8 layers of 64, batch 256), median of "
                       f"{ROUNDS} alternating rounds; target >= 0.85")


def snapshot_time() -> Measurement:
    tr = build_trainer("moons", 8, 64, 2e-3, 0, "cpu")
    tr.step(5)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()))
    return Measurement(1e3 * t, "ms", "one live frame's snapshot: density on 100 x 100 cells, "
                                      "500 samples, 18 warped grid lines; target < 200 ms "
                                      "(frames every 0.5 s)")


def coupling_time() -> Measurement:
    from topics.flows.compute import _coupling, COUPLING_KEYS
    s = {"fl_keep": "keep x₁, transform x₂", "fl_a": 0.0, "fl_b": 0.5, "fl_c": 0.8,
         "fl_w": 1.5}
    fn = getattr(_coupling, "__wrapped__", _coupling)
    t = median_time(lambda: fn(tuple((k, s[k]) for k in COUPLING_KEYS)))
    return Measurement(1e3 * t, "ms", "the Coupling tab's layer on its grid, autograd check and "
                                      "image density (400 x 400 cells), uncached; target < 150 ms")


BENCHMARKS = {
    "flows: training speed": one_thread(training_ratio),
    "flows: live frame snapshot": one_thread(snapshot_time),
    "flows: coupling tab, one setting": one_thread(coupling_time),
}
