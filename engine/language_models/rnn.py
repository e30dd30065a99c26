"""A character RNN (LSTM or GRU) with the GPT's interface: ids (b, t) -> logits (b, t, V).

    e_t = E[x_t]
    LSTM:  i, f, g, o = sigma(W_i [e_t, h_{t-1}]), sigma(W_f ..), tanh(W_g ..), sigma(W_o ..)
           c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
    GRU:   r, z = sigma(W_r [e_t, h_{t-1}]), sigma(W_z ..)
           n = tanh(W_in e_t + r * (W_hn h_{t-1})),   h_t = (1 - z) * n + z * h_{t-1}
    logits_t = W_out h_t + b_out

starting from h_0 = c_0 = 0, so the logits at t depend on x_1..x_t only, through the fixed
width hidden state h_t (the transformer instead attends to every earlier position). `context`
is the longest window the page feeds it, as for the GPT."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.language_models.vocab import V

CELLS = ("lstm", "gru")


@dataclass(frozen=True)
class RNNConfig:
    vocab: int = V
    context: int = 128
    embed: int = 64
    hidden: int = 160
    cell: str = "lstm"

    def as_dict(self) -> dict:
        return asdict(self)


class CharRNN(nn.Module):
    def __init__(self, cfg: RNNConfig = RNNConfig()):
        super().__init__()
        if cfg.cell not in CELLS:
            raise ValueError(f"the cell must be one of {CELLS}, not {cfg.cell!r}")
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.embed)
        rnn = nn.LSTM if cfg.cell == "lstm" else nn.GRU
        self.rnn = rnn(cfg.embed, cfg.hidden, batch_first=True)
        self.out = nn.Linear(cfg.hidden, cfg.vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (b, t) -> logits (b, t, vocab), from a zero state."""
        h, _ = self.rnn(self.embed(ids))                               # (b, t, hidden)
        return self.out(h)                                             # (b, t, vocab)

    def loss(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy (nats per character) of targets (b, t) under the logits."""
        logits = self(ids)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def matched_hidden(target: int, cell: str = "lstm", embed: int = 64, vocab: int = V) -> int:
    """The hidden width whose CharRNN has the parameter count closest to `target`."""
    def count(h: int) -> int:
        gates = 4 if cell == "lstm" else 3
        return vocab * embed + gates * (h * (embed + h) + 2 * h) + h * vocab + vocab
    return min(range(8, 1024), key=lambda h: abs(count(h) - target))
