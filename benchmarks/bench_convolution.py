"""Convolution page: the two computations the issue budgets (targets on the 2-core CPU),
plus the other per-rerun costs of the page."""
from __future__ import annotations

import numpy as np

from benchmarks import Measurement, median_time
from engine import conv


def conv_512_7x7() -> Measurement:
    img = np.random.default_rng(0).random((512, 512), dtype=np.float32)
    ker = np.ones((7, 7), np.float32) / 49
    t = median_time(lambda: conv.convolve(img, ker, padding=3), repeat=7)
    return Measurement(t * 1e3, "ms", "512×512 grayscale image, 7×7 kernel, F.conv2d (target < 100 ms)")


def conv_512_rgb() -> Measurement:
    img = np.random.default_rng(0).random((512, 512, 3), dtype=np.float32)
    t = median_time(lambda: conv.convolve(img, conv.KERNELS["sobel x"], padding=1), repeat=7)
    return Measurement(t * 1e3, "ms", "512×512 RGB, 3×3 kernel per channel (groups=3)")


def erf_6_layers() -> Measurement:
    layers = conv.STACKS["strided 6-layer"]
    model = conv.build_cnn(layers, channels=8, seed=0)
    t = median_time(lambda: conv.effective_receptive_field(model, (1, 64, 64), None, seed=0,
                                                           n_samples=32), repeat=5)
    return Measurement(t * 1e3, "ms", "6-layer CNN (8 channels), 64×64 input, 32 samples, "
                                      "one batched backward (target < 1 s)")


def sliding_window() -> Measurement:
    img = np.random.default_rng(0).random((12, 12), dtype=np.float32)
    t = median_time(lambda: conv.conv_animation_frames(img, conv.KERNELS["sobel x"], 1, 1, 1), repeat=7)
    return Measurement(t * 1e3, "ms", "all windows/products of a 12×12 input, 3×3 kernel")


def rf_region() -> Measurement:
    t = median_time(lambda: conv.input_region(conv.STACKS["VGG block"], (3, 4), 128), repeat=7)
    return Measurement(t * 1e3, "ms", "exact receptive-field support, VGG block, 128 px input")


def digits_feature_maps() -> Measurement:
    model = conv.load_digits_cnn()
    img = conv.load_digits().images[0]
    t = median_time(lambda: conv.feature_maps(model, img), repeat=7)
    return Measurement(t * 1e3, "ms", "every channel of every layer of the digits CNN, one image")


BENCHMARKS = {
    "convolution: conv 512² × 7×7": conv_512_7x7,
    "convolution: conv 512² RGB × 3×3": conv_512_rgb,
    "convolution: ERF, 6 layers, 32 samples": erf_6_layers,
    "convolution: sliding-window frames": sliding_window,
    "convolution: receptive-field region": rf_region,
    "convolution: digits feature maps": digits_feature_maps,
}
