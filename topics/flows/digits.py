"""The flow page's digits tab: the shipped Real NVP (assets/weights/flows_digits.pt, loaded once
per process), its samples at a temperature, its test bits per pixel next to the independent-
pixel baseline and a PixelCNN trained on the same 17-level split, and the claims' measures."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st
import torch

from engine import weights
from engine.autoregressive import PixelCNNTrainer, independent_bits, quantised_digits
from engine.autoregressive.digits import GREYS
from engine.flows import digits as fd

TEMPERATURES = tuple(round(0.05 * i, 2) for i in range(0, 21))      # 0 .. 1 in steps of 0.05
N_SAMPLES = 32
PIXELCNN_STEPS = 600          # the PixelCNN measured next to the flow (17 levels, same split)


@st.cache_resource(show_spinner=False)
def shipped_flow() -> fd.DigitsRealNVP:
    """The shipped digits flow, read once per process. Raises weights.WeightsError."""
    return fd.digits_flow_from_weights(weights.load(fd.WEIGHTS, "cpu",
                                                    expect_config=fd.MODEL_CONFIG))


def shipped_meta() -> dict:
    return dict(weights.load(fd.WEIGHTS, "cpu", expect_config=fd.MODEL_CONFIG).meta)


@st.cache_data(max_entries=32, show_spinner=False)
def samples_of(temperature: float, n: int = N_SAMPLES, seed: int = 0) -> np.ndarray:
    """(n, 8, 8) grey values of the shipped flow's samples at `temperature`."""
    return fd.sample_digits(shipped_flow(), int(n), float(temperature), int(seed))


@st.cache_data(show_spinner=False)
def flow_bits() -> float:
    """Test bits per pixel of the shipped flow (4 seeded dequantisations per image)."""
    return fd.bits_per_pixel(shipped_flow(), fd.digit_levels()[1])


@st.cache_data(show_spinner=False)
def baseline_bits() -> float:
    """Test bits per pixel of independent pixels at 17 levels (each its training histogram)."""
    d = quantised_digits(GREYS)
    return independent_bits(d.train, d.test, GREYS)


@st.cache_data(show_spinner=False)
def pixelcnn_bits(steps: int = PIXELCNN_STEPS, seed: int = 0) -> float:
    """Test bits per pixel of the autoregressive page's PixelCNN (its defaults) at 17 levels
    after `steps` Adam steps on the same split."""
    with torch.random.fork_rng(devices=[]):
        tr = PixelCNNTrainer(levels=GREYS, seed=int(seed), device="cpu")
        tr.step(int(steps))
        return float(tr.test_bits())


def stats_at(temperature: float) -> fd.SampleStats:
    return fd.sample_stats(samples_of(float(temperature)))


def spread_ratio(s: Mapping[str, Any], low: float = 0.5, high: float = 1.0) -> float:
    """Samples' spread (std across samples, mean over pixels) at `low` over that at `high`."""
    return stats_at(low).spread / stats_at(high).spread


def roughness_ratio(s: Mapping[str, Any], low: float = 0.5, high: float = 1.0) -> float:
    """Samples' roughness (mean |neighbour difference|) at `low` over that at `high`."""
    return stats_at(low).roughness / stats_at(high).roughness


def frozen_spread(s: Mapping[str, Any]) -> float:
    """Spread across the samples at temperature 0 (all the same image: 0)."""
    return stats_at(0.0).spread


def bits_below_baseline(s: Mapping[str, Any]) -> float:
    """Independent pixels' bits per pixel minus the flow's (test digits, 17 levels)."""
    return baseline_bits() - flow_bits()


def shipped_bits(s: Mapping[str, Any]) -> float:
    return flow_bits()


def pixelcnn_minus_flow(s: Mapping[str, Any]) -> float:
    """The PixelCNN's test bits per pixel minus the flow's bound (slow: trains the PixelCNN)."""
    return pixelcnn_bits() - flow_bits()
