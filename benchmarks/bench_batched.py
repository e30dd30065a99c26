"""A class's models stepped as one batch (engine.gan.batched.BatchedGAN,
engine.regions.batched.BatchedRegions) against the same K trainers stepped one after another,
at the pages' live sizes (GAN: engine.gan.LIVE_DEFAULTS; ReLU regions: the page's default
3×8 net on 400 points; diffusion: the trainer's default 3×64 eps-network, batch 256, on
1,000 two-moons points; VAE: the trainer's default 256-128 encoder and decoder, batch 128),
each member with its own seed and learning rate. Model-steps/s = K × iterations / CPU seconds;
the two ways alternate round by round (median of the per-round ratios).

And the same inside a training worker (live/worker_loop.py, in-process, views not sent):
N students' GANs playing at full speed for WORKER_S seconds with batching on and off,
alternating; model-steps/s in total and the slowest student's share.

The GPU form (BatchedGAN's static iteration: padded to a bucket of 8/32/128 rows, masked, one
CUDA graph per iteration) is measured on CUDA where it exists (wall time, synchronized; K =
1, 8, 32, 128), and on the CPU as what that form costs there (run eagerly, padded rows
computed) beside the row-indexed CPU form."""
from __future__ import annotations

import statistics

import time

import cloudpickle
import torch

from benchmarks import Measurement, alternating_times, sized
from engine.gan import LIVE_DEFAULTS, LIVE_TARGET, GANTrainer, make_target
from engine.diffusion import SCHEDULES, DiffusionTrainer
from engine.diffusion.batched import BatchedDiffusion
from engine.diffusion.data import DIFFUSION_DATA
from engine.gan.batched import BatchedGAN
from engine.regions import RegionTrainer
from engine.regions.batched import BatchedRegions
from engine.vae import VAETrainer
from engine.vae.batched import BatchedVAE
from live.worker_loop import Worker

SIZES = sized((1, 4, 8, 16, 32), (2,))
ITERATIONS = sized(30, 2)    # per member per round
ROUNDS = 5
STUDENTS = sized((4, 8, 16), (2,))
STATIC_SIZES = sized((8, 16), (2,))
WORKER_S = sized(3.0, 0.1)


def _members(k: int, device: str = "cpu") -> list[GANTrainer]:
    return [GANTrainer(make_target(*LIVE_TARGET, seed=0), seed=s, device=device,
                       **{**LIVE_DEFAULTS, "lr_g": 1e-3 * (1 + s % 3),
                          "lr_d": 1e-3 * (1 + s % 3)})
            for s in range(k)]


def _regions(k: int) -> list[RegionTrainer]:
    return [RegionTrainer([8, 8, 8], task="ridge (regression)", seed=s, lr=0.01 * (1 + s % 3),
                          count_every=25) for s in range(k)]


def _diffusion(k: int) -> list[DiffusionTrainer]:
    points = DIFFUSION_DATA["two_moons"](n=1000, seed=0).points
    return [DiffusionTrainer(points, None, SCHEDULES["linear"](), lr=2e-3 * (1 + s % 3), seed=s)
            for s in range(k)]


def _vaes(k: int) -> list[VAETrainer]:
    return [VAETrainer(seed=s, lr=1e-3 * (1 + s % 3)) for s in range(k)]


KINDS = {"gan": (_members, BatchedGAN), "relu regions": (_regions, BatchedRegions),
         "diffusion": (_diffusion, BatchedDiffusion), "vae": (_vaes, BatchedVAE)}


def _compare(kind: str, k: int) -> tuple[float, float, float]:
    """(batched model-steps/s, separate model-steps/s, median per-round ratio)."""
    members, batched = KINDS[kind]
    separate, batch = members(k), batched(members(k))
    times = alternating_times({
        "separate": lambda: [t.step(ITERATIONS) for t in separate],
        "batched": lambda: batch.step(ITERATIONS)}, rounds=ROUNDS)
    cpu = {name: [c for _, c in runs] for name, runs in times.items()}
    work = k * ITERATIONS
    ratio = statistics.median(s / b for s, b in zip(cpu["separate"], cpu["batched"]))
    return (work / statistics.median(cpu["batched"]), work / statistics.median(cpu["separate"]),
            ratio)


