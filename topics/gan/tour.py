"""The GAN page's presets and tour steps with the claims that check what each one says
(topics/gan/page.py imports PRESETS and STEPS; the measurements are in topics/gan/compute.py)."""
from __future__ import annotations

import numpy as np

from engine.gan import TRAINER_DEFAULTS, parallel_lines
from engine.gan.manifold import largest_share, manifold_of, modes_reached
from engine.gan.reads import blob_share
from ui.claims import PERCENT, Claim, OnRun
from topics.gan.compute import (settings_of, worst, modes_at, max_modes_at, dirac_runs,
                             dirac_ratio)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
BIG = settings_of("ring of 8", 0.05, TRAINER_DEFAULTS)       # 2×128 networks
COLLAPSE = {**BIG, **settings_of("ring of 8", 0.05, {**TRAINER_DEFAULTS, "d_hidden": (128,)})}
UNROLLED = {**COLLAPSE, "gan_unroll": 5}
D_STEPS5 = {**COLLAPSE, "gan_d_steps": 5}
GRID = settings_of("5x5 grid", 0.05, TRAINER_DEFAULTS)
MOONS = settings_of("two moons", 0.05, {**TRAINER_DEFAULTS, "g_hidden": (8,)})
DIRAC_MINIMAX = {"gan_dirac_loss": "minimax", "gan_dirac_gamma": 1.0, "gan_dirac_lr": 0.1,
                 "gan_dirac_steps": 300, "gan_dirac_sim": True}
DIRAC_NS = {**DIRAC_MINIMAX, "gan_dirac_loss": "nonsaturating", "gan_dirac_steps": 1000}
DIRAC_HINGE = {**DIRAC_MINIMAX, "gan_dirac_loss": "hinge", "gan_dirac_steps": 1000}
WASSERSTEIN = {"gan_theta": 1.0}

COLLAPSE_AT, CURE_AT, DEEP_AT, DSTEPS_AT = 1250, 1500, 1250, 1000
BLOB_SHARE = 0.8        # a collapsed generator: at least this share within 1 of the median
SHARE = "{:.0%}"         # a share of the samples, as the words state it: 80%
CHANGE = "{:+.1%}"      # a ratio minus 1, as the card prints it: +2.3%


C_COLLAPSE = (
    Claim(f"modes covered at iteration {COLLAPSE_AT:,} (worst of seeds 0, 1)",
          lambda s: max_modes_at(s, COLLAPSE_AT), hi=1, slow=True,
          run=OnRun(COLLAPSE_AT, ("modes",))),
    Claim(f"share of samples within 1 of their median at {COLLAPSE_AT:,} (one blob)",
          lambda s: worst(blob_share, s, COLLAPSE_AT), lo=BLOB_SHARE, slow=True, fmt=SHARE),
    Claim(f"share of samples within 3σ of a mode at {COLLAPSE_AT:,} (the blob sits between "
          "modes)", lambda s: worst(lambda t: t.coverage().high_quality_fraction, s,
                                     COLLAPSE_AT, lowest=False), hi=0.2, slow=True, fmt=SHARE,
          run=OnRun(COLLAPSE_AT, ("high_quality",))),
)
C_UNROLLED = (Claim(f"modes covered at iteration {CURE_AT:,} (worst of seeds 0, 1)",
                    lambda s: modes_at(s, CURE_AT), lo=7, slow=True,
                    run=OnRun(CURE_AT, ("modes",))),
              Claim(f"share of samples within 1 of their median at {CURE_AT:,} (no blob)",
                    lambda s: worst(blob_share, s, CURE_AT, lowest=False), hi=0.3,
                    slow=True))
C_DEEP = (Claim(f"modes covered at iteration {DEEP_AT:,} (worst of seeds 0, 1)",
                lambda s: modes_at(s, DEEP_AT), lo=7, slow=True,
                run=OnRun(DEEP_AT, ("modes",))),)
C_DSTEPS = (Claim(f"modes covered at iteration {DSTEPS_AT:,} (worst of seeds 0, 1)",
                  lambda s: modes_at(s, DSTEPS_AT), lo=7, slow=True,
                  run=OnRun(DSTEPS_AT, ("modes",))),)
C_DIRAC_MINIMAX = (Claim("γ = 0: distance after 300 it. / start distance (spirals out)",
                         dirac_ratio, lo=1.2),
                   Claim("R1 γ = 1: distance to (0, 0) after 300 it.",
                         lambda s: dirac_runs(s)["R1 γ = 1"].distance[-1], hi=1e-3))
