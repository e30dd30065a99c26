"""Train the two digits CNNs of the adversarial-examples page and save them in the shared
weights format (engine/weights.py).

    python -m scripts.pretrain adversarial

- adversarial_standard.pt: the convolution page's recipe (engine.conv.train_digits_cnn: Adam,
  12 epochs of clean digits, seed 0), ~3 s on one CPU thread.
- adversarial_robust.pt: the same network trained on PGD-7 examples at eps = 0.15 (Madry's
  min-max, engine.adversarial.training.AdversarialTrainer: Adam 3e-3 with cosine decay, 920
  minibatches of 64 = 40 epochs, seed 0), ~30-60 s on one CPU thread.
Both on the seeded 80/20 split; each file ~30 KB. The meta records the recipe and the
accuracies measured on the held-out split at save time."""
from __future__ import annotations

import time
from pathlib import Path

import torch

from engine.adversarial import AttackSpec, robust_accuracy
from engine.adversarial.training import (AdvTrainConfig, AdversarialTrainer, config_meta,
                                         save_model, heldout_digits)
from engine.conv import train_digits_cnn
from scripts.reproducible import deterministic, step_with_progress

ROBUST = AdvTrainConfig(train_eps=0.15, attack="pgd", attack_steps=7, total_steps=920, seed=0)
STANDARD_EPOCHS = 12
REPORT_EPS = (0.0, 0.1, 0.125, 0.15)


def measured(model) -> dict:
    test = heldout_digits()
    curve = robust_accuracy(model, test.images, test.labels, REPORT_EPS, AttackSpec("pgd"))
    return {f"pgd10_accuracy_eps_{e:g}": round(float(a), 4) for e, a in zip(curve.eps, curve.accuracy)}


def train_standard() -> tuple[torch.nn.Module, dict]:
    model, report = train_digits_cnn(seed=0, epochs=STANDARD_EPOCHS)
    return model, {"recipe": "engine.conv.train_digits_cnn (clean training)", "seed": 0,
                   "epochs": STANDARD_EPOCHS, "train_accuracy": round(report.train_accuracy, 4)}


def train_robust() -> tuple[torch.nn.Module, dict]:
    trainer = AdversarialTrainer(ROBUST)
    step_with_progress(trainer, ROBUST.total_steps, "robust CNN (2/2, PGD training)")
    return trainer.model.eval(), {"recipe": "engine.adversarial.training.AdversarialTrainer",
                                  **config_meta(ROBUST)}


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    deterministic()
    paths = []
    for name, train in (("standard", train_standard), ("robust", train_robust)):
        t0 = time.perf_counter()
        print(f"  adversarial: training the {name} CNN...", flush=True)
        model, meta = train()
        meta = {**meta, **measured(model), "train_seconds": round(time.perf_counter() - t0, 1)}
        print(f"adversarial: {name} CNN {meta}")
        paths.append(save_model(Path(out_dir) / f"adversarial_{name}.pt", model, meta))
    return paths
