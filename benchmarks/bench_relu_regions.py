"""Exact linear regions (engine/regions/): time of the full partition of the default box
[-2, 2]² for random Kaiming MLPs (seed 0), and a live-training tick."""
from __future__ import annotations

import torch

from benchmarks import Measurement, median_time, torch_threads
from engine import regions as R

BOX = (-2.0, 2.0, -2.0, 2.0)


def _partition(widths: tuple[int, ...], target_s: float | None = None) -> Measurement:
    model = R.make_mlp(widths, seed=0)
    count = R.count_regions(model, BOX)
    t = median_time(lambda: R.partition(model, BOX), repeat=5)
    note = f"{count} regions"
    if target_s is not None:
        note += f"; target < {target_s * 1e3:.0f} ms"
    return Measurement(t * 1e3, "ms", note)


def _train_tick(threads: int | None = None) -> Measurement:
    """25 full-batch Adam steps of a 2x16 MLP on the ridge task, then the exact regions
    (what one frame of the live page does at its default steps-per-frame). `threads` sets
    torch's intra-op threads for the measurement (restored afterwards)."""
    with torch_threads(threads):
        return _tick_measurement(torch.get_num_threads())


def _tick_measurement(threads: int) -> Measurement:
    tr = R.RegionTrainer((16, 16), task="ridge (regression)", seed=0, count_every=25,
                         device="cpu")

    def tick():
        tr.step(25)
        tr.snapshot()
    tick()
    t = median_time(tick, repeat=5, warmup=0)
    return Measurement(t * 1e3, "ms", f"25 Adam steps + exact regions ({tr.partition().count} "
                                      f"regions at step {tr.steps}), {threads} torch thread(s)")


BENCHMARKS = {
    "regions: exact partition, widths 16x16x16": lambda: _partition((16, 16, 16), 0.5),
    "regions: exact partition, widths 32x32x32": lambda: _partition((32, 32, 32)),
    "regions: exact partition, widths 8x8x8 (page default)": lambda: _partition((8, 8, 8)),
    "regions: live tick, 2x16 ridge": _train_tick,
    "regions: live tick, 2x16 ridge, 1 torch thread": lambda: _train_tick(1),
}
