"""What the Pruning tab builds and reads off a live LotteryTrainer (pure, picklable: a worker
process may run them)."""
from __future__ import annotations

from engine.practice.pruning import LotteryTrainer


def build_trainer(rate: float, round_steps: int, rewind: int, hidden: int, seed: int,
                  device: str) -> LotteryTrainer:
    """The live trainer, from plain values only."""
    return LotteryTrainer(hidden=hidden, rate=rate, round_steps=round_steps, rewind=rewind,
                          seed=seed, device=device)


def rounds_of(trainer: LotteryTrainer) -> list[dict]:
    """One row per finished round: fraction kept, each arm's test accuracy at the round's end
    and the iteration of the round at which it peaked (plain values)."""
    rows = []
    for r in trainer.records:
        row: dict = {"round": r.round, "kept": r.kept}
        for arm in r.accuracy:
            row[f"{arm} accuracy"] = r.accuracy[arm]
            row[f"{arm} peak at"] = r.stop[arm]
        rows.append(row)
    return rows
