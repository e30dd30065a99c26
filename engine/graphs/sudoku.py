"""4x4 Sudoku by recurrent message passing (a recurrent relational network, Palm et al., 2018).

The 16 cells are the nodes of a constraint graph: cell i and cell j are joined when they share
a row, a column or a 2x2 box (7 neighbours each). A puzzle gives a digit 1..4 or 0 (empty) per
cell. With x_i the embedding of cell i's given digit and h_i^0 = x_i, each iteration t

    m_ij = f(h_i^t, h_j^t)                        a message along every edge
    h_i^{t+1} = GRU( g(x_i, sum_j m_ij), h_i^t )  the cell's new state
    p_i^{t+1} = softmax(r(h_i^{t+1}))             its belief over the 4 digits

with f, g, r small MLPs shared by all cells and iterations; trained on the sum over iterations
of the cross-entropy to the solution, so every iteration's beliefs are a prediction.

Puzzles come from all 288 4x4 Sudoku grids, split by a seeded permutation into training and
held-out grids; cells are emptied at random as long as the puzzle keeps exactly one
solution."""
from __future__ import annotations

import functools

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

CELLS = 16
DIGITS = 4
HELD_OUT = 48            # grids never trained on


def _unit(i: int, j: int) -> bool:
    ri, ci, rj, cj = i // 4, i % 4, j // 4, j % 4
    return ri == rj or ci == cj or (ri // 2, ci // 2) == (rj // 2, cj // 2)


def constraint_graph() -> np.ndarray:
    """(16, 16) 0/1: cells sharing a row, a column or a box (no self-loops)."""
    return np.array([[float(i != j and _unit(i, j)) for j in range(CELLS)]
                     for i in range(CELLS)])


NEIGHBOURS = [np.flatnonzero(row) for row in constraint_graph()]


def conflicts(grid: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of joined cells (i < j) holding the same given digit."""
    g = np.asarray(grid).ravel()
    return [(i, int(j)) for i in range(CELLS) for j in NEIGHBOURS[i]
            if i < j and g[i] and g[i] == g[j]]


def solutions(grid: np.ndarray, limit: int = 2) -> list[np.ndarray]:
    """Up to `limit` completions of `grid` (16,) (0 = empty) by backtracking."""
    g = np.asarray(grid, dtype=int).ravel().copy()
    if conflicts(g):
        return []
    found: list[np.ndarray] = []

    def fill(k: int) -> None:
        if len(found) >= limit:
            return
        if k == CELLS:
            found.append(g.copy())
            return
        if g[k]:
            fill(k + 1)
            return
        used = {int(g[j]) for j in NEIGHBOURS[k]}
        for d in range(1, DIGITS + 1):
            if d not in used:
                g[k] = d
                fill(k + 1)
                g[k] = 0
    fill(0)
    return found


@functools.lru_cache(maxsize=1)
def all_grids() -> np.ndarray:
    """(288, 16) every solved 4x4 Sudoku."""
    return np.stack(solutions(np.zeros(CELLS, dtype=int), limit=10_000))


def make_puzzle(solution: np.ndarray, rng: np.random.Generator, givens: int) -> np.ndarray:
    """Empty the cells of `solution` in a random order, skipping any whose removal would allow
    a second solution, until `givens` digits are left (or no cell can go)."""
    puzzle = solution.copy()
    for i in rng.permutation(CELLS):
        if int((puzzle > 0).sum()) <= givens:
            break
        keep = puzzle[i]
        puzzle[i] = 0
        if len(solutions(puzzle, 2)) != 1:
            puzzle[i] = keep
    return puzzle


def split_grids(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(training grids, held-out grids): the 288 grids split by a seeded permutation."""
    grids = all_grids()
    order = np.random.default_rng(int(seed)).permutation(len(grids))
    return grids[order[HELD_OUT:]], grids[order[:HELD_OUT]]


def puzzles(grids: np.ndarray, count: int, seed: int, givens: tuple[int, int] = (4, 10)
            ) -> tuple[np.ndarray, np.ndarray]:
    """(puzzles, solutions), each (count, 16): seeded unique-solution puzzles of grids drawn
    at random, with a number of givens drawn from [givens[0], givens[1]]."""
    rng = np.random.default_rng(int(seed))
    sols = grids[rng.integers(len(grids), size=count)]
    ps = np.stack([make_puzzle(s, rng, int(rng.integers(givens[0], givens[1] + 1)))
                   for s in sols])
    return ps, sols


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))


