"""LSTM / GRU / RNN cells unrolled step by step from a torch module's own weights.

    LSTM  i, f, o = σ(W_i* x_t + b_i* + W_h* h_{t-1} + b_h*),  g = tanh(same for g)
          c_t = f ⊙ c_{t-1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)
    GRU   r, z = σ(...),  n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h_t = (1 - z) ⊙ n + z ⊙ h
    RNN   h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)     (linear RNN: no tanh)

lstm_trace / gru_trace / rnn_trace return every gate and state per step (equal to what the
module returns); `clamp` overrides gates for teaching. The scalar LSTM (hidden size 1) has
hand-set weights; a forget gate f keeps a memory for a half-life of ln(1/2) / ln(f) steps.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

from engine.device import to_numpy


GATES = {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n"), "rnn": (), "linear": ()}
GATE_RANGES = {"i": (0.0, 1.0), "f": (0.0, 1.0), "o": (0.0, 1.0), "g": (-1.0, 1.0),
               "r": (0.0, 1.0), "z": (0.0, 1.0), "n": (-1.0, 1.0)}
MODULES = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM, "linear": nn.RNN}
N_BLOCKS = {"rnn": 1, "linear": 1, "gru": 3, "lstm": 4}


@dataclass(frozen=True)
class CellParams:
    """The weights of a single-layer recurrent module: W_ih (nB·H, in), W_hh (nB·H, H),
    b_ih and b_hh (nB·H,) with nB = 4 (LSTM), 3 (GRU), 1 (RNN)."""
    W_ih: torch.Tensor
    W_hh: torch.Tensor
    b_ih: torch.Tensor
    b_hh: torch.Tensor

    @property
    def hidden(self) -> int:
        return self.W_hh.shape[1]


def cell_params(module: nn.RNNBase) -> CellParams:
    """Read the weights of a single-layer, unidirectional nn.RNN/GRU/LSTM (no proj_size)."""
    if module.num_layers != 1 or module.bidirectional or getattr(module, "proj_size", 0):
        raise ValueError("tracing needs a single-layer, unidirectional module without "
                         "proj_size")
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    zeros = torch.zeros(W_ih.shape[0], dtype=W_ih.dtype, device=W_ih.device)
    b_ih = module.bias_ih_l0 if module.bias else zeros
    b_hh = module.bias_hh_l0 if module.bias else zeros
    return CellParams(W_ih, W_hh, b_ih, b_hh)


def _apply_clamp(name: str, value: torch.Tensor, clamp: dict | None) -> torch.Tensor:
    if clamp and clamp.get(name) is not None:
        return torch.full_like(value, float(clamp[name]))
    return value


def _unroll(kind: str, p: CellParams, x: torch.Tensor, h0: torch.Tensor,
            c0: torch.Tensor | None = None, clamp: dict | None = None,
            on_hidden: Callable[[int, torch.Tensor], torch.Tensor] | None = None):
    """Run the cell of `kind` over x (T, B, in) from h0 (B, H) [and c0 for the LSTM].

    The input projection x_proj = x W_ihᵀ + b_ih is computed for all steps at once; only the
    recurrence loops over time. `on_hidden(t, h_t)` may return a replacement tensor (used by
    gradient_flow to hook every h_t). Returns (hs, cs, gates): lists over time of (B, H)
    tensors and a dict gate name -> list over time."""
    H = p.hidden
    fold = kind != "gru"      # GRU keeps b_hn inside r ⊙ (W_hn h + b_hn)
    x_proj = x @ p.W_ih.T + p.b_ih + (p.b_hh if fold else 0.0)   # (T, B, nB·H)
    W_hh_T = p.W_hh.T
    h, c = h0, c0
    hs, cs = [], []
    gates: dict[str, list[torch.Tensor]] = {g: [] for g in GATES[kind]}
    for t in range(x.shape[0]):
        if kind == "lstm":
            a = torch.addmm(x_proj[t], h, W_hh_T)          # (B, 4H): i, f, g, o blocks
            sig = torch.sigmoid(a)
            i, f, o = sig[:, :H], sig[:, H:2 * H], sig[:, 3 * H:]
            g = torch.tanh(a[:, 2 * H:3 * H])
            if clamp:
                i, f, g, o = (_apply_clamp(n, v, clamp) for n, v in zip("ifgo", (i, f, g, o)))
            c = torch.addcmul(f * c, i, g)                  # c = f ⊙ c + i ⊙ g
            h = o * torch.tanh(c)
            for name, v in zip("ifgo", (i, f, g, o)):
                gates[name].append(v)
            cs.append(c)
        elif kind == "gru":
            xr, xz, xn = x_proj[t].split(H, dim=1)
            hr, hz, hn = (h @ W_hh_T + p.b_hh).split(H, dim=1)
            r = _apply_clamp("r", torch.sigmoid(xr + hr), clamp)
            z = _apply_clamp("z", torch.sigmoid(xz + hz), clamp)
            n = _apply_clamp("n", torch.tanh(xn + r * hn), clamp)
            h = (1 - z) * n + z * h
            for name, v in zip("rzn", (r, z, n)):
                gates[name].append(v)
        else:
            a = torch.addmm(x_proj[t], h, W_hh_T)
            h = torch.tanh(a) if kind == "rnn" else a
            cs.append(a)                                 # pre-activation, for rnn_trace
        if on_hidden is not None:
            h = on_hidden(t, h)
        hs.append(h)
    return hs, cs, gates


def _as_sequence(x, p: CellParams) -> torch.Tensor:
    x = torch.as_tensor(x, dtype=p.W_ih.dtype, device=p.W_ih.device)
    if x.ndim != 2 or x.shape[1] != p.W_ih.shape[1]:
        raise ValueError(f"input must have shape (T, {p.W_ih.shape[1]}), got {tuple(x.shape)}")
    return x[:, None, :]


def _state(v, H: int, p: CellParams) -> torch.Tensor:
    if v is None:
        return torch.zeros(1, H, dtype=p.W_ih.dtype, device=p.W_ih.device)
    return torch.as_tensor(v, dtype=p.W_ih.dtype, device=p.W_ih.device).reshape(1, H)


@dataclass(frozen=True)
class LSTMTrace:
    """Per time step (T, H) arrays: gates i, f, g, o, cell state c, hidden state h;
    c0/h0 (H,) the initial states (for the equation of step 0)."""
    i: np.ndarray
    f: np.ndarray
    g: np.ndarray
    o: np.ndarray
    c: np.ndarray
    h: np.ndarray
    c0: np.ndarray
    h0: np.ndarray

    def c_prev(self) -> np.ndarray:
        """c_{t-1} for every t (T, H): c0 then c[:-1]."""
        return np.concatenate([self.c0[None], self.c[:-1]], 0)


@dataclass(frozen=True)
class GRUTrace:
    """Per time step (T, H): reset r, update z, candidate n, hidden state h."""
    r: np.ndarray
    z: np.ndarray
    n: np.ndarray
    h: np.ndarray
    h0: np.ndarray


@dataclass(frozen=True)
class RNNTrace:
    """Per time step (T, H): pre-activation a and hidden state h = tanh(a)."""
    a: np.ndarray
    h: np.ndarray
    h0: np.ndarray


def _stack(seq: list[torch.Tensor]) -> np.ndarray:
    return to_numpy(torch.stack(seq, 0)[:, 0, :]).astype(np.float64)


@torch.no_grad()
def lstm_trace(lstm: nn.LSTM, x, h0=None, c0=None, clamp: dict | None = None) -> LSTMTrace:
    """Unroll a single-layer nn.LSTM over one unbatched sequence x (T, input_size), step by
    step from its own weights (PyTorch gate order i, f, g, o). batch_first does not matter:
    the sequence is unbatched, exactly as nn.LSTM treats a 2-D input.

    Without clamps, h equals nn.LSTM's output and c its cell states. `clamp` maps gate names
    ("i", "f", "g", "o") to a fixed value used at every step instead of the computed gate,
    e.g. {"f": 1.0, "i": 0.0}: c_t = c_{t-1} for all t (the cell holds its memory)."""
    p = cell_params(lstm)
    H = p.hidden
    xs = _as_sequence(x, p)
    hs, cs, gates = _unroll("lstm", p, xs, _state(h0, H, p), _state(c0, H, p), clamp)
    return LSTMTrace(*(_stack(gates[g]) for g in "ifgo"), _stack(cs), _stack(hs),
                     _stack([_state(c0, H, p)]).reshape(H), _stack([_state(h0, H, p)]).reshape(H))


@torch.no_grad()
def gru_trace(gru: nn.GRU, x, h0=None, clamp: dict | None = None) -> GRUTrace:
    """Unroll a single-layer nn.GRU over x (T, input_size) in PyTorch's form
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h_t = (1 - z) ⊙ n + z ⊙ h_{t-1}.
    `clamp` may fix "r", "z" or "n" (z = 1 keeps h unchanged)."""
    p = cell_params(gru)
    xs = _as_sequence(x, p)
    hs, _, gates = _unroll("gru", p, xs, _state(h0, p.hidden, p), None, clamp)
    return GRUTrace(*(_stack(gates[g]) for g in "rzn"), _stack(hs),
                    _stack([_state(h0, p.hidden, p)]).reshape(p.hidden))


@torch.no_grad()
def rnn_trace(rnn: nn.RNN, x, h0=None) -> RNNTrace:
    """Unroll a single-layer tanh nn.RNN over x (T, input_size): a_t = W_ih x_t + b_ih +
    W_hh h_{t-1} + b_hh, h_t = tanh(a_t)."""
    if getattr(rnn, "nonlinearity", "tanh") != "tanh":
        raise ValueError("rnn_trace traces tanh RNNs")
    p = cell_params(rnn)
    xs = _as_sequence(x, p)
    hs, pre, _ = _unroll("rnn", p, xs, _state(h0, p.hidden, p))
    return RNNTrace(_stack(pre), _stack(hs), _stack([_state(h0, p.hidden, p)]).reshape(p.hidden))


TRACES = {"lstm": lstm_trace, "gru": gru_trace, "rnn": rnn_trace}
SCALAR_DEFAULTS = {  # gate -> (w: input weight, u: recurrent weight, b: bias)
    "i": (4.0, 0.0, -2.0),   # opens only when the pulse arrives
    "f": (0.0, 0.0, 2.0),    # forget bias 2: f = σ(2) ≈ 0.88
    "g": (2.0, 0.0, 0.0),    # writes tanh(2 x)
    "o": (0.0, 0.0, 3.0),    # mostly reveals: o = σ(3) ≈ 0.95
}


def scalar_lstm(weights: dict[str, tuple[float, float, float]] | None = None) -> nn.LSTM:
    """nn.LSTM(1, 1) whose gate k in (i, f, g, o) computes act(w_k x + u_k h + b_k)
    (b_k goes into bias_ih, bias_hh is 0). Missing gates take SCALAR_DEFAULTS."""
    w = {**SCALAR_DEFAULTS, **(weights or {})}
    lstm = nn.LSTM(1, 1)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.tensor([[w[k][0]] for k in "ifgo"]))
        lstm.weight_hh_l0.copy_(torch.tensor([[w[k][1]] for k in "ifgo"]))
        lstm.bias_ih_l0.copy_(torch.tensor([w[k][2] for k in "ifgo"]))
        lstm.bias_hh_l0.zero_()
    return lstm


def memory_half_life(forget: float) -> float:
    """Steps until c halves when only the forget gate acts: f^k = 1/2 -> k = ln ½ / ln f
    (inf for f >= 1, 0 for f <= 0)."""
    if forget >= 1.0:
        return math.inf
    if forget <= 0.0:
        return 0.0
    return math.log(0.5) / math.log(forget)
