"""Adversarial-examples page: the attack budgets (PGD-10 on 500 digits < 1 s, the
robustness curve of 8 eps values < 5 s and cached), one attack per slider move, and the
adversarial trainer against a plain PyTorch loop doing the same work."""
from __future__ import annotations

import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

from benchmarks import Measurement, alternating_times, median_time, sized
from engine.adversarial import AttackSpec, attack, attack_one, robust_accuracy
from engine.adversarial.training import (AdvTrainConfig, AdversarialTrainer, heldout_digits,
                                         load_snapshot, training_digits)
from engine.conv import digits_cnn
from engine.datasets import load_digits

CURVE_EPS = (0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2)


def wall_and_cpu(fn, repeat: int = 5) -> tuple[float, float]:
    """Median wall and CPU seconds of fn() (CPU time is robust to a loaded machine)."""
    times = alternating_times({"f": fn}, rounds=repeat, warmup=1)["f"]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def _digits(n: int = sized(500, 50)):
    d = load_digits()
    return torch.as_tensor(d.images[:n, None]), torch.as_tensor(d.labels[:n])


def pgd10_500() -> Measurement:
    model = load_snapshot("standard")[0]
    x, y = _digits()
    t, cpu = wall_and_cpu(lambda: attack(model, x, y, 0.125, AttackSpec("pgd", steps=10)))
    return Measurement(t, "s", f"PGD-10 (L-inf, eps 0.125, random start) on 500 digits, shipped "
                               f"standard CNN; CPU time {cpu:.3f} s; target < 1 s")


def fgsm_500() -> Measurement:
    model = load_snapshot("standard")[0]
    x, y = _digits()
    t = median_time(lambda: attack(model, x, y, 0.125, AttackSpec("fgsm")), repeat=7)
    return Measurement(t * 1e3, "ms", "FGSM on 500 digits")


def robustness_curve() -> Measurement:
    model = load_snapshot("robust")[0]
    d = heldout_digits()
    n = sized(len(d.labels), 40)
    t, cpu = wall_and_cpu(lambda: [robust_accuracy(model, d.images[:n], d.labels[:n], CURVE_EPS,
                                                   AttackSpec(k)) for k in ("fgsm", "pgd")], 3)
    return Measurement(t, "s", f"FGSM + PGD-10 curves, {len(CURVE_EPS)} eps values, 359 held-out "
                               f"digits, one CNN; CPU time {cpu:.2f} s (the page draws 2 CNNs, "
                               f"cached); target < 5 s")


def curve_cached() -> Measurement:
    """The page's cached curve (st.cache_data): first call vs a repeat."""
    from topics.adversarial import page
    s = page.STATE.defaults
    t0 = time.perf_counter()
    page.curves_of(s)
    first = time.perf_counter() - t0
    t = median_time(lambda: page.curves_of(s), repeat=5, warmup=0)
    return Measurement(t * 1e3, "ms", f"page.curves_of (both CNNs, FGSM and PGD, 8 eps) from the "
                                      f"cache; first call {first:.2f} s")


def one_attack() -> Measurement:
    model = load_snapshot("standard")[0]
    d = heldout_digits()
    t = median_time(lambda: attack_one(model, d.images[0], int(d.labels[0]), 0.125,
                                       AttackSpec("pgd", steps=10)), repeat=9)
    return Measurement(t * 1e3, "ms", "PGD-10 on the digit the page shows (one slider move)")


ROUND_STEPS = sized(20, 2)
ROUNDS = 7


