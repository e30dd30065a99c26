"""Iterative magnitude pruning with rewinding, and the lottery-ticket comparison (notes 001,
L6690, L6836, L6843), on an MLP 64 -> H -> 10 (ReLU) for scikit-learn's 8 × 8 digits.

Three arms train side by side, stacked (weights (3, in, out); Adam is elementwise, so the
arms are independent), each with a 0/1 mask M per weight matrix, w = M ⊙ w:

    ticket    the mask found by pruning; weights rewound to θ_r, the weights at iteration
              `rewind` of the dense run (0: the initialisation)
    reinit    the same mask, weights drawn afresh (a new seed each round)
    random    a random mask with as many weights kept per layer, weights θ_r

A round is `round_steps` full-batch Adam steps on the mean cross-entropy. At the end of a round
the ticket's mask drops the fraction `rate` of its remaining weights with the smallest |w|,
layer by layer,

    M_l ← M_l ⊙ [ |w_l| > q_l ],   q_l the rate-quantile of |w_l| over M_l's ones,

so after r rounds a layer keeps round((1 − rate)^r · size) weights; then every arm restarts
from its weights (above) with a fresh Adam. Masked weights get a zero gradient and are
multiplied by M after every step, so they stay exactly 0."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

from engine.training import TrainerBase

ARMS = ("ticket", "reinit", "random")
EVAL_EVERY = 10          # test accuracy within a round, every 10 iterations


def digits_split(seed: int = 0, train: int = 1200) -> tuple[torch.Tensor, ...]:
    """(x_train (train, 64), y_train, x_test (1797 − train, 64), y_test): pixels / 16,
    a seeded shuffle."""
    d = load_digits()
    order = np.random.default_rng(int(seed)).permutation(len(d.target))
    x = torch.as_tensor(d.data[order] / 16.0, dtype=torch.float32)
    y = torch.as_tensor(d.target[order], dtype=torch.long)
    return x[:train], y[:train], x[train:], y[train:]


def init_weights(shapes: list[tuple[int, int]], g: torch.Generator) -> list[torch.Tensor]:
    """W_l (in, out) ~ N(0, 2/in) (Kaiming, for ReLU); no biases, so a mask says everything."""
    return [torch.randn(i, o, generator=g) * (2.0 / i) ** 0.5 for i, o in shapes]


def magnitude_mask(w: torch.Tensor, mask: torch.Tensor, rate: float) -> torch.Tensor:
    """The mask after dropping round(rate · kept) of the kept weights with the smallest |w|
    (exactly that many: ties broken by position)."""
    kept = int(mask.sum())
    drop = int(round(rate * kept))
    if drop <= 0:
        return mask.clone()
    score = torch.where(mask.bool(), w.abs(), torch.full_like(w, float("inf")))
    idx = torch.argsort(score.flatten(), stable=True)[:drop]
    out = mask.clone().flatten()
    out[idx] = 0.0
    return out.reshape(mask.shape)


def random_mask(shape: tuple[int, ...], kept: int, g: torch.Generator) -> torch.Tensor:
    """A 0/1 mask of `shape` with exactly `kept` ones at uniformly random places."""
    flat = torch.zeros(int(np.prod(shape)))
    flat[torch.randperm(flat.numel(), generator=g)[:int(kept)]] = 1.0
    return flat.reshape(shape)


def forward(ws: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Logits of every arm: x (n, 64) -> (arms, n, 10); ReLU between the layers."""
    h = x.unsqueeze(0).expand(ws[0].shape[0], -1, -1)                 # (A, n, 64)
    for i, w in enumerate(ws):
        h = torch.bmm(h, w)                                           # (A, n, out)
        if i < len(ws) - 1:
            h = torch.relu(h)
    return h


@dataclass
class RoundRecord:
    round: int
    kept: float                          # the fraction of weights kept in this round
    accuracy: dict[str, float]           # test accuracy at the round's end, by arm
    best: dict[str, float]               # the best test accuracy within the round
    stop: dict[str, int]                 # iteration (within the round) where it peaked


@dataclass(frozen=True)
class Snapshot:
    round: int
    step_in_round: int
    kept: float                          # fraction of all weights kept in the current round
    layer_kept: list[float]
    weights: np.ndarray                  # (H, 64) the ticket's first layer, masked: 0 = pruned
    accuracy: dict[str, float]           # test accuracy now, by arm
    rounds: list[RoundRecord] = field(default_factory=list)


