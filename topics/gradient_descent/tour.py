"""The gradient descent page's presets and tour steps with the claims that check what each one
says (topics/gradient_descent/page.py imports PRESETS and STEPS; the measurements are in
topics/gradient_descent/compute.py)."""
from __future__ import annotations

from ui.claims import Claim
from topics.gradient_descent.compute import (
    curvature_of, diverged_at, eigen_flip_share, gap, hkey, log10, mean_late_step, peak_gap, steps_to,
    swing_growth, tail_rate)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
START = {"gd_x0": -2.5, "gd_y0": 1.5}
QUAD = {"gd_land": "quadratic", "gd_lmax": 1.0, "gd_noise": 0.0, "gd_hb_opt": False, **START}
ONE_STEP = {**QUAD, "gd_kappa": 1, "gd_angle": 0, "gd_loglr": 0.0, "gd_methods": ["gd"],
            "gd_steps": 20}
ZIGZAG = {**QUAD, "gd_kappa": 50, "gd_angle": 0, "gd_loglr": log10(1.9), "gd_methods": ["gd"],
          "gd_steps": 300}
DIVERGE = {**QUAD, "gd_kappa": 10, "gd_angle": 20, "gd_loglr": log10(2.05),
           "gd_methods": ["gd"], "gd_steps": 300}
MOMENTUM = {**QUAD, "gd_kappa": 50, "gd_angle": 0, "gd_loglr": log10(2 / 1.02),
            "gd_methods": ["gd", "momentum"], "gd_hb_opt": True, "gd_steps": 300}
ADAPTIVE = {**QUAD, "gd_kappa": 100, "gd_angle": 45, "gd_loglr": log10(1.9),
            "gd_methods": ["gd", "adam", "rmsprop"], "gd_steps": 1000,
            hkey("adam", "lr"): 0.1, hkey("rmsprop", "lr"): 0.05}
SADDLE = {"gd_land": "saddle", "gd_loglr": -1.0, "gd_methods": ["gd", "newton"],
          "gd_noise": 0.0, "gd_steps": 300, "gd_x0": 2.0, "gd_y0": 0.0}
SADDLE_NOISE = {**SADDLE, "gd_noise": 0.05}
ROSENBROCK = {"gd_land": "rosenbrock", "gd_loglr": -3.0, "gd_noise": 0.0, "gd_steps": 1000,
              "gd_methods": ["gd", "momentum", "adam", "newton"], "gd_x0": -1.5, "gd_y0": 2.0,
              hkey("momentum", "beta"): 0.9, hkey("adam", "lr"): 0.05,
              hkey("newton", "lr"): 1.0}

C_ONE_STEP = (Claim("GD's f − f* after one step", lambda s: gap(s, "gd", 1), hi=1e-20),)
C_ZIGZAG = (Claim("share of GD steps flipping the steep direction's sign",
                  lambda s: eigen_flip_share(s, "gd", 1), lo=0.95),
            Claim("GD's measured rate (flat-direction factor 1 − 1.9/50 = 0.962)",
                  lambda s: tail_rate(s, "gd"), lo=0.955, hi=0.97),
            Claim("steep-direction factor 1 − ηλmax",
                  lambda s: 1 - 10 ** s["gd_loglr"] * float(curvature_of(s).max()),
                  lo=-0.901, hi=-0.899))
C_DIVERGE = (Claim("steep-direction factor |1 − ηλmax|",
                   lambda s: abs(1 - 10 ** s["gd_loglr"] * float(curvature_of(s).max())),
                   lo=1.0),
             Claim("step where GD diverges", lambda s: diverged_at(s, "gd"), lo=100, hi=300))
C_MOMENTUM = (Claim("steps to f − f* ≤ 1e-8: heavy ball / GD",
                    lambda s: steps_to(s, "momentum") / steps_to(s, "gd"), hi=0.3),
              Claim("GD's measured tail rate (theory (κ−1)/(κ+1))",
                    lambda s: tail_rate(s, "gd"), lo=0.955, hi=0.965),
              Claim("heavy ball's measured tail rate (theory (√κ−1)/(√κ+1) = 0.752)",
                    lambda s: tail_rate(s, "momentum"), lo=0.74, hi=0.80),
              Claim("share of heavy-ball steps flipping the steep direction's sign",
                    lambda s: eigen_flip_share(s, "momentum", 1), lo=0.3),
              Claim("heavy ball's largest distance across the valley / at the start",
                    lambda s: swing_growth(s, "momentum"), lo=2.0),
              Claim("GD's largest distance across the valley / at the start",
                    lambda s: swing_growth(s, "gd"), hi=1.0))
