"""Recurrent cells, opened up: gate traces, gradient flow through time, toy sequence tasks.

Cells (PyTorch's conventions, single layer; W_* = weight_*_l0, b_* = bias_*_l0):

    LSTM  (gate order in PyTorch's stacked weights: i, f, g, o)
        i = σ(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)      input gate: how much to write
        f = σ(W_if x_t + b_if + W_hf h_{t-1} + b_hf)      forget gate: how much to keep
        g = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)   candidate: what to write
        o = σ(W_io x_t + b_io + W_ho h_{t-1} + b_ho)      output gate: how much to reveal
        c_t = f ⊙ c_{t-1} + i ⊙ g
        h_t = o ⊙ tanh(c_t)
    GRU   (PyTorch writes the update the other way round from Cho et al.; r after the product)
        r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
        h_t = (1 - z) ⊙ n + z ⊙ h_{t-1}
    RNN   h_t = tanh(a_t),  a_t = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh
    linear RNN (reference for gradient flow): h_t = a_t  (no tanh)

`lstm_trace`, `gru_trace`, `rnn_trace` unroll a torch module step by step from its own
weights and return every gate and state per time step (equal to what the module returns);
`clamp={"f": 1.0, "i": 0.0}` overrides gates for teaching. `gradient_flow` measures
‖∂h_T/∂h_{T-k}‖ with autograd on the same unrolled cells. TASKS holds seeded toy sequence
tasks, and SequenceTrainer / RaceTrainer follow the trainer protocol of engine/training.py.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from engine import weights
from engine.device import make_generator, resolve_device, to_numpy
from engine.training import History

GATES = {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n"), "rnn": (), "linear": ()}
GATE_RANGES = {"i": (0.0, 1.0), "f": (0.0, 1.0), "o": (0.0, 1.0), "g": (-1.0, 1.0),
               "r": (0.0, 1.0), "z": (0.0, 1.0), "n": (-1.0, 1.0)}
MODULES = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM, "linear": nn.RNN}
N_BLOCKS = {"rnn": 1, "linear": 1, "gru": 3, "lstm": 4}


# --------------------------------------------------------------------------------------
# Cells, unrolled step by step from a module's own weights
# --------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------
# A scalar LSTM cell (hidden size 1) with hand-set weights
# --------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------
# Input signals for the gate explorer
# --------------------------------------------------------------------------------------

def pulse(T: int, at: int = 2, amplitude: float = 1.0, seed: int = 0) -> np.ndarray:
    """x_t = amplitude at t = at, 0 elsewhere."""
    x = np.zeros(T)
    if 0 <= at < T:
        x[at] = amplitude
    return x


def step(T: int, at: int = 2, amplitude: float = 1.0, seed: int = 0) -> np.ndarray:
    """x_t = amplitude for t >= at, 0 before."""
    return amplitude * (np.arange(T) >= at).astype(float)


def noise(T: int, at: int = 0, amplitude: float = 1.0, seed: int = 0) -> np.ndarray:
    """x_t ~ N(0, amplitude²) for t >= at (seeded)."""
    rng = np.random.default_rng(int(seed))
    return amplitude * rng.standard_normal(T) * (np.arange(T) >= at)


SIGNALS = {"pulse": pulse, "step": step, "noise": noise}


def signal_input(name: str, T: int, input_size: int, channel: int = 0, at: int = 2,
                 amplitude: float = 1.0, seed: int = 0) -> np.ndarray:
    """A (T, input_size) input that carries SIGNALS[name] on one channel, zeros elsewhere."""
    if not 0 <= channel < input_size:
        raise ValueError(f"channel must be in 0..{input_size - 1}")
    x = np.zeros((T, input_size), dtype=np.float32)
    x[:, channel] = SIGNALS[name](T, at=at, amplitude=amplitude, seed=seed)
    return x


# --------------------------------------------------------------------------------------
# Gradient flow through time
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GradientFlow:
    """norms[k] = RMS over unit directions e_j of ‖∂(e_j·h_T)/∂h_{T-k}‖ = ‖J_k‖_F / √H,
    J_k = ∂h_T/∂h_{T-k}, for lags k = 0..T-1 (norms[0] = 1)."""
    kind: str
    lags: np.ndarray
    norms: np.ndarray
    spectral_radius: float     # of the recurrent matrix (block) after rescaling
    forget_bias: float
    clip: float | None


def _init_module(kind: str, input_size: int, hidden: int, seed: int, init: str) -> nn.RNNBase:
    """A fresh module of `kind`, initialised from `seed` (U(-1/√H, 1/√H) as PyTorch does, or
    orthogonal recurrent blocks for init="orthogonal")."""
    module = MODULES[kind](input_size, hidden)
    g = make_generator(seed, "cpu")
    k = 1.0 / math.sqrt(hidden)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 2 * k - k)
        if init == "orthogonal":
            for b in range(N_BLOCKS[kind]):
                q, r = torch.linalg.qr(torch.randn(hidden, hidden, generator=g))
                module.weight_hh_l0[b * hidden:(b + 1) * hidden] = q * torch.sign(torch.diag(r))
        elif init != "uniform":
            raise ValueError(f"unknown init {init!r}: uniform | orthogonal")
    return module


def spectral_radius(W: torch.Tensor) -> float:
    """ρ(W) = max |λ_i(W)|."""
    return float(torch.linalg.eigvals(W.detach().double().cpu()).abs().max())


def set_spectral_radius(module: nn.RNNBase, rho: float) -> None:
    """Scale each H×H gate block of W_hh so that its spectral radius is rho."""
    H = module.hidden_size
    with torch.no_grad():
        W = module.weight_hh_l0
        for b in range(W.shape[0] // H):
            block = W[b * H:(b + 1) * H]
            block.mul_(rho / max(spectral_radius(block), 1e-12))


def set_forget_bias(module: nn.RNNBase, kind: str, bias: float) -> None:
    """LSTM: total forget bias b_if + b_hf = bias (f ≈ σ(bias) at rest). GRU: the same for
    the update gate z, which plays the keep role (h_t = (1-z) n + z h_{t-1}). RNN: nothing."""
    H = module.hidden_size
    block = {"lstm": 1, "gru": 1}.get(kind)
    if block is None:
        return
    with torch.no_grad():
        module.bias_ih_l0[block * H:(block + 1) * H] = bias
        module.bias_hh_l0[block * H:(block + 1) * H] = 0.0


def gradient_flow(kind: str, T: int = 100, hidden: int = 32, seed: int = 0,
                  spectral_radius: float | None = None, forget_bias: float = 0.0,
                  clip: float | None = None, input_size: int = 4, init: str = "uniform",
                  device: str | torch.device | None = "cpu") -> GradientFlow:
    """‖∂h_T/∂h_{T-k}‖ for k = 0..T-1 through a freshly initialised `kind` module
    ("rnn", "gru", "lstm", or "linear": h_t = W_hh h_{t-1} + W_ih x_t + b) driven by a seeded
    input x_t ~ N(0, I).

    One backward pass gives the whole Jacobian: the batch holds H copies of the sequence and
    L = Σ_j h_T[j, j], so the gradient of copy j is row j of J_k. With `clip`, each row's
    gradient is rescaled to norm ≤ clip at every step on the way back (per-step gradient
    clipping). For a linear RNN J_k = W_hhᵏ, so norms[k] ≈ ρᵏ (exactly ρᵏ for a scaled
    orthogonal W_hh); with tanh it is Π diag(1 - h²) W_hh. Computed in float64 (float32 on
    MPS) so that tiny gradients (1e-40) do not underflow to 0."""
    if kind not in MODULES:
        raise ValueError(f"unknown kind {kind!r}; choose from {', '.join(MODULES)}")
    if T < 1 or hidden < 1:
        raise ValueError("T and hidden must be >= 1")
    dev = resolve_device(device)
    module = _init_module(kind, input_size, hidden, seed, init)
    if spectral_radius is not None:
        set_spectral_radius(module, float(spectral_radius))
    set_forget_bias(module, kind, float(forget_bias))
    dtype = torch.float32 if dev.type == "mps" else torch.float64  # float64: no underflow
    module = module.to(dev, dtype)
    p = cell_params(module)
    g = make_generator(seed + 1, "cpu")
    x = torch.randn(T, 1, input_size, generator=g, dtype=torch.float64)
    x = x.to(dev, dtype).expand(T, hidden, input_size)
    h0 = torch.zeros(hidden, hidden, device=dev, dtype=dtype)
    c0 = torch.zeros(hidden, hidden, device=dev, dtype=dtype) if kind == "lstm" else None
    grads: dict[int, torch.Tensor] = {}

    def hook_for(t: int):
        def hook(grad: torch.Tensor) -> torch.Tensor:
            if clip is not None:
                n = grad.norm(dim=1, keepdim=True)
                grad = grad * torch.clamp(float(clip) / (n + 1e-30), max=1.0)
            grads[t] = grad.detach()
            return grad
        return hook

    def on_hidden(t: int, h: torch.Tensor) -> torch.Tensor:
        if h.requires_grad:
            h.register_hook(hook_for(t))
        return h

    hs, _, _ = _unroll(kind, p, x, h0, c0, on_hidden=on_hidden)
    hs[-1].diagonal().sum().backward()
    rows = torch.stack([grads.get(t, torch.zeros(hidden, hidden, device=dev, dtype=dtype))
                        for t in range(T)], 0)                      # (T, H, H)
    norms = rows.pow(2).sum(dim=(1, 2)).div(hidden).sqrt().flip(0)  # by lag k = T-1-t
    rho = globals()["spectral_radius"](module.weight_hh_l0[:hidden])
    return GradientFlow(kind, np.arange(T), to_numpy(norms).astype(np.float64), rho,
                        float(forget_bias) if kind in ("lstm", "gru") else 0.0,
                        None if clip is None else float(clip))


# --------------------------------------------------------------------------------------
# Toy sequence tasks (seeded)
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SeqBatch:
    """x (B, T, input_size) float, y (B,) long class or float target; the loss applies to
    the output after the last step."""
    x: torch.Tensor
    y: torch.Tensor


def delayed_recall(batch: int, length: int, generator: torch.Generator,
                   device: torch.device | str = "cpu", n_symbols: int = 4,
                   distract: float = 0.0) -> SeqBatch:
    """Remember a symbol for `length` = D steps: t=0 shows symbol s ~ U{0..K-1} (one-hot on
    channels 0..K-1), t=1..D are blank (each step shows a random distractor symbol with
    probability `distract`), t=D+1 raises the "go" channel K; the target is s. T = D + 2."""
    B, D, K = int(batch), int(length), int(n_symbols)
    s = torch.randint(0, K, (B,), generator=generator)
    x = torch.zeros(B, D + 2, K + 1)
    x[:, 0].scatter_(1, s[:, None], 1.0)
    if distract > 0 and D > 0:   # scatter in place: the batch is made every training step
        show = torch.rand(B, D, 1, generator=generator) < distract
        sym = torch.randint(0, K, (B, D, 1), generator=generator)
        x[:, 1:D + 1].scatter_(2, sym, show.float())
    x[:, D + 1, K] = 1.0
    return SeqBatch(x.to(device), s.to(device))


def adding(batch: int, length: int, generator: torch.Generator,
           device: torch.device | str = "cpu") -> SeqBatch:
    """The adding problem (Hochreiter & Schmidhuber 1997): T = length steps of (value ~ U(0,1),
    marker); one marker in the first half, one in the second; target = sum of the two
    marked values (regression, chance MSE ≈ 1/6 by predicting 1)."""
    B, T = int(batch), max(2, int(length))
    v = torch.rand(B, T, generator=generator)
    a = torch.randint(0, T // 2, (B,), generator=generator)
    b = torch.randint(T // 2, T, (B,), generator=generator)
    m = torch.zeros(B, T)
    m[torch.arange(B), a] = 1.0
    m[torch.arange(B), b] = 1.0
    y = (v * m).sum(1)
    return SeqBatch(torch.stack([v, m], -1).to(device), y.to(device))


def parity(batch: int, length: int, generator: torch.Generator,
           device: torch.device | str = "cpu") -> SeqBatch:
    """Counting modulo 2: T = length random bits; the target is (Σ bits) mod 2."""
    B, T = int(batch), max(1, int(length))
    bits = torch.randint(0, 2, (B, T), generator=generator)
    return SeqBatch(bits.float()[..., None].to(device), (bits.sum(1) % 2).to(device))


@dataclass(frozen=True)
class TaskSpec:
    make: Callable[..., SeqBatch]
    input_size: Callable[[dict], int]
    n_out: Callable[[dict], int]        # classes (cross-entropy) or 1 (regression, MSE)
    regression: bool
    length_label: str                   # what `length` means for this task
    tolerance: float = 0.04             # |error| counted as correct (regression only)


TASKS: dict[str, TaskSpec] = {
    "delayed_recall": TaskSpec(delayed_recall, lambda kw: kw.get("n_symbols", 4) + 1,
                               lambda kw: kw.get("n_symbols", 4), False, "delay D"),
    "adding": TaskSpec(adding, lambda kw: 2, lambda kw: 1, True, "sequence length T"),
    "parity": TaskSpec(parity, lambda kw: 1, lambda kw: 2, False, "sequence length T"),
}


def make_task_batch(task: str, batch: int, length: int, seed: int = 0,
                    device: str | torch.device | None = "cpu", **params) -> SeqBatch:
    """A seeded batch of TASKS[task] (same seed -> same batch)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    return TASKS[task].make(batch, length, make_generator(seed, "cpu"),
                            resolve_device(device), **params)


