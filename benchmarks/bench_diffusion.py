"""Diffusion page: sampler speed with the shipped EpsMLP and the exact denoiser, and the
trainer's speed against a plain PyTorch loop doing the same work."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time, torch_threads
from engine import diffusion as D
from ui.topics import ROOT

N = 2000
ROUND_STEPS = 60
ROUNDS = 9


def one_thread(fn):
    """Run a benchmark with one torch thread (docs/ARCHITECTURE.md: the server is pinned to one
    core; two threads on a busy 2-core machine were measured 5-20x slower)."""
    def wrapped() -> Measurement:
        with torch_threads(1):
            return fn()
    return wrapped


def _model():
    return D.load_model(ROOT / "assets" / "weights" / "diffusion_mixture.pt", "cpu")


def ddpm_network() -> Measurement:
    model, sched, _ = _model()
    t = median_time(lambda: D.ddpm_sample(D.network_eps(model), N, sched, seed=0), repeat=2,
                    warmup=0)
    return Measurement(t, "s", f"DDPM, T = 1000 steps, {N} particles, EpsMLP; target < 3 s")


def ddim_network() -> Measurement:
    model, sched, _ = _model()
    t = median_time(lambda: D.ddim_sample(D.network_eps(model), N, sched, steps=50, seed=0))
    return Measurement(t, "s", f"DDIM, S = 50 steps, {N} particles, EpsMLP; target < 0.2 s")


def ddpm_exact() -> Measurement:
    data = D.weighted_mixture()
    den = D.MixtureDenoiser(data.centers, data.std, data.weights)
    t = median_time(lambda: D.ddpm_sample(den, N, den.schedule, seed=0), repeat=2, warmup=0)
    return Measurement(t, "s", f"DDPM, T = 1000, {N} particles, exact 3-mode denoiser")


def _plain_loop(data):
    """The same work as DiffusionTrainer.step, written as a bare loop: run(steps)."""
    torch.manual_seed(0)
    model = D.EpsMLP(num_classes=int(data.labels.max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    x = torch.as_tensor(data.points)
    y = torch.as_tensor(data.labels)
    ab = torch.cat([torch.ones(1), D.Schedule.linear().alpha_bars.float()])
    g = torch.Generator().manual_seed(0)

    def run(steps: int) -> None:
        for _ in range(steps):
            idx = torch.randint(0, len(x), (256,), generator=g)
            t = torch.randint(1, 1001, (256,), generator=g)
            eps = torch.randn(256, 2, generator=g)
            a = ab[t][:, None]
            drop = torch.rand(256, generator=g) < 0.1
            c = torch.where(drop, model.num_classes, y[idx])
            loss = ((eps - model(a.sqrt() * x[idx] + (1 - a).sqrt() * eps, t, c)) ** 2
                    ).sum(-1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return run


def training_ratio() -> Measurement:
    """Trainer and plain loop in alternating rounds of ROUND_STEPS steps (machine-load changes
    hit both alike); the median of the per-round speed ratios."""
    data = D.weighted_mixture(2000)
    tr = D.DiffusionTrainer(data.points, data.labels, seed=0, device="cpu")
    plain = _plain_loop(data)
    times = alternating_times({"plain": lambda: plain(ROUND_STEPS),
                               "trainer": lambda: tr.step(ROUND_STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    cpu = statistics.median(p[1] / t[1] for p, t in zip(times["plain"], times["trainer"]))
    rate = lambda name: ROUND_STEPS / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"DiffusionTrainer {rate('trainer'):,.0f} it/s vs plain loop "
                       f"{rate('plain'):,.0f} it/s (batch 256), median of {ROUNDS} alternating "
                       f"rounds; CPU-time ratio {cpu:.2f}; target >= 0.85")


BENCHMARKS = {
    "diffusion: DDPM 1000 steps (EpsMLP)": one_thread(ddpm_network),
    "diffusion: DDIM 50 steps (EpsMLP)": one_thread(ddim_network),
    "diffusion: DDPM 1000 steps (exact mixture)": one_thread(ddpm_exact),
    "diffusion: training speed": one_thread(training_ratio),
}
