"""GAN page: generator iterations per second of engine.gan.GANTrainer at the page's default
sizes (engine.gan.LIVE_DEFAULTS: ring of 8, G and D 2×64 MLPs, batch 256, Adam, non-saturating
loss) against a plain PyTorch loop doing the same updates, and the server-side cost of one
live frame as the page draws it (50 iterations, snapshot, the three live figures styled and
serialised)."""
from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks import Measurement, alternating_times
from engine.gan import LIVE_DEFAULTS, LIVE_TARGET, GANTrainer, make_target
from engine.training import run_for
from engine.gan.reads import frame_of
from topics.gan.figures import live_figures
from ui.theme import style_figure

CHUNK = 60            # iterations per timed run of the rate comparison
ROUNDS = 7
FRAME_STEPS = 50      # topics/gan/page.py STEPS_PER_FRAME
FRAMES = 7
_CACHE: dict[str, float] = {}


def _trainer() -> GANTrainer:
    return GANTrainer(make_target(*LIVE_TARGET, seed=0), seed=0, device="cpu", **LIVE_DEFAULTS)


def _mlp(hidden: tuple[int, ...], d_out: int, act) -> nn.Sequential:
    layers, d = [], 2
    for h in hidden:
        layers += [nn.Linear(d, h), act()]
        d = h
    return nn.Sequential(*layers, nn.Linear(d, d_out))


def _plain_loop():
    """The same updates written as the textbook loop: one D step, one G step per iteration,
    with the trainer's sizes, batch and optimizer settings (Adam, β = (0.5, 0.999), foreach)."""
    torch.manual_seed(0)
    G = _mlp(LIVE_DEFAULTS["g_hidden"], 2, nn.ReLU)
    D = _mlp(LIVE_DEFAULTS["d_hidden"], 1, lambda: nn.LeakyReLU(0.2))
    opt_g = torch.optim.Adam(G.parameters(), 1e-3, betas=(0.5, 0.999), foreach=True)
    opt_d = torch.optim.Adam(D.parameters(), 1e-3, betas=(0.5, 0.999), foreach=True)
    real = torch.as_tensor(make_target(*LIVE_TARGET, seed=0).points)
    batch = 256

    def run(n: int) -> None:
        for _ in range(n):
            x = real[torch.randint(len(real), (batch,))]
            with torch.no_grad():
                fake = G(torch.randn(batch, 2))
            opt_d.zero_grad()
            (F.softplus(-D(x)).mean() + F.softplus(D(fake)).mean()).backward()
            opt_d.step()
            opt_g.zero_grad()
            F.softplus(-D(G(torch.randn(batch, 2)))).mean().backward()
            opt_g.step()
    return run


def _rates() -> None:
    """Trainer (through run_for, as the page calls it) and plain loop measured alternately,
    ROUNDS rounds of CHUNK iterations each; it/s from the medians, the ratio as the median
    of per-round ratios, so a load change on a shared machine hits both alike."""
    if _CACHE:
        return
    tr, plain = _trainer(), _plain_loop()
    times = alternating_times({"trainer": lambda: run_for(tr, CHUNK, float("inf")),
                               "plain": lambda: plain(CHUNK)}, rounds=ROUNDS, warmup=1)
    wall = {k: [w for w, _ in v] for k, v in times.items()}
    _CACHE.update({k: CHUNK / statistics.median(v) for k, v in wall.items()})
    _CACHE["ratio"] = statistics.median(p / t for t, p in zip(wall["trainer"], wall["plain"]))


def _rate(name: str) -> float:
    _rates()
    return _CACHE[name]


def frame_seconds() -> tuple[float, float]:
    """(training seconds, drawing seconds) of one live frame, medians over FRAMES frames: 50
    iterations via run_for (the page's fragment), then what the page's draw does on the
    server: snapshot, live_figures, style_figure (show_figure) and the JSON of each figure
    (st.plotly_chart serialises it). Streamlit's own work per rerun is not included."""
    tr = _trainer()
    run_for(tr, 100, float("inf"))
    train, draw = [], []
    for _ in range(FRAMES):
        t0 = time.perf_counter()
        run_for(tr, FRAME_STEPS, float("inf"))
        t1 = time.perf_counter()
        snap = tr.snapshot()
        for fig in live_figures(frame_of(tr), snap, tr.history.copy()).values():
            style_figure(fig).to_json()
        draw.append(time.perf_counter() - t1)
        train.append(t1 - t0)
    return statistics.median(train), statistics.median(draw)


def frame_rate() -> Measurement:
    train, draw = frame_seconds()
    return Measurement(1.0 / (train + draw), "redraws/s",
                       f"server side, {FRAME_STEPS} it/frame at the page defaults: training "
                       f"{train * 1e3:.0f} ms + snapshot & figures {draw * 1e3:.0f} ms "
                       f"(target >= 4; Streamlit's own work per redraw, docs/ARCHITECTURE.md, "
                       f"comes on top)")


def _sizes() -> str:
    return (f"ring of 8, G {'x'.join(map(str, LIVE_DEFAULTS['g_hidden']))}, D "
            f"{'x'.join(map(str, LIVE_DEFAULTS['d_hidden']))}, batch 256, "
            f"{torch.get_num_threads()} torch threads")


BENCHMARKS = {
    "gan: GANTrainer, page defaults": lambda: Measurement(_rate("trainer"), "it/s", _sizes()),
    "gan: plain PyTorch loop, same updates": lambda: Measurement(_rate("plain"), "it/s", ""),
    "gan: trainer / plain loop": lambda: Measurement(_rate("ratio"), "x",
                                                     "median of per-round ratios; "
                                                     "target >= 0.85"),
    "gan: live frame": frame_rate,
}
