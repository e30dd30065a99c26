"""Presets and the guided tour of the autoregressive page. Every fact a text states is a
Claim: measured by the function the page draws from, with the bound the text states
(ui/claims.py); a text states bounds, the card prints the measured value beside them."""
from __future__ import annotations

from engine.autoregressive.pretrained import PIXELCNN_STEPS
from topics.autoregressive.compute import (TRAIN_STEPS, baseline_bits, bits_margin,
                                           blind_count, blind_formula_gap, causal_ms,
                                           causal_size, code_usage, completion_kept,
                                           continuation_error, dilated_error, dilation_ratio,
                                           drawn_probability, future_pixels, gated_gain,
                                           greedy_repeats, mask_centre, prior_gain,
                                           recon_margin, rows_above, shipped_bits,
                                           shipped_truth_probability, trained_bits,
                                           truth_probability, undilated_error,
                                           untrained_truth_probability)
from ui.claims import PERCENT, Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
ONE_LAYER = {"au_stack": "pixelcnn", "au_k": 3, "au_layers": 1, "au_size": 11, "au_row": 6,
             "au_col": 5}
BLIND3 = {**ONE_LAYER, "au_layers": 3}
BLIND5 = {**ONE_LAYER, "au_layers": 5, "au_size": 15, "au_row": 9, "au_col": 7}
TWO_STACK = {**BLIND5, "au_stack": "two-stack"}
WAVENET = {"au_sched": "1,2,4,8", "au_k1": 2, "au_len": 32, "au_rate": 16}
PLAIN = {**WAVENET, "au_sched": "1,1,1,1"}
PIXELCNN = {"au_levels": 4, "au_hidden": 32, "au_blocks": 4, "au_lr": 0.01, "au_cond": False,
            "au_mode": "free", "au_temp": 1.0, "au_digit": 0, "au_prow": 3, "au_pcol": 2}
GREEDY = {**PIXELCNN, "au_temp": 0.0}
COMPLETE = {**PIXELCNN, "au_mode": "complete"}
VQ = {"au_levels": 4, "au_codes": 16, "au_beta": 0.25, "au_vqsteps": 200}
SAMPLER = {"au_model": "plain", "au_temp": 1.0, "au_sseed": 0, "au_digit": 0, "au_prow": 3,
           "au_pcol": 2}
GATED = {**SAMPLER, "au_model": "gated"}
VOWEL = {"au_wnet": "dilated", "au_vowel": 0, "au_prompt": 48}
FLAT_VOWEL = {**VOWEL, "au_wnet": "undilated"}

# ----------------------------------------------------------------------------- claims
C_CENTRE = (Claim("centre tap of the type-A mask", lambda s: mask_centre(s, "A"), hi=0),
            Claim("centre tap of the type-B mask", lambda s: mask_centre(s, "B"), lo=1),
            Claim("blind spot of one layer, pixels", blind_count, hi=0))
C_CAUSAL = (Claim("pixels at or after the target that reach it", future_pixels, hi=0),)
C_BLIND3 = (Claim("blind spot after 3 layers, pixels", blind_count, lo=3, hi=3),
            Claim("|blind spot − L(L − 1)/2|", blind_formula_gap, hi=0))
C_BLIND5 = (Claim("blind spot after 5 layers, pixels", blind_count, lo=10, hi=10),
            Claim("rows above the target in the field", rows_above, lo=5, hi=5))
C_TWO = (Claim("blind spot of the two stacks, 5 layers", blind_count, hi=0),
         Claim("rows above the target in the field", rows_above, lo=5))
C_WAVENET = (Claim("samples reaching the last output", causal_size, lo=16, hi=16),
             Claim("the field in ms at 16 kHz", causal_ms, lo=1, hi=1))
C_PLAIN = (Claim("samples reaching the last output, no dilation", causal_size, lo=5, hi=5),)
C_BITS = (Claim(f"test bits/pixel after {TRAIN_STEPS} iterations", trained_bits, hi=1.0,
                slow=True),
          Claim("independent pixels, bits/pixel", baseline_bits, lo=1.1),
          Claim(f"independent minus PixelCNN after {TRAIN_STEPS} iterations", bits_margin,
                lo=0.15, slow=True))
C_PIXEL = (Claim(f"p(true level) at pixel (3, 2) after {TRAIN_STEPS} iterations",
                 truth_probability, lo=0.6, slow=True, fmt=PERCENT),
           Claim("p(true level) there before training", untrained_truth_probability, hi=0.5,
                 fmt=PERCENT))
C_GREEDY = (Claim(f"free samples equal to the first at T = 0, {TRAIN_STEPS} iterations",
                  greedy_repeats, lo=10, slow=True),)
C_COMPLETE = (Claim("given upper-half pixels kept", completion_kept, lo=1, slow=True,
                    fmt=PERCENT),)

C_VQ = (Claim("share of the 16 codes used on the test digits", code_usage, lo=0.5, hi=0.95,
              slow=True, fmt=PERCENT),
        Claim("independent pixels minus the decoder given the codes, bits/pixel",
              recon_margin, lo=0.2, slow=True))
