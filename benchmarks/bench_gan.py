"""GAN page: generator iterations per second of engine.gan.GANTrainer at the default sizes
(2-D ring of 8, G and D 2×128 MLPs, batch 256, Adam, non-saturating loss) against a plain
PyTorch loop doing the same updates, and the server-side cost of one live frame."""
from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks import Measurement
from engine.gan import GANTrainer, make_target
from engine.training import run_for
from viz.gan_figures import mode_history_figure, samples_figure, training_curves_figure

STEPS = 300
ROUNDS = 5
FRAME_STEPS = 50
_CACHE: dict[str, float] = {}


def _plain_loop():
    """The same updates written as the textbook loop: one D step, one G step per iteration."""
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                      nn.Linear(128, 2))
    D = nn.Sequential(nn.Linear(2, 128), nn.LeakyReLU(0.2), nn.Linear(128, 128),
                      nn.LeakyReLU(0.2), nn.Linear(128, 1))
    opt_g = torch.optim.Adam(G.parameters(), 1e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), 1e-3, betas=(0.5, 0.999))
    real = torch.as_tensor(make_target("ring of 8", 0.05, 0).points)

    def run(n: int) -> None:
        for _ in range(n):
            x = real[torch.randint(len(real), (256,))]
            with torch.no_grad():
                fake = G(torch.randn(256, 2))
            opt_d.zero_grad()
            (F.softplus(-D(x)).mean() + F.softplus(D(fake)).mean()).backward()
            opt_d.step()
            opt_g.zero_grad()
            F.softplus(-D(G(torch.randn(256, 2)))).mean().backward()
            opt_g.step()
    return run


def _rates() -> None:
    """Trainer and plain loop measured alternately (ROUNDS rounds of STEPS // ROUNDS
    iterations each, medians), so a load change on a shared machine hits both alike."""
    if _CACHE:
        return
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu")
    runs = {"trainer": tr.step, "plain": _plain_loop()}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for fn in runs.values():
        fn(20)                                  # warm-up
    n = STEPS // ROUNDS
    for _ in range(ROUNDS):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn(n)
            times[name].append(n / (time.perf_counter() - t0))
    _CACHE.update({k: statistics.median(v) for k, v in times.items()})


def trainer_rate() -> float:
    _rates()
    return _CACHE["trainer"]


def plain_rate() -> float:
    _rates()
    return _CACHE["plain"]


def frame_seconds() -> tuple[float, float]:
    """(training seconds, drawing seconds) of one live frame: 50 iterations via run_for, then
    what the page's draw does on the server: snapshot, three figures, their JSON."""
    tr = GANTrainer(make_target("ring of 8", 0.05, 0), seed=0, device="cpu")
    run_for(tr, 100, float("inf"))
    train, draw = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        run_for(tr, FRAME_STEPS, float("inf"))
        t1 = time.perf_counter()
        snap = tr.snapshot()
        steps, hists = tr.mode_history()
        for fig in (samples_figure(snap, tr.box, tr.target.centers, 3 * tr.target.std),
                    mode_history_figure(steps, hists, len(tr.z_eval)),
                    training_curves_figure(tr.history, 8)):
            fig.to_json()
        draw.append(time.perf_counter() - t1)
        train.append(t1 - t0)
    return sorted(train)[2], sorted(draw)[2]


def frame_rate() -> Measurement:
    train, draw = frame_seconds()
    return Measurement(1.0 / (train + draw), "redraws/s",
                       f"server side, {FRAME_STEPS} it/frame: training {train * 1e3:.0f} ms + "
                       f"snapshot & figures {draw * 1e3:.0f} ms (target >= 4; Streamlit's own "
                       f"~0.2 s per redraw, DESIGN.md, comes on top)")


BENCHMARKS = {
    "gan: GANTrainer, default sizes": lambda: Measurement(
        trainer_rate(), "it/s", f"ring of 8, G/D 2x128, batch 256, {torch.get_num_threads()} "
                                f"torch threads"),
    "gan: plain PyTorch loop, same updates": lambda: Measurement(plain_rate(), "it/s", ""),
    "gan: trainer / plain loop": lambda: Measurement(trainer_rate() / plain_rate(), "x",
                                                     "target >= 0.85"),
    "gan: live frame": frame_rate,
}
