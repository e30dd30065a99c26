"""A class's GANs stepped as one batch (engine.gan.batched.BatchedGAN) against the same K
trainers stepped one after another, at the page's live sizes (engine.gan.LIVE_DEFAULTS), each
member with its own seed and learning rate. Model-steps/s = K × iterations / CPU seconds;
the two ways alternate round by round (median of the per-round ratios)."""
from __future__ import annotations

import statistics

from benchmarks import Measurement, alternating_times
from engine.gan import LIVE_DEFAULTS, LIVE_TARGET, GANTrainer, make_target
from engine.gan.batched import BatchedGAN

SIZES = (1, 4, 8, 16, 32)
ITERATIONS = 30          # per member per round
ROUNDS = 5


def _members(k: int) -> list[GANTrainer]:
    return [GANTrainer(make_target(*LIVE_TARGET, seed=0), seed=s, device="cpu",
                       **{**LIVE_DEFAULTS, "lr_g": 1e-3 * (1 + s % 3),
                          "lr_d": 1e-3 * (1 + s % 3)})
            for s in range(k)]


def _compare(k: int) -> tuple[float, float, float]:
    """(batched model-steps/s, separate model-steps/s, median per-round ratio)."""
    separate, batch = _members(k), BatchedGAN(_members(k))
    times = alternating_times({
        "separate": lambda: [t.step(ITERATIONS) for t in separate],
        "batched": lambda: batch.step(ITERATIONS)}, rounds=ROUNDS)
    cpu = {name: [c for _, c in runs] for name, runs in times.items()}
    work = k * ITERATIONS
    ratio = statistics.median(s / b for s, b in zip(cpu["separate"], cpu["batched"]))
    return (work / statistics.median(cpu["batched"]), work / statistics.median(cpu["separate"]),
            ratio)


def _entry(k: int):
    def run() -> Measurement:
        batched, separate, ratio = _compare(k)
        return Measurement(ratio, "x separate", f"K = {k}: batched {batched:,.0f} model-steps/s, "
                                                f"separate {separate:,.0f} (CPU time)")
    return run


BENCHMARKS = {f"gan: {k} members batched vs stepped one by one": _entry(k) for k in SIZES}
