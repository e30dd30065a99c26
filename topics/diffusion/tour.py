"""The diffusion page's presets and tour steps with the claims that check what each one says
(topics/diffusion/page.py imports PRESETS and STEPS; the measurements are in
topics/diffusion/compute.py)."""
from __future__ import annotations

from ui.claims import PERCENT, Claim

CHANGE = "{:+.1%}"       # a ratio minus 1, as the card prints it: +10.8%
from topics.diffusion.compute import (EXACT, PRETRAINED, NEAR, langevin_weights, measure,
                                   near_share, schedule_alpha_bar)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
MIX = {"df_data": "mixture", "df_weight": 0.6, "df_sched": "linear", "df_den": EXACT,
       "df_class": "none", "df_w": 0.0, "df_n": 500, "df_eta": 0.0}
DDPM = {**MIX, "df_sampler": "DDPM"}
MOONS10 = {**MIX, "df_data": "two_moons", "df_sampler": "DDIM", "df_steps": 10}
MOONS10_NOISY = {**MOONS10, "df_eta": 1.0}
GUIDED = {**MIX, "df_sampler": "DDIM", "df_steps": 50, "df_class": "0", "df_w": 3.0}
GUIDED_NET = {**GUIDED, "df_den": PRETRAINED}
SWISS = {**MIX, "df_data": "swiss_roll", "df_sampler": "DDIM", "df_steps": 50,
         "df_den": PRETRAINED}
LANGEVIN = {"df_lgap": 8.0, "df_lw": 0.8, "df_lnsteps": 400, "df_levels": 10}
WEIGHT_TOL = 0.06        # how close a sampler's share of a mode comes to the mode's weight
FORWARD = {"df_t": 500, "df_sched": "linear"}

C_FORWARD = (Claim("ᾱ₅₀₀ of the linear schedule", lambda s: schedule_alpha_bar("linear", 500),
                   lo=0.078, hi=0.079),
             Claim("ᾱ₁₀₀₀ of the linear schedule (pure noise)",
                   lambda s: schedule_alpha_bar("linear", 1000), hi=1e-4),
             Claim("ᾱ₅₀₀: cosine / linear (cosine keeps more signal)",
                   lambda s: schedule_alpha_bar("cosine", 500) / schedule_alpha_bar("linear",
                                                                                    500),
                   lo=5.0))
C_DDPM = tuple(Claim(f"share of samples at mode {k} (truth {w} ± {WEIGHT_TOL})",
                     measure(f"w{k}"), lo=w - WEIGHT_TOL, hi=w + WEIGHT_TOL)
               for k, w in enumerate((0.6, 0.2, 0.2)))
C_DDIM10 = (Claim(f"share of samples within {NEAR} of the moons", near_share, lo=0.85,
                  fmt=PERCENT),)
C_DDIM10_NOISY = (
    Claim("10 steps: sliced W, η = 1 over η = 0 (η = 1 a little worse)",
          lambda s: measure("sw")(s) / measure("sw", df_eta=0.0)(s) - 1, lo=0.02, hi=0.5,
          fmt=CHANGE),
    Claim(f"10 steps: share off the moons (> {NEAR}), η = 1 / η = 0",
          lambda s: (1 - near_share(s)) / (1 - near_share({**s, "df_eta": 0.0})), lo=1.15),
    Claim("50 steps: sliced W, η = 1 against η = 0 (about the same)",
          lambda s: abs(measure("sw", df_steps=50)(s)
                        / measure("sw", df_steps=50, df_eta=0.0)(s) - 1), hi=0.1, fmt=PERCENT))
C_GUIDED = (
    Claim("share of samples nearest mode 0", measure("w0"), lo=0.99),
    Claim("spread of the samples / spread of mode 0, w = 3 (tighter)", measure("spread"),
          hi=0.8),
    Claim("the same at w = 0 (the class as it is)", measure("spread", df_w=0.0),
          lo=0.85, hi=1.1),
    Claim("distance of the samples' mean from mode 0's centre, w = 3 (pushed away from the "
          "other modes)", measure("offset"), lo=0.15, hi=0.4),
    Claim("share of samples outside the plot", measure("outside"), hi=0.0))
C_GUIDED_NET = (
    Claim("spread of the samples / spread of mode 0, network, w = 3", measure("spread"),
          lo=2.0),
    Claim("share of samples outside the plot, network, w = 3", measure("outside"), lo=0.05,
          fmt=PERCENT),
    Claim("spread at w = 0 with the same network", measure("spread", df_w=0.0), hi=1.2))
C_SWISS = (Claim("sliced W to the data: shipped network / exact denoiser",
                 lambda s: measure("sw")(s) / measure("sw", df_den=EXACT)(s), hi=1.5),)
