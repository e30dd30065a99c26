"""Every live trainer at its page's defaults against an independent plain PyTorch loop doing
the same updates: the same model (its own torch.nn modules, built from the trainer's layer
sizes and starting from the trainer's initial weights), the same data and batch, the same
torch.optim optimizer and settings, and its own loss written here (no metrics, no history,
no snapshots, nothing of the engine's training code). The adversarial loop trains a copy of
the trainer's CNN (torch.nn layers) with its own PGD; the attention loop trains the engine's
transformer module (its own loss and optimizer; the batches drawn by the task's generator).

Three runs alternate for ROUNDS rounds (a load change on the shared machine hits all alike),
each CHUNK iterations a round in the page's frames of steps: the trainer through the inline
TrainerHandle (in the ~25 ms chunks a page's frame uses), the same trainer kind on its frame
path (after each frame the frame's reads: its history, which makes the measures a trainer
defers until read, and what the frame draws from the trainer, e.g. the ReLU page's regions),
and the plain loop. Reported: the median of the per-round ratios trainer time / plain time in
CPU time (time.process_time: robust to other processes on the machine), 1.0 = as fast as the
plain loop, target <= TARGET; beside it the frame path / plain and the wall-time ratio.
DLPLAY_BENCH_ROUNDS sets ROUNDS. `python -m benchmarks trainer_overhead`."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from benchmarks import Measurement, alternating_times, sized

ROUNDS = int(__import__("os").environ.get("DLPLAY_BENCH_ROUNDS", "25"))
TARGET = 1.05


@dataclass(frozen=True)
class Race:
    make_trainer: Callable[[], object]
    make_plain: Callable[[], Callable[[int], None]]   # -> run(n): n plain iterations
    chunk: int                                         # iterations per round
    note: str
    frame: int | None = None          # the page's steps per frame (None: one frame a round)
    drawn: Callable[[object], None] | None = None     # what a frame draws from the trainer


def _read_history(trainer) -> None:
    trainer.history  # noqa: B018 - reading it makes the measures it deferred


_ACTIVATIONS = (nn.ReLU, nn.Tanh, nn.SiLU, nn.Sigmoid, nn.GELU, nn.Identity)


def _own_mlp(net: nn.Module) -> nn.Sequential:
    """`net` (Linear layers and activations, in order) rebuilt from torch.nn with its current
    weights: the plain loop's own modules, starting where the trainer starts."""
    layers: list[nn.Module] = []
    for m in net.modules():
        if isinstance(m, nn.Linear):
            lin = nn.Linear(m.in_features, m.out_features, bias=m.bias is not None)
            with torch.no_grad():
                lin.weight.copy_(m.weight)
                if m.bias is not None:
                    lin.bias.copy_(m.bias)
            layers.append(lin)
        elif isinstance(m, nn.LeakyReLU):
            layers.append(nn.LeakyReLU(m.negative_slope))
        elif isinstance(m, _ACTIVATIONS):
            layers.append(type(m)())
        elif not list(m.children()):
            raise TypeError(f"{type(m).__name__} is not a layer of a plain MLP")
    return nn.Sequential(*layers)


# ---- the trainers, each at its page's defaults, and their plain loops --------------------

def _regions():
    from engine.regions import RegionTrainer
    from topics.relu_regions.compute import COUNT_EVERY
    return RegionTrainer((8, 8, 8), task="bump (regression)", seed=0, lr=0.01,
                         count_every=COUNT_EVERY, device="cpu")


