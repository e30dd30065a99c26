"""Constants and the cached pure computations of the autoregressive page: what the views draw
and what the claims measure, from the same engine calls."""
from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.autoregressive import (PixelCNNTrainer, blind_spot, blind_spot_formula,
                                   causal_field, causal_field_size, field_by_gradient,
                                   future_leak, kernel_mask)
from engine.autoregressive.reads import predictive_of, samples_of
from engine.autoregressive.pixelcnn import sample
from engine.autoregressive.pretrained import (PIXELCNN, load_trainer, load_wavenet,
                                              pixelcnn_file, wavenet_config, wavenet_file)
from engine.autoregressive.receptive import causal_window
from engine.autoregressive.wavenet import (HELD_OUT_SEED, WaveNet, generate, held_out_error,
                                           parameter_count, vowels)
from engine.autoregressive.vqvae import code_grid_bits, train_vqvae
from ui.lesson_measures import lesson_measure
from ui.topics import ROOT

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- constants
STACK_NAMES = {"pixelcnn": "PixelCNN (masked k×k)", "two-stack": "Two stacks (gated PixelCNN)"}
KERNELS = (3, 5, 7)
MAX_LAYERS = 8
MAX_SIZE = 20
SCHEDULES = {"1,2,4,8": (1, 2, 4, 8), "1,1,1,1": (1, 1, 1, 1),
             "1,2,4,8,16,32": (1, 2, 4, 8, 16, 32), "1,2,4,8,1,2,4,8": (1, 2, 4, 8, 1, 2, 4, 8)}
RATES_KHZ = (8, 16, 44.1)
LEVELS = (2, 4, 8, 17)
HIDDEN = (16, 32, 64)
MAX_BLOCKS = 6
LRS = (0.001, 0.003, 0.01, 0.03, 0.1, 1.0)
TEMPERATURES = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
MODES = {"free": "free samples", "complete": "complete the lower half"}
TEST_DIGITS = 358          # the last index of the 359 test digits
TRAIN_STEPS = 200          # the claims' trained model: after this many iterations


# ----------------------------------------------------------------------------- masked fields
def field_args(s: Mapping[str, Any]) -> tuple[str, int, int, int, int, int]:
    """(stack, size, k, layers, row, col) of the settings s."""
    return (str(s["au_stack"]), int(s["au_size"]), int(s["au_k"]), int(s["au_layers"]),
            int(s["au_row"]), int(s["au_col"]))


@st.cache_data(max_entries=64, show_spinner=False)
def field_of(stack: str, size: int, k: int, layers: int, row: int, col: int) -> dict:
    """The receptive field of output (row, col) (route counts by autograd through the real
    layers), the dense stack's causal window, the blind spot and the counts the page states.
    ValueError in words for a pixel outside the image or no layer."""
    routes = field_by_gradient(stack, size, k, layers, row, col)          # (size, size)
    spot = blind_spot(routes, k, layers, row, col)                        # (size, size) bool
    reached = np.flatnonzero((routes > 0).any(1))
    return {"routes": routes, "blind": spot,
            "window": causal_window(size, k, layers, row, col),
            "blind_count": int(spot.sum()), "reached": int((routes > 0).sum()),
            "leak": future_leak(routes, row, col, centre=False),
            "rows_above": int(row - reached.min()) if len(reached) else 0,
            "interior_formula": blind_spot_formula(k, layers) if stack == "pixelcnn" else 0}


def _field(s: Mapping[str, Any]) -> dict:
    return field_of(*field_args(s))


@lesson_measure
def blind_count(s: Mapping[str, Any]) -> float:
    """Pixels before the target, inside the dense stack's window, that no route reaches."""
    return float(_field(s)["blind_count"])


def blind_formula_gap(s: Mapping[str, Any]) -> float:
    """|measured blind spot - its closed form| (a PixelCNN stack away from the borders)."""
    return float(abs(_field(s)["blind_count"] - _field(s)["interior_formula"]))


def future_pixels(s: Mapping[str, Any]) -> float:
    """Pixels at or after the target in raster order that reach it (0: causal)."""
    return float(_field(s)["leak"])


def rows_above(s: Mapping[str, Any]) -> float:
    """How many rows above the target the field reaches."""
    return float(_field(s)["rows_above"])


def reached_pixels(s: Mapping[str, Any]) -> float:
    return float(_field(s)["reached"])


