"""The convolution page's presets and tour steps with the claims that check what each one says
(topics/convolution/page.py imports PRESETS and STEPS; the measurements are in
topics/convolution/compute.py)."""
from __future__ import annotations

from ui.claims import PERCENT, Claim
from topics.convolution.compute import (
    ERF_INITS, centre_of, kernel_of, near_zero_share, brightness_change, detail_ratio,
    size_ratio, shrink, dense_weights_of_span, field, weights_per_c2, field_growth, erf_ratio, central_mass,
    digits_concentration_ratio, digits_test_accuracy, predicted_right, equivariance_of)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
PHOTO = {"cv_rgb": False, "cv_size": 256}
SOBEL = {**PHOTO, "cv_image": "china (photo)", "cv_kernel": "sobel x", "cv_stride": 1,
         "cv_padding": 1, "cv_dilation": 1}
BLUR = {**PHOTO, "cv_image": "flower (photo)", "cv_kernel": "gaussian blur", "cv_stride": 1,
        "cv_padding": 1, "cv_dilation": 1}
STRIDE = {**PHOTO, "cv_image": "checkerboard", "cv_kernel": "laplacian", "cv_stride": 2,
          "cv_padding": 1, "cv_dilation": 1}
DILATE = {**PHOTO, "cv_image": "shapes", "cv_kernel": "sobel x", "cv_stride": 1,
          "cv_padding": 0, "cv_dilation": 4}
SLIDE = {**PHOTO, "cv_image": "digit (8x8)", "cv_kernel": "sobel x", "cv_stride": 1,
         "cv_padding": 0, "cv_dilation": 1, "cv_anim_n": 8, "cv_pos": 0}


def rf_setting(stack: str, n: int = 32, **extra) -> dict:
    """A receptive-field setting that puts the chosen output at the stack's centre."""
    c = centre_of(stack, n)
    return {"cv_stack": stack, "cv_rf_n": n, "cv_out_row": c, "cv_out_col": c, **extra}


SEVEN = rf_setting("three 3x3")
WAVENET = rf_setting("dilated 1-2-4-8 (WaveNet, k=2)")
VGG = rf_setting("VGG block")
ERF_DEEP = rf_setting("3x3 x 12 (deep)", 64, cv_erf_init=ERF_INITS[0], cv_erf_samples=32)
ERF_STRIDED = rf_setting("strided 6-layer", 64, cv_erf_init=ERF_INITS[0], cv_erf_samples=32)
MAPS = {"cv_digit": 0}
EQUI = {**PHOTO, "cv_image": "shapes", "cv_kernel": "sobel x", "cv_shift_y": 0,
        "cv_shift_x": 1, "cv_pool": 4}

C_SOBEL = (Claim("Sobel x kernel sum", lambda s: float(kernel_of(s).sum()), lo=0, hi=0),
           Claim("share of output pixels below 5% of the peak (flat regions → 0)",
                 near_zero_share, lo=0.6))
C_BLUR = (Claim("Gaussian kernel sum", lambda s: float(kernel_of(s).sum()), lo=1, hi=1),
          Claim("|mean brightness change| (border excluded)", brightness_change, hi=0.005),
          Claim("neighbour differences: output / input", detail_ratio, hi=0.8))
C_STRIDE = (Claim("output rows / input rows", size_ratio, lo=0.45, hi=0.55),)
C_DILATE = (Claim("pixels lost across the image: d(k − 1) = 8", shrink, lo=8, hi=8),
            Claim("weights of a dense kernel as wide: (d(k − 1) + 1)²", dense_weights_of_span,
                  lo=81, hi=81))
C_SEVEN = (Claim("receptive field of three 3×3", field, lo=7, hi=7),
           Claim("weights / c² of three 3×3 (one 7×7: 49)", weights_per_c2, lo=27, hi=27))
C_WAVENET = (Claim("receptive field after 4 layers", field, lo=16, hi=16),
             Claim("growth of r per layer 1, 2, 4, 8: the last one",
                   lambda s: field_growth(s)[-1], lo=8, hi=8))
C_VGG = (Claim("growth of r per 3×3 layer after the first pool (jump 2)",
               lambda s: field_growth(s)[3], lo=4, hi=4),
         Claim("growth of r per 3×3 layer before it (jump 1)",
               lambda s: field_growth(s)[0], lo=2, hi=2),
         Claim("receptive field of the block", field, lo=16, hi=16))
C_ERF = (Claim("2σ radius / half-width of the 25×25 box", erf_ratio, hi=0.65),
         Claim("gradient mass in the central half of the box (a quarter of its area)",
               central_mass, lo=0.8, fmt="{:.0%}"))
C_ERF_STRIDED = (Claim("gradient mass in the central half of the 29×29 box",
                       central_mass, lo=0.5, hi=0.6),)
C_MAPS = (Claim("test accuracy of the digits CNN", digits_test_accuracy, lo=0.95, fmt=PERCENT),
          Claim("digit #0 predicted right", predicted_right, lo=1, hi=1),
          Claim("peak/mean of the field: trained / most concentrated random init",
                digits_concentration_ratio, lo=1.2))
C_EQUI = (Claim("max |conv(Tx) − T conv(x)|", lambda s: equivariance_of(s).equivariance_error,
                hi=1e-5),
          Claim("change after 4×4 pool / change without pooling",
                lambda s: equivariance_of(s).change_pooled / equivariance_of(s).change_unpooled,
                hi=0.7))

