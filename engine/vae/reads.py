"""What the VAE page reads from a VAETrainer besides its snapshot, as plain data.

A live frame draws a TrainerView (live/handle.py): steps, history and the trainer's own
snapshot() (test codes, epoch). The decoded grid at the page's settings, the image decoded at
the slider's z, the replay's stored codes, an interpolation and the export are asked for with
`live.controls.read_trainer(key, fn)`, fn one of the module-level functions below (bound with
functools.partial to plain arguments): they run next to the trainer (possibly in a worker
process) and return numpy arrays or frozen dataclasses of them, never tensors or modules.

The grid the page draws, for codes μ (n, latent_dim), two shown dims (a, b), size n and a span:
  "quantiles" / "linear": engine.vae.latent_grid's coordinates;
  "fit to codes": linspace(−r, r, n) on both dims, r = the CODE_REACH-th percentile of
  |μ[:, (a, b)]| (the square the scatter shows; an autoencoder has no prior to take
  quantiles of).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from engine.vae import (DigitData, LatentCodes, LatentGrid, VAETrainer, decode_point,
                        encode_dataset, interpolate, latent_grid, load_digit_data, load_shipped,
                        reconstruction_mse)

CODE_REACH = 99.0          # "fit to codes": the grid spans ± this percentile of |μ|
FIT = "fit to codes"


def code_reach(means: np.ndarray, dims: tuple[int, int], q: float = CODE_REACH) -> float:
    """The q-th percentile of |μ| over the rows of `means` and the two dims shown."""
    return float(np.percentile(np.abs(np.asarray(means)[:, list(dims)]), q))


def grid_of(model, means: np.ndarray, dims: tuple[int, int], n: int, span: str) -> LatentGrid:
    """The decoded n x n grid the page draws (see the module docstring)."""
    if span == FIT:
        v = np.linspace(-code_reach(means, dims), code_reach(means, dims), int(n))
        return latent_grid(model, int(n), span, dims=dims, values=(v, v))
    return latent_grid(model, int(n), span, dims=dims)


@dataclass(frozen=True)
class VAEFrame:
    """What one live frame decodes next to the trainer."""
    grid: LatentGrid
    decoded: np.ndarray         # (8, 8) the image decoded at z
    steps_per_epoch: float


def frame_of(trainer, means: np.ndarray, dims: tuple[int, int], n: int, span: str,
             z: np.ndarray) -> VAEFrame:
    """read_trainer fn: the grid for the codes `means` (the frame's snapshot) and the image
    decoded at z (latent_dim,)."""
    return VAEFrame(grid_of(trainer.model, means, dims, n, span),
                    decode_point(trainer.model, z), float(trainer.steps_per_epoch))


@dataclass(frozen=True)
class Replay:
    steps: int
    steps_per_epoch: float
    snapshots: tuple[tuple[int, np.ndarray], ...]   # (iteration, test codes μ) as recorded


def replay_of(trainer) -> Replay:
    """read_trainer fn: the stored snapshots of the test digits' codes (a copy)."""
    return Replay(int(trainer.steps), float(trainer.steps_per_epoch),
                  tuple((int(k), np.array(m)) for k, m in trainer.snapshots))


def interpolation_of(trainer, x_a: np.ndarray, x_b: np.ndarray, steps: int = 8) -> np.ndarray:
    """read_trainer fn: engine.vae.interpolate with the trainer's model."""
    return interpolate(trainer.model, x_a, x_b, steps)


@dataclass(frozen=True)
class VAEExport:
    steps: int
    codes: LatentCodes
    test_pixel_mse: float
    grid: LatentGrid


def export_of(trainer, dims: tuple[int, int], n: int, span: str) -> VAEExport:
    """read_trainer fn: the test codes, pixel MSE of the reconstructions and the grid."""
    d = trainer.data
    codes = encode_dataset(trainer.model, d.x_test, d.y_test)
    return VAEExport(int(trainer.steps), codes, reconstruction_mse(trainer.model, d.x_test),
                     grid_of(trainer.model, codes.means, dims, n, span))


# ---- the trainer factory ----------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def digit_data() -> DigitData:
    """engine.vae.load_digit_data(), read once per process (the trainers only read it)."""
    return load_digit_data()


@functools.lru_cache(maxsize=4)
def _shipped(path: str, mtime_ns: int, size: int) -> dict:
    return load_shipped(path)


def shipped_state(path: str) -> dict:
    """load_shipped(path), cached per process by the file's path, modification time and size
    (a rebuilt file is read again). Raises engine.weights.WeightsError when it is missing,
    stale or corrupt."""
    try:
        st = os.stat(path)
    except OSError:
        return load_shipped(path)          # raises MissingWeightsError with its message
    return _shipped(str(path), st.st_mtime_ns, st.st_size)


def build_trainer(latent_dim: int, beta: float, likelihood: str, deterministic: bool,
                  reparam: bool, seed: int, device: str | None, shipped: str | None = None
                  ) -> VAETrainer:
    """A VAETrainer on the 8x8 digits with these settings, loaded from the shipped weights
    file at path `shipped` when given (a file that cannot be used raises WeightsError: the
    page checks it first). Plain values in, nothing read from a Streamlit session: the page
    binds it with functools.partial, and with DLPLAY_TRAINERS=process it is pickled and run
    in a worker process (live/workers.py), which reads the digits and the file itself."""
    tr = VAETrainer(latent_dim=int(latent_dim), beta=float(beta), likelihood=likelihood,
                    deterministic=bool(deterministic), reparam=bool(reparam), seed=int(seed),
                    device=device, data=digit_data())
    if shipped is not None:
        tr.load_state_dict(shipped_state(shipped))
    return tr
