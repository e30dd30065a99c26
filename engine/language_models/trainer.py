"""GPTTrainer: a GPT fitted to a text by next-character prediction, AdamW on random windows.

    loss = -1/(B L) sum_b sum_t log p(x_{b,t+1} | x_{b,1..t})      (nats per character)

where each of the B windows is L + 1 consecutive characters of the training text, drawn at a
seeded random offset. Every `log_every` (20) iterations the held-out cross-entropy (the same
loss over fixed windows of the held-out text) is logged beside the training batch's loss; the
unigram and bigram baselines (engine.language_models.corpus) are measured once on the same
held-out text."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.device import make_generator, resolve_device
from engine.language_models.corpus import bigram_ce, unigram_ce
from engine.language_models.generate import generate
from engine.language_models.gpt import GPT, GPTConfig
from engine.language_models.vocab import encode
from engine.training import SingleModelTrainer

MIN_TRAIN = 256          # fewest training characters a trainer accepts
HELD_WINDOWS = 16        # at most this many held-out windows are scored
SAMPLE_CHARS = 60        # characters sampled after each prompt per snapshot
SAMPLE_T = 0.8


@dataclass(frozen=True)
class LMSnapshot:
    step: int
    held_ce: float                  # held-out cross-entropy, nats/char
    unigram_ce: float
    bigram_ce: float
    prompts: tuple[str, ...]
    samples: tuple[str, ...]        # SAMPLE_CHARS characters after each prompt (T = 0.8)
    diverged_at: int | None


def windows(ids: np.ndarray, length: int, limit: int) -> np.ndarray:
    """(m, length + 1) non-overlapping windows from the start of ids, m <= limit."""
    m = min((len(ids) - 1) // length, limit)
    return np.stack([ids[i * length:i * length + length + 1] for i in range(m)])


class GPTTrainer(SingleModelTrainer):
    """One iteration = one Adam step on a batch of `batch` random training windows."""

    log_every = 20

    def __init__(self, train: np.ndarray, held: np.ndarray, cfg: GPTConfig = GPTConfig(),
                 lr: float = 3e-3, batch: int = 16, seed: int = 0, device=None,
                 prompts: tuple[str, ...] = ("", "The ")):
        super().__init__()
        train, held = np.asarray(train, np.int64), np.asarray(held, np.int64)
        if len(train) < MIN_TRAIN or len(held) < 9:
            raise ValueError(f"the text is too short to train on: {len(train)} training and "
                             f"{len(held)} held-out characters (at least {MIN_TRAIN} and 9)")
        self.device = resolve_device(device)
        self.cfg, self.lr, self.batch, self.seed = cfg, float(lr), int(batch), int(seed)
        self.length = min(cfg.context, len(train) - 1)
        self.train = torch.as_tensor(train, device=self.device)
        held_w = windows(held, min(cfg.context, len(held) - 1), HELD_WINDOWS)
        self.held = torch.as_tensor(held_w, device=self.device)         # (m, L_h + 1)
        self.unigram = unigram_ce(train, held)
        self.bigram = bigram_ce(train, held)
        self.prompts = tuple(prompts)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.model = GPT(cfg).to(self.device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.01)
        self.gen = make_generator(self.seed, self.device)
        self.offsets = torch.arange(self.length + 1, device=self.device)

    def batch_ids(self) -> torch.Tensor:
        """(batch, L + 1) windows at seeded random offsets of the training text."""
        start = torch.randint(0, len(self.train) - self.length, (self.batch, 1),
                              generator=self.gen, device=self.device)
        return self.train[start + self.offsets]

    def _iteration(self) -> dict[str, float]:
        x = self.batch_ids()
        self.model.train()
        loss = self.model.loss(x[:, :-1], x[:, 1:])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return {"train": float(loss.detach())}

    @torch.no_grad()
    def held_ce(self) -> float:
        self.model.eval()
        return float(self.model.loss(self.held[:, :-1], self.held[:, 1:]))

    def _log(self, metrics: dict[str, float]) -> None:
        self.history.log(self.steps, {**metrics, "held_out": self.held_ce()})

    def snapshot(self) -> LMSnapshot:
        return self.cached("snapshot", self._snapshot)

    def _snapshot(self) -> LMSnapshot:
        self.model.eval()
        samples = tuple(generate(self.model, encode(p).ids, SAMPLE_CHARS, SAMPLE_T,
                                 seed=self.seed + k).text
                        for k, p in enumerate(self.prompts))
        return LMSnapshot(self.steps, self.held_ce(), self.unigram, self.bigram, self.prompts,
                          samples, self.diverged_at)

