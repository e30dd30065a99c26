"""Pretrained tiny transformers for the attention page: assets/weights/attention_<task>.pt.

Trains with the engine's own TransformerTrainer (CPU, seeded) until greedy decoding on
fresh random inputs is (almost) perfect, then saves weights_payload(trainer).
"""
from __future__ import annotations

from pathlib import Path

from engine.attention import ModelConfig, TransformerTrainer, evaluate, weights_payload

# task -> (model config, learning rate, min steps, max steps, target token accuracy);
# min steps: train on past the first success so the attention maps are crisp
RECIPES = {
    "reverse": (ModelConfig(n_layers=2, n_heads=2, d_model=64), 3e-3, 500, 2000, 0.999),
    "sort": (ModelConfig(n_layers=2, n_heads=2, d_model=64), 3e-3, 1500, 4000, 0.999),
}
CHECK_EVERY = 250


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    import torch
    torch.set_num_threads(1)   # tiny model: one thread is as fast and spares the CPU
    paths = []
    for task, (config, lr, min_steps, max_steps, target) in RECIPES.items():
        trainer = TransformerTrainer(task, config, lr=lr, batch=128, seed=seed, device="cpu")
        score = {}
        while trainer.steps < max_steps:
            trainer.step(CHECK_EVERY)
            score = evaluate(trainer.model, trainer.task, n=512, seed=seed + 99)
            print(f"  {task}: step {trainer.steps}, loss {trainer.history.last('loss'):.4f}, "
                  f"greedy token accuracy {score['token_accuracy']:.4f}", flush=True)
            if score["token_accuracy"] >= target and trainer.steps >= min_steps:
                break
        path = Path(out_dir) / f"attention_{task}.pt"
        payload = weights_payload(trainer)
        payload["token_accuracy"] = float(score.get("token_accuracy", float("nan")))
        torch.save(payload, path)
        paths.append(path)
    return paths