def _regions_plain():
    tr = _regions()
    model, x, y = _own_mlp(tr.model), tr.x, tr.y
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def run(n: int) -> None:
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x)[:, 0], y)
            loss.backward()
            opt.step()
            float(loss.detach())
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
    models, x, y, bs = [_own_mlp(m) for m in tr.models], tr.x, tr.y, tr.config.batch_size
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
    enc, dec = _own_mlp(tr.model.encoder), _own_mlp(tr.model.decoder)
    x, bs, beta = tr.x, tr.batch_size, 1.0
    opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=tr.lr)
    rng, g = np.random.default_rng(0), torch.Generator().manual_seed(0)
    state = {"perm": rng.permutation(len(x)), "pos": 0}

    def run(n: int) -> None:
        for _ in range(n):            # epochs of shuffled minibatches, as the trainer draws
            if state["pos"] + bs > len(x):
                state["perm"], state["pos"] = rng.permutation(len(x)), 0
            xb = x[torch.as_tensor(state["perm"][state["pos"]:state["pos"] + bs])]
            state["pos"] += bs
            mu, logvar = enc(xb).chunk(2, -1)
            z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=g)
            recon = F.binary_cross_entropy_with_logits(dec(z), xb, reduction="none").sum(-1)
            kl = 0.5 * (mu.pow(2) + logvar.exp() - 1 - logvar).sum(-1)
            loss = recon.mean() + beta * kl.mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            float(loss.detach())
    return run


def _diffusion():
    from engine.diffusion.reads import build_trainer
    from topics.diffusion.compute import data_of
    data = data_of({"df_data": "mixture", "df_weight": 0.6}, 0)
    return build_trainer(data.points, data.labels, "linear", 64, 0.002, 0, "cpu")


def _timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """[sin(t f_i), cos(t f_i)], f_i = 10000^(-i/half): the eps-network's time input."""
    half = dim // 2
    args = t.float()[:, None] * torch.exp(-math.log(10000.0) * torch.arange(half) / half)[None]
    return torch.cat([torch.sin(args), torch.cos(args)], -1)