class RecurrentRelationalNetwork(nn.Module):
    """m_ij = f(h_i, h_j); h_i <- GRU(g(x_i, sum_j m_ij), h_i); logits_i = r(h_i)."""

    src: torch.Tensor
    dst: torch.Tensor

    def __init__(self, hidden: int = 48):
        super().__init__()
        self.hidden = int(hidden)
        self.embed = nn.Embedding(DIGITS + 1, hidden)                 # x_i from digit 0..4
        self.message = _mlp(2 * hidden, hidden, hidden)               # f
        self.combine = _mlp(2 * hidden, hidden, hidden)               # g
        self.gru = nn.GRUCell(hidden, hidden)
        self.readout = nn.Linear(hidden, DIGITS)                      # r
        src, dst = np.nonzero(constraint_graph())
        self.register_buffer("src", torch.as_tensor(src), persistent=False)   # (E,) j
        self.register_buffer("dst", torch.as_tensor(dst), persistent=False)   # (E,) i

    def forward(self, grid: torch.Tensor, iterations: int) -> torch.Tensor:
        """grid (B, 16) long 0..4 -> logits (iterations, B, 16, 4), one per iteration."""
        b = grid.shape[0]
        x = self.embed(grid)                                          # (B, 16, H)
        h = x
        out = []
        for _ in range(int(iterations)):
            pair = torch.cat([h[:, self.dst], h[:, self.src]], -1)    # (B, E, 2H)
            m = self.message(pair)                                    # (B, E, H)
            total = torch.zeros_like(h).index_add_(1, self.dst, m)    # (B, 16, H)
            inp = self.combine(torch.cat([x, total], -1))             # (B, 16, H)
            h = self.gru(inp.reshape(-1, self.hidden),
                         h.reshape(-1, self.hidden)).view(b, CELLS, -1)
            out.append(self.readout(h))                               # (B, 16, 4)
        return torch.stack(out)


def loss_of(logits: torch.Tensor, solution: torch.Tensor) -> torch.Tensor:
    """Mean over iterations and cells of the cross-entropy to the solution (B, 16) 1..4."""
    t = logits.shape[0]
    target = (solution - 1).expand(t, *solution.shape)                # (T, B, 16)
    return F.cross_entropy(logits.reshape(-1, DIGITS), target.reshape(-1))


def beliefs(model: RecurrentRelationalNetwork, grid: np.ndarray, iterations: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """(digits, confidence), each (iterations, 16): after each iteration, every cell's most
    probable digit 1..4 and its probability."""
    with torch.no_grad():
        p = torch.softmax(model(torch.as_tensor(grid, dtype=torch.long).view(1, CELLS),
                                iterations)[:, 0], -1)                # (T, 16, 4)
    confidence, digit = p.max(-1)
    return digit.numpy() + 1, confidence.numpy()


def solved_share(model: RecurrentRelationalNetwork, ps: np.ndarray, sols: np.ndarray,
                 iterations: int) -> np.ndarray:
    """(iterations,) the share of the puzzles whose every cell the network gets right after
    1, 2, ... iterations."""
    with torch.no_grad():
        logits = model(torch.as_tensor(ps, dtype=torch.long), iterations)  # (T, B, 16, 4)
    right = (logits.argmax(-1) + 1).numpy() == sols[None]             # (T, B, 16)
    return right.all(-1).mean(-1)


def load_solver(path, device: str = "cpu") -> tuple[RecurrentRelationalNetwork, dict]:
    """(network in eval mode, meta) from a file written by scripts/pretrain_graphs.py. Raises
    engine.weights.WeightsError for a missing, corrupt or stale file."""
    from engine import weights
    w = weights.load(path, "cpu")
    try:
        model = RecurrentRelationalNetwork(int(w.model_config["hidden"]))
        model.load_state_dict(w.state)
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise weights.StaleWeightsError(
            f"weights file {w.path} does not fit the Sudoku network ({type(err).__name__}): "
            f"{weights.REBUILD_HINT}") from err
    return model.eval(), dict(w.meta)


def parse_grid(text: str) -> np.ndarray:
    """(16,) digits 0..4 from text: 1-4 a given digit, '.', '0', '_' or '-' an empty cell;
    spaces, '/', '|', ',' and line breaks are ignored. Raises ValueError with what is wrong."""
    cells = [c for c in str(text) if c not in " /|,\n\r\t"]
    bad = sorted({c for c in cells if c not in "01234._-"})
    if bad:
        raise ValueError(f"only the digits 1-4 and '.' for an empty cell can be used, not "
                         f"{', '.join(repr(c) for c in bad)}")
    if len(cells) != CELLS:
        raise ValueError(f"a 4x4 Sudoku has 16 cells; this one has {len(cells)}")
    return np.array([int(c) if c in "1234" else 0 for c in cells])


def format_grid(grid: np.ndarray) -> str:
    """The text parse_grid reads back: rows of 4 separated by '/', '.' for empty."""
    g = ["." if d == 0 else str(int(d)) for d in np.asarray(grid).ravel()]
    return "/".join("".join(g[4 * r:4 * r + 4]) for r in range(4))
