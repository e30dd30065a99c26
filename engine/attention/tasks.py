"""Toy tasks: prompt (P tokens) -> answer (A tokens). Digits 0..9, SEP = 10.

reverse, sort, copy (SEQ_LEN digits) and lookup (N_PAIRS key-value pairs, then a key); each
task knows its solution and, where one exists, the input position each answer token comes from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from engine.device import to_numpy


N_DIGITS = 10
SEP = N_DIGITS
VOCAB = N_DIGITS + 1
TOKEN_NAMES = [str(i) for i in range(N_DIGITS)] + ["|"]
SEQ_LEN = 8          # digits per reverse/sort/copy input
N_PAIRS = 4          # key-value pairs in lookup


@dataclass(frozen=True)
class Task:
    name: str
    description: str
    input_len: int                          # digits the user types
    answer_len: int
    solve: Callable[[np.ndarray], np.ndarray]           # inputs (B, input_len) -> (B, A)
    sample: Callable[[int, torch.Generator], torch.Tensor]  # (B, input_len) digits
    check_input: Callable[[list[int]], str | None] = lambda xs: None
    # inputs (B, input_len) -> (B, A): the input position whose digit answer token j copies;
    # None where no single position is defined (sort: equal digits tie)
    source: Callable[[np.ndarray], np.ndarray] | None = None
    pattern: str = ""                       # the attention pattern that solves the task

    @property
    def prompt_len(self) -> int:
        return self.input_len + 1

    @property
    def seq_len(self) -> int:
        """Tokens fed to the model: prompt + answer minus the last answer token."""
        return self.prompt_len + self.answer_len - 1


def _uniform_digits(length: int):
    def sample(b: int, g: torch.Generator) -> torch.Tensor:
        return torch.randint(0, N_DIGITS, (b, length), generator=g, device=g.device)
    return sample


def _lookup_sample(b: int, g: torch.Generator) -> torch.Tensor:
    """k0 v0 k1 v1 .. k3 v3 q with distinct keys and q one of them."""
    keys = torch.argsort(torch.rand(b, N_DIGITS, generator=g, device=g.device), dim=1)[:, :N_PAIRS]
    vals = torch.randint(0, N_DIGITS, (b, N_PAIRS), generator=g, device=g.device)
    pick = torch.randint(0, N_PAIRS, (b, 1), generator=g, device=g.device)
    pairs = torch.stack([keys, vals], dim=2).reshape(b, 2 * N_PAIRS)
    return torch.cat([pairs, keys.gather(1, pick)], dim=1)


def _lookup_match(x: np.ndarray) -> np.ndarray:
    """(B,) index i of the pair whose key x[2i] equals the query x[-1]."""
    x = np.asarray(x)
    return np.argmax(x[:, 0:2 * N_PAIRS:2] == x[:, -1:], axis=1)


def _lookup_solve(x: np.ndarray) -> np.ndarray:
    """(B, 2): the matching pair, query key then its value."""
    x = np.asarray(x)
    return np.stack([x[:, -1], x[np.arange(len(x)), 2 * _lookup_match(x) + 1]], axis=1)


def _lookup_sources(x: np.ndarray) -> np.ndarray:
    """(B, 2): the query position (the key is echoed), then the matching value's position."""
    x = np.asarray(x)
    return np.stack([np.full(len(x), x.shape[1] - 1), 2 * _lookup_match(x) + 1], axis=1)


def _lookup_check(xs: list[int]) -> str | None:
    keys = xs[0:2 * N_PAIRS:2]
    if len(set(keys)) != N_PAIRS:
        return "the keys (1st, 3rd, 5th, 7th digit) must be distinct"
    if xs[-1] not in keys:
        return "the last digit (the query) must be one of the keys"
    return None


def _fixed_sources(order: np.ndarray):
    """source(x) = order for every row: answer j copies input position order[j]."""
    return lambda x: np.broadcast_to(order, (len(x), len(order))).copy()


TASKS: dict[str, Task] = {
    "reverse": Task("reverse", "Output the 8 digits in reverse order.", SEQ_LEN, SEQ_LEN,
                    lambda x: np.asarray(x)[:, ::-1].copy(), _uniform_digits(SEQ_LEN),
                    source=_fixed_sources(np.arange(SEQ_LEN)[::-1]),
                    pattern="answer j copies input 7 − j: an anti-diagonal below the line"),
    "sort": Task("sort", "Output the 8 digits sorted ascending.", SEQ_LEN, SEQ_LEN,
                 lambda x: np.sort(np.asarray(x), axis=1), _uniform_digits(SEQ_LEN),
                 pattern="each answer row attends where the next-larger (or equal) digit "
                         "sits in the input"),
    "copy": Task("copy", "Output the 8 digits unchanged.", SEQ_LEN, SEQ_LEN,
                 lambda x: np.asarray(x).copy(), _uniform_digits(SEQ_LEN),
                 source=_fixed_sources(np.arange(SEQ_LEN)),
                 pattern="answer j copies input j: a diagonal line 8 places left of the "
                         "main diagonal"),
    # the answer echoes the query key first: the separator row learns to read the previous
    # token, which gives the previous-token head the value rows need a direct training signal
    # (with the value alone, 2-3 layer models stayed at ~37% accuracy for 1,500-10,500 steps)
    "lookup": Task("lookup", "Input: 4 key-value pairs then a query key; output the matching "
                   "pair: the key, then its value.", 2 * N_PAIRS + 1, 2, _lookup_solve,
                   _lookup_sample, _lookup_check, source=_lookup_sources,
                   pattern="layer 1: every value attends to its key just before it (a "
                           "previous-token head); layer 2: the row holding the echoed key "
                           "attends to the value whose key matches it (an induction head)"),
}
MAX_SEQ_LEN = max(t.seq_len for t in TASKS.values())


def parse_sequence(text: str, task: Task) -> list[int]:
    """Digits from user text ("3 1 4 1 5 9 2 6", "31415926" or "3,1,4,...").
    Raises ValueError with a message naming what is wrong."""
    cleaned = text.replace(",", " ").split()
    if len(cleaned) == 1 and len(cleaned[0]) > 1:
        cleaned = list(cleaned[0])
    bad = [c for c in cleaned if not (c.isdigit() and len(c) == 1)]
    if bad:
        raise ValueError(f"tokens outside the vocabulary (digits 0-9): {', '.join(bad[:5])}")
    if len(cleaned) != task.input_len:
        raise ValueError(f"the {task.name} task needs exactly {task.input_len} digits, "
                         f"got {len(cleaned)}")
    xs = [int(c) for c in cleaned]
    msg = task.check_input(xs)
    if msg:
        raise ValueError(msg)
    return xs


def make_batch(task: Task, batch: int, g: torch.Generator
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(inputs (B, seq_len), targets (B, seq_len), loss mask (B, seq_len) bool).
    Full sequence s = [x, SEP, y]; inputs = s[:-1], targets = s[1:]; the loss counts only
    the positions whose target is an answer token."""
    x = task.sample(batch, g)
    y = torch.as_tensor(task.solve(to_numpy(x)), device=x.device, dtype=torch.long)
    sep = torch.full((batch, 1), SEP, dtype=torch.long, device=x.device)
    s = torch.cat([x, sep, y], dim=1)
    mask = torch.zeros(s.shape[1] - 1, dtype=torch.bool, device=x.device)
    mask[task.prompt_len - 1:] = True
    return s[:, :-1], s[:, 1:], mask.expand(batch, -1)
