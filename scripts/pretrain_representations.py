"""Pretrain the digits autoencoder of the representation-learning page and save it in the
shared weights format (engine/weights.py).

    python -m scripts.pretrain representations

- representations_ae.pt: engine.representations.dec.Autoencoder (64 -> 128 -> 10 -> 128 -> 64)
  fitted to all 1,797 of scikit-learn's digits by Adam on the mean squared reconstruction
  error (minibatches of 128, PRETRAIN_EPOCHS epochs, seed 0; labels unused), ~50 KB. The meta
  records the recipe, the final error and the k-means cluster accuracy of the codes.
- representations_simclr.pt: engine.representations.contrastive.SimCLR trained by
  ContrastiveTrainer's defaults (NT-Xent on two augmented views of the training split's digits,
  PRETRAIN_STEPS iterations, seed 0; labels unused), ~170 KB. The meta records the recipe and
  the linear probe's accuracy at 5 labels per class."""
from __future__ import annotations

import time
from pathlib import Path

from sklearn.cluster import KMeans

from engine import weights
from engine.representations import dec
from engine.representations.metrics import cluster_accuracy
from scripts.reproducible import Progress, deterministic

NAME = "representations_ae.pt"
SIMCLR_NAME = "representations_simclr.pt"


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    deterministic()
    t0 = time.perf_counter()
    report = Progress("representations autoencoder", dec.PRETRAIN_EPOCHS, unit="epoch")
    model, mse = dec.pretrain_autoencoder(seed, dec.PRETRAIN_EPOCHS, progress=report)
    x, y = dec.digits_pixels()
    import torch
    with torch.no_grad():
        z = model.encoder(torch.from_numpy(x)).numpy()
    accuracy = cluster_accuracy(y, KMeans(10, n_init=10, random_state=0).fit_predict(z))
    meta = {"recipe": "engine.representations.dec.pretrain_autoencoder", "seed": int(seed),
            "epochs": dec.PRETRAIN_EPOCHS, "lr": dec.PRETRAIN_LR, "batch": dec.BATCH,
            "mse": round(mse, 5), "kmeans_code_accuracy": round(accuracy, 4),
            "train_seconds": round(time.perf_counter() - t0, 1)}
    print(f"representations: autoencoder {meta}")
    path = Path(out_dir) / NAME
    weights.save(path, dec.MODEL_CONFIG, model.state_dict(), meta)
    return [path, *pretrain_contrastive(out_dir, seed)]


def pretrain_contrastive(out_dir: Path, seed: int = 0) -> list[Path]:
    from engine.representations import contrastive
    from engine.representations.fewlabels import probe_accuracy
    deterministic()
    t0 = time.perf_counter()
    report = Progress("representations SimCLR", contrastive.PRETRAIN_STEPS, unit="step")
    model = contrastive.pretrain_simclr(seed, contrastive.PRETRAIN_STEPS, progress=report)
    x, y = dec.digits_pixels()
    import torch
    with torch.no_grad():
        h = model.encoder(torch.from_numpy(x)).numpy()
    probe = probe_accuracy(h, y, contrastive.PROBE_LABELS, contrastive.PROBE_REPEATS, seed)
    meta = {"recipe": "engine.representations.contrastive.pretrain_simclr", "seed": int(seed),
            "steps": contrastive.PRETRAIN_STEPS, "probe_accuracy_5_labels": round(probe, 4),
            "train_seconds": round(time.perf_counter() - t0, 1)}
    print(f"representations: SimCLR {meta}")
    path = Path(out_dir) / SIMCLR_NAME
    weights.save(path, contrastive.MODEL_CONFIG, model.state_dict(), meta)
    return [path]
