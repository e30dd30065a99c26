"""The shipped GPT of the language models page: the engine's GPTTrainer on the standard
library's pydoc topics (engine.language_models.corpus.shipped_text; Python Software
Foundation licence), 90% for training, the last 10% held out. AdamW at a cosine-decayed
learning rate (LR_MAX -> LR_MIN in chunks of CHUNK steps), seeded. Writes
assets/weights/language_models_gpt.pt (~0.7 MB). The text is the running Python's, so the
bits depend on the Python version as well as the CPU and torch build.

    python -m scripts.pretrain language_models
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

from engine import weights
from engine.language_models.corpus import shipped_text, split_text
from engine.language_models.gpt import GPTConfig, n_parameters
from engine.language_models.trainer import GPTTrainer
from scripts.reproducible import Progress, deterministic

STEPS, CHUNK, BATCH = 2400, 100, 24
LR_MAX, LR_MIN = 3e-3, 3e-4
NAME = "language_models_gpt.pt"


def lr_at(step: int, steps: int = STEPS) -> float:
    return LR_MIN + 0.5 * (LR_MAX - LR_MIN) * (1 + math.cos(math.pi * step / steps))


def train(steps: int = STEPS, seed: int = 0) -> GPTTrainer:
    split = split_text(shipped_text())
    tr = GPTTrainer(split.train, split.held, GPTConfig(), lr=LR_MAX, batch=BATCH, seed=seed,
                    device="cpu")
    bar = Progress("language_models_gpt", steps)
    while tr.steps < steps:
        for group in tr.opt.param_groups:
            group["lr"] = lr_at(tr.steps, steps)
        tr.step(min(CHUNK, steps - tr.steps))
        bar(tr.steps, f"held-out {tr.history.last('held_out'):.3f} nats/char", force=True)
    return tr


def pretrain(out_dir: Path, seed: int = 0, steps: int = STEPS) -> list[Path]:
    deterministic()
    tr = train(steps, seed)
    held = tr.held_ce()
    print(f"language_models_gpt: {n_parameters(tr.model):,} parameters, held-out "
          f"{held:.3f} nats/char (bigram {tr.bigram:.3f}, unigram {tr.unigram:.3f})")
    path = Path(out_dir) / NAME
    weights.save(path, GPTConfig().as_dict(), tr.model.state_dict(),
                 meta={"steps": steps, "batch": BATCH, "lr_max": LR_MAX, "lr_min": LR_MIN,
                       "seed": seed, "held_ce": held, "bigram_ce": tr.bigram,
                       "unigram_ce": tr.unigram, "python": sys.version.split()[0],
                       "corpus": "pydoc_data.topics"})
    return [path]
