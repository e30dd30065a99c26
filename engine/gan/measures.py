"""Mode coverage of generated samples against a mixture's centers.

Sample x belongs to its nearest center c_j if ‖x − c_j‖ <= n_sigma·std; mode j is covered if
count_j >= min_share·n; reverse KL(q ‖ uniform) = Σ_j q_j log(q_j k), q_j = count_j / Σ count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


MIN_SHARE = 0.01   # a mode is "covered" if it holds >= 1% of the samples (20 of 2000)


@dataclass(frozen=True)
class Coverage:
    modes_covered: int            # modes holding >= min_share of all samples
    n_modes: int
    high_quality_fraction: float  # share of samples within n_sigma·std of their nearest mode
    histogram: np.ndarray         # (k,) samples assigned to each mode
    reverse_kl: float             # KL(q ‖ uniform) = log k − H(q), q = histogram / its sum
    n_samples: int = 0            # n, the number of samples looked at
    min_share: float = MIN_SHARE

    @property
    def covered(self) -> np.ndarray:
        """(k,) bool: which modes hold >= min_share·n samples."""
        return self.histogram >= self.min_share * max(self.n_samples, 1)


def mode_coverage(samples: np.ndarray, centers: np.ndarray, std: float, n_sigma: float = 3.0,
                  min_share: float = MIN_SHARE) -> Coverage:
    """A sample belongs to its nearest center c_j if ‖x − c_j‖ <= n_sigma·std (a "high-quality"
    sample); mode j is covered if count_j >= min_share·n (n = all samples). The third number is
    KL(q ‖ u) = Σ_j q_j log(q_j k), q_j = count_j / Σ count: 0 for a uniform spread, log k for
    one mode; NaN when no sample is near any mode."""
    x = np.asarray(samples, dtype=np.float64)
    c = np.asarray(centers, dtype=np.float64)
    k = len(c)
    d2 = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)          # (n, k)
    nearest = d2.argmin(1)
    good = np.sqrt(d2[np.arange(len(x)), nearest]) <= n_sigma * std
    hist = np.bincount(nearest[good], minlength=k).astype(np.int64)
    n = max(len(x), 1)
    covered = int((hist >= min_share * n).sum()) if len(x) else 0
    total = hist.sum()
    if total:
        q = hist / total
        nz = q > 0
        rkl = float((q[nz] * np.log(q[nz] * k)).sum())
    else:
        rkl = math.nan
    return Coverage(covered, k, float(good.mean()) if len(x) else 0.0, hist, rkl, len(x), min_share)
