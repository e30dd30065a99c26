"""Training in practice page: one pruning round (the live trainer's three arms for one round,
with the prune and rewind), the trainer against a plain PyTorch loop doing the same work, a
live frame's snapshot, and what a slider move computes on the other tabs (an ensemble band, MC
dropout, an SVGD run, a search with Bayesian optimisation), uncached."""
from __future__ import annotations

import statistics

import torch
import torch.nn.functional as F

from benchmarks import Measurement, alternating_times, median_time, sized, torch_threads
from engine.practice import pruning, search, svgd, uncertainty
from engine.practice.reads import build_trainer

STEPS = sized(50, 5)
ROUNDS = sized(7, 1)


def one_thread(fn):
    """With one torch thread, as the server runs (docs/ARCHITECTURE.md)."""
    def wrapped() -> Measurement:
        with torch_threads(1):
            return fn()
    return wrapped


def round_time() -> Measurement:
    tr = build_trainer(0.3, 100, 0, 64, 0, "cpu")
    t = median_time(lambda: tr.step(tr.round_steps), repeat=3)
    return Measurement(t, "s", "one pruning round: 100 full-batch Adam steps of three MLPs "
                               "64 -> 64 -> 10 on 1,200 digits, then prune and rewind; "
                               "target <= 2 s")


def _plain_loop():
    """The same three masked MLPs trained by a plain loop (no trainer, no evaluation)."""
    x, y, _, _ = pruning.digits_split(0)
    g = torch.Generator().manual_seed(0)
    ws = [w.unsqueeze(0).repeat(3, 1, 1).requires_grad_()
          for w in pruning.init_weights([(64, 64), (64, 10)], g)]
    masks = [torch.ones_like(w) for w in ws]
    opt = torch.optim.Adam(ws, lr=3e-3)

    def run(steps: int) -> None:
        for _ in range(steps):
            logits = pruning.forward(ws, x)
            loss = torch.stack([F.cross_entropy(logits[a], y) for a in range(3)]).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            with torch.no_grad():
                for w, m in zip(ws, masks):
                    w.grad.mul_(m)
            opt.step()
            with torch.no_grad():
                for w, m in zip(ws, masks):
                    w.mul_(m)
    return run


def training_ratio() -> Measurement:
    tr = build_trainer(0.3, 10_000, 0, 64, 0, "cpu")      # no round ends inside the timing
    plain = _plain_loop()
    times = alternating_times({"plain": lambda: plain(STEPS),
                               "trainer": lambda: tr.step(STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    rate = lambda name: STEPS / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"LotteryTrainer {rate('trainer'):,.0f} it/s vs plain loop "
                       f"{rate('plain'):,.0f} it/s (the trainer also tests every 10 "
                       f"iterations), median of {ROUNDS} alternating rounds; target >= 0.95")


def snapshot_time() -> Measurement:
    tr = build_trainer(0.3, 20, 0, 64, 0, "cpu")
    tr.step(45)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()))
    return Measurement(1e3 * t, "ms", "one live frame's snapshot (weights, test accuracy of "
                                      "the three arms); target < 50 ms")


def band_time() -> Measurement:
    x, y = uncertainty.gap_data(60, 0.1, 0)
    t = median_time(lambda: uncertainty.ensemble_band(x, y, 5), repeat=3)
    d = median_time(lambda: uncertainty.mc_dropout_band(x, y, 0.1), repeat=3)
    return Measurement(t, "s", f"a deep ensemble of 5 (400 Adam steps); MC dropout {d:.2f} s; "
                               "target < 2 s")


def svgd_time() -> Measurement:
    t = median_time(lambda: svgd.run_svgd(svgd.Mixture(), 50, 500, 0.5, "median"))
    return Measurement(1e3 * t, "ms", "500 SVGD steps of 50 particles (median bandwidth); "
                                      "target < 500 ms")


def search_time() -> Measurement:
    t = median_time(lambda: search.run_search("bayesian", 16, 0), repeat=3)
    return Measurement(t, "s", "Bayesian optimisation, 16 trials (a GP refit per trial); "
                               "target < 1 s")


BENCHMARKS = {
    "practice: one pruning round": one_thread(round_time),
    "practice: training speed": one_thread(training_ratio),
    "practice: live frame snapshot": one_thread(snapshot_time),
    "practice: ensemble band, one setting": one_thread(band_time),
    "practice: SVGD run, one setting": one_thread(svgd_time),
    "practice: Bayesian search, 16 trials": one_thread(search_time),
}
