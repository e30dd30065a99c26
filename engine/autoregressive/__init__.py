"""Autoregressive models: the page's maths, free of any UI (engine/ never imports Streamlit or
Plotly).

    masks.py      type-A/type-B masked kernels, the two-stack layer, causal dilated 1-D conv
    receptive.py  receptive fields by gradient, by mask algebra and by perturbation; blind spot
    digits.py     scikit-learn's 8 x 8 digits at Q grey levels; the independent-pixel baseline
    pixelcnn.py   a small (class-conditional) PixelCNN, its bits per pixel, sampling
    trainer.py    PixelCNNTrainer (engine.training.TrainerBase)
    vqvae.py      a VQ-VAE: nearest-code quantiser, straight-through gradient, commitment
    reads.py      samples and one pixel's predictive distribution off a live trainer"""
from __future__ import annotations

from engine.autoregressive.digits import independent_bits, quantised_digits
from engine.autoregressive.masks import CausalConv1d, MaskedConv2d, kernel_mask
from engine.autoregressive.pixelcnn import PixelCNN, bits_per_pixel, predictive, sample
from engine.autoregressive.receptive import (STACKS, blind_spot, blind_spot_formula,
                                             causal_field, causal_field_size, field_by_gradient,
                                             field_by_offsets, field_by_perturbation,
                                             future_leak)
from engine.autoregressive.trainer import PixelCNNTrainer, Snapshot

__all__ = ["STACKS", "CausalConv1d", "MaskedConv2d", "PixelCNN", "PixelCNNTrainer", "Snapshot",
           "bits_per_pixel", "blind_spot", "blind_spot_formula", "causal_field",
           "causal_field_size", "field_by_gradient", "field_by_offsets",
           "field_by_perturbation", "future_leak", "independent_bits", "kernel_mask",
           "predictive", "quantised_digits", "sample"]
