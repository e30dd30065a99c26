"""Self-supervised contrastive learning on the digits (SimCLR, Chen et al. 2020; notes 004,
section 13.4, Fig. 13.11-13.12), small enough to train live.

    augment(x, kinds, gen): two random views of each 8x8 digit; each view is one random
        affine map of the image (bilinear resampling, zero outside) built from the chosen
        kinds, then noise:
            "shift"   translate by up to SHIFT pixels in x and y
            "rotate"  rotate by up to ROTATE degrees
            "crop"    zoom into a random crop of CROP_MIN to 1 of the image's side, resized
                      back to 8x8
            "noise"   add Gaussian noise of std NOISE to every pixel, clipped to [0, 1]
    nt_xent(z1, z2, tau): the NT-Xent (normalised temperature-scaled cross-entropy, InfoNCE)
        loss of a batch of B pairs. With u_k = z_k / |z_k| for the 2B rows of [z1; z2],
        s_ik = u_i . u_k and p(i) the other view of the same digit (i + B mod 2B),
            l_i = -log( exp(s_{i,p(i)} / tau) / sum_{k != i} exp(s_ik / tau) ),
            L = (1/2B) sum_i l_i:
        each view must pick its partner out of the 2B - 1 other views; tau sets how hard the
        nearest negatives weigh.
    SimCLR: encoder f (64 -> HIDDEN -> FEATURES, the representation h = f(x)) and projection
        head g (FEATURES -> HIDDEN -> PROJECTION, z = g(h)); the loss is computed on z, the
        features h are what a classifier (the linear probe) gets.

ContrastiveTrainer: one iteration = one Adam step on nt_xent of two augmented views of a
minibatch of the training split's digits (labels unused). At iteration 0 and after every
`probe_every`-th iteration it logs the linear probe's held-out accuracy on h with PROBE_LABELS
labelled digits per class (engine.representations.fewlabels.probe_accuracy); probe_every=None
logs none (pretraining)."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine import weights
from engine.representations.dec import digits_pixels
from engine.representations.fewlabels import probe_accuracy, split
from engine.training import SingleModelTrainer

AUGMENTATIONS = ("shift", "rotate", "crop", "noise")
SHIFT = 1.0               # pixels
ROTATE = 15.0             # degrees
CROP_MIN = 0.7            # the smallest crop's side, as a share of the image's side
NOISE = 0.15              # std of the added noise (pixels lie in [0, 1])
HIDDEN = 256
FEATURES = 32            # the representation h
PROJECTION = 32           # the projection z the loss sees
PROBE_LABELS = 5          # labelled digits per class for the probe
PROBE_REPEATS = 3
PRETRAIN_STEPS = 1500     # the shipped encoder's iterations (scripts/pretrain_representations)
SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "weights" / "representations_simclr.pt"
MODEL_CONFIG = {"name": "digits_simclr", "inputs": 64, "hidden": HIDDEN, "features": FEATURES,
                "projection": PROJECTION}


def check_augmentations(kinds) -> str | None:
    """A sentence when `kinds` cannot make two different views, else None."""
    unknown = [k for k in kinds if k not in AUGMENTATIONS]
    if unknown:
        return f"unknown augmentation {unknown[0]!r}: choose from {', '.join(AUGMENTATIONS)}"
    if not kinds:
        return ("no augmentation is on: both views of a digit would be the same image and "
                "the task would teach nothing. Turn on at least one.")
    return None


def augment(x: torch.Tensor, kinds, gen: torch.Generator) -> torch.Tensor:
    """(n, 64) one random view of each digit of x (n, 64) in [0, 1] (module docstring)."""
    problem = check_augmentations(tuple(kinds))
    if problem:
        raise ValueError(problem)
    n = len(x)

    def uniform(lo: float, hi: float) -> torch.Tensor:
        return lo + (hi - lo) * torch.rand(n, generator=gen).to(x)          # (n,)
    zeros = torch.zeros(n, dtype=x.dtype, device=x.device)
    angle = uniform(-1, 1) * math.radians(ROTATE) if "rotate" in kinds else zeros
    scale = uniform(CROP_MIN, 1.0) if "crop" in kinds else zeros + 1
    # a crop of side `scale` lies inside the image: its centre moves by up to 1 - scale
    room = (1 - scale) if "crop" in kinds else zeros
    step = 2 / 8 * SHIFT if "shift" in kinds else 0.0                        # normalised units
    tx = uniform(-1, 1) * (step + room)
    ty = uniform(-1, 1) * (step + room)
    cos, sin = scale * angle.cos(), scale * angle.sin()
    theta = torch.stack([torch.stack([cos, -sin, tx], 1),
                         torch.stack([sin, cos, ty], 1)], 1)                 # (n, 2, 3)
    img = x.view(n, 1, 8, 8)
    grid = F.affine_grid(theta, [n, 1, 8, 8], align_corners=False)           # (n, 8, 8, 2)
    out = F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros",
                        align_corners=False).view(n, 64)                     # (n, 64)
    if "noise" in kinds:
        noise = torch.randn(n, 64, generator=gen).to(x)
        out = (out + NOISE * noise).clamp(0, 1)
    return out


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, tau: float) -> torch.Tensor:
    """L of the module docstring for z1, z2 (B, d), the two views' projections; a scalar."""
    if tau <= 0:
        raise ValueError("the temperature tau must be positive")
    b = len(z1)
    u = F.normalize(torch.cat([z1, z2]), dim=1)                              # (2B, d)
    logits = u @ u.T / tau                                                   # (2B, 2B)
    self_mask = torch.eye(2 * b, dtype=torch.bool, device=u.device)
    logits = logits.masked_fill(self_mask, float("-inf"))                    # k != i
    partner = (torch.arange(2 * b, device=u.device) + b) % (2 * b)           # (2B,)
    return F.cross_entropy(logits, partner)