def mask_centre(s: Mapping[str, Any], kind: str = "A") -> float:
    """The centre tap of the settings' k × k mask of type `kind` (0: the pixel is hidden)."""
    k = int(s["au_k"])
    return float(kernel_mask(k, kind)[k // 2, k // 2])


# ----------------------------------------------------------------------------- causal 1-D
def causal_args(s: Mapping[str, Any]) -> tuple[int, int, tuple[int, ...]]:
    return int(s["au_len"]), int(s["au_k1"]), SCHEDULES[str(s["au_sched"])]


@st.cache_data(max_entries=32, show_spinner=False)
def causal_of(length: int, k: int, dilations: tuple[int, ...]) -> dict:
    """The route counts from every sample of every layer to the last output (L + 1, T)."""
    return {"routes": causal_field(length, k, dilations, length - 1),
            "size": causal_field_size(k, dilations)}


@lesson_measure
def causal_size(s: Mapping[str, Any]) -> float:
    """Samples that reach the last output, 1 + (k - 1) sum of the dilations."""
    return float(causal_of(*causal_args(s))["size"])


def causal_reached(s: Mapping[str, Any]) -> float:
    """Samples with a non-zero gradient at the last output (the border cuts a long field)."""
    return float((causal_of(*causal_args(s))["routes"][0] > 0).sum())


def causal_ms(s: Mapping[str, Any]) -> float:
    """The field in milliseconds at the settings' sample rate."""
    return causal_size(s) / float(s["au_rate"])


# ----------------------------------------------------------------------------- PixelCNN
def trainer_args(s: Mapping[str, Any]) -> tuple[int, int, int, float, bool, bool]:
    """(levels, hidden, blocks, lr, conditional, gated) of the settings s."""
    return (int(s["au_levels"]), int(s["au_hidden"]), int(s["au_blocks"]), float(s["au_lr"]),
            bool(s["au_cond"]), bool(s["au_gated"]))


def build_trainer(levels: int, hidden: int, blocks: int, lr: float, conditional: bool,
                  gated: bool, seed: int, device: str, snapshot: bytes | None = None
                  ) -> PixelCNNTrainer:
    """The live trainer, from plain values only (it may be built in a worker process): the
    shipped trainer whose bytes are `snapshot` when it has exactly these settings (a stale or
    damaged file is logged and a fresh trainer built instead), else a fresh one."""
    config = {"levels": levels, "hidden": hidden, "layers": blocks, "lr": lr,
              "conditional": conditional, "gated": gated, "seed": seed}
    if snapshot is not None:
        try:
            trainer = load_trainer(snapshot, device)
            if all(trainer.config[k] == v for k, v in config.items()):
                return trainer
            log.warning("the shipped PixelCNN has other settings: training from scratch")
        except Exception:  # noqa: BLE001 - a stale or damaged file: train from scratch
            log.exception("could not load the shipped PixelCNN")
    return PixelCNNTrainer(levels=levels, hidden=hidden, layers=blocks, lr=lr,
                           conditional=conditional, seed=seed, device=device, gated=gated)


@st.cache_resource(max_entries=8, show_spinner=False)
def _trained(levels: int, hidden: int, blocks: int, lr: float, conditional: bool, gated: bool,
             steps: int, seed: int) -> PixelCNNTrainer:
    trainer = build_trainer(levels, hidden, blocks, lr, conditional, gated, seed, "cpu")
    trainer.step(steps)
    return trainer


def trained(s: Mapping[str, Any], steps: int = TRAIN_STEPS, seed: int = 0) -> PixelCNNTrainer:
    """A fresh trainer on the settings s after `steps` iterations (seeded, on the CPU)."""
    return _trained(*trainer_args(s), int(steps), int(seed))


@lesson_measure(trains=True)
def trained_bits(s: Mapping[str, Any], steps: int = TRAIN_STEPS) -> float:
    """Test bits per pixel of the PixelCNN after `steps` iterations (inf if it diverged)."""
    snap = trained(s, steps).snapshot()
    return snap.test_bits if np.isfinite(snap.test_bits) else float("inf")


@lesson_measure
def baseline_bits(s: Mapping[str, Any]) -> float:
    """Test bits per pixel of independent pixels (each its own training histogram)."""
    return trained(s, 0).snapshot().baseline_bits


@lesson_measure(trains=True)
def bits_margin(s: Mapping[str, Any], steps: int = TRAIN_STEPS) -> float:
    """Independent baseline minus the PixelCNN, bits per pixel, after `steps` iterations."""
    return baseline_bits(s) - trained_bits(s, steps)


def pixel_args(s: Mapping[str, Any]) -> tuple[int, int, int]:
    return int(s["au_digit"]), int(s["au_prow"]), int(s["au_pcol"])


@lesson_measure(trains=True)
def truth_probability(s: Mapping[str, Any], steps: int = TRAIN_STEPS) -> float:
    """The trained model's probability of the chosen pixel's true level, given the pixels
    before it."""
    p = predictive_of(trained(s, steps), *pixel_args(s))
    return float(p.probs[p.truth])


def untrained_truth_probability(s: Mapping[str, Any]) -> float:
    p = predictive_of(trained(s, 0), *pixel_args(s))
    return float(p.probs[p.truth])


@lesson_measure(trains=True)
def completion_kept(s: Mapping[str, Any], steps: int = TRAIN_STEPS) -> float:
    """Share of the given upper-half pixels the completed digits keep (1: all)."""
    smp = samples_of(trained(s, steps), "complete", float(s["au_temp"]))
    rows = smp.given_rows
    return float((smp.images[:, :rows] == smp.originals[:, :rows]).mean())


def greedy_repeats(s: Mapping[str, Any], steps: int = TRAIN_STEPS) -> float:
    """How many of the free greedy (temperature 0) samples equal the first one: an
    unconditional model at temperature 0 draws one digit over and over."""
    smp = samples_of(trained(s, steps), "free", 0.0)
    return float(sum(np.array_equal(img, smp.images[0]) for img in smp.images))


# ----------------------------------------------------------------------------- VQ-VAE
CODEBOOK_SIZES = (4, 8, 16, 32, 64)
BETAS = (0.1, 0.25, 1.0)
VQ_STEPS = (100, 200, 400)


def vq_args(s: Mapping[str, Any]) -> tuple[int, int, float, int]:
    """(levels, codes, beta, steps) of the settings s."""
    return int(s["au_levels"]), int(s["au_codes"]), float(s["au_beta"]), int(s["au_vqsteps"])


@st.cache_data(max_entries=8, show_spinner=False)
def vq_of(levels: int, codes: int, beta: float, steps: int, seed: int = 0):
    """A VQ-VAE trained on the settings (engine.autoregressive.vqvae.train_vqvae)."""
    return train_vqvae(levels, codes, beta, steps, seed)


@lesson_measure(trains=True)
def code_usage(s: Mapping[str, Any]) -> float:
    """Share of the codebook's entries used by at least one code of the test digits."""
    usage = vq_of(*vq_args(s)).usage
    return float((usage > 0).mean())


@lesson_measure(trains=True)
def recon_margin(s: Mapping[str, Any]) -> float:
    """Independent pixels' bits per pixel minus the VQ-VAE decoder's given the codes."""
    return baseline_bits(s) - float(vq_of(*vq_args(s)).recon_bits)


@lesson_measure(trains=True)
def prior_gain(s: Mapping[str, Any]) -> float:
    """Bits of a test digit's code grid at the codes' frequencies minus under the PixelCNN
    prior: what the prior learns about where codes go."""
    r = vq_of(*vq_args(s))
    return code_grid_bits(r.usage)[1] - float(r.prior_bits)


# ----------------------------------------------------------------------------- shipped models
WEIGHTS = ROOT / "assets" / "weights"
SHIPPED = {"plain": "plain PixelCNN", "gated": "gated PixelCNN (tanh ⊙ σ)"}
SAMPLE_SEEDS = 20


@st.cache_data(max_entries=4, show_spinner=False)
def pretrained_bytes(name: str) -> bytes | None:
    """The bytes of the shipped PixelCNN trainer `name` (None if the file is missing)."""
    path = pixelcnn_file(WEIGHTS, name)
    return path.read_bytes() if path.exists() else None


def shipped_name(s: Mapping[str, Any]) -> str | None:
    """The shipped trainer whose settings are those of s, if any."""
    wanted = {"levels": int(s["au_levels"]), "hidden": int(s["au_hidden"]),
              "layers": int(s["au_blocks"]), "lr": float(s["au_lr"]),
              "conditional": bool(s["au_cond"]), "gated": bool(s["au_gated"])}
    for name, config in PIXELCNN.items():
        if all(config[k] == v for k, v in wanted.items()):
            return name
    return None


@st.cache_resource(max_entries=2, show_spinner=False)
def shipped_trainer(name: str) -> PixelCNNTrainer:
    """The shipped PixelCNN trainer `name`, read once per process (read only: never stepped).
    A WeightsError says what to rebuild."""
    return load_trainer(pixelcnn_file(WEIGHTS, name), "cpu", expect=PIXELCNN[name])


@st.cache_data(max_entries=32, show_spinner=False)
def trajectory_of(name: str, temperature: float, seed: int) -> dict:
    """One digit drawn pixel by pixel from the shipped model: the image and, for every pixel,
    the distribution it was drawn from."""
    images, probs = sample(shipped_trainer(name).model, 1, temperature, seed)
    return {"image": images[0].numpy(), "probs": probs[0].numpy()}


def _shipped_of(s: Mapping[str, Any]) -> str:
    return str(s["au_model"])


@lesson_measure
def shipped_bits(s: Mapping[str, Any]) -> float:
    """Test bits per pixel of the shipped model the settings choose."""
    return shipped_trainer(_shipped_of(s)).snapshot().test_bits


@lesson_measure
def gated_gain(s: Mapping[str, Any]) -> float:
    """Bits per pixel of the shipped plain PixelCNN minus the shipped gated one (same
    settings, same iterations)."""
    return (shipped_trainer("plain").snapshot().test_bits
            - shipped_trainer("gated").snapshot().test_bits)


@lesson_measure
def shipped_truth_probability(s: Mapping[str, Any]) -> float:
    """The shipped model's probability of the clicked pixel's true level, given the test
    digit's pixels before it."""
    p = predictive_of(shipped_trainer(_shipped_of(s)), *pixel_args(s))
    return float(p.probs[p.truth])


def drawn_probability(s: Mapping[str, Any]) -> float:
    """Mean probability the shipped model gave each level it drew, over the 64 pixels."""
    t = trajectory_of(_shipped_of(s), float(s["au_temp"]), int(s["au_sseed"]))
    rows, cols = np.mgrid[:8, :8]
    return float(t["probs"][rows, cols, t["image"]].mean())


# ----------------------------------------------------------------------------- WaveNet
WAVE_NAMES = {"dilated": "dilated 1, 2, 4, 8, 16", "undilated": "undilated 1, 1, 1, 1, 1"}
VOWELS = 16              # held-out vowels to choose from
PROMPTS = (32, 48, 64, 96)
WAVE_LENGTH = 256
WAVE_RATE_KHZ = 16.0
WAVE_PARAMS = parameter_count(WaveNet())     # the same for both schedules


@st.cache_resource(max_entries=2, show_spinner=False)
def shipped_wavenet(name: str):
    """The shipped WaveNet `name`, read once per process."""
    return load_wavenet(wavenet_file(WEIGHTS, name), expect=wavenet_config(name))


@st.cache_data(max_entries=4, show_spinner=False)
def wave_error(name: str) -> float:
    """Held-out one-step error of the shipped WaveNet, in units of the signal's variance."""
    return held_out_error(shipped_wavenet(name))


@st.cache_data(max_entries=64, show_spinner=False)
def wave_of(name: str, vowel: int, prompt: int) -> dict:
    """Held-out vowel `vowel` and the shipped WaveNet's continuation of its first `prompt`
    samples, generated one sample at a time; the continuation's error in units of the
    vowel's variance."""
    real = vowels(VOWELS, HELD_OUT_SEED, WAVE_LENGTH)[int(vowel) % VOWELS]      # (T,)
    made = generate(shipped_wavenet(name), real[:prompt], WAVE_LENGTH)          # (T,)
    err = float(((made[prompt:] - real[prompt:]) ** 2).mean() / real.var())
    return {"real": real, "made": made, "error": err}


def wave_args(s: Mapping[str, Any]) -> tuple[int, int]:
    return int(s["au_vowel"]), int(s["au_prompt"])


@lesson_measure
def dilated_error(s: Mapping[str, Any]) -> float:
    return wave_error("dilated")


@lesson_measure
def undilated_error(s: Mapping[str, Any]) -> float:
    return wave_error("undilated")


@lesson_measure
def dilation_ratio(s: Mapping[str, Any]) -> float:
    """Held-out one-step error of the undilated WaveNet over the dilated one's (same
    weights count)."""
    return wave_error("undilated") / wave_error("dilated")


def continuation_error(s: Mapping[str, Any], name: str) -> float:
    """Error of the shipped WaveNet `name`'s generated continuation of the chosen vowel."""
    return wave_of(name, *wave_args(s))["error"]
