"""Where a trained model's attention goes: the mass each (layer, head) puts on given
positions of the answer rows (anti-diagonal for reverse, the source of each answer token)."""
from __future__ import annotations

import numpy as np

from engine.attention.tasks import Task


def answer_rows(task: Task) -> np.ndarray:
    """(A,) query positions that produce the answer: row prompt_len-1+j predicts answer j."""
    return task.prompt_len - 1 + np.arange(task.answer_len)


def position_mass(maps: np.ndarray, positions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """mean over j of maps[..., rows[j], positions[..., j]] per (layer, head): the weight
    query row rows[j] puts on key positions[..., j].
    maps (..., L, H, T, T), positions (..., J) int, rows (J,) -> (..., L, H)."""
    maps, rows = np.asarray(maps), np.asarray(rows)
    positions = np.broadcast_to(positions, maps.shape[:-4] + rows.shape)
    w = maps[..., rows, :]                                      # (..., L, H, J, T)
    idx = positions[..., None, None, :, None]                   # (..., 1, 1, J, 1)
    return np.take_along_axis(w, idx, axis=-1)[..., 0].mean(-1)


def anti_diagonal_mass(maps: np.ndarray, task: Task) -> np.ndarray:
    """For reverse: mean weight that answer query p = prompt_len-1+j puts on key
    input_len-1-j (the digit it must copy), per (layer, head). maps (..., L, H, T, T)."""
    return position_mass(maps, task.input_len - 1 - np.arange(task.answer_len),
                         answer_rows(task))


def expected_source_mass(maps: np.ndarray, inputs: np.ndarray, task: Task) -> np.ndarray:
    """Mean weight the answer rows put on the input position each answer token copies
    (task.source: copy j -> j, reverse j -> 7-j, lookup -> the matching value), per
    (layer, head). maps (..., L, H, T, T), inputs (..., input_len) -> (..., L, H)."""
    if task.source is None:
        raise ValueError(f"the {task.name} task has no single source position per token")
    x = np.asarray(inputs)
    src = task.source(x.reshape(-1, task.input_len)).reshape(x.shape[:-1] + (task.answer_len,))
    return position_mass(maps, src, answer_rows(task))


def source_mass(maps: np.ndarray, inputs: np.ndarray, correct: np.ndarray, task: Task
                ) -> np.ndarray:
    """Mean weight that answer query p = prompt_len-1+j puts on the input positions holding
    the digit it must write (correct[j]), per (layer, head): the "copy source" of each
    answer token. Reverse: the mirror position; sort: where the next-larger digit sits.
    maps (..., L, H, T, T), inputs (..., input_len), correct (..., A) -> (..., L, H)."""
    rows = task.prompt_len - 1 + np.arange(task.answer_len)
    w = np.asarray(maps)[..., rows, :task.input_len]            # (..., L, H, A, in)
    hit = np.asarray(inputs)[..., None, :] == np.asarray(correct)[..., :, None]  # (..., A, in)
    return (w * hit[..., None, None, :, :]).sum(-1).mean(-1)