C_ADAPTIVE = (Claim("RMSProp's mean step over the last 100 steps (it keeps hopping)",
                    lambda s: mean_late_step(s, "rmsprop"), lo=0.05),
              Claim("Adam's mean step over the last 100 steps (its step anneals)",
                    lambda s: mean_late_step(s, "adam"), hi=1e-3),
              Claim("final f − f*: Adam / RMSProp", lambda s: gap(s, "adam") / gap(s, "rmsprop"),
                    hi=0.01, fmt="{:.2%}"),
              Claim("final f − f*: GD / Adam", lambda s: gap(s, "gd") / gap(s, "adam"), hi=0.01,
                    fmt="{:.2%}"))
C_SADDLE = (Claim("GD's f − f* at the end (stuck at the saddle)", lambda s: gap(s, "gd"),
                  lo=0.24, hi=0.26),)
C_SADDLE_NOISE = (Claim("GD's f − f* at the end (escaped into a minimum)",
                        lambda s: gap(s, "gd"), hi=0.01),
                  Claim("Newton's f − f* at the end (still at the saddle)",
                        lambda s: gap(s, "newton"), lo=0.2))
C_ROSENBROCK = (Claim("final f − f*: momentum / GD", lambda s: gap(s, "momentum") / gap(s, "gd"),
                      hi=0.5),
                Claim("Newton's final f − f*", lambda s: gap(s, "newton"), hi=1e-10),
                Claim("Newton's largest f − f* on its path (it leaves the valley)",
                      lambda s: peak_gap(s, "newton"), lo=100),
                Claim("Newton's steps to f − f* ≤ 1e-8", lambda s: steps_to(s, "newton"),
                      hi=6))

PRESETS = {
    "κ = 1, η = 1/λ: one step": Preset(
        ONE_STEP, "Both eigenvalues equal 1 and η = 1/λ: the first step lands exactly on x* "
                  "(the error curve drops to the floor at k = 1).", "race", C_ONE_STEP,
                  shows=("gd_loss",)),
    "κ = 50: the zigzag": Preset(
        ZIGZAG, "η = 1.9 is near 2/λmax: the steep direction flips sign on every step "
                "(factor −0.9) while the flat one creeps (factor 0.962, the measured rate). "
                "The slow direction sets the rate.", "race", C_ZIGZAG),
    "η just above 2/λmax: divergence": Preset(
        DIVERGE, "η = 2.05 > 2/λmax = 2: the steep direction grows by |1 − 2.05| = 1.05 per "
                 "step. The page reports the step where |x| passed 10⁶ and stops drawing "
                 "there.", "race", C_DIVERGE),
    "Optimal momentum: faster, not smoother": Preset(
        MOMENTUM, "GD at its best η has rate (κ−1)/(κ+1) = 0.96; the heavy ball at its optimal "
                  "(η, β) has (√κ−1)/(√κ+1) = 0.75 and reaches 1e-8 in under a third of GD's "
                  "steps. It does not remove the oscillation: its first swings across the valley "
                  "even grow (to over twice the start's distance, where GD's only shrink), "
                  "then they die out at the faster rate.", "race", C_MOMENTUM),
    "Adam vs RMSProp, ill-conditioned and rotated": Preset(
        ADAPTIVE, "RMSProp divides by a running RMS of the gradient, so its step stays near η "
                  "and it keeps hopping around x* (mean step over the last 100 of 1,000 steps "
                  "≈ 0.07). Adam's momentum averages the hops away and its step anneals (below "
                  "1e-3): its final f − f* is under 1% of RMSProp's. Neither rescaling undoes "
                  "the 45° rotation, and plain GD at a tuned η ends closer than both (under 1% "
                  "of Adam's).", "race",
        C_ADAPTIVE),
    "Saddle: GD stalls": Preset(
        SADDLE, "Started on the line x₂ = 0 the gradient has no x₂ part: GD slides into the "
                "saddle point (0, 0) and stays (f − f* stuck at 0.25). Newton jumps straight to "
                "the saddle.", "race", C_SADDLE),
    "Saddle + gradient noise: escapes": Preset(
        SADDLE_NOISE, "A little gradient noise (σ = 0.05) pushes GD off the ridge; the negative "
                      "curvature then amplifies it and GD falls into a minimum (f − f* < 0.01). "
                      "Newton stays attracted to the saddle.", "race", C_SADDLE_NOISE),
    "Rosenbrock valley": Preset(
        ROSENBROCK, "A curved, narrow valley: GD (η = 0.001, near its stability limit across "
                    "the valley) crawls; momentum builds speed along the floor and ends at less "
                    "than half GD's error. Newton's full step trusts a local quadratic: its "
                    "second step jumps out of the valley (f − f* over 100), yet it reaches "
                    "the minimum within 6 steps.",
        "race", C_ROSENBROCK),
}