def similarities(z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
    """(2B, 2B) the cosine similarities s_ik of the rows of [z1; z2]."""
    u = F.normalize(torch.cat([z1, z2]), dim=1)
    return u @ u.T


class SimCLR(nn.Module):
    """encoder: x (n, 64) -> h (n, FEATURES); head: h -> z (n, PROJECTION)."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, HIDDEN), nn.ReLU(),
                                     nn.Linear(HIDDEN, FEATURES))
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(FEATURES, HIDDEN), nn.ReLU(),
                                  nn.Linear(HIDDEN, PROJECTION))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


@dataclass(frozen=True)
class ContrastiveSnapshot:
    originals: np.ndarray    # (m, 8, 8) the shown digits
    views: np.ndarray        # (2, m, 8, 8) their two augmented views (a fixed draw)
    similarity: np.ndarray   # (2m, 2m) s_ik of the shown views' projections
    probe: float             # the linear probe's held-out accuracy on the current features
    loss: float              # nt_xent on the shown views


class ContrastiveTrainer(SingleModelTrainer):
    """SimCLR on the training split of the digits (module docstring)."""

    log_every = 5
    shown = 8                # digits drawn as pairs and in the similarity matrix

    def __init__(self, kinds=("shift", "rotate", "crop", "noise"), tau: float = 0.2,
                 lr: float = 3e-3, batch: int = 256, probe_every: int | None = 50, seed: int = 0,
                 device: str = "cpu"):
        super().__init__()
        self.kinds = tuple(kinds)
        problem = check_augmentations(self.kinds)
        if problem:
            raise ValueError(problem)
        if tau <= 0:
            raise ValueError("the temperature tau must be positive")
        x, y = digits_pixels()
        self.labels = y
        self.train_idx = torch.from_numpy(split(len(y), y)[0])
        self.x = torch.from_numpy(x).to(device)                              # (n, 64)
        self.tau, self.batch = float(tau), int(batch)
        self.probe_every = None if probe_every is None else max(1, int(probe_every))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.model = SimCLR().to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.gen = torch.Generator().manual_seed(int(seed))
        show = self.train_idx[torch.randperm(len(self.train_idx),
                                             generator=torch.Generator().manual_seed(7))]
        self.show_idx = show[:self.shown]
        self.seed = int(seed)
        if self.probe_every is not None:
            self.history.log(0, {"probe": self.probe()})

    def features(self) -> np.ndarray:
        """(n, FEATURES) h of every digit."""
        with torch.no_grad():
            return self.model.encoder(self.x).cpu().numpy()

    def probe(self) -> float:
        return self.cached("probe", lambda: probe_accuracy(
            self.features(), self.labels, PROBE_LABELS, PROBE_REPEATS, self.seed))

    def _iteration(self) -> dict[str, float]:
        pick = torch.randint(len(self.train_idx), (self.batch,), generator=self.gen)
        xb = self.x[self.train_idx[pick].to(self.x.device)]                  # (B, 64)
        v1, v2 = augment(xb, self.kinds, self.gen), augment(xb, self.kinds, self.gen)
        loss = nt_xent(self.model(v1), self.model(v2), self.tau)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.probe_every is not None and self.steps % self.probe_every == 0:
            self._cache.clear()                   # the probe of the new weights
            self.history.log(self.steps, {"probe": self.probe()})
        return {"loss": float(loss.detach())}

    def snapshot(self) -> ContrastiveSnapshot:
        return self.cached("snapshot", self._snapshot)

    def _snapshot(self) -> ContrastiveSnapshot:
        xs = self.x[self.show_idx.to(self.x.device)]                          # (m, 64)
        gen = torch.Generator().manual_seed(11)                              # the same views
        v1, v2 = augment(xs, self.kinds, gen), augment(xs, self.kinds, gen)
        with torch.no_grad():
            z1, z2 = self.model(v1), self.model(v2)
            sim = similarities(z1, z2)
            loss = float(nt_xent(z1, z2, self.tau))
        m = len(xs)
        return ContrastiveSnapshot(xs.cpu().numpy().reshape(m, 8, 8),
                                   torch.stack([v1, v2]).cpu().numpy().reshape(2, m, 8, 8),
                                   sim.cpu().numpy(), self.probe(), loss)



def pretrain_simclr(seed: int = 0, steps: int = PRETRAIN_STEPS, progress=None) -> SimCLR:
    """A SimCLR model trained by ContrastiveTrainer's defaults for `steps` iterations;
    progress(done) is called every 100."""
    trainer = ContrastiveTrainer(seed=seed, probe_every=None)
    done = 0
    while done < steps:
        n = min(100, steps - done)
        trainer.step(n)
        done += n
        if progress is not None:
            progress(done)
    return trainer.model.eval()


def load_simclr(path: str | Path = SHIPPED, device: str = "cpu") -> SimCLR:
    """The shipped SimCLR model (engine.weights format)."""
    w = weights.load(path, device, expect_config=MODEL_CONFIG)
    model = SimCLR().to(device)
    model.load_state_dict(w.state)
    return model.eval()


@functools.lru_cache(maxsize=2)
def simclr_features() -> np.ndarray:
    """(1797, FEATURES) float32: the shipped encoder's features h of all digits."""
    model = load_simclr()
    with torch.no_grad():
        return model.encoder(torch.from_numpy(digits_pixels()[0])).numpy()
