"""The VAE page's presets and tour steps with the claims that check what each one says
(topics/vae/page.py imports PRESETS and STEPS; the measurements are in topics/vae/compute.py)."""
from __future__ import annotations

import inspect

from engine.vae import VAETrainer, toy_elbo
from engine.vae.data import load_digit_data
from ui.claims import PERCENT, Claim, OnRun
from topics.vae.compute import (STARTS, CLAIM_SEEDS, CLAIM_EPOCHS, code_centre, code_reach,
                             off_digit_share, worst, test_metric, grid_spread, fitted_q,
                             nearest_mode_gap, ae_over_pca, peak_metric, UNSEEN_PERCENTILE)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
BASE = {"vae_model": "VAE", "vae_beta": 1.0, "vae_dim": 2, "vae_lik": "bernoulli",
        "vae_reparam": True, "vae_start": STARTS[0], "vae_span": "quantiles", "vae_dx": 0,
        "vae_dy": 1, "vae_z1": 0.0, "vae_z2": 0.0}
SCRATCH = {**BASE, "vae_start": STARTS[1]}
AE = {**BASE, "vae_model": "autoencoder", "vae_span": "fit to codes"}
ELBO = {"vae_x": 0.0, "vae_qm": 1.5, "vae_qs": 0.5}
PCA = {"vae_mnoise": 0.05, "vae_mhidden": 16, "vae_mfit": True}
E = CLAIM_EPOCHS
REACH = "99% of the codes' |μ| lie under"
NO_DIGIT = f"farther from all training digits than {UNSEEN_PERCENTILE}% of test digits"
# an epoch of the live trainer in iterations (one mini-batch each): where the claims' epochs
# are read on the Latent space tab's live run (its test metrics as logged up to there)
EPOCH_STEPS = len(load_digit_data().x_train) / inspect.signature(VAETrainer).parameters[
    "batch_size"].default


def run_kl(epochs: float) -> OnRun:
    return OnRun(round(epochs * EPOCH_STEPS), ("test_kl",))


def vae_off_digit_share(s) -> float:
    """The shipped VAE's off-digit share: the comparison the autoencoder's text draws."""
    return off_digit_share({**s, **{k: BASE[k] for k in ("vae_model", "vae_span")}})


C_SHIPPED = (Claim("largest |mean of μ| over z1, z2 (centred cloud)", code_centre, hi=0.3),
             Claim(REACH, lambda s: code_reach(s), hi=3.0),
             Claim("share of grid cells decoding to no digit", lambda s: off_digit_share(s),
                   hi=0.1, fmt=PERCENT))
C_AE = (Claim(f"{REACH} (an N(0,1) quantile grid reaches ±1.64)", lambda s: code_reach(s),
              lo=8.0),
        Claim(f"share of grid cells (spanning the codes) decoding to no digit ({NO_DIGIT})",
              lambda s: off_digit_share(s), lo=0.2, fmt=PERCENT),
        Claim("the same share for the shipped VAE's quantile grid", vae_off_digit_share,
              hi=0.1, fmt=PERCENT))
C_SCRATCH = (Claim(f"largest test KL in the first 10 epochs, lowest of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: peak_metric(s, "test_kl", k, 10), min), lo=0.5,
                   slow=True),
             Claim(f"test KL at epoch 10, worst of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: test_metric(s, "test_kl", k, 10)), hi=0.05, slow=True,
                   run=run_kl(10)),
             Claim(f"test KL at epoch {E}, worst of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: test_metric(s, "test_kl", k, E), min), lo=1.0, slow=True,
                   run=run_kl(E)),
             Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds",
                   worst(lambda s, k: code_reach(s, k, E), min), lo=1.5, slow=True))
C_BETA0 = (Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds {CLAIM_SEEDS}",
                 worst(lambda s, k: code_reach(s, k, E), min), lo=5.0, slow=True),)
