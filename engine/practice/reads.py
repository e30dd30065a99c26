"""What the Pruning tab builds and reads off a live LotteryTrainer (pure, picklable: a worker
process may run them)."""
from __future__ import annotations

from engine.practice.pruning import LotteryTrainer


def build_trainer(rate: float, round_steps: int, rewind: int, hidden: int, seed: int,
                  device: str) -> LotteryTrainer:
    """The live trainer, from plain values only."""
    return LotteryTrainer(hidden=hidden, rate=rate, round_steps=round_steps, rewind=rewind,
                          seed=seed, device=device)
