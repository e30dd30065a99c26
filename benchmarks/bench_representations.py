"""Representation-learning page: each clustering method on 1,500 points (target <= 1 s each),
the live DEC trainer's speed against a plain PyTorch loop doing the same work, one live frame's
snapshot, and the few-labels tab's curve (computed once per process)."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time, sized, torch_threads
from engine.representations import (METHODS, DECTrainer, cluster, kl_loss, make_shape,
                                    shipped_state, soft_assign, target_distribution)

ROUND_STEPS = sized(20, 2)
ROUNDS = 7


def one_thread(fn):
    """With one torch thread, as the server runs (docs/ARCHITECTURE.md)."""
    def wrapped() -> Measurement:
        with torch_threads(1):
            return fn()
    return wrapped


def clustering(method: str, shape: str = "moons"):
    def run() -> Measurement:
        x, _, k = make_shape(shape, 1500, 0, 0.05)
        t = median_time(lambda: cluster(x, method, k), repeat=3)
        return Measurement(t, "s", f"{method} on 1,500 {shape} points; target <= 1 s")
    return run


def _plain_loop(trainer: DECTrainer):
    """The same work as DECTrainer.step without the trainer: a minibatch KL step, the target
    renewed every update_interval steps."""
    ae, mu, x = trainer.ae, trainer.centres.mu, trainer.x
    opt = torch.optim.Adam([*ae.parameters(), mu], lr=3e-3)
    g = torch.Generator().manual_seed(0)
    state = {"t": 0, "p": trainer.target}

    def run(steps: int) -> None:
        for _ in range(steps):
            if state["t"] % trainer.update_interval == 0:
                with torch.no_grad():
                    state["p"] = target_distribution(soft_assign(ae.encoder(x), mu))
            state["t"] += 1
            idx = torch.randint(len(x), (trainer.batch,), generator=g)
            loss = kl_loss(state["p"][idx], soft_assign(ae.encoder(x[idx]), mu))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return run


def training_ratio() -> Measurement:
    """Trainer and plain loop in alternating rounds; the median of the per-round speed ratios
    (the trainer also measures the cluster accuracy at each target renewal)."""
    tr = DECTrainer(shipped_state(), lr=3e-3)
    plain = _plain_loop(DECTrainer(shipped_state(), lr=3e-3))
    times = alternating_times({"plain": lambda: plain(ROUND_STEPS),
                               "trainer": lambda: tr.step(ROUND_STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    rate = lambda name: ROUND_STEPS / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"DECTrainer {rate('trainer'):,.0f} it/s vs plain loop "
                       f"{rate('plain'):,.0f} it/s (batch 256, target every 20), median of "
                       f"{ROUNDS} alternating rounds; target >= 0.95")


def snapshot_time() -> Measurement:
    tr = DECTrainer(shipped_state())
    tr.step(5)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()))
    return Measurement(1e3 * t, "ms", "one live frame's snapshot: codes of 1,797 digits, q, "
                                      "p, the pull curve, top members; target < 100 ms")


def few_labels_time() -> Measurement:
    from topics.representations.compute import PER_CLASS, REPRESENTATIONS, few_label_accuracy
    fn = getattr(few_label_accuracy, "__wrapped__", few_label_accuracy)
    points = sized(PER_CLASS, PER_CLASS[:1])
    t = median_time(lambda: [fn(r, n) for r in REPRESENTATIONS for n in points], repeat=1)
    return Measurement(t, "s", "the few-labels curves (3 representations x 7 points x 3 "
                               "draws), uncached; computed once per process")


BENCHMARKS = {
    **{f"representations: {m} on 1,500 points": one_thread(clustering(m)) for m in METHODS},
    "representations: DEC training speed": one_thread(training_ratio),
    "representations: DEC live frame snapshot": one_thread(snapshot_time),
    "representations: few-labels curves": one_thread(few_labels_time),
}