C_LANGEVIN = (Claim(f"plain Langevin: share in the left mode (truth {LANGEVIN['df_lw']})",
                    lambda s: langevin_weights(s, "plain"), hi=0.6),
              Claim(f"annealed Langevin: share in the left mode (truth {LANGEVIN['df_lw']} ± "
                    f"{WEIGHT_TOL})", lambda s: langevin_weights(s, "annealed"),
                    lo=LANGEVIN["df_lw"] - WEIGHT_TOL, hi=LANGEVIN["df_lw"] + WEIGHT_TOL))

PRESETS = {
    "DDPM, 1000 steps, exact denoiser": Preset(
        DDPM, "Ancestral sampling with the exact ε*: the shares of samples at the three modes "
              "match the truth 0.6 / 0.2 / 0.2 (each within 0.06 with 500 particles).",
        "reverse", C_DDPM),
    "DDIM, 10 deterministic steps (η = 0)": Preset(
        MOONS10, "Ten deterministic steps already give the moons: over 85% of the samples lie "
                 f"within {NEAR} of the data, and the trajectories are smooth curves.",
        "reverse", C_DDIM10),
    "DDIM, 10 noisy steps (η = 1)": Preset(
        MOONS10_NOISY, "The same 10 steps with η = 1 (DDPM-like noise): a little blurrier "
                       "(sliced W up by 2-50%, more samples off the moons). The gap is small "
                       "in 2-D, and with 50 steps both are about equal (within 10%). The *Steps vs "
                       "quality* tab draws the whole curve.", "reverse", C_DDIM10_NOISY),
    "Guidance w = 3 on class 0": Preset(
        GUIDED, "Classifier-free guidance (1+w)ε(x,c) − wε(x) with the exact denoiser, "
                "compared with mode 0 alone: every sample lands in mode 0, the cloud is "
                "tighter (spread < 0.8 × the mode's) and pushed 0.15-0.4 away from the other "
                "modes: guidance sharpens and exaggerates the class, it does not sample it.",
        "reverse", C_GUIDED),
    "Guidance w = 3 with the trained network": Preset(
        GUIDED_NET, "The same guidance with the shipped network: (1+w) multiplies the "
                    "network's errors where it is inaccurate (away from the data), and the "
                    "samples scatter past the mode (spread > 2 × the mode's, over 5% leave the "
                    "plot). At w = 0 the same network samples mode 0 fine.", "reverse",
        C_GUIDED_NET),
    "Trained network on the Swiss roll": Preset(
        SWISS, "A 3-layer MLP learned ε on the Swiss roll (scripts/pretrain_diffusion.py): its "
               "samples are within 1.5× the sliced Wasserstein distance of the exact (kernel "
               "density) denoiser's.", "reverse", C_SWISS),
    "Plain Langevin misweights modes": Preset(
        LANGEVIN, "Langevin follows the score only: particles stay in the basin they start in, "
                  "so the left mode gets under 0.6 of them instead of its weight 0.8. Annealed "
                  "Langevin starts from the smoothed data and recovers 0.8 (within 0.06).",
        "langevin", C_LANGEVIN),
}

STEPS = [
    Step("Noise the data",
         "x_t = √ᾱ_t x₀ + √(1−ᾱ_t) ε: at t = 500 the linear schedule keeps ᾱ = 0.079 of the "
         "signal's power, and by t = 1000 the data is pure N(0, I) (ᾱ < 1e-4). The cosine "
         "schedule destroys signal more slowly (over 5× more left at t = 500).", FORWARD,
         "forward", C_FORWARD),
    Step("Sample back with DDPM",
         "1000 ancestral steps with the exact denoiser recover the mixture and its weights "
         "0.6 / 0.2 / 0.2.", DDPM, "reverse", C_DDPM),
    Step("Fewer steps: DDIM",
         "10 deterministic DDIM steps: the moons are there already. Choose the preset *η = 1* "
         "next to compare the noisy variant, and open *Steps vs quality* for the whole curve.",
         MOONS10, "reverse", C_DDIM10),
    Step("Guidance",
         "Conditioning on class 0 puts every sample in mode 0; guidance w = 3 then makes the "
         "cloud tighter than the mode and pushes it away from the other classes.",
         GUIDED, "reverse", C_GUIDED),
    Step("Langevin needs annealing",
         "Plain Langevin cannot tell a mode's weight across a gap: the left mode (weight 0.8) "
         "gets under 0.6 of the particles. Annealed Langevin recovers the weight.",
         LANGEVIN, "langevin", C_LANGEVIN),
]
