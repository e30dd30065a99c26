"""What the GAN page reads from a GANTrainer besides its snapshot, as plain data.

A live frame draws a TrainerView (live/handle.py): steps, history and the trainer's own
snapshot() only. Everything else the page needs (the target's modes, the plot box, the mode
histogram over time, a Step D/G, the export's samples) is asked for with
`live.controls.read_trainer(key, fn)`, fn one of the module-level functions below: they run next to
the trainer (possibly in a worker process), are picklable, and return numbers, numpy arrays or
small frozen dataclasses of them, never tensors or modules.

Measures of a trainer (the page's claims, the badge) live here too:
  smoothed_modes = mean of the last `last` logged mode counts (one check can jump);
  blob_share     = share of samples within r of their coordinate-wise median (~1: one blob).
"""
from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass

import numpy as np

from engine.datasets import ToyData
from engine.series import block_means
from engine.training import History

log = logging.getLogger(__name__)

SMOOTH_CHECKS = 5       # the coverage badge: mean over the last 5 checks (250 iterations)
MODE_COLUMNS = 300      # the mode-history heatmap's columns (about its panel's width in px)
EXPORT_SAMPLES = 2000


@dataclass(frozen=True)
class GANFrame:
    """What a live frame of the GAN page draws besides the snapshot: the target's modes and
    the plot box (fixed for a trainer), the mode histogram over time, the pretrained label."""
    box: tuple[float, float, float, float]
    centers: np.ndarray | None        # (k, 2) mixture modes, None when the target has none
    radius: float | None              # n_sigma·std: a mode's "covered" disc
    eval_every: int
    n_eval: int                       # fixed latent codes of a coverage check
    pretrained_steps: int | None      # iterations trained offline (None: trained here)
    mode_steps: np.ndarray            # (c,) iterations of the coverage checks (c <= MODE_COLUMNS)
    mode_hists: np.ndarray            # (c, k) samples per mode per check (a block's mean)


def frame_of(trainer) -> GANFrame:
    """read_trainer fn: the GANFrame of `trainer` (under its lock). Its mode history is
    binned to at most MODE_COLUMNS checks (engine.series.block_means): a GAN left playing
    for an hour has ~14,000 checks, and every frame fetches this."""
    t = trainer.target
    steps, hists = block_means(*trainer.mode_history(), MODE_COLUMNS)
    pre = getattr(trainer, "pretrained", None)
    return GANFrame(tuple(float(v) for v in trainer.box),
                    None if t.centers is None else np.asarray(t.centers, np.float64),
                    float(trainer.n_sigma * t.std) if t.std is not None else None,
                    int(trainer.eval_every), int(len(trainer.z_eval)),
                    None if pre is None else int(pre.get("steps", 0)),
                    np.asarray(steps), np.asarray(hists))


def step_part(trainer, part: str) -> None:
    """read_trainer fn: one update of D ("d") or G ("g") alone, unless diverged."""
    if trainer.diverged_at is None:
        trainer.step(1, part=part)


def coverage_table_of(trainer) -> dict[str, np.ndarray]:
    """read_trainer fn: the coverage history for the CSV export, not binned: each kept
    check's iteration, samples per mode, and the coverage metrics logged at that iteration
    (NaN where the bounded History thinned that point away)."""
    steps, hists = trainer.mode_history()
    table = {"iteration": steps} | {f"mode_{j}": hists[:, j] for j in range(hists.shape[1])}
    for name in ("modes", "high_quality", "reverse_kl"):
        at = dict(zip(*(a.tolist() for a in trainer.history.as_arrays(name))))
        table[name] = np.array([at.get(int(step), math.nan) for step in steps], dtype=float)
    return table


@dataclass(frozen=True)
class GANExport:
    steps: int
    fake: np.ndarray          # (EXPORT_SAMPLES, 2) generated at the fixed export seed
    real: np.ndarray          # (m, 2) the real points the figure shows


def export_of(trainer) -> GANExport:
    """read_trainer fn: the samples of the export (fixed seed: the same trainer, the same
    file)."""
    return GANExport(int(trainer.steps), trainer.sample(EXPORT_SAMPLES, seed=trainer.seed + 7),
                     np.asarray(trainer.target.points[trainer.show_idx]))


def smoothed_modes(history: History, last: int = SMOOTH_CHECKS) -> float:
    """The badge: mean number of covered modes over the last `last` checks, so that one
    check does not decide what the student sees."""
    _, modes = history.as_arrays("modes")
    return float(np.mean(modes[-last:])) if len(modes) else math.nan


def blob_share(trainer, radius: float = 1.0) -> float:
    """Share of the samples within `radius` of their coordinate-wise median: ~1 when the
    generator has collapsed into one blob. The ring has radius 2: a disc of radius 1 around a
    point of the ring holds 1/6 of it, and the median of a spread ring lies near its centre,
    2 away from every mode (share ~0)."""
    x = trainer.sample(EXPORT_SAMPLES, seed=trainer.seed + 7)
    return float((np.linalg.norm(x - np.median(x, 0), axis=1) <= radius).mean())



# ---- the trainer factory ----------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _read_snapshot(snapshot: bytes):
    """engine.weights.load of a snapshot's bytes, once per process (~50 ms of unpickling;
    load_trainer only copies from it, so every session's trainer starts from the same read)."""
    from engine import weights
    return weights.load(snapshot, "cpu")


def build_trainer(target: str | ToyData, std: float, seed: int, device: str | None,
                  kwargs: dict, snapshot: bytes | None = None):
    """A fresh GANTrainer on `target` (a TARGETS name at this std, or the uploaded points),
    or, when `snapshot` (the bytes of a file written by engine.gan.save_trainer) stores a
    trainer of exactly these settings (engine.gan.trainer_config), that trained snapshot. A
    stale or damaged snapshot is logged and a fresh trainer built instead.

    Plain values in, nothing read from a Streamlit session: the page binds it with
    functools.partial, and with DLPLAY_TRAINERS=process it is pickled (cloudpickle) and run
    in a worker process (live/workers.py)."""
    from engine.gan import GANTrainer, load_trainer, make_target, trainer_config
    if snapshot is not None and isinstance(target, str):
        try:
            trainer, stored = load_trainer(_read_snapshot(snapshot), device)
            if stored == trainer_config(target, std, seed, kwargs):
                return trainer
            log.warning("the pretrained GAN snapshot has other settings: training from scratch")
        except Exception:  # noqa: BLE001 - a stale or damaged file: train from scratch
            log.exception("could not load the pretrained GAN snapshot")
    data = make_target(target, std, seed) if isinstance(target, str) else target
    return GANTrainer(data, seed=seed, device=device, **kwargs)