class LotteryTrainer(TrainerBase):
    """Three arms of an MLP 64 -> hidden -> 10 on the digits; iteration t is round
    (t − 1) // round_steps, and the last iteration of a round prunes and rewinds."""

    log_every = EVAL_EVERY

    def __init__(self, hidden: int = 64, rate: float = 0.3, round_steps: int = 100,
                 rewind: int = 0, lr: float = 3e-3, seed: int = 0, device: str = "cpu"):
        super().__init__()
        if not 0.0 < rate < 1.0:
            raise ValueError("The pruning rate must lie strictly between 0% and 100%: at 0% "
                             "nothing is pruned, at 100% no weight is left.")
        if rewind >= round_steps:
            raise ValueError("Rewind to an iteration inside the first round.")
        self.hidden, self.rate, self.round_steps = int(hidden), float(rate), int(round_steps)
        self.rewind, self.lr, self.seed = int(rewind), float(lr), int(seed)
        self.x, self.y, self.xt, self.yt = (t.to(device) for t in digits_split(seed))
        self.shapes = [(64, self.hidden), (self.hidden, 10)]
        self.g = torch.Generator().manual_seed(self.seed)
        self.device = device
        w0 = [w.to(device) for w in init_weights(self.shapes, self.g)]
        self.rewound = [w.clone() for w in w0]                        # θ_r (set at `rewind`)
        self.ws = [w.unsqueeze(0).repeat(len(ARMS), 1, 1).to(device).requires_grad_()
                   for w in w0]                                       # (A, in, out)
        self.masks = [torch.ones(len(ARMS), i, o, device=device) for i, o in self.shapes]
        self.opt = torch.optim.Adam(self.ws, lr=self.lr)
        self.round = 0
        self.records: list[RoundRecord] = []
        self._trace: dict[str, list[float]] = {a: [] for a in ARMS}

    # ------------------------------------------------------------------ training
    def _loss(self) -> torch.Tensor:
        logits = forward(self.ws, self.x)                             # (A, n, 10)
        losses = [F.cross_entropy(logits[a], self.y) for a in range(len(ARMS))]
        return torch.stack(losses).sum()

    def test_accuracy(self) -> dict[str, float]:
        with torch.no_grad():
            pred = forward(self.ws, self.xt).argmax(-1)               # (A, m)
            acc = (pred == self.yt).float().mean(1)
        return {a: float(acc[i]) for i, a in enumerate(ARMS)}

    def _iteration(self) -> dict[str, float]:
        loss = self._loss()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        with torch.no_grad():
            for w, m in zip(self.ws, self.masks):
                if w.grad is not None:
                    w.grad.mul_(m)
        self.opt.step()
        with torch.no_grad():
            for w, m in zip(self.ws, self.masks):
                w.mul_(m)
        t = (self.steps - 1) % self.round_steps + 1                  # 1 .. round_steps
        if self.round == 0 and t == self.rewind and self.rewind > 0:
            self.rewound = [w[0].detach().clone() for w in self.ws]
        metrics: dict[str, float] = {"loss": float(loss.detach()) / len(ARMS)}
        if t % EVAL_EVERY == 0 or t == self.round_steps:
            acc = self.test_accuracy()
            for a in ARMS:
                self._trace[a].append(acc[a])
            metrics.update({f"acc_{a}": acc[a] for a in ARMS})
        if t == self.round_steps:
            self._end_round()
        return metrics

    def _end_round(self) -> None:
        acc = self.test_accuracy()
        best = {a: max(self._trace[a]) for a in ARMS}
        stop = {a: (int(np.argmax(self._trace[a])) + 1) * EVAL_EVERY for a in ARMS}
        self.records.append(RoundRecord(self.round, self.kept_fraction(), acc, best, stop))
        self._trace = {a: [] for a in ARMS}
        self.round += 1
        with torch.no_grad():
            fresh = [w.to(self.device) for w in init_weights(
                self.shapes, torch.Generator().manual_seed(self.seed * 1000 + self.round))]
            for li, (w, m) in enumerate(zip(self.ws, self.masks)):
                ticket = magnitude_mask(w[0], m[0], self.rate)
                m[0] = ticket
                m[1] = ticket
                m[2] = random_mask(tuple(ticket.shape), int(ticket.sum()), self.g).to(m.device)
                w[0] = self.rewound[li] * m[0]
                w[1] = fresh[li] * m[1]
                w[2] = self.rewound[li] * m[2]
        self.opt = torch.optim.Adam(self.ws, lr=self.lr)

    # ------------------------------------------------------------------ reading
    def kept_fraction(self) -> float:
        total = sum(m[0].numel() for m in self.masks)
        return float(sum(m[0].sum() for m in self.masks)) / total

    def snapshot(self) -> Snapshot:
        with torch.no_grad():
            weights = (self.ws[0][0] * self.masks[0][0]).T.cpu().numpy()  # (H, 64)
        return Snapshot(self.round, (self.steps - 1) % self.round_steps + 1 if self.steps
                        else 0, self.kept_fraction(),
                        [float(m[0].mean()) for m in self.masks], weights,
                        self.test_accuracy(), list(self.records))

    def _extra_state(self) -> dict:
        return {"ws": [w.detach().clone() for w in self.ws],
                "masks": [m.clone() for m in self.masks],
                "rewound": [w.clone() for w in self.rewound], "round": self.round,
                "records": list(self.records), "trace": {a: list(v) for a, v in
                                                         self._trace.items()},
                "g": self.g.get_state(), "opt": self.opt.state_dict()}

    def _load_extra_state(self, state: dict) -> None:
        with torch.no_grad():
            for w, saved in zip(self.ws, state["ws"]):
                w.copy_(saved)
        self.masks = [m.to(self.device).clone() for m in state["masks"]]
        self.rewound = [w.to(self.device).clone() for w in state["rewound"]]
        self.round, self.records = state["round"], list(state["records"])
        self._trace = {a: list(v) for a, v in state["trace"].items()}
        self.g.set_state(state["g"])
        self.opt = torch.optim.Adam(self.ws, lr=self.lr)
        self.opt.load_state_dict(state["opt"])


def run_lottery(rounds: int, **kwargs) -> LotteryTrainer:
    """A LotteryTrainer trained through `rounds` full rounds."""
    tr = LotteryTrainer(**kwargs)
    tr.step(rounds * tr.round_steps)
    return tr