C_PRIOR = (Claim("code-grid bits: codes' frequencies minus the PixelCNN prior", prior_gain,
                 lo=5, slow=True),)

# bounds of the shipped models' claims (measured: plain 0.841 and gated 0.839 bits/pixel,
# p(true level) 91% and 98%, drawn levels' mean probability 83% at seed 0; WaveNet one-step
# errors 0.016 and 0.179, continuations of vowel 0 after 48 samples 0.086 and 0.98)
SHIPPED_BITS_HI, PIXEL_P_LO, DRAWN_P_LO = 0.9, 0.8, 0.6
GATED_LO, GATED_HI = -0.03, 0.03
WAVE_DILATED_HI, WAVE_UNDILATED_LO, WAVE_RATIO_LO = 0.05, 0.1, 5
GEN_DILATED_HI, GEN_UNDILATED_LO = 0.2, 0.8

C_SHIPPED = (Claim(f"shipped PixelCNN, test bits/pixel ({PIXELCNN_STEPS} iterations)",
                   shipped_bits, hi=SHIPPED_BITS_HI),
             Claim("independent pixels, bits/pixel", baseline_bits, lo=1.1),
             Claim("p(true level) at pixel (3, 2) of test digit 0", shipped_truth_probability,
                   lo=PIXEL_P_LO, fmt=PERCENT))
C_DRAWN = (Claim("mean probability of the level drawn, over the 64 pixels",
                 drawn_probability, lo=DRAWN_P_LO, fmt=PERCENT),)
C_GATED = (Claim(f"plain minus gated, test bits/pixel at {PIXELCNN_STEPS} iterations",
                 gated_gain, lo=GATED_LO, hi=GATED_HI),)
C_WAVE = (Claim("dilated WaveNet, held-out one-step error / variance", dilated_error,
                hi=WAVE_DILATED_HI),
          Claim("undilated WaveNet, the same", undilated_error, lo=WAVE_UNDILATED_LO),
          Claim("undilated error / dilated error", dilation_ratio, lo=WAVE_RATIO_LO))
C_WAVE_GEN = (Claim("dilated: generated continuation's error / variance",
                    lambda s: continuation_error(s, "dilated"), hi=GEN_DILATED_HI),
              Claim("undilated: the same", lambda s: continuation_error(s, "undilated"),
                    lo=GEN_UNDILATED_LO))

# ----------------------------------------------------------------------------- presets
PRESETS = {
    "Type A hides the centre": Preset(
        ONE_LAYER, "One 3 × 3 layer of type A: its centre tap is 0, type B's is 1. The output "
                   "pixel reads the row above and the pixel to its left; nothing is missed "
                   "yet (a blind spot of 0 pixels), and no later pixel reaches it.",
        "masks", C_CENTRE + C_CAUSAL),
    "The blind spot: 3 layers": Preset(
        BLIND3, "Three masked 3 × 3 layers: exactly 3 pixels above and to the right of the "
                "target are never reached, L(L − 1)/2 for L = 3 (the crosses).",
        "masks", C_BLIND3 + C_CAUSAL),
    "A deeper blind spot": Preset(
        BLIND5, "With 5 layers the field spans 5 rows above the target, and the blind spot "
                "has grown to 10 pixels: depth does not close it.",
        "masks", C_BLIND5),
    "Two stacks close the blind spot": Preset(
        TWO_STACK, "The two-stack layout of the gated PixelCNN: the vertical stack sees every "
                   "column of the rows above, so the blind spot is 0 pixels, and the field "
                   "still spans at least 5 rows above while no later pixel reaches the target.",
        "masks", C_TWO + C_CAUSAL),
    "WaveNet: dilations 1, 2, 4, 8": Preset(
        WAVENET, "Four causal layers of 2 taps, dilated 1, 2, 4, 8: the last output reads "
                 "exactly 16 samples, 1 ms of sound at 16 kHz.", "causal", C_WAVENET),
    "No dilation: 1, 1, 1, 1": Preset(
        PLAIN, "The same four layers without dilation read only 5 samples.", "causal",
        C_PLAIN),
    "Train a PixelCNN on digits": Preset(
        PIXELCNN, f"Press Reset, then Play (the tab opens on the shipped model): after "
                  f"{TRAIN_STEPS} iterations the test digits cost at most "
                  "1.0 bit per pixel, while independent pixels cost at least 1.1: a margin of "
                  "at least 0.15 bits.", "pixelcnn", C_BITS),
    "Temperature 0 repeats itself": Preset(
        GREEDY, f"At temperature 0 every pixel takes its most likely level: after "
                f"{TRAIN_STEPS} iterations all 10 free samples are the same digit.",
        "pixelcnn", C_GREEDY),
    "Complete the lower half": Preset(
        COMPLETE, "Ten test digits keep their upper half (every given pixel, 100%) and the "
                  "model draws the lower half pixel by pixel.", "pixelcnn", C_COMPLETE),
    "VQ-VAE: 16 codes, some dead": Preset(
        VQ, "A VQ-VAE with 16 codes trained for 200 steps uses at least half of them but not "
            "all (at most 95%): the others are dead. Given its 4 × 4 codes, a pixel costs at "
            "least 0.2 bits less than under independent pixels.", "vqvae", C_VQ),
    "VQ-VAE samples from a PixelCNN prior": Preset(
        VQ, "A PixelCNN over the 4 × 4 code grid knows where codes go: a test digit's grid "
            "costs at least 5 bits less under it than at the codes' frequencies. Its samples, "
            "decoded, are the bottom row.", "vqvae", C_PRIOR),
    "Watch a digit being drawn": Preset(
        SAMPLER, f"The shipped PixelCNN ({PIXELCNN_STEPS} iterations, at most "
                 f"{SHIPPED_BITS_HI} bits per pixel on the test digits, independent pixels at "
                 "least 1.1) draws a digit: press ▶ Play. On the right, pixel (3, 2) of a test "
                 f"digit gets at least {PIXEL_P_LO:.0%} on its true level from the pixels "
                 "above and to the left.", "sampling", C_SHIPPED + C_DRAWN),
    "Gated or plain layers": Preset(
        GATED, "The same PixelCNN with gated layers, tanh(f) ⊙ σ(g), trained the same way: on "
               f"these 8 × 8 digits, after {PIXELCNN_STEPS} iterations the two models are "
               "within 0.03 bits per pixel of each other: the gates buy no clear gain here.",
        "sampling", C_GATED),
    "WaveNet continues a vowel": Preset(
        VOWEL, "Dilations 1, 2, 4, 8, 16 reach 32 past samples, more than the vowel's period "
               "of 24: the one-step error on held-out vowels is below 5% of the signal's "
               "variance, at least 5 times lower than five undilated layers with the same "
               "weights. Generated one sample at a time, the continuation stays within 20% "
               "of the variance.", "wavenet", C_WAVE + C_WAVE_GEN[:1]),
    "Undilated: the vowel is lost": Preset(
        FLAT_VOWEL, "Five undilated layers read 6 samples, a quarter of a period: fed their "
                    "own output, they lose the vowel (an error of at least 80% of its "
                    "variance, about what predicting silence costs).", "wavenet",
        C_WAVE_GEN[1:]),
}

