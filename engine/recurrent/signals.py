"""Input signals for the gate explorer: a pulse, a step or seeded noise starting at step `at`."""
from __future__ import annotations

import numpy as np


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
