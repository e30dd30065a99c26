"""Convolution, feature maps and receptive fields, on real PyTorch layers.

Conventions (docs/MATH.md, "Convolution and receptive fields"):
- Deep-learning "convolution" is cross-correlation (no kernel flip), as torch's F.conv2d:
      out[i, j] = sum_{a, b} x_pad[i*s + a*d, j*s + b*d] * kernel[a, b]
- Output size:  n_out = floor((n + 2p - d(k-1) - 1) / s) + 1
- Receptive field of layer l (per axis), with r_0 = 1, j_0 = 1, start_0 = 0:
      r_l     = r_{l-1} + d_l (k_l - 1) j_{l-1}
      j_l     = j_{l-1} s_l
      start_l = start_{l-1} + (d_l (k_l - 1) / 2 - p_l) j_{l-1}
  (start = input coordinate of the centre of the first output; pixel i has centre i.)
- Output u of layer l sees input pixels  start_l + u j_l +- (r_l - 1)/2.

The package, by job:

    geometry.py     output sizes, receptive fields (RFInfo), the input region one output
                    sees, layer specs read from torch modules, the preset stacks (STACKS)
    erf.py          CNNs built from layer specs, the effective receptive field |d out / d x|
    sliding.py      the sliding window step by step, convolve, the kernel registry (KERNELS)
    images.py       the demo images (IMAGES), resizing, safe uploads
    digits.py       the small digits CNN: training, accuracy, feature maps, shipped weights
    equivariance.py translation equivariance of conv, approximate invariance after pooling

Every name is importable from engine.conv, as before the split.
"""
from engine.conv.geometry import (LAYER_KINDS, LayerSpec, MODULE_READERS, PASS_THROUGH, RFInfo,
                                  Region, STACKS, as_spec, conv_output_size, conv_parameters,
                                  input_region, layers_from_model, receptive_field,
                                  specs_table)
from engine.conv.erf import ERF, POOLS, build_cnn, central_mass, effective_receptive_field
from engine.conv.sliding import (ConvFrames, KERNELS, KERNEL_SUMS, POOL_OPS, TransposedFrames,
                                 conv_animation_frames, convolve, parse_kernel,
                                 pool_animation_frames, transposed_animation_frames)
from engine.conv.images import (IMAGES, MAX_UPLOAD_BYTES, MAX_UPLOAD_SIDE, UPLOAD_FORMATS,
                                checkerboard, downscale, load_image, load_upload, shapes,
                                square_image)
from engine.conv.digits import (DIGITS_LAYERS, DIGITS_MODEL_CONFIG, DIGITS_WEIGHTS, FeatureMap,
                                TrainReport, digits_accuracy, digits_cnn,
                                digits_cnn_from_weights, feature_maps, load_digits_cnn,
                                save_digits_cnn, train_digits_cnn)
from engine.conv.equivariance import Equivariance, shift_equivariance
# helpers the old single module exposed (pages and tests still reach them as conv.<name>)
from engine.datasets import digits_split, load_digits, sample_photo  # noqa: F401
from engine.device import make_generator, numpy_rng, resolve_device, to_numpy  # noqa: F401

__all__ = ["ConvFrames", "DIGITS_LAYERS", "DIGITS_MODEL_CONFIG", "DIGITS_WEIGHTS", "ERF",
           "Equivariance", "FeatureMap", "IMAGES", "KERNELS", "KERNEL_SUMS", "LAYER_KINDS",
           "LayerSpec", "MAX_UPLOAD_BYTES", "MAX_UPLOAD_SIDE", "MODULE_READERS",
           "PASS_THROUGH", "POOLS", "POOL_OPS", "RFInfo", "Region", "STACKS", "TrainReport",
           "TransposedFrames",
           "UPLOAD_FORMATS", "as_spec", "build_cnn", "central_mass", "checkerboard",
           "conv_animation_frames", "conv_output_size", "conv_parameters", "convolve",
           "digits_accuracy", "digits_cnn", "digits_cnn_from_weights", "downscale",
           "effective_receptive_field", "feature_maps", "input_region", "layers_from_model",
           "load_digits_cnn", "load_image", "load_upload", "parse_kernel",
           "pool_animation_frames", "receptive_field",
           "save_digits_cnn", "shapes", "shift_equivariance", "specs_table", "square_image",
           "train_digits_cnn", "transposed_animation_frames"]
