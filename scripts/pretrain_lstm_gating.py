"""Pretrained nets of the LSTM gating page: an LSTM and a same-size tanh RNN, trained with
the same recipe on delayed recall with distractors, every batch at a delay D drawn uniformly
from DELAYS (the page's Delay slider offers exactly this range). Adam from scratch; the
net, its initialisation and the task are the engine's (engine.recurrent). The LSTM learns
every delay of the range; the RNN only the short ones (its gradient through many steps
vanishes). Writes assets/weights/lstm_gating_{lstm,rnn}.pt (~10 kB each), < 3 min on one
thread.

    python -m scripts.pretrain lstm_gating
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from engine.recurrent import (TASKS, RecurrentNet, _init_net, accuracy_by_length, save_net,
                              task_loss)
from engine.device import make_generator

DELAYS = (1, 60)                 # trained range of D (inclusive); the page's slider range
TASK_PARAMS = {"n_symbols": 4, "distract": 1.0}
RECIPE = dict(hidden=16, lr=1e-2, batch=64, forget_bias=2.0)
STEPS = {"lstm": 1500, "rnn": 1500}
CHECK = (1, 2, 5, 10, 20, 30, 40, 50, 60)


def train(kind: str, steps: int, seed: int = 0) -> RecurrentNet:
    """Adam on cross-entropy; batch k has delay D_k ~ U{DELAYS} (seeded)."""
    spec = TASKS["delayed_recall"]
    net = RecurrentNet(kind, spec.input_size(TASK_PARAMS), RECIPE["hidden"],
                       spec.n_out(TASK_PARAMS))
    _init_net(net, seed, RECIPE["forget_bias"])
    opt = torch.optim.Adam(net.parameters(), lr=RECIPE["lr"])
    gen = make_generator(seed + 1, "cpu")
    for _ in range(steps):
        delay = int(torch.randint(DELAYS[0], DELAYS[1] + 1, (1,), generator=gen))
        b = spec.make(RECIPE["batch"], delay, gen, "cpu", **TASK_PARAMS)
        loss = task_loss("delayed_recall", net(b.x), b.y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    return net.eval()


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    from engine.device import configure_threads
    configure_threads({})   # one thread for torch and BLAS alike
    paths = []
    for kind, steps in STEPS.items():
        net = train(kind, steps, seed)
        acc = accuracy_by_length(net, "delayed_recall", CHECK, n=512, **TASK_PARAMS)
        print(f"{kind}: {steps} steps, accuracy by delay "
              + ", ".join(f"{d}: {a:.2f}" for d, a in zip(CHECK, acc)))
        path = Path(out_dir) / f"lstm_gating_{kind}.pt"
        save_net(net, path, task="delayed_recall", delay=40, delays=list(DELAYS),
                 long_delay=DELAYS[1], n_symbols=TASK_PARAMS["n_symbols"],
                 distract=TASK_PARAMS["distract"], steps=steps, seed=seed,
                 forget_bias=RECIPE["forget_bias"], accuracy=float(np.min(acc)))
        paths.append(path)
    return paths
