"""A small VQ-VAE for the 8 x 8 digits: an encoder to a 4 x 4 grid of D-dimensional vectors
z_e, each replaced by its nearest entry of a codebook e_1..e_K,

    k(i) = argmin_k ||z_e(i) - e_k||²,      z_q(i) = e_{k(i)}

and a decoder from z_q back to a Q-way softmax per pixel. The nearest-neighbour choice has no
gradient; the straight-through estimator passes the decoder's gradient to the encoder
unchanged: z_st = z_e + sg(z_q - z_e) equals z_q forward and has d z_st / d z_e = I. The loss
(bits per pixel for the reconstruction term)

    L = -mean log2 p(x | z_q) + ||sg(z_e) - z_q||² + beta ||z_e - sg(z_q)||²

trains the decoder and encoder (first term), the codebook (second) and keeps the encoder
committed to its codes (third). sg: stop-gradient (detach)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.autoregressive.digits import quantised_digits
from engine.autoregressive.pixelcnn import PixelCNN, bits_per_pixel, sample

GRID = 4                 # the code grid is GRID x GRID for an 8 x 8 digit


class VectorQuantizer(nn.Module):
    def __init__(self, codes: int, dim: int):
        super().__init__()
        if codes < 1 or dim < 1:
            raise ValueError("a codebook needs at least one code of at least one dimension")
        self.codebook = nn.Embedding(codes, dim)
        nn.init.uniform_(self.codebook.weight, -1 / codes, 1 / codes)

    def forward(self, z_e: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                  torch.Tensor]:
        """z_e (B, D, H, W) -> (z_st (B, D, H, W), codes (B, H, W), codebook loss,
        commitment loss ||z_e - sg(z_q)||² (mean over the elements))."""
        b, d, h, w = z_e.shape
        flat = z_e.permute(0, 2, 3, 1).reshape(-1, d)                    # (B H W, D)
        e = self.codebook.weight                                         # (K, D)
        dist = (flat.pow(2).sum(1, keepdim=True) - 2 * flat @ e.T
                + e.pow(2).sum(1)[None])                                 # (B H W, K)
        codes = dist.argmin(1)                                           # (B H W,)
        z_q = e[codes].view(b, h, w, d).permute(0, 3, 1, 2)              # (B, D, H, W)
        codebook_loss = F.mse_loss(z_q, z_e.detach())
        commitment = F.mse_loss(z_e, z_q.detach())
        z_st = z_e + (z_q - z_e).detach()
        return z_st, codes.view(b, h, w), codebook_loss, commitment


class VQVAE(nn.Module):
    def __init__(self, levels: int, codes: int = 16, dim: int = 8, hidden: int = 32):
        super().__init__()
        self.levels = int(levels)
        self.encoder = nn.Sequential(
            nn.Conv2d(1, hidden, 3, padding=1), nn.ReLU(),
            nn.Conv2d(hidden, hidden, 4, stride=2, padding=1), nn.ReLU(),  # 8x8 -> 4x4
            nn.Conv2d(hidden, dim, 1))
        self.quantizer = VectorQuantizer(codes, dim)
        self.decoder = nn.Sequential(
            nn.Conv2d(dim, hidden, 3, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(hidden, hidden, 4, stride=2, padding=1), nn.ReLU(),  # -> 8x8
            nn.Conv2d(hidden, self.levels, 1))

    def forward(self, x: torch.Tensor):
        """x (B, 8, 8) levels -> (logits (B, Q, 8, 8), codes (B, 4, 4), codebook loss,
        commitment loss)."""
        z_e = self.encoder((x.float() / (self.levels - 1))[:, None])     # (B, D, 4, 4)
        z_st, codes, cb, commit = self.quantizer(z_e)
        return self.decoder(z_st), codes, cb, commit


@dataclass(frozen=True)
class VQResult:
    originals: np.ndarray        # (n, 8, 8) test digits
    reconstructions: np.ndarray  # (n, 8, 8) the decoder's most likely levels
    usage: np.ndarray            # (K,) how often each code is used over the test digits
    recon_bits: float            # -mean log2 p(x | z_q) over the test pixels
    losses: np.ndarray           # (steps,) training loss
    prior_bits: float            # bits of a test digit's 4 x 4 code grid under the prior
    samples: np.ndarray          # (n_samples, 8, 8) decoded code grids drawn from the prior


def train_vqvae(levels: int = 4, codes: int = 16, beta: float = 0.25, steps: int = 300,
                seed: int = 0, lr: float = 3e-3, batch: int = 128, shown: int = 5,
                prior_steps: int = 150, n_samples: int = 5) -> VQResult:
    """A VQ-VAE trained by Adam for `steps` minibatches (seeded), measured on the test
    digits; then a PixelCNN prior over its 4 x 4 code grids (K-way softmax per code), trained
    for `prior_steps` minibatches of the training digits' codes, and `n_samples` code grids
    drawn from it, decoded."""
    if steps < 0:
        raise ValueError("the number of training steps cannot be negative")
    d = quantised_digits(int(levels))
    x, x_test = torch.from_numpy(d.train), torch.from_numpy(d.test)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = VQVAE(levels, codes)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(int(steps)):
        xb = x[torch.randint(0, len(x), (batch,), generator=gen)]
        logits, _, cb, commit = model(xb)
        loss = F.cross_entropy(logits, xb) / math.log(2) + cb + beta * commit
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    with torch.no_grad():
        logits, c, _, _ = model(x_test)
        bits = float(F.cross_entropy(logits, x_test) / math.log(2))
        train_codes = model(x)[1]                                        # (N, 4, 4)
    usage = np.bincount(c.flatten().numpy(), minlength=codes)
    prior_bits, samples = fit_prior(model, train_codes, c, codes, prior_steps, n_samples,
                                    seed)
    return VQResult(d.test[:shown], logits.argmax(1)[:shown].numpy(), usage, bits,
                    np.asarray(losses), prior_bits, samples)


def fit_prior(model: VQVAE, train_codes: torch.Tensor, test_codes: torch.Tensor, codes: int,
              steps: int, n_samples: int, seed: int) -> tuple[float, np.ndarray]:
    """(bits per test code grid under a PixelCNN prior trained on train_codes (N, 4, 4),
    (n_samples, 8, 8) digits decoded from code grids the prior draws)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 1)
        prior = PixelCNN(max(codes, 2), hidden=32, layers=2)
    opt = torch.optim.Adam(prior.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(seed + 1)
    for _ in range(int(steps)):
        cb = train_codes[torch.randint(0, len(train_codes), (128,), generator=gen)]
        loss = bits_per_pixel(prior, cb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    with torch.no_grad():
        grid_bits = float(bits_per_pixel(prior, test_codes)) * GRID * GRID
        drawn, _ = sample(prior, n_samples, 1.0, seed, side=GRID)        # (n, 4, 4)
        z_q = model.quantizer.codebook(drawn).permute(0, 3, 1, 2)        # (n, D, 4, 4)
        images = model.decoder(z_q).argmax(1)                            # (n, 8, 8)
    return grid_bits, images.numpy()


def code_grid_bits(usage: np.ndarray) -> tuple[float, float]:
    """(bits of a 4 x 4 code grid at log2 K per code, bits at the codes' empirical entropy
    per code): what storing an image's codes costs without and with their frequencies."""
    k = len(usage)
    p = usage[usage > 0] / usage.sum()
    return GRID * GRID * math.log2(k), float(GRID * GRID * -(p * np.log2(p)).sum())