RECALL_ALPHABET = "ABCDEFGH"


def encode_recall(text: str, n_symbols: int = 4) -> np.ndarray:
    """A typed delayed-recall sequence -> (T, n_symbols + 1) input. Letters A, B, ... are the
    symbols, '.' or '_' a blank step, '?' the go cue; spaces are ignored."""
    alphabet = RECALL_ALPHABET[:n_symbols]
    chars = [c for c in text.upper() if not c.isspace()]
    if not chars:
        raise ValueError("type at least one symbol")
    x = np.zeros((len(chars), n_symbols + 1), dtype=np.float32)
    for t, ch in enumerate(chars):
        if ch in alphabet:
            x[t, alphabet.index(ch)] = 1.0
        elif ch == "?":
            x[t, n_symbols] = 1.0
        elif ch not in "._":
            raise ValueError(f"unknown symbol {ch!r}: use {', '.join(alphabet)}, '.' (blank) "
                             f"or '?' (go)")
    return x


def recall_text(s: int, delay: int, n_symbols: int = 4) -> str:
    """The typed form of a delayed-recall sample: symbol, D blanks, '?'."""
    return RECALL_ALPHABET[s] + "." * delay + "?"


# --------------------------------------------------------------------------------------
# Models and trainers
# --------------------------------------------------------------------------------------