C_BETA8 = (Claim(f"test KL at epoch {E}, worst of seeds {CLAIM_SEEDS} (nats)",
                 worst(lambda s, k: test_metric(s, "test_kl", k, E)), hi=0.01, slow=True,
                 run=run_kl(E)),
           Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds",
                 worst(lambda s, k: code_reach(s, k, E)), hi=0.1, slow=True),
           Claim("pixel std across the grid's cells, worst of seeds (0: one image)",
                 worst(lambda s, k: grid_spread(s, k, E)), hi=0.02, slow=True))
C_REPARAM = (Claim(f"‖∂recon/∂encoder‖ at epoch {E}, worst of seeds {CLAIM_SEEDS}",
                   worst(lambda s, k: test_metric(s, "enc_grad_recon", k, E)), lo=0, hi=0,
                   slow=True),
             Claim(f"99th percentile of |μ| at epoch {E}, worst of seeds",
                   worst(lambda s, k: code_reach(s, k, E)), hi=0.05, slow=True))
C_ELBO = (Claim("gap log p(x) − ELBO at the start (m = 1.5, s = 0.5)",
                lambda s: toy_elbo(s["vae_x"], s["vae_qm"], s["vae_qs"]).gap, lo=1.0),
          Claim("fitted m (lands on the tallest mode, 0)", lambda s: fitted_q(s)[0],
                lo=-0.05, hi=0.05),
          Claim("|fitted m − the posterior mode nearest the start (1.72)|", nearest_mode_gap,
                lo=1.5),
          Claim("gap after Fit q (a Gaussian cannot cover 3 modes)",
                lambda s: toy_elbo(s["vae_x"], *fitted_q(s)).gap, lo=0.1, hi=0.4))
C_PCA = (Claim("nonlinear autoencoder error / PCA's, worst of seeds",
               worst(lambda s, k: ae_over_pca(s, k, "nonlinear autoencoder")), hi=0.5,
               slow=True),
         Claim("linear autoencoder error / PCA's, worst of seeds (same line)",
               worst(lambda s, k: ae_over_pca(s, k, "linear autoencoder")), lo=0.99, hi=1.05,
               slow=True))

PRESETS = {
    "Shipped VAE (β = 1)": Preset(
        BASE, "A VAE trained for 120 epochs: the test digits fill a centred, roughly round "
              "cloud (99% within |z| < 3) and the N(0, 1) quantile grid decodes to digits "
              "(under 10% of its cells are farther from every training digit than a real "
              "unseen digit is). Press Play to keep training.", "latent", C_SHIPPED),
    "Autoencoder: holes in the latent": Preset(
        AE, "No KL term and no prior: the codes spread to |z| ≈ 12, off-centre; the digit "
            "clusters touch one another in the middle of the cloud, with empty space around "
            "it. The grid spans the same square as the scatter (±12): over 20% of its cells "
            "reach into that empty space and decode to smudges "
            "that are no digit (farther from every training digit than 90% of real test "
            "digits are), against under 10% for the VAE's grid.", "latent", C_AE),
    "Train a VAE from scratch": Preset(
        SCRATCH, "Press Play. After a brief spike in the first epochs (the test KL in the "
                 "scatter's title passes 0.5 nats) the KL falls back near 0 (≤ 0.05 nats at epoch 10 on seeds "
                 "0 and 1): every code sits on the prior and the grid is one average blob. "
                 "Then the codes split by digit and the grid turns into digits (by epoch "
                 "30: KL ≥ 1 nat, codes out to |z| ≈ 2). Then open the *Replay* tab.",
        "latent", C_SCRATCH, shows=("vae_scatter",)),
    "β = 0: no pull to the prior": Preset(
        {**SCRATCH, "vae_beta": 0.0},
        "Press Play: with β = 0 only reconstruction counts; by epoch 30 the cloud spreads to "
        "|z| > 5 (99th percentile), far beyond the N(0, 1) quantile grid (±1.64), like an "
        "autoencoder.", "latent", C_BETA0),
    "β = 8: posterior collapse": Preset(
        {**SCRATCH, "vae_beta": 8.0},
        "Press Play: the KL weight wins. By epoch 30 the test KL is below 0.01 nats, every "
        "code sits at 0 (|μ| < 0.1) and every grid cell decodes to the same average blob: "
        "z carries no information about the digit.", "latent", C_BETA8),
    "Reparameterization off": Preset(
        {**SCRATCH, "vae_reparam": False},
        "z is sampled off the autograd graph: the encoder's gradient from the reconstruction "
        "term is exactly 0 (see the metric), so only KL trains the encoder and the codes "
        "collapse to 0.", "latent", C_REPARAM),
    "8-D latent: traverse two dims": Preset(
        {**SCRATCH, "vae_dim": 8},
        "Press Play: the scatter shows two chosen coordinates of an 8-D code, the grid varies "
        "those two with the other six at 0.", "latent"),
    "ELBO: Fit q finds a local optimum": Preset(
        ELBO, "At x = 0 the posterior has three modes (−1.72, 0, 1.72). Press *Fit q*: from "
              "m = 1.5 it lands at m = 0.00, the tallest mode, not the nearest one (1.72); "
              "the gap shrinks from 15 to about 0.2 nats but stays positive.", "elbo", C_ELBO,
        acts_on=("vae_qm", "vae_qs")),
}

