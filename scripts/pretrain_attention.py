"""Pretrained tiny transformers for the attention page: assets/weights/attention_<task>.pt.

Trains with the engine's own TransformerTrainer (CPU, one torch thread, seeded) until greedy
decoding on fresh random inputs is (almost) perfect, then writes it through engine/weights.py
(engine.attention.save_pretrained).

    python -m scripts.pretrain attention            # every task in RECIPES
    python -m scripts.pretrain_attention copy lookup  # only these tasks
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import NamedTuple

from engine.attention import ModelConfig, TransformerTrainer, evaluate, save_pretrained


class Recipe(NamedTuple):
    config: ModelConfig
    lr: float
    min_steps: int      # train on past the first success so the attention maps are crisp
    max_steps: int
    target: float       # greedy token accuracy on 512 fresh inputs that ends training


RECIPES = {
    "reverse": Recipe(ModelConfig(n_layers=2, n_heads=2, d_model=64), 3e-3, 500, 2000, 0.999),
    "sort": Recipe(ModelConfig(n_layers=2, n_heads=2, d_model=64), 3e-3, 1500, 4000, 0.999),
    "copy": Recipe(ModelConfig(n_layers=2, n_heads=2, d_model=64), 3e-3, 500, 2000, 0.999),
    "lookup": Recipe(ModelConfig(n_layers=2, n_heads=2, d_model=64), 3e-3, 500, 2000, 0.999),
}
CHECK_EVERY = 250


def pretrain_task(task: str, out_dir: Path, seed: int = 0) -> Path:
    """Train RECIPES[task] and write attention_<task>.pt; prints progress and wall time."""
    config, lr, min_steps, max_steps, target = RECIPES[task]
    trainer = TransformerTrainer(task, config, lr=lr, batch=128, seed=seed, device="cpu")
    score, start = {}, time.perf_counter()
    while trainer.steps < max_steps:
        trainer.step(CHECK_EVERY)
        score = evaluate(trainer.model, trainer.task, n=512, seed=seed + 99)
        print(f"  {task}: step {trainer.steps}, loss {trainer.history.last('loss'):.4f}, "
              f"greedy token accuracy {score['token_accuracy']:.4f}, "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        if score["token_accuracy"] >= target and trainer.steps >= min_steps:
            break
    path = Path(out_dir) / f"attention_{task}.pt"
    return save_pretrained(path, trainer, seed=seed, lr=lr,
                           token_accuracy=float(score.get("token_accuracy", float("nan"))))


def pretrain(out_dir: Path, seed: int = 0, tasks=None) -> list[Path]:
    import torch
    from engine.device import configure_threads
    configure_threads({})   # one thread for torch and BLAS alike
    return [pretrain_task(task, out_dir, seed) for task in (tasks or RECIPES)]


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    wanted = sys.argv[1:] or list(RECIPES)
    unknown = set(wanted) - set(RECIPES)
    if unknown:
        raise SystemExit(f"unknown tasks {sorted(unknown)}; available: {list(RECIPES)}")
    for p in pretrain(root / "assets" / "weights", tasks=wanted):
        print(f"wrote {p.relative_to(root)} ({p.stat().st_size / 1e3:.0f} KB)")