STEPS = [
    Step("One step is enough when κ = 1",
         "On a round bowl the gradient points straight at x*. With η = 1/λ the step "
         "x − η λ (x − x*) lands on x* exactly: the error drops to the float64 floor at k = 1.",
         ONE_STEP, "race", C_ONE_STEP, shows=("gd_loss",)),
    Step("Ill-conditioning makes GD zigzag",
         "With κ = λmax/λmin = 50 the error along each eigenvector is multiplied by 1 − ηλ per "
         "step. η must keep |1 − ηλmax| < 1, so the steep direction oscillates and the flat "
         "direction shrinks by only 1 − ηλmin ≈ 0.96: that factor is the rate. The tab "
         "*Step factor* shows both factors.", ZIGZAG, "factor", C_ZIGZAG),
    Step("Too large a step diverges",
         "Past η = 2/λmax the factor |1 − ηλmax| exceeds 1 and the steep component grows "
         "geometrically. The run stops where |x| passes 10⁶ and the page says at which step.",
         DIVERGE, "race", C_DIVERGE),
    Step("Momentum: faster, not smoother",
         "The heavy ball v ← βv + g, x ← x − ηv remembers past gradients. With the best "
         "(η, β) its rate improves from (κ−1)/(κ+1) = 0.96 to (√κ−1)/(√κ+1) = 0.75: it "
         "reaches 1e-8 in under a third of GD's steps. It does not remove the zigzag: its "
         "first swings grow to over twice the start's distance across the valley, then die "
         "out at the faster rate. *Momentum phase diagram* maps the rate over (η, β).",
         MOMENTUM, "race", C_MOMENTUM),
    Step("Adaptive methods rescale coordinates, not directions",
         "RMSProp divides each coordinate of the step by a running RMS of its gradient: its "
         "step stays near η, so it hops around x* forever. Adam adds momentum and bias "
         "correction; its hops average out and the step anneals. Rotated by 45°, the curvature "
         "mixes both coordinates and neither rescaling undoes it.",
         ADAPTIVE, "race", C_ADAPTIVE),
    Step("Saddles: GD stalls, noise escapes",
         "At a saddle the Hessian has a negative eigenvalue. Exactly on the stable line GD "
         "converges to the saddle; SGD's gradient noise puts a little mass on the unstable "
         "direction, which then grows by the factor |1 − ηλ| > 1 (λ < 0) per step. Choose the "
         "preset "
         "*Saddle + gradient noise* next to add the noise.", SADDLE, "race", C_SADDLE),
    Step("Rosenbrock: a curved valley",
         "Curvature changes along the path: at the minimum it is ~1000 across the valley and "
         "under 1 along it. "
         "GD's η is capped by the steep direction and crawls along the floor.",
         ROSENBROCK, "race",
         (*C_ROSENBROCK,
          Claim("Hessian eigenvalue across the valley at the minimum",
                lambda s: float(curvature_of(s).max()), lo=900, hi=1100),
          Claim("Hessian eigenvalue along the valley at the minimum",
                lambda s: float(curvature_of(s).min()), lo=0.0, hi=1.0))),
]
