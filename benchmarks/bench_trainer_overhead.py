"""Every live trainer at its page's defaults against a plain PyTorch loop doing the same
updates (same model sizes, data, batch and optimizer; no metrics, no history, no snapshots).

Both run CHUNK iterations per round (the trainer through the inline TrainerHandle, in the
~25 ms chunks a page's frame uses), trainer and loop alternating for ROUNDS rounds (a load
change on the shared machine hits both alike). The result is the median of the per-round
ratios plain time / trainer time, in CPU time (time.process_time: robust to other processes
on the machine), with the wall-time ratio beside it. A round is frames of the page's steps
per frame; after each the trainer's history is read, as a frame reads it, so work a trainer
defers until read is counted in its round; where a frame draws something the trainer's
bookkeeping shares (ReLU regions: the frame's partition, from which the count at that step
is made) the plain loop computes the same drawing for its own model. 1.0 = as fast as the plain loop; the
target is >= 0.95. `python -m benchmarks trainer_overhead`."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from benchmarks import Measurement, alternating_times

ROUNDS = int(__import__("os").environ.get("DLPLAY_BENCH_ROUNDS", "25"))
TARGET = 0.95


@dataclass(frozen=True)
class Race:
    make_trainer: Callable[[], object]
    make_plain: Callable[[], Callable[[int], None]]   # -> run(n): n plain iterations
    chunk: int                                         # iterations per round
    note: str
    frame: int | None = None          # the page's steps per frame (None: one frame a round)
    drawn: Callable[[object], None] | None = None     # what a frame draws from the trainer
    #   that its bookkeeping shares; the plain loop's run.draw() computes the same for its model


def _read_history(trainer) -> None:
    trainer.history  # noqa: B018 - reading it makes the measures it deferred


# ---- the trainers, each at its page's defaults, and their plain loops --------------------

def _regions():
    from engine.regions import RegionTrainer
    from topics.relu_regions.compute import COUNT_EVERY
    return RegionTrainer((8, 8, 8), task="bump (regression)", seed=0, lr=0.01,
                         count_every=COUNT_EVERY, device="cpu")


def _regions_plain():
    from engine.regions.geometry import partition
    tr = _regions()
    model, x, y = tr.model, tr.x, tr.y
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def run(n: int) -> None:
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x)[:, 0], y)
            loss.backward()
            opt.step()
            float(loss.detach())
    run.draw = lambda: partition(model, tr.box)    # any page draws the frame's regions
    return run


def _regions_drawn(trainer) -> None:
    trainer.partition()          # the frame's regions: the count at this step made from them


def _init_config():
    from engine.signal import training as T
    nets = (T.NetSpec("normal", 0.5, "none"), T.NetSpec("xavier_normal", 1.0, "none"),
            T.NetSpec("kaiming_normal", 1.0, "none"))
    return T.DeepNetsConfig(nets, 20, 64, "relu", 0.05, seed=0)


def _initialization():
    from engine.signal.training import DeepNetsTrainer
    return DeepNetsTrainer(_init_config(), "cpu")


def _initialization_plain():
    tr = _initialization()
    models, x, y, bs = tr.models, tr.x, tr.y, tr.config.batch_size
    opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in models]
    g = torch.Generator().manual_seed(1)

    def run(n: int) -> None:
        for _ in range(n):
            idx = torch.randint(len(y), (bs,), generator=g)
            xb, yb = x[idx], y[idx]
            for model, opt in zip(models, opts):
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
                float(loss.detach())
    return run


def _vae():
    from engine.vae.reads import build_trainer
    return build_trainer(2, 1.0, "bernoulli", False, True, 0, "cpu", None)


def _vae_plain():
    tr = _vae()
    model, x, bs, gen = tr.model, tr.x, tr.batch_size, tr.gen
    opt = torch.optim.Adam(model.parameters(), lr=tr.lr)
    rng = np.random.default_rng(0)
    state = {"perm": rng.permutation(len(x)), "pos": 0}

    def run(n: int) -> None:
        for _ in range(n):
            if state["pos"] + bs > len(x):
                state["perm"], state["pos"] = rng.permutation(len(x)), 0
            idx = state["perm"][state["pos"]:state["pos"] + bs]
            state["pos"] += bs
            total, _, _ = model.loss(x[torch.as_tensor(idx)], 1.0, 1, gen, True)
            opt.zero_grad(set_to_none=True)
            total.backward()
            opt.step()
            float(total.detach())
    return run


def _diffusion():
    from engine.diffusion.reads import build_trainer
    from topics.diffusion.compute import data_of
    data = data_of({"df_data": "mixture", "df_weight": 0.6}, 0)
    return build_trainer(data.points, data.labels, "linear", 64, 0.002, 0, "cpu")


def _diffusion_plain():
    tr = _diffusion()
    model, x, labels, ab = tr.model, tr.x, tr.labels, tr.ab
    opt = torch.optim.Adam(model.parameters(), lr=tr.lr)
    g, b, T = torch.Generator().manual_seed(0), tr.batch, tr.schedule.T
    net = model.net

    def run(n: int) -> None:
        from engine.diffusion.network import timestep_embedding
        for _ in range(n):
            idx = torch.randint(0, len(x), (b,), generator=g)
            t = torch.randint(1, T + 1, (b,), generator=g)
            eps = torch.randn(b, 2, generator=g)
            a = ab[t][:, None]
            x_t = a.sqrt() * x[idx] + (1 - a).sqrt() * eps
            drop = torch.rand(b, generator=g) < tr.p_uncond
            c = torch.where(drop, model.num_classes, labels[idx])
            h = torch.cat([x_t, timestep_embedding(t, model.emb_dim), model.class_emb(c)], -1)
            loss = ((eps - net(h)) ** 2).sum(-1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            float(loss.detach())
    return run


def _gan():
    from engine.gan import LIVE_DEFAULTS, LIVE_TARGET, GANTrainer, make_target
    return GANTrainer(make_target(*LIVE_TARGET, seed=0), seed=0, device="cpu", **LIVE_DEFAULTS)


def _gan_plain():
    from benchmarks.bench_gan import _plain_loop
    return _plain_loop()


def _adv_config():
    from engine.adversarial.training import AdvTrainConfig
    return AdvTrainConfig(train_eps=0.15, attack="pgd", attack_steps=7, seed=0)


def _adversarial():
    from engine.adversarial.training import AdversarialTrainer
    from topics.adversarial.compute import LIVE_EPS
    return AdversarialTrainer(_adv_config(), eval_eps=LIVE_EPS, device="cpu")


def _adversarial_plain():
    from benchmarks.bench_adversarial import _plain_loop
    return _plain_loop(_adv_config())


def _lstm():
    from engine.recurrent.trainer import RaceTrainer
    return RaceTrainer(("rnn", "lstm"), task="delayed_recall", length=40, max_length=40,
                       curriculum=False, hidden=16, lr=0.01, batch=64, seed=0, device="cpu",
                       forget_bias=2.0, task_params={"n_symbols": 4, "distract": 1.0})


def _lstm_plain():
    from engine.recurrent.tasks import TASKS, task_loss
    tr = _lstm()
    racers = list(tr.racers.values())
    opts = [torch.optim.Adam(r.net.parameters(), lr=0.01) for r in racers]
    g = torch.Generator().manual_seed(1)

    def run(n: int) -> None:
        for r, opt in zip(racers, opts):     # each racer trains its n steps whole, as the race
            for _ in range(n):
                b = TASKS["delayed_recall"].make(64, 40, g, "cpu", n_symbols=4, distract=1.0)
                loss = task_loss("delayed_recall", r.net(b.x), b.y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                float(loss.detach())
    return run


def _attention():
    from engine import attention as A
    return A.TransformerTrainer("reverse", A.ModelConfig(2, 2, 64), lr=3e-3, batch=128,
                                seed=0, device="cpu")


def _attention_plain():
    from benchmarks.bench_attention import plain_steps
    tr = _attention()
    opt = torch.optim.AdamW(tr.model.parameters(), lr=3e-3, weight_decay=0.01)
    return lambda n: plain_steps(tr.model, opt, tr.task, tr.gen, n)


def _gen_config():
    from engine import generalization as G
    return G.TrainConfig(dataset="two_moons", n_train=100, n_val=500, noise=0.2,
                         label_noise=0.2, width=128, depth=2, optimizer="adam", lr=0.003)


def _generalization():
    from engine import generalization as G
    return G.GeneralizationTrainer(_gen_config(), seed=0, device="cpu")


def _generalization_plain():
    from torch import nn
    tr = _generalization()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    x, y = torch.as_tensor(tr.data.x_train), torch.as_tensor(tr.data.y_train)

    def run(n: int) -> None:
        for _ in range(n):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            float(loss.detach())
    return run


RACES: dict[str, Race] = {
    "relu_regions": Race(_regions, _regions_plain, 100, "2-8-8-8-1 MLP, bump, full-batch Adam",
                         frame=25, drawn=_regions_drawn),
    "initialization": Race(_initialization, _initialization_plain, 80,
                           "3 ReLU nets 20x64, batch 128, SGD", frame=20),
    "vae": Race(_vae, _vae_plain, 120, "VAE 2-D latent, batch 128, Adam", frame=60),
    "diffusion": Race(_diffusion, _diffusion_plain, 100, "EpsMLP 3x64 + class, batch 256, Adam",
                      frame=100),
    "gan": Race(_gan, _gan_plain, 100, "ring of 8, G and D MLPs, batch 256, Adam", frame=50),
    "adversarial": Race(_adversarial, _adversarial_plain, 10, "digits CNN, PGD-7, batch 64"),
    "lstm_gating": Race(_lstm, _lstm_plain, 40, "RNN + LSTM 16 units, delay 40, batch 64",
                        frame=20),
    "attention": Race(_attention, _attention_plain, 40, "2 layers x 2 heads, d 64, batch 128",
                      frame=20),
    "generalization": Race(_generalization, _generalization_plain, 100,
                           "2-128-128-2 MLP, 100 moons, full batch, Adam"),
}


def ratio(race: Race, rounds: int = ROUNDS) -> tuple[float, float]:
    """(CPU-time ratio, wall-time ratio) plain / trainer, medians of per-round ratios."""
    from live.handle import TrainerHandle
    # driven as a page drives it: the inline handle's chunks sized to ~25 ms each (CHUNK_S),
    # so per-call bookkeeping is paid once a chunk, not once an iteration
    handle, plain = TrainerHandle(race.make_trainer()), race.make_plain()
    frame = race.frame or race.chunk
    frames = max(1, race.chunk // frame)

    def trainer_frames() -> None:
        # after each frame's steps the frame reads the history, so the measures a trainer
        # defers until read (VAE test metrics, region counts) are paid inside the round
        for _ in range(frames):
            handle.step(frame)
            _read_history(handle.trainer)
            if race.drawn:
                race.drawn(handle.trainer)

    def plain_frames() -> None:
        for _ in range(frames):
            plain(frame)
            if race.drawn:
                plain.draw()
    times = alternating_times({"trainer": trainer_frames, "plain": plain_frames},
                              rounds=rounds, warmup=1)
    cpu = statistics.median(p[1] / t[1] for t, p in zip(times["trainer"], times["plain"]))
    wall = statistics.median(p[0] / t[0] for t, p in zip(times["trainer"], times["plain"]))
    return cpu, wall


def _entry(name: str, race: Race) -> Callable[[], Measurement]:
    def measure() -> Measurement:
        cpu, wall = ratio(race)
        return Measurement(cpu, "x plain loop (CPU)",
                           f"{race.note}; wall-time ratio {wall:.2f}; {race.chunk} it/round, "
                           f"median of {ROUNDS} alternating rounds; target >= {TARGET}")
    return measure


BENCHMARKS = {f"trainer overhead: {name}": _entry(name, race) for name, race in RACES.items()}