def _diffusion_plain():
    tr = _diffusion()
    model, x, labels, ab = tr.model, tr.x, tr.labels, tr.ab
    net = _own_mlp(model.net)
    classes = nn.Embedding(model.num_classes + 1, model.emb_dim)
    with torch.no_grad():
        classes.weight.copy_(model.class_emb.weight)
    opt = torch.optim.Adam([*net.parameters(), *classes.parameters()], lr=tr.lr)
    g, b, T, emb_dim = torch.Generator().manual_seed(0), tr.batch, tr.schedule.T, model.emb_dim

    def run(n: int) -> None:
        for _ in range(n):
            idx = torch.randint(0, len(x), (b,), generator=g)
            t = torch.randint(1, T + 1, (b,), generator=g)
            eps = torch.randn(b, 2, generator=g)
            a = ab[t][:, None]
            x_t = a.sqrt() * x[idx] + (1 - a).sqrt() * eps
            drop = torch.rand(b, generator=g) < tr.p_uncond
            c = torch.where(drop, model.num_classes, labels[idx])
            h = torch.cat([x_t, _timestep_embedding(t, emb_dim), classes(c)], -1)
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
    """A copy of the trainer's CNN (torch.nn layers, its initial weights), the same digits and
    batch, Adam at the config's lr, and PGD written here: L-inf, random start, the config's
    steps and eps, step alpha = eps / 4, projected onto the eps-ball and [0, 1]."""
    import copy
    cfg, tr = _adv_config(), _adversarial()
    model, x_all, y_all = copy.deepcopy(tr.model), tr.x, tr.y
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    rng, g = np.random.default_rng(cfg.seed), torch.Generator().manual_seed(cfg.seed)
    eps, alpha = cfg.train_eps, cfg.train_eps / 4

    def pgd(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x_adv = (x + torch.empty_like(x).uniform_(-eps, eps, generator=g)).clamp(0, 1)
        for _ in range(cfg.attack_steps):
            x_adv.requires_grad_(True)
            (grad,) = torch.autograd.grad(F.cross_entropy(model(x_adv), y), x_adv)
            x_adv = torch.minimum(torch.maximum(x_adv.detach() + alpha * grad.sign(), x - eps),
                                  x + eps).clamp(0, 1)
        return x_adv

    def run(n: int) -> None:
        for _ in range(n):
            idx = torch.as_tensor(rng.choice(len(y_all), cfg.batch, replace=False))
            x, y = x_all[idx], y_all[idx]
            loss = F.cross_entropy(model(pgd(x, y)), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            float(loss.detach())
    return run


def _lstm():
    from engine.recurrent.trainer import RaceTrainer
    return RaceTrainer(("rnn", "lstm"), task="delayed_recall", length=40, max_length=40,
                       curriculum=False, hidden=16, lr=0.01, batch=64, seed=0, device="cpu",
                       forget_bias=2.0, task_params={"n_symbols": 4, "distract": 1.0})


def _lstm_plain():
    from engine.recurrent.tasks import TASKS
    tr = _lstm()
    nets = []
    for r in tr.racers.values():          # own recurrent layer and readout, the racer's weights
        rnn = type(r.net.rnn)(r.net.rnn.input_size, r.net.rnn.hidden_size, batch_first=True)
        rnn.load_state_dict(r.net.rnn.state_dict())
        nets.append((rnn, _own_mlp(r.net.head)))
    opts = [torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=0.01)
            for rnn, head in nets]
    g = torch.Generator().manual_seed(1)

    def run(n: int) -> None:
        for (rnn, head), opt in zip(nets, opts):   # each racer its n steps whole, as the race
            for _ in range(n):
                b = TASKS["delayed_recall"].make(64, 40, g, "cpu", n_symbols=4, distract=1.0)
                loss = F.cross_entropy(head(rnn(b.x)[0][:, -1]), b.y)
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


def ratio(race: Race, rounds: int = ROUNDS) -> dict[str, float]:
    """Medians of the per-round ratios to the plain loop's time: "train" (the trainer's steps;
    what it defers until read is left unread), "frame" (its frame path: the steps and, after
    each frame, the frame's reads), in CPU time, and both in wall time ("*_wall")."""
    from live.handle import TrainerHandle
    # driven as a page drives it: the inline handle's chunks sized to ~25 ms each (CHUNK_S),
    # so per-call bookkeeping is paid once a chunk, not once an iteration
    trainer, framed = TrainerHandle(race.make_trainer()), TrainerHandle(race.make_trainer())
    plain = race.make_plain()
    chunk = sized(race.chunk, 2)
    frame = min(race.frame or chunk, chunk)
    frames = max(1, chunk // frame)

    def train() -> None:
        for _ in range(frames):
            trainer.step(frame)

    def frame_path() -> None:
        # after each frame's steps the frame reads the history, so the measures a trainer
        # defers until read (VAE test metrics, region counts) are paid inside the round
        for _ in range(frames):
            framed.step(frame)
            _read_history(framed.trainer)
            if race.drawn:
                race.drawn(framed.trainer)

    def plain_frames() -> None:
        for _ in range(frames):
            plain(frame)
    times = alternating_times({"train": train, "frame": frame_path, "plain": plain_frames},
                              rounds=rounds, warmup=1)
    out = {}
    for name in ("train", "frame"):
        for i, suffix in ((1, ""), (0, "_wall")):
            out[name + suffix] = statistics.median(
                t[i] / p[i] for t, p in zip(times[name], times["plain"]))
    return out


def _entry(name: str, race: Race) -> Callable[[], Measurement]:
    def measure() -> Measurement:
        r = ratio(race)
        return Measurement(r["train"], "x plain loop time (CPU)",
                           f"{race.note}; frame path (training + the frame's reads) "
                           f"{r['frame']:.2f}x; wall {r['train_wall']:.2f}x / "
                           f"{r['frame_wall']:.2f}x; {sized(race.chunk, 2)} it/round, median "
                           f"of {sized(ROUNDS, 1)} alternating rounds; target <= {TARGET}")
    return measure


BENCHMARKS = {f"trainer overhead: {name}": _entry(name, race) for name, race in RACES.items()}