STEPS = [
    Step("The classic picture", "Each grid cell decodes the latent point at its N(0, 1) "
         "quantile coordinates: since the prior is N(0, I), equal-probability cells tile the "
         "space the decoder was trained to use, and they decode to digits.", BASE, "latent",
         C_SHIPPED),
    Step("Train it yourself", "From scratch, press Play. Watch the left panel: codes start "
         "on the prior (after a brief KL spike in the first epochs, the test KL in its title "
         "is ≈ 0 at epoch 10), then spread into a centred cloud with one "
         "region per digit; the grid follows.", SCRATCH, "latent", C_SCRATCH,
         shows=("vae_scatter",)),
    Step("Watch it form again", "The *Replay* tab plays the stored snapshots of the test "
         "digits' codes on fixed axes (the shipped model: every snapshot it recorded while "
         "training; the caption says how many).",
         BASE, "replay"),
    Step("Take the KL away", "A plain autoencoder has no prior: its codes spread to |z| ≈ 12 "
         "and its grid, spanning them, reaches into the empty space around the cloud (over "
         "20% of the cells decode to no digit). It has no ELBO either: only a "
         "reconstruction error.", AE, "latent", C_AE),
    Step("Turn β up", "β weights the KL term. At β = 8 it wins completely: KL → 0, every "
         "q(z|x) is the prior and all cells decode to one average blob (posterior "
         "collapse).", {**SCRATCH, "vae_beta": 8.0}, "latent", C_BETA8),
    Step("Why reparameterize", "Sampling z = μ + σ·ε keeps z a differentiable function of "
         "the encoder outputs. Switch it off and the reconstruction gradient to the encoder "
         "is exactly 0.", {**SCRATCH, "vae_reparam": False}, "latent", C_REPARAM),
    Step("Why the ELBO is a bound", "log p(x) = ELBO + KL(q ‖ p(z|x)) and KL ≥ 0. With a "
         "three-mode posterior a Gaussian q cannot close the gap: Fit q lands on one mode (at "
         "these settings the tallest, m = 0, not the nearest) and the gap stays ≈ 0.2 nats.",
         ELBO, "elbo", C_ELBO, acts_on=("vae_qm", "vae_qs")),
    Step("Autoencoder vs PCA", "Through a 1-D code, a linear autoencoder finds PCA's line "
         "(same error); a nonlinear one bends along the arc and its error is less than half "
         "of PCA's.", PCA, "pca", C_PCA),
]
