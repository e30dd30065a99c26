"""A character RNN and the GPT trained side by side on the same text and the same batches.

Each iteration draws one batch of B windows (GPTTrainer.batch_ids) and takes one AdamW step
of each model on it, timing each model's forward, backward and update separately:

    loss_m = -1/(B L) sum_b sum_t log p_m(x_{b,t+1} | x_{b,1..t}),   m in {GPT, RNN}

Every `log_every` iterations both models are scored on the same held-out windows (the RNN
starts each window from a zero state, so both read at most the window's characters). The
step times are medians over the last TIMED iterations, in milliseconds."""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np
import torch

from engine.language_models.generate import generate
from engine.language_models.gpt import GPT, GPTConfig, n_parameters
from engine.language_models.rnn import CharRNN, RNNConfig
from engine.language_models.trainer import SAMPLE_CHARS, SAMPLE_T, GPTTrainer
from engine.language_models.vocab import encode

TIMED = 20                 # step times: the median of the last TIMED iterations


@dataclass(frozen=True)
class RaceSnapshot:
    step: int
    gpt_ce: float              # held-out cross-entropy, nats/char
    rnn_ce: float
    unigram_ce: float
    bigram_ce: float
    gpt_ms: float              # median milliseconds per training step (nan before any)
    rnn_ms: float
    gpt_params: int
    rnn_params: int
    cell: str
    prompt: str
    gpt_sample: str            # SAMPLE_CHARS characters after `prompt` at T = 0.8
    rnn_sample: str
    diverged_at: int | None


def _timed_step(model: GPT | CharRNN, opt: torch.optim.Optimizer, x: torch.Tensor
                ) -> tuple[float, float]:
    """(loss, seconds) of one clipped AdamW step of `model` on windows x (b, L + 1)."""
    t0 = time.perf_counter()
    model.train()
    loss = model.loss(x[:, :-1], x[:, 1:])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    value = float(loss.detach())            # waits for an accelerator, so the time is real
    return value, time.perf_counter() - t0


class RaceTrainer(GPTTrainer):
    """GPTTrainer with a CharRNN trained beside it on every batch (`rnn_cfg`)."""

    def __init__(self, train: np.ndarray, held: np.ndarray, cfg: GPTConfig = GPTConfig(),
                 rnn_cfg: RNNConfig = RNNConfig(), lr: float = 3e-3, batch: int = 16,
                 seed: int = 0, device=None, prompt: str = "The "):
        super().__init__(train, held, cfg, lr=lr, batch=batch, seed=seed, device=device,
                         prompts=(prompt,))
        self.rnn_cfg = rnn_cfg
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed + 1)
            self.rnn = CharRNN(rnn_cfg).to(self.device)
        self.rnn_opt = torch.optim.AdamW(self.rnn.parameters(), lr=self.lr, weight_decay=0.01)
        self.times: dict[str, deque] = {"gpt": deque(maxlen=TIMED), "rnn": deque(maxlen=TIMED)}

    def _iteration(self) -> dict[str, float]:
        x = self.batch_ids()                                           # (B, L + 1)
        gpt_loss, gpt_s = _timed_step(self.model, self.opt, x)
        rnn_loss, rnn_s = _timed_step(self.rnn, self.rnn_opt, x)
        self.times["gpt"].append(gpt_s)
        self.times["rnn"].append(rnn_s)
        return {"train": gpt_loss, "rnn_train": rnn_loss}

    @torch.no_grad()
    def rnn_held_ce(self) -> float:
        self.rnn.eval()
        return float(self.rnn.loss(self.held[:, :-1], self.held[:, 1:]))

    def _log(self, metrics: dict[str, float]) -> None:
        """Both held-out scores, the RNN's margin below the bigram baseline and the ratio of
        the step times (transformer / RNN)."""
        rnn_ce = self.rnn_held_ce()
        self.history.log(self.steps, {**metrics, "held_out": self.held_ce(),
                                      "rnn_held_out": rnn_ce,
                                      "rnn_below_bigram": self.bigram - rnn_ce,
                                      "time_ratio": self.step_ms("gpt") / self.step_ms("rnn")})

    def step_ms(self, which: str) -> float:
        t = self.times[which]
        return 1e3 * float(np.median(t)) if t else float("nan")

    def snapshot(self) -> RaceSnapshot:  # type: ignore[override]
        return self.cached("race", self._race)

    def _race(self) -> RaceSnapshot:
        ids = encode(self.prompts[0]).ids
        self.model.eval()
        self.rnn.eval()
        samples = [generate(m, ids, SAMPLE_CHARS, SAMPLE_T, seed=self.seed).text
                   for m in (self.model, self.rnn)]
        return RaceSnapshot(self.steps, self.held_ce(), self.rnn_held_ce(), self.unigram,
                            self.bigram, self.step_ms("gpt"), self.step_ms("rnn"),
                            n_parameters(self.model), n_parameters(self.rnn),
                            self.rnn_cfg.cell, self.prompts[0], samples[0], samples[1],
                            self.diverged_at)

    def _modules(self) -> dict[str, torch.nn.Module]:
        return {"model": self.model, "rnn": self.rnn}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt, "rnn_opt": self.rnn_opt}