C_DIRAC_NS = (Claim("γ = 0: distance after 1,000 it. / start distance (converges slowly)",
                    dirac_ratio, hi=0.4, fmt=PERCENT),
              Claim("R1 γ = 1: distance to (0, 0) after 1,000 it.",
                    lambda s: dirac_runs(s)["R1 γ = 1"].distance[-1], hi=1e-6))
C_DIRAC_HINGE = (Claim("γ = 0: distance after 1,000 it. against the start distance (circles)",
                       lambda s: dirac_ratio(s) - 1, lo=-0.1, hi=0.1, fmt=CHANGE),
                 Claim("R1 γ = 1: distance to (0, 0) after 1,000 it.",
                       lambda s: dirac_runs(s)["R1 γ = 1"].distance[-1], hi=1e-6))
C_WASSERSTEIN = (Claim("JSD at θ = 1 (log 2 = 0.6931)",
                       lambda s: parallel_lines(np.array([s["gan_theta"]])).jsd[0],
                       lo=0.6931, hi=0.6932),
                 Claim("W₁ at θ = 1", lambda s: parallel_lines(np.array([s["gan_theta"]])).w1[0],
                       lo=1.0, hi=1.0))

GRID_SQUEEZED = 0.75   # a collapsed map: at least this share of the grid in one mode's cell
GRID_SPREAD = 0.2      # a spread map: at most this share in any one mode's cell


def _grid(measure):
    """A measure of the trained GAN's latent grid (engine.gan.manifold), the Manifold tab's
    badges."""
    return lambda t: measure(manifold_of(t))


C_GRID_COLLAPSE = (
    Claim(f"largest share of the latent grid in one mode's cell at {COLLAPSE_AT:,} (worst of "
          "seeds 0, 1)", lambda s: worst(_grid(largest_share), s, COLLAPSE_AT),
          lo=GRID_SQUEEZED, slow=True, fmt=SHARE),
    Claim(f"modes the grid reaches at {COLLAPSE_AT:,} (worst of seeds 0, 1)",
          lambda s: worst(_grid(modes_reached), s, COLLAPSE_AT, lowest=False), hi=2,
          slow=True),
    Claim(f"share of the grid landing within 3σ of a mode at {COLLAPSE_AT:,}",
          lambda s: worst(_grid(lambda m: m.on_mode), s, COLLAPSE_AT, lowest=False),
          hi=0.05, slow=True, fmt=SHARE),
)
C_GRID_CURED = (
    Claim(f"largest share of the latent grid in one mode's cell at {DEEP_AT:,} (worst of "
          "seeds 0, 1)", lambda s: worst(_grid(largest_share), s, DEEP_AT, lowest=False),
          hi=GRID_SPREAD, slow=True, fmt=SHARE),
    Claim(f"modes the grid reaches at {DEEP_AT:,} (worst of seeds 0, 1)",
          lambda s: worst(_grid(modes_reached), s, DEEP_AT), lo=8, slow=True),
)