def _plain_loop(cfg: AdvTrainConfig):
    """The same min-max minibatch loop without the trainer's bookkeeping."""
    train = training_digits()
    x_all, y_all = torch.as_tensor(train.images[:, None]), torch.as_tensor(train.labels)
    model = digits_cnn(cfg.seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    rng = np.random.default_rng(cfg.seed)
    state = {"step": 0}

    def run(n: int) -> None:
        for _ in range(n):
            idx = torch.as_tensor(rng.choice(len(y_all), cfg.batch, replace=False))
            x, y = x_all[idx], y_all[idx]
            x = attack(model, x, y, cfg.train_eps, cfg.inner_spec(state["step"]))
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            state["step"] += 1
    return run


def trainer_vs_plain() -> Measurement:
    cfg = AdvTrainConfig()
    trainer = AdversarialTrainer(cfg)
    plain = _plain_loop(cfg)
    times = alternating_times({"plain": lambda: plain(ROUND_STEPS),
                               "trainer": lambda: trainer.step(ROUND_STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    cpu = statistics.median(p[1] / t[1] for p, t in zip(times["plain"], times["trainer"]))
    rate = ROUND_STEPS / statistics.median(t[0] for t in times["trainer"])
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"AdversarialTrainer (PGD-7 at eps 0.15, batch 64) {rate:,.0f} it/s; "
                       f"median of {ROUNDS} alternating rounds; CPU-time ratio {cpu:.2f}; "
                       f"target >= 0.95")


PLAY_FRAMES = sized(40, 2)  # frames of a playing page (23 steps each, the page's pace)


def training_share(curve_every_s: float | None) -> Measurement:
    """Share of a playing page's time (inline mode: training and the view in one thread)
    spent training: PLAY_FRAMES frames of 23 steps (run_for, as the page's fragment) each
    followed by the view's snapshot (the live robustness curve), as the page builds its
    trainer (curve_every_s: background curve at most that often; None: on every new state,
    as before). Wall time of the page's thread (the background curve runs beside it);
    drawing the figure (a few ms) is not included."""
    from engine.training import run_for
    from topics.adversarial.compute import LIVE_EPS
    tr = AdversarialTrainer(AdvTrainConfig(), eval_eps=LIVE_EPS, curve_every_s=curve_every_s)
    tr.snapshot()                                     # the page's first frame, before Play
    train = view = 0.0
    for _ in range(PLAY_FRAMES):
        t0 = time.perf_counter()
        run_for(tr, 23, float("inf"))
        t1 = time.perf_counter()
        snap = tr.snapshot()
        view += time.perf_counter() - t1
        train += t1 - t0
    tr.wait_for_curve()
    share = train / (train + view)
    lag = snap.step - snap.curve_step
    return Measurement(100 * share, "% training",
                       f"{PLAY_FRAMES * 23 / (train + view):.1f} it/s played; "
                       f"{PLAY_FRAMES} frames x 23 steps: training {train:.1f} s, view "
                       f"{view:.1f} s; curve "
                       + ("on every new state" if curve_every_s is None else
                          f"in the background every >= {curve_every_s:g} s, last frame's "
                          f"curve {lag} steps behind") + "; target >= 80%")


def _page_trainer() -> AdversarialTrainer:
    from topics.adversarial.compute import LIVE_EPS
    return AdversarialTrainer(AdvTrainConfig(attack_steps=7), eval_eps=LIVE_EPS,
                              curve_every_s=_page_curve_every())


PLAY_S = sized(20.0, 0.5)  # seconds a worker-hosted trainer plays in the process-mode share


def training_share_process() -> Measurement:
    """Share of a playing page's training rate kept when the trainer lives in a worker process
    (DLPLAY_TRAINERS=process): the worker plays for PLAY_S s while this process asks for a view
    at the page's frame interval (as the fragment does); its steps per second against the
    same trainer's bare step() rate, measured in the worker process itself (a probe via
    read()), so both rates come from the same process and core. The worker builds its view
    and runs the background robustness curve beside training."""
    from live.backends import open_handle
    from engine.training import run_for
    handle = open_handle(_page_trainer, "bench", mode="process")
    try:
        handle.view(120.0)                            # the worker is up, the first view drawn

        def bare_rate(trainer, n=46):
            t0 = time.perf_counter()
            run_for(trainer, n, float("inf"))
            return n / (time.perf_counter() - t0)
        bare = handle.read(bare_rate, 120.0)
        start = handle.view(30.0)
        handle.play()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < PLAY_S:
            time.sleep(0.25)
            handle.view(30.0)
        handle.pause()
        end = handle.view(30.0)
        played = (end.steps - start.steps) / max(end.at - start.at, 1e-9)
        after = handle.read(bare_rate, 120.0)
    finally:
        handle.close()
    bare = (bare + after) / 2
    return Measurement(100 * played / bare, "% of bare training rate",
                       f"process mode: {played:.1f} it/s played for {PLAY_S:g} s with a view "
                       f"every 0.25 s, bare step() in the same worker {bare:.1f} it/s (mean "
                       f"of before and after); target >= 80%")


BENCHMARKS = {
    "adversarial: PGD-10 on 500 digits": pgd10_500,
    "adversarial: FGSM on 500 digits": fgsm_500,
    "adversarial: robustness curves, 8 eps": robustness_curve,
    "adversarial: robustness curves on the page, cached": curve_cached,
    "adversarial: one attack on the page": one_attack,
    "adversarial: trainer / plain loop": trainer_vs_plain,
    "adversarial: playing page, training share (inline, background curve)":
        lambda: training_share(_page_curve_every()),
    "adversarial: playing page, training share (inline, curve every state)":
        lambda: training_share(None),
    "adversarial: playing page, training share (process, background curve)":
        training_share_process,
}


def _page_curve_every() -> float:
    from topics.adversarial.page import LIVE_CURVE_EVERY_S
    return LIVE_CURVE_EVERY_S
