"""Representation-learning page: each clustering method on 1,500 points (target <= 1 s each),
the live DEC and SimCLR trainers' speed against plain PyTorch loops doing the same work, one
live frame's snapshot of each, a t-SNE map (cached after its first call), and the few-labels
tab's curve (computed once per process)."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time, sized, torch_threads
from engine.representations import (METHODS, ContrastiveTrainer, DECTrainer, augment, cluster,
                                    kl_loss, make_shape, nt_xent, shipped_state, soft_assign,
                                    target_distribution)

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


def _plain_simclr(trainer: ContrastiveTrainer):
    """The same work as ContrastiveTrainer.step without the trainer or its probe: two
    augmented views of a minibatch, the NT-Xent loss, one Adam step."""
    model, x, idx = trainer.model, trainer.x, trainer.train_idx
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)

    def run(steps: int) -> None:
        for _ in range(steps):
            xb = x[idx[torch.randint(len(idx), (trainer.batch,), generator=g)]]
            v1, v2 = augment(xb, trainer.kinds, g), augment(xb, trainer.kinds, g)
            loss = nt_xent(model(v1), model(v2), trainer.tau)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return run


def simclr_ratio() -> Measurement:
    """SimCLR trainer (its probe every 50 iterations included) and a plain loop in
    alternating rounds; the median of the per-round speed ratios."""
    tr = ContrastiveTrainer()
    plain = _plain_simclr(ContrastiveTrainer(probe_every=None))
    steps = sized(50, 2)
    times = alternating_times({"plain": lambda: plain(steps),
                               "trainer": lambda: tr.step(steps)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    rate = lambda name: steps / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"ContrastiveTrainer {rate('trainer'):,.0f} it/s vs plain loop "
                       f"{rate('plain'):,.0f} it/s (batch 256, two views, probe every 50), "
                       f"median of {ROUNDS} alternating rounds; target >= 0.95")


def simclr_snapshot_time() -> Measurement:
    tr = ContrastiveTrainer()
    tr.step(2)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()))
    return Measurement(1e3 * t, "ms", "one SimCLR frame's snapshot: 8 pairs of views, their "
                                      "similarities, the probe on 1,797 digits' features; "
                                      "target < 100 ms")


def tsne_time() -> Measurement:
    from topics.representations.compute import map_features, map_subset
    from engine.representations import tsne_map
    n = sized(300, 60)
    x = map_features("pixels")[map_subset(n)]
    t = median_time(lambda: tsne_map(x, 30 if n > 60 else 10), repeat=1)
    return Measurement(t, "s", f"t-SNE map of {n} digits' pixels (the maps tab draws three, "
                               "cached per setting after the first)")


def few_labels_time() -> Measurement:
    from topics.representations.compute import PER_CLASS, REPRESENTATIONS, few_label_accuracy
    fn = getattr(few_label_accuracy, "__wrapped__", few_label_accuracy)
    points = sized(PER_CLASS, PER_CLASS[:1])
    t = median_time(lambda: [fn(r, n) for r in REPRESENTATIONS for n in points], repeat=1)
    return Measurement(t, "s", "the few-labels curves (4 representations x 7 points x 3 "
                               "draws), uncached; computed once per process")


BENCHMARKS = {
    **{f"representations: {m} on 1,500 points": one_thread(clustering(m)) for m in METHODS},
    "representations: DEC training speed": one_thread(training_ratio),
    "representations: DEC live frame snapshot": one_thread(snapshot_time),
    "representations: SimCLR training speed": one_thread(simclr_ratio),
    "representations: SimCLR live frame snapshot": one_thread(simclr_snapshot_time),
    "representations: t-SNE map": one_thread(tsne_time),
    "representations: few-labels curves": one_thread(few_labels_time),
}