def _entry(kind: str, k: int):
    def run() -> Measurement:
        batched, separate, ratio = _compare(kind, k)
        return Measurement(ratio, "x separate", f"K = {k}: batched {batched:,.0f} model-steps/s, "
                                                f"separate {separate:,.0f} (CPU time)")
    return run


def _static_entry(k: int, device: str):
    """K GANs in the static (GPU) form against the same K stepped one by one; on CUDA the
    static iteration is a replayed CUDA graph and the times are wall times (synchronized)."""
    def run() -> Measurement:
        separate = _members(k, device)
        batch = BatchedGAN(_members(k, device), static=True)
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        batch.step(sized(5, 1))                          # warm-up, and the capture on CUDA
        sync()

        def synced(step):
            def run_one():
                step()
                sync()
            return run_one
        times = alternating_times({
            "separate": synced(lambda: [t.step(ITERATIONS) for t in separate]),
            "batched": synced(lambda: batch.step(ITERATIONS))}, rounds=ROUNDS)
        pick = 0 if device == "cuda" else 1              # wall on a GPU, CPU time on a CPU
        secs = {name: [r[pick] for r in runs] for name, runs in times.items()}
        ratio = statistics.median(s / b for s, b in zip(secs["separate"], secs["batched"]))
        work = k * ITERATIONS
        return Measurement(ratio, "x separate", (
            f"K = {k} padded to {len(batch.opt_d.t)} rows: batched "
            f"{work / statistics.median(secs['batched']):,.0f} model-steps/s, separate "
            f"{work / statistics.median(secs['separate']):,.0f} "
            f"({'wall time, CUDA graph' if device == 'cuda' else 'CPU time, eager'})"))
    return run


class _Pipe:
    def send_bytes(self, data: bytes) -> None:
        pass

    def poll(self, timeout: float = 0.0) -> bool:
        return False


def _worker_rates(n: int, batch: bool) -> tuple[float, float]:
    """(model-steps per CPU second in total, the slowest student's share of them)."""
    worker = Worker(_Pipe(), batch=batch)
    for tid, trainer in enumerate(_members(n)):
        worker.handle(("create", tid, 1, cloudpickle.dumps(lambda t=trainer: t)))
        worker.handle(("cmd", tid, 2, "play", None))
    worker.one_turn()                                  # the first, measuring turns
    start = {tid: s.trainer.steps for tid, s in worker.slots.items()}
    c0, t0 = time.process_time(), time.perf_counter()
    while time.perf_counter() - t0 < WORKER_S:
        worker.one_turn()
    cpu = time.process_time() - c0
    done = [s.trainer.steps - start[tid] for tid, s in worker.slots.items()]
    return sum(done) / cpu, min(done) / max(sum(done), 1)


def _worker_entry(n: int):
    def run() -> Measurement:
        on, off = [], []
        for _ in range(sized(2, 1)):                    # alternating: on, off, on, off
            on.append(_worker_rates(n, True))
            off.append(_worker_rates(n, False))
        rate_on = statistics.median(r for r, _ in on)
        rate_off = statistics.median(r for r, _ in off)
        fair = min(share for _, share in on) * n
        return Measurement(rate_on / rate_off, "x batching off",
                           f"{n} students: {rate_on:,.0f} vs {rate_off:,.0f} model-steps/s; "
                           f"slowest student {fair:.2f}x an equal share (batching on)")
    return run


BENCHMARKS = {f"{kind}: {k} members batched vs stepped one by one": _entry(kind, k)
              for kind in KINDS for k in SIZES}
BENCHMARKS.update({f"gan, static GPU form on the CPU: {k} members": _static_entry(k, "cpu")
                   for k in STATIC_SIZES})
if torch.cuda.is_available():
    BENCHMARKS.update({f"gan on CUDA, graphed: {k} members batched vs stepped one by one":
                       _static_entry(k, "cuda") for k in (1, 8, 32, 128)})
BENCHMARKS.update({f"worker: {n} students' GANs playing, batching on vs off": _worker_entry(n)
                   for n in STUDENTS})
