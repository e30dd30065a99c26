"""The Sudoku engine: the constraint graph, the 288 grids, unique-solution puzzles, the text a
user types, and the recurrent relational network's shapes and loss."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.graphs.sudoku import (RecurrentRelationalNetwork, all_grids, beliefs, conflicts,
                                  constraint_graph, format_grid, loss_of, parse_grid, puzzles,
                                  solutions, split_grids)


def test_each_cell_has_its_row_column_and_box_as_neighbours():
    a = constraint_graph()
    assert (a == a.T).all() and (np.diag(a) == 0).all() and (a.sum(1) == 7).all()
    assert a[0, 3] == a[0, 12] == a[0, 5] == 1 and a[0, 6] == 0     # row, column, box; not


def test_there_are_288_grids_and_each_is_valid():
    grids = all_grids()
    assert grids.shape == (288, 16) and len({tuple(g) for g in grids}) == 288
    for g in grids[::17]:
        assert not conflicts(g) and sorted(g[:4]) == [1, 2, 3, 4]
    train, held = split_grids(0)
    assert len(train) + len(held) == 288
    assert not {tuple(g) for g in train} & {tuple(g) for g in held}


def test_puzzles_have_their_grid_as_only_solution():
    ps, sols = puzzles(all_grids(), 5, seed=3, givens=(4, 6))
    for p, s in zip(ps, sols):
        assert (p[p > 0] == s[p > 0]).all() and 4 <= (p > 0).sum() <= 16
        found = solutions(p, 2)
        assert len(found) == 1 and (found[0] == s).all()


def test_typed_text_reads_back_and_bad_text_says_why():
    g = parse_grid("2.../3.../..4./..3.")
    assert format_grid(g) == "2.../3.../..4./..3." and g[0] == 2 and g[10] == 4
    with pytest.raises(ValueError, match="16 cells"):
        parse_grid("12")
    with pytest.raises(ValueError, match="'5'"):
        parse_grid("5...............")
    assert conflicts(parse_grid("2..2/..../..../....")) == [(0, 3)]
    assert solutions(parse_grid("2..2/..../..../...."), 2) == []


def test_the_network_gives_beliefs_per_iteration():
    torch.manual_seed(0)
    net = RecurrentRelationalNetwork(8)
    grid = parse_grid("2.../3.../..4./..3.")
    digits, confidence = beliefs(net, grid, 3)
    assert digits.shape == confidence.shape == (3, 16)
    assert ((digits >= 1) & (digits <= 4)).all() and (confidence >= 0.25 - 1e-6).all()
    logits = net(torch.as_tensor(grid).view(1, 16), 2)                       # (2, 1, 16, 4)
    solution = torch.as_tensor(solutions(grid, 1)[0]).view(1, 16)
    index = (solution - 1).expand(2, 1, 16)[..., None]                      # (2, 1, 16, 1)
    expected = -torch.log_softmax(logits, -1).gather(-1, index).mean()
    torch.testing.assert_close(loss_of(logits, solution), expected)


def test_the_solver_file_loads_and_bad_files_say_what_to_run(tmp_path):
    from engine import weights
    from engine.graphs.sudoku import load_solver
    net = RecurrentRelationalNetwork(8)
    good = weights.save(tmp_path / "good.pt", {"hidden": 8}, net.state_dict(), {"steps": 1})
    model, meta = load_solver(good)
    assert meta["steps"] == 1 and model.hidden == 8
    stale = weights.save(tmp_path / "stale.pt", {"hidden": 16}, net.state_dict())
    (tmp_path / "corrupt.pt").write_bytes(b"not a torch file")
    for path, error in ((tmp_path / "missing.pt", weights.MissingWeightsError),
                        (stale, weights.StaleWeightsError),
                        (tmp_path / "corrupt.pt", weights.CorruptWeightsError)):
        with pytest.raises(error, match="scripts.pretrain"):
            load_solver(path)