STEPS = [
    Step("Masks make a convolution causal",
         "A type-A mask zeroes the centre tap and everything after it in raster order; type "
         "B keeps the centre. One layer reads the row above and the pixel to the left.",
         ONE_LAYER, "masks", C_CENTRE[:2]),
    Step("Stacking leaves a blind spot",
         "Stack 3 layers: the field is a cone of the rows above that leans left. Exactly 3 "
         "pixels above-right of the target are never reached, and no later pixel is.",
         BLIND3, "masks", C_BLIND3 + C_CAUSAL),
    Step("Two stacks see every row above",
         "Split the layer into a vertical stack (all columns of the rows above) and a "
         "horizontal one (the row to the left): the blind spot is 0 pixels.",
         TWO_STACK, "masks", C_TWO[:1]),
    Step("Dilations grow the field fast",
         "In 1-D, causal layers with dilations 1, 2, 4, 8 reach exactly 16 samples: 2^L with "
         "L layers, where undilated ones reach L + 1.",
         WAVENET, "causal", C_WAVENET[:1]),
    Step("Train on digits",
         f"Press Reset, then Play (the tab opens on the shipped model). The model's bits "
         f"per pixel fall below independent pixels' (at least "
         f"1.1) within {TRAIN_STEPS} iterations, by at least 0.15 bits.",
         PIXELCNN, "pixelcnn", C_BITS[1:]),
    Step("One pixel's distribution",
         f"The bars: the model's distribution over the 4 levels of pixel (3, 2) of a test "
         f"digit, given the pixels before it. Untrained it gives the true level at most 50%; "
         f"after {TRAIN_STEPS} iterations at least 60%.",
         PIXELCNN, "pixelcnn", C_PIXEL),
    Step("Complete a digit",
         "Given the upper half of a test digit (100% of its pixels kept), the model draws the "
         "lower half one pixel at a time.",
         COMPLETE, "pixelcnn", C_COMPLETE),
    Step("Discrete codes: VQ-VAE",
         "A VQ-VAE squeezes each digit into a 4 × 4 grid of codes from a codebook of 16. "
         "Not every code gets used (at most 95%); given its codes a pixel costs at least 0.2 "
         "bits less than independent pixels.",
         VQ, "vqvae", C_VQ),
    Step("Watch a digit being drawn",
         "Press ▶ Play on the left: the shipped PixelCNN draws 64 pixels in raster order, each "
         "from the bars beside it (its distribution given the pixels drawn so far). Click "
         f"any pixel of the test digit on the right: at (3, 2) at least {PIXEL_P_LO:.0%} goes "
         "to the true level.", SAMPLER, "sampling", C_SHIPPED[2:]),
    Step("A WaveNet on a vowel",
         "Dilated causal layers reach back further than one period of the vowel, so the "
         "model can copy the period it has just heard: its one-step error is at least 5 times "
         "lower than undilated layers' with the same weights, and its generated "
         "continuation follows the real vowel.", VOWEL, "wavenet",
         (C_WAVE[2], C_WAVE_GEN[0])),
]