class RecurrentNet(nn.Module):
    """`kind` recurrent layer (batch_first) + a linear readout of the last hidden state."""

    def __init__(self, kind: str, input_size: int, hidden: int, n_out: int):
        super().__init__()
        if kind not in ("rnn", "gru", "lstm"):
            raise ValueError(f"unknown kind {kind!r}: rnn | gru | lstm")
        self.kind = kind
        self.rnn = MODULES[kind](input_size, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def _init_net(net: RecurrentNet, seed: int, forget_bias: float) -> None:
    g = make_generator(seed, "cpu")
    k = 1.0 / math.sqrt(net.rnn.hidden_size)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 2 * k - k)
    set_forget_bias(net.rnn, net.kind, forget_bias)


def task_loss(task: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy (classes) or MSE of out[:, 0] (regression)."""
    if TASKS[task].regression:
        return nn.functional.mse_loss(out[:, 0], y)
    return nn.functional.cross_entropy(out, y)


def task_accuracy(task: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Argmax accuracy, or the fraction of regression outputs within the task's tolerance."""
    spec = TASKS[task]
    if spec.regression:
        return ((out[:, 0] - y).abs() < spec.tolerance).float().mean()
    return (out.argmax(1) == y).float().mean()


def task_metrics(task: str, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, accuracy): task_loss and task_accuracy."""
    return task_loss(task, out, y), task_accuracy(task, out, y)


@torch.no_grad()
def accuracy_by_length(net: RecurrentNet, task: str, lengths, n: int = 256, seed: int = 0,
                       **params) -> np.ndarray:
    """Accuracy of `net` on n fresh seeded samples at each length (delay) in `lengths`."""
    dev = next(net.parameters()).device
    acc = []
    for L in lengths:
        b = make_task_batch(task, n, int(L), seed=seed + 7919 * int(L), device=dev, **params)
        acc.append(float(task_metrics(task, net(b.x), b.y)[1]))
    return np.asarray(acc)


@dataclass(frozen=True)
class SequenceSnapshot:
    kind: str
    step: int
    loss: float
    accuracy: float
    level: int              # current length (delay) trained at
    diverged_at: int | None


class SequenceTrainer:
    """Adam on a RecurrentNet of `kind` for TASKS[task], a fresh seeded batch every step.

    loss = cross-entropy (classes) or MSE (adding). With `curriculum`, training starts at
    length `length` and the length grows by `grow` once the running accuracy `ema` (EMA,
    weight 0.1, kept only with the curriculum) reaches `advance_at`, up to `max_length`; each
    batch then draws its length uniformly in [max(1, level // 2), level] so shorter cases
    stay learned."""

    def __init__(self, kind: str = "lstm", task: str = "delayed_recall", length: int = 10,
                 hidden: int = 16, lr: float = 1e-2, batch: int = 64, seed: int = 0,
                 device: str | torch.device | None = "cpu", curriculum: bool = False,
                 max_length: int | None = None, grow: int = 2, advance_at: float = 0.95,
                 forget_bias: float = 1.0, task_params: dict | None = None):
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
        self.kind, self.task, self.seed = kind, task, int(seed)
        self.task_params = dict(task_params or {})
        self.device = resolve_device(device)
        spec = TASKS[task]
        self.net = RecurrentNet(kind, spec.input_size(self.task_params), int(hidden),
                                spec.n_out(self.task_params))
        _init_net(self.net, self.seed, forget_bias)
        self.net.to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=float(lr))
        self.batch, self.level = int(batch), max(0, int(length))
        self.curriculum, self.grow, self.advance_at = bool(curriculum), int(grow), advance_at
        self.max_length = int(max_length) if max_length is not None else self.level
        self.gen = make_generator(self.seed + 1, "cpu")
        self.ema = 0.0
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()

    def _length(self) -> int:
        if not self.curriculum:
            return self.level
        lo = max(1, self.level // 2)
        return int(torch.randint(lo, self.level + 1, (1,), generator=self.gen))

    def step(self, n: int = 1) -> dict[str, float]:
        """n Adam steps; returns (and logs to history) the metrics of the last one. One host
        sync per step (the loss, so that a divergence stops at its step); the accuracy is
        computed every step only with the curriculum, whose running accuracy needs it."""
        spec = TASKS[self.task]
        last = None
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            level = self.level
            b = spec.make(self.batch, self._length(), self.gen, self.device, **self.task_params)
            out = self.net(b.x)
            loss = task_loss(self.task, out, b.y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.steps += 1
            value = float(loss.detach())
            last = (value, out.detach(), b.y, level)
            if not math.isfinite(value):
                self.diverged_at = self.steps
                break
            if self.curriculum:
                self.ema = 0.9 * self.ema + 0.1 * float(task_accuracy(self.task, *last[1:3]))
                if self.ema >= self.advance_at and self.level < self.max_length:
                    self.level = min(self.max_length, self.level + self.grow)
                    self.ema = 0.0
        if last is None:
            return {}
        value, out, y, level = last
        metrics = {"loss": value, "accuracy": float(task_accuracy(self.task, out, y)),
                   "level": float(level)}
        self.history.log(self.steps, metrics)
        return metrics

    def snapshot(self) -> SequenceSnapshot:
        return SequenceSnapshot(self.kind, self.steps, self.history.last("loss"),
                                self.history.last("accuracy"), self.level, self.diverged_at)

    def state_dict(self) -> dict:
        return {"net": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
                "opt": copy.deepcopy(self.opt.state_dict()), "steps": self.steps, "level": self.level,
                "ema": self.ema, "gen": self.gen.get_state(), "diverged_at": self.diverged_at,
                "history": self.history.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(copy.deepcopy(state["opt"]))  # never share Adam buffers
        self.steps, self.level, self.ema = int(state["steps"]), int(state["level"]), state["ema"]
        self.gen.set_state(state["gen"])
        self.diverged_at = state["diverged_at"]
        self.history = History.from_state_dict(state["history"])


@dataclass(frozen=True)
class RaceSnapshot:
    step: int
    racers: dict[str, SequenceSnapshot]


class RaceTrainer:
    """Several SequenceTrainers (e.g. RNN vs LSTM) on the same task and seed, stepped
    together; metrics are prefixed with the kind ("lstm/accuracy")."""

    def __init__(self, kinds=("rnn", "lstm"), **kwargs):
        self.racers = {k: SequenceTrainer(kind=k, **kwargs) for k in kinds}
        self.history = History()

    @property
    def steps(self) -> int:
        return min(r.steps for r in self.racers.values())

    @property
    def diverged_at(self) -> int | None:
        # one diverged racer must not stop the other; the race stops when all have
        at = [r.diverged_at for r in self.racers.values()]
        return max(at) if all(a is not None for a in at) else None

    def step(self, n: int = 1) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for kind, r in self.racers.items():
            metrics.update({f"{kind}/{k}": v for k, v in r.step(n).items()})
        if metrics:
            self.history.log(self.steps, metrics)
        return metrics

    def snapshot(self) -> RaceSnapshot:
        return RaceSnapshot(self.steps, {k: r.snapshot() for k, r in self.racers.items()})

    def state_dict(self) -> dict:
        return {k: r.state_dict() for k, r in self.racers.items()} | {
            "history": self.history.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        for k, r in self.racers.items():
            r.load_state_dict(state[k])
        self.history = History.from_state_dict(state["history"])


# --------------------------------------------------------------------------------------
# Pretrained nets (assets/weights/lstm_gating_*.pt, built by scripts/pretrain_lstm_gating.py)
# --------------------------------------------------------------------------------------

NET_CONFIG_KEYS = ("kind", "input_size", "hidden", "n_out")


def net_config(net: RecurrentNet) -> dict:
    """The model_config of a RecurrentNet's weights file: enough to rebuild it."""
    return {"kind": net.kind, "input_size": net.rnn.input_size,
            "hidden": net.rnn.hidden_size, "n_out": net.head.out_features}


def save_net(net: RecurrentNet, path, **meta) -> Path:
    """Write the net through engine/weights.py: model_config = net_config(net), meta = how it
    was made (task, delay, delays, accuracy ...; plain values)."""
    return weights.save(path, net_config(net), net.state_dict(), meta)


def net_from_weights(w: weights.Weights, device: str | torch.device | None = "cpu"
                     ) -> tuple[RecurrentNet, dict]:
    """(net in eval mode, meta) from loaded weights; meta also holds the model_config keys
    (kind, input_size, hidden, n_out). A config or state that does not fit the net the code
    builds is stale (weights.StaleWeightsError)."""
    c = w.model_config
    try:
        net = RecurrentNet(c["kind"], int(c["input_size"]), int(c["hidden"]), int(c["n_out"]))
        net.load_state_dict(w.state)
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise weights.StaleWeightsError(
            f"weights file {w.path} does not fit a RecurrentNet ({type(err).__name__}: {err}): "
            f"{weights.REBUILD_HINT}") from err
    return net.to(resolve_device(device)).eval(), {**c, **w.meta}


def load_net(path, device: str | torch.device | None = "cpu") -> tuple[RecurrentNet, dict]:
    """(net, meta) from a file written by save_net. Raises weights.MissingWeightsError,
    CorruptWeightsError or StaleWeightsError (all weights.WeightsError) with a message that
    says how to rebuild the file."""
    return net_from_weights(weights.load(path, "cpu"), device)


@torch.no_grad()
def predict_probs(net: RecurrentNet, x) -> np.ndarray:
    """softmax(head(h_T)) of a classifier net for one unbatched sequence x (T, input_size)."""
    p = next(net.parameters())
    xt = torch.as_tensor(np.asarray(x), dtype=p.dtype, device=p.device)[None]
    return to_numpy(torch.softmax(net(xt)[0], dim=0)).astype(np.float64)


def recall_labels(x: np.ndarray, n_symbols: int = 4) -> list[str]:
    """A readable label per step of a delayed-recall input: the symbol, '?' (go) or '.'."""
    out = []
    for row in np.asarray(x):
        if row.shape[0] > n_symbols and row[n_symbols] > 0.5:
            out.append("?")
        elif row[:n_symbols].max(initial=0) > 0.5:
            out.append(RECALL_ALPHABET[int(row[:n_symbols].argmax())])
        elif np.any(row != 0):
            out.append(f"{row.sum():.2f}")
        else:
            out.append(".")
    return out


@torch.no_grad()
def head_probs(net: RecurrentNet, h_T) -> np.ndarray:
    """softmax(head(h_T)): the classifier's answer for a final hidden state h_T (H,), e.g.
    the last row of a (possibly clamped) lstm_trace."""
    p = next(net.parameters())
    h = torch.as_tensor(np.asarray(h_T), dtype=p.dtype, device=p.device)
    return to_numpy(torch.softmax(net.head(h), dim=-1)).astype(np.float64)
