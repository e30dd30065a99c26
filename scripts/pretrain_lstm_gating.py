"""Pretrained nets of the LSTM gating page: an LSTM and a same-size tanh RNN, trained with
the same recipe (engine.recurrent.SequenceTrainer, Adam, from scratch at a fixed delay) on
delayed recall with distractors. The LSTM learns it; the RNN stays at chance (its gradient
through 40 steps vanishes). Writes assets/weights/lstm_gating_{lstm,rnn}.pt (~10 kB each).

    python -m scripts.pretrain lstm_gating
"""
from __future__ import annotations

from pathlib import Path

import torch

from engine.recurrent import SequenceTrainer, accuracy_by_length, save_net

RECIPE = dict(task="delayed_recall", length=40, hidden=16, lr=1e-2, batch=64,
              forget_bias=2.0, task_params={"n_symbols": 4, "distract": 1.0})
STEPS = {"lstm": 600, "rnn": 600}


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    torch.set_num_threads(1)
    paths = []
    for kind, steps in STEPS.items():
        tr = SequenceTrainer(kind, seed=seed, device="cpu", **RECIPE)
        tr.step(steps)
        delay = RECIPE["length"]
        acc = float(accuracy_by_length(tr.net, "delayed_recall", [delay], n=512,
                                       **RECIPE["task_params"])[0])
        print(f"{kind}: {steps} steps, accuracy at delay {delay}: {acc:.3f}")
        path = out_dir / f"lstm_gating_{kind}.pt"
        save_net(tr.net, path, task="delayed_recall", delay=delay, long_delay=delay,
                 n_symbols=RECIPE["task_params"]["n_symbols"],
                 distract=RECIPE["task_params"]["distract"], steps=steps, seed=seed,
                 forget_bias=RECIPE["forget_bias"], accuracy=acc)
        paths.append(path)
    return paths
