"""The page's live factory: a pure function of plain values (it may run in a worker process,
live/workers.py)."""
from __future__ import annotations

from engine.language_models.corpus import split_text
from engine.language_models.gpt import GPT, GPTConfig, n_parameters
from engine.language_models.race import RaceTrainer
from engine.language_models.rnn import RNNConfig, matched_hidden
from engine.language_models.trainer import GPTTrainer


def build_trainer(text: str, lr: float, batch: int, seed: int, device: str | None,
                  prompts: tuple[str, ...] = ("", "The ")) -> GPTTrainer:
    """A fresh GPTTrainer (the shipped model's architecture) on `text`, 90% / 10% split."""
    s = split_text(text)
    return GPTTrainer(s.train, s.held, GPTConfig(), lr=float(lr), batch=int(batch),
                      seed=int(seed), device=device, prompts=tuple(prompts))


def build_race(text: str, lr: float, batch: int, seed: int, device: str | None,
               cell: str = "lstm", prompt: str = "The ") -> RaceTrainer:
    """A fresh RaceTrainer on `text`: the GPT beside a CharRNN (`cell`) whose hidden width
    gives it about the GPT's parameter count, 90% / 10% split."""
    s = split_text(text)
    cfg = GPTConfig()
    hidden = matched_hidden(n_parameters(GPT(cfg)), cell)
    return RaceTrainer(s.train, s.held, cfg, RNNConfig(hidden=hidden, cell=cell),
                       lr=float(lr), batch=int(batch), seed=int(seed), device=device,
                       prompt=prompt)