PRESETS: dict[str, Preset] = {
    "Collapse: one-layer D, one blob": Preset(
        COLLAPSE, "D has one hidden layer (Metz et al. 2016), no remedy, ring of 8 at "
                  "σ = 0.05: the samples form **one blob** "
                  f"(at least {BLOB_SHARE:.0%} of them within 1 of their median) that travels "
                  f"around the ring. At iteration {COLLAPSE_AT:,} at most 1 of the 8 modes is "
                  "covered (seeds 0 and 1) and fewer than 1 in 5 samples lies within 3σ of a "
                  "mode. The three cures below change one setting each.", "train", C_COLLAPSE),
    "Cure 1: unroll D (k = 5)": Preset(
        UNROLLED, "The same GAN, one setting changed: G's loss is taken against D unrolled 5 "
                  "Adam steps ahead, with gradients through the unroll (Metz et al. 2016). G "
                  "sees how D would answer a move of the whole blob, so the fakes spread "
                  f"instead: at iteration {CURE_AT:,} at least 7 of the 8 modes are covered "
                  "(seeds 0 and 1). Each iteration costs 5 extra D passes, so it trains ~4× "
                  "slower.", "train", C_UNROLLED),
    "Cure 2: a two-layer D": Preset(
        BIG, "The same GAN, one setting changed: D gets a second hidden layer (2×128). D can "
             "now model each mode, its gradient reaches every mode, and at iteration "
             f"{DEEP_AT:,} at least 7 of the 8 modes are covered (seeds 0 and 1).", "train",
        C_DEEP),
    "Cure 3: 5 D steps per G step": Preset(
        D_STEPS5, "The same one-layer GAN, one setting changed: D takes 5 steps per G step, "
                  "so it is close to its optimum when G moves and the blob cannot outrun it: "
                  f"at iteration {DSTEPS_AT:,} at least 7 of the 8 modes are covered (seeds 0 "
                  "and 1).", "train", C_DSTEPS),
    "Manifold: the collapsed map": Preset(
        COLLAPSE, "The collapsing GAN drawn as a map: the latent grid carried through G. "
                  "Press Play: the grid is squeezed into one patch that travels around the "
                  f"ring. At iteration {COLLAPSE_AT:,} one mode's cell gets at least "
                  f"{GRID_SQUEEZED:.0%} of the grid's prior mass, the grid reaches at most 2 "
                  "of the 8 cells (seeds 0 and 1), and under 5% of it lands within 3σ of a "
                  "mode.", "manifold", C_GRID_COLLAPSE),
    "Manifold: the map a two-layer D makes": Preset(
        BIG, "The same GAN with a two-layer D (Cure 2), drawn as a map. Press Play: the grid "
             "tears into one patch per mode, stretched thin between them. At iteration "
             f"{DEEP_AT:,} no mode's cell receives more than {GRID_SPREAD:.0%} of the grid's "
             "prior mass (an even spread gives each mode an eighth) and the grid reaches all 8 "
             "modes' cells (seeds 0 and 1).", "manifold", C_GRID_CURED),
    "25-mode grid": Preset(
        GRID, "A 5×5 grid of Gaussians: many more modes to cover. Press Play and watch the "
              "count of modes covered in the figure's title.", "train", shows=("gan_fig_samples",)),
    "Tiny generator on moons": Preset(
        MOONS, "A generator with one hidden layer of 8 ReLUs is piecewise linear in its 2-D "
               "latent code: press Play and see its samples follow the curved moons with a few "
               "straight pieces.", "train"),
    "Dirac-GAN: minimax spirals out, R1 converges": Preset(
        DIRAC_MINIMAX, "Simultaneous gradient steps on the minimax loss: without a penalty the "
                       "distance to the equilibrium (0, 0) grows (×1.3 after 300 iterations); "
                       "with R1 γ = 1 it falls below 0.001.", "dirac", C_DIRAC_MINIMAX),
    "Dirac-GAN: non-saturating converges slowly": Preset(
        DIRAC_NS, "The non-saturating loss damps the rotation by itself: without a penalty the "
                  "distance shrinks to under 40% of its start in 1,000 iterations; R1 γ = 1 "
                  "reaches (0, 0) to 1e-6.", "dirac", C_DIRAC_NS),
    "Dirac-GAN: hinge circles": Preset(
        DIRAC_HINGE, "The hinge loss's linear G loss keeps the rotation undamped: the run "
                     "circles the equilibrium at its start distance (within 10% after 1,000 "
                     "iterations); R1 γ = 1 converges.", "dirac", C_DIRAC_HINGE),
}

STEPS = [
    Step("Mode collapse: one blob",
         "Press **Play**. The fakes (purple) gather into one blob that travels around the ring; "
         "the figure's title counts the modes it covers now. At iteration "
         f"{COLLAPSE_AT:,} at most 1 of 8 modes is covered.",
         COLLAPSE, "train", C_COLLAPSE, shows=("gan_fig_samples",)),
    Step("Cure: unroll D",
         "One setting changed: G now plays against D five steps ahead. Moving the whole blob "
         "no longer pays, and the fakes spread: at least 7 of 8 modes at iteration "
         f"{CURE_AT:,}.", UNROLLED, "train", C_UNROLLED),
    Step("Cure: a stronger D",
         "Back to the collapsing GAN, with D given a second hidden layer instead: it now "
         f"models every mode, and at iteration {DEEP_AT:,} at least 7 of 8 are covered.",
         BIG, "train", C_DEEP),
    Step("Why plain GANs cycle: the Dirac-GAN",
         "One parameter each: data at 0, G = θ, D(x) = ψx. With the minimax loss the plain "
         "updates spiral away from the equilibrium (0, 0); the R1 penalty (γ = 1) converges.",
         DIRAC_MINIMAX, "dirac", C_DIRAC_MINIMAX),
    Step("The loss matters",
         "The non-saturating loss damps the rotation by itself and converges slowly without "
         "any penalty; R1 makes it fast. (Try *hinge*: it circles.)", DIRAC_NS, "dirac",
         C_DIRAC_NS),
    Step("Why Wasserstein",
         "Two parallel lines: for every θ ≠ 0 the JSD is log 2 (no gradient), while W₁ = |θ| "
         "points the generator home.", WASSERSTEIN, "wasserstein", C_WASSERSTEIN),
]