PRESETS = {
    "Edges: Sobel x on a photo": Preset(
        SOBEL, "Sobel x sums to 0: flat regions go to 0 (white; about three quarters of the "
               "output is below 5% of its peak), vertical edges light up red/blue.",
        "conv", C_SOBEL),
    "Blur: Gaussian 1/16 [1 2 1]": Preset(
        BLUR, "The kernel sums to 1: the mean brightness is kept (it changes by < 0.005); "
              "fine detail is averaged away (neighbour differences drop to about 0.76 of the "
              "input's).", "conv", C_BLUR),
    "Stride 2 halves the output": Preset(
        STRIDE, "n_out = ⌊(n + 2p − k)/2⌋ + 1 = ⌊(128 + 2 − 3)/2⌋ + 1 = 64: half of n in each "
                "direction.", "conv", C_STRIDE),
    "Dilation 4: a sparse 9×9 kernel": Preset(
        DILATE, "Nine taps spread over d(k − 1) + 1 = 9 pixels: with p = 0 the output is "
                "8 pixels narrower than the input (128 → 120), as a dense 9×9 kernel would "
                "make it, with 9 weights instead of 81.", "conv", C_DILATE),
    "7×7 vs three 3×3": Preset(
        SEVEN, "Three 3×3 layers see 7×7 pixels, like one 7×7 layer, with 27c² instead of "
               "49c² weights.", "rf", C_SEVEN),
    "WaveNet dilations 1-2-4-8": Preset(
        WAVENET, "Kernel 2 with dilations 1, 2, 4, 8: the field grows by 1, 2, 4, 8 and "
                 "reaches 16 after four layers.", "rf", C_WAVENET),
    "VGG block (pooling multiplies the jump)": Preset(
        VGG, "Before the first 2×2 pool each 3×3 layer adds 2 to r; after it the jump is 2 "
             "and each 3×3 layer adds 4: r = 16 after the block.", "rf", C_VGG),
    "Effective field ≪ theoretical box": Preset(
        ERF_DEEP, "Twelve 3×3 layers: the box is 25×25, but the gradient mass is a "
                  "Gaussian-like bump: its 2σ radius is about 0.6 of the box's half-width, "
                  "and the central half of the box (about a quarter of its area) holds over "
                  "80% of the mass.", "erf", C_ERF),
    "Learned feature maps": Preset(
        MAPS, "The trained CNN (test accuracy > 95%) gets digit #0 right; deeper maps are "
              "coarser (8×8 → 4×4 → 2×2). Below: its last layer's effective field is more "
              "concentrated than a random init's (peak/mean ≥ 1.2× theirs).", "maps", C_MAPS),
    "Pooling buys (some) invariance": Preset(
        EQUI, "Conv: shifting the input shifts the output exactly (error < 1e-5). After 4×4 "
              "max pooling a one-pixel shift changes the map much less than without pooling.",
        "equi", C_EQUI),
}

STEPS = [
    Step("A kernel slides",
         "Each output is the sum of the window times the kernel (no flip: deep-learning "
         "'convolution' is cross-correlation). Press Play: the window starts at the top-left "
         "output and fills in the output row by row; the caption checks each sum against "
         "torch's F.conv2d.", SLIDE, "slide", shows=("cv_fig_slide", "cv_play")),
    Step("Kernels are feature detectors",
         "Sobel x answers 'is there a vertical edge here?': it sums to 0, so flat regions go "
         "to 0 and about three quarters of the output is below 5% of its peak. Try Sobel y, "
         "Laplacian, emboss.", SOBEL, "conv", C_SOBEL),
    Step("Size arithmetic",
         "Stride divides, padding adds, dilation widens the kernel: "
         "n_out = ⌊(n + 2p − d(k−1) − 1)/s⌋ + 1. Stride 2 on the 128-pixel checkerboard "
         "gives 64.", STRIDE, "conv", C_STRIDE),
    Step("Stacking grows the view",
         "r grows by d(k−1)·j per layer: three 3×3 layers reach 7×7 pixels with 27c² weights "
         "instead of one 7×7's 49c².", SEVEN, "rf", C_SEVEN),
    Step("Dilation grows it exponentially",
         "WaveNet's kernel-2 layers with dilations 1, 2, 4, 8 add 1, 2, 4, 8 pixels: the "
         "field doubles per layer (16 after four) while the number of weights grows only "
         "linearly.", WAVENET, "rf", C_WAVENET),
    Step("The effective field is smaller",
         "Luo et al. 2016: |∂y/∂x| concentrates in the middle of the box. In this strided "
         "6-layer stack the box is 29×29, yet the central half of the box (27% of its pixels) "
         "holds over half of the gradient mass. Choose the preset *Effective field ≪ "
         "theoretical box* for a deeper stack, where the gap is larger.",
         ERF_STRIDED, "erf", C_ERF_STRIDED),
    Step("What a trained CNN computes",
         "Each feature map is one channel: the first layer responds to strokes at full "
         "resolution, the pooled layers answer coarser questions on 4×4 and 2×2 grids. The "
         "net is right on over 95% of the held-out digits.", MAPS, "maps", C_MAPS[:2]),
    Step("Equivariance and invariance",
         "Convolution commutes with shifts (the difference map is zero up to float "
         "rounding). Max pooling keeps the strongest response per block, so after a small "
         "shift the pooled map changes much less: approximate invariance.", EQUI, "equi",
         C_EQUI),
]
