"""The shipped Sudoku solver of the graphs page: assets/weights/graphs_sudoku.pt.

A recurrent relational network (engine.graphs.sudoku) trained by Adam on seeded 4x4 puzzles
of the training grids (the held-out grids are never seen), with the loss of every iteration,
then written through engine/weights.py with the share of held-out puzzles it solves.

    python -m scripts.pretrain graphs
"""
from __future__ import annotations

import time
from pathlib import Path

import torch

from engine.graphs.sudoku import (RecurrentRelationalNetwork, loss_of, puzzles, solved_share,
                                  split_grids)
from engine.weights import save

HIDDEN = 48
TRAIN_ITERATIONS = 8     # message-passing iterations per forward pass in training
STEPS = 800
BATCH = 64
POOL = 4_000             # training puzzles


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    torch.manual_seed(seed)
    train_grids, held_grids = split_grids(seed)
    ps, sols = puzzles(train_grids, POOL, seed + 1)
    test_ps, test_sols = puzzles(held_grids, 500, seed + 2)
    model = RecurrentRelationalNetwork(HIDDEN)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    x, y = torch.as_tensor(ps), torch.as_tensor(sols)
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    for step in range(1, STEPS + 1):
        idx = torch.randint(len(x), (BATCH,), generator=gen)
        loss = loss_of(model(x[idx], TRAIN_ITERATIONS), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 200 == 0:
            share = solved_share(model, test_ps, test_sols, 16)
            print(f"  sudoku: step {step}, loss {float(loss.detach()):.4f}, held-out solved after 8 / "
                  f"16 iterations {share[7]:.3f} / {share[15]:.3f}, "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    share = solved_share(model, test_ps, test_sols, 16)
    path = Path(out_dir) / "graphs_sudoku.pt"
    save(path, {"hidden": HIDDEN}, model.state_dict(),
         {"seed": seed, "steps": STEPS, "train_iterations": TRAIN_ITERATIONS,
          "held_out_solved": [float(v) for v in share]})
    return [path]


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    from scripts.reproducible import deterministic
    deterministic()
    for p in pretrain(root / "assets" / "weights"):
        print(f"wrote {p.relative_to(root)} ({p.stat().st_size / 1e3:.0f} KB)")
