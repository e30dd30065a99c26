"""Every claim of every preset and tour step of every page holds (ui/claims.py): the number
the text states, measured by the function the page draws from, inside its threshold."""
from __future__ import annotations

import pytest

from ui.claims import claim_line, page_claims
from ui.topics import TOPICS

CLAIMS = [c for t in TOPICS for c in page_claims(t.slug)]
# One worker runs this file under pytest-xdist (--dist loadgroup): the texts test reads the
# training claims' values that test_claim_holds memoised in the same process.
pytestmark = pytest.mark.xdist_group("claims")


@pytest.mark.parametrize("pc", [pytest.param(c, marks=pytest.mark.slow) if c.claim.slow else c
                                for c in CLAIMS], ids=lambda c: c.id)
def test_claim_holds(pc):
    value, ok = pc.claim.check(pc.settings)
    assert ok, f"{pc.id}: measured {value:.6g}, expected {pc.claim.threshold}"
    if pc.claim.live:       # the card beside the figure prints this same value
        assert f"**{pc.claim.format(value)}** ✓" in claim_line(pc.claim, pc.settings), pc.id


def test_claims_exist():
    assert len(CLAIMS) >= 10


# ---------------------------------------------------------------- texts the figure contradicted
# Each text below was false on screen; its claim now measures what the figure shows.
def _page(slug):
    from ui.claims import page_module
    return page_module(slug)


def _whats(item):
    return [c.what for c in item.claims]


def test_gradient_descent_momentum_swings_first_grow():
    from topics.gradient_descent.compute import swing_growth
    m = _page("gradient_descent")
    preset, step = m.PRESETS["Optimal momentum: faster, not smoother"], m.STEPS[3]
    s = m.STATE.resolve(preset.settings)
    assert swing_growth(s, "momentum") > 2 and swing_growth(s, "gd") <= 1
    for text in (preset.description, step.body):
        assert "smaller" not in text and "shrinks every swing" not in text and "grow" in text
    assert "heavy ball's largest distance across the valley / at the start" in _whats(step)


def test_gradient_descent_rosenbrock_newton_leaves_the_valley():
    from topics.gradient_descent.compute import peak_gap
    m = _page("gradient_descent")
    preset = m.PRESETS["Rosenbrock valley"]
    assert peak_gap(m.STATE.resolve(preset.settings), "newton") > 100
    assert "follows the curvature" not in preset.description
    assert "jumps out of the valley" in preset.description


def test_backpropagation_gradient_check_larger_h_is_to_the_right():
    """The text's 'right of each minimum (larger h) the error grows' read on the figure: h grows
    to the right and the central error at the largest h exceeds its minimum."""
    import numpy as np
    from topics.backpropagation.compute import gradcheck_of
    from topics.backpropagation.figures import gradcheck_figure
    m = _page("backpropagation")
    preset = m.PRESETS["Gradient check on the sigmoid neuron"]
    c = gradcheck_of(m.STATE.resolve(preset.settings))
    fig = gradcheck_figure(c)
    assert fig.layout.xaxis.autorange != "reversed"
    right = np.asarray(c.hs) > c.best_h["central"]
    assert np.nanmin(c.errors["central"][right]) >= c.best_error["central"]
    assert c.errors["central"][np.argmax(c.hs)] > 100 * c.best_error["central"]
    assert "(larger h) the error grows" in preset.description


def test_generalization_texts_state_only_what_the_screen_shows():
    """Dropout's boundary keeps pockets around flipped points (it read 'stays smooth'), and the
    decay view shows no unregularized run to compare ‖θ‖ with (it read 'under 0.7×')."""
    m = _page("generalization")
    assert "stays smooth" not in m.PRESETS["Dropout 0.5 narrows the gap"].description
    assert "0.7×" not in m.PRESETS["λ = 1: Adam + L2 collapses, AdamW still learns"].description


# ------------------------------------------- numbers another machine's rounding could change
# A text states a bound for what floating-point rounding can move: a value reached by training
# (a slow claim) or float round-off (a measurement two orders of magnitude under its bound).
# The claim line prints the measured value beside that bound, so the number is on screen
# whatever this machine measures.
def _texts_and_claims():
    from ui import lesson_library as library
    from ui.claims import page_module
    for t in TOPICS:
        m = page_module(t.slug)
        for name, p in m.PRESETS.items():
            yield f'{t.slug} preset "{name}"', p.description, m.STATE.resolve(p.settings), p.claims
        for i, s in enumerate(m.STEPS):
            yield f"{t.slug} step {i + 1}", s.body, m.STATE.resolve(s.settings), s.claims
    for lid in library.shipped_ids():
        for i, slide in enumerate(library.shipped(lid).slides):
            yield f"lesson {lid} slide {i + 1}", slide.text, slide.settings, slide.claims


def _stated(text, claim):
    """(number as written, its value in the claim's unit, half a unit of its last digit) of
    each number of `text` in the claim's kind (per cent or not)."""
    from tests.e2e.screen_checks import _value, numbers_in
    pct = claim.fmt == "{:.1%}"
    for token in numbers_in(text):
        if token.endswith("%") == pct:
            value, half = _value(token)
            scale = 0.01 if pct else 1.0
            yield token, value * scale, half * scale


def _is_bound(value, half, claim):
    import math
    return any(math.isfinite(b) and abs(b - value) <= half for b in (claim.lo, claim.hi))


def _literals(claims, settings, text):
    """The numbers of `text` that name a machine-dependent measurement of `claims`: the value
    of a training claim (slow) or a round-off (under a hundredth of the claim's upper bound),
    stated as a literal (the value rounded to the number's last digit) instead of as a bound.
    A bound of any of the claims, and a reference number a claim's own words name ("chance
    0.5"), are no measurement."""
    from tests.e2e.screen_checks import numbers_in
    references = {n for c in claims for n in numbers_in(c.what)}
    out = []
    for c in claims:
        value = c.check(settings)[0]
        round_off = 0 < abs(value) < c.hi / 100 if 0 < c.hi < float("inf") else False
        if not (c.slow or round_off):
            continue
        out += [f"{token} names {value:.3g} ({c.what})" for token, x, half in _stated(text, c)
                if x != 0 and abs(x - value) <= half and token not in references
                and not any(_is_bound(x, half, other) for other in claims)]
    return out


@pytest.mark.slow
def test_texts_state_bounds_for_what_rounding_moves():
    """A text states a bound for what another machine measures differently: a value reached
    by training ("passes 38%", not the "41%" one machine's run reached) or float round-off
    ("under 1e-5", not "1e-7"); the claim line prints the measured value beside that bound.
    (The training claims' values are memoised from test_claim_holds above.)"""
    bad = [f"{where}: {line}" for where, text, settings, claims in _texts_and_claims()
           for line in _literals(claims, settings, text)]
    assert not bad, "\n".join(bad)


def test_attention_real_model_states_the_sink_count_it_measures():
    """36 of 72 heads are sinks: the tab's note printed 'most of its other heads'; it prints
    the count, and the tour step that names the sinks carries the count's claim."""
    import inspect
    from topics.attention import lm_view
    m = _page("attention")
    assert "Most of its other heads" not in inspect.getsource(lm_view)
    step = next(s for s in m.STEPS if "real language model" in s.title)
    assert "heads of type sink (of 72)" in _whats(step)
    assert "many others" not in step.body


def test_vae_autoencoder_clusters_touch():
    """The autoencoder's digit clusters touch in the middle of the cloud: the texts name the
    empty space around the cloud, not gaps between the clusters."""
    m = _page("vae")
    texts = [m.PRESETS["Autoencoder: holes in the latent"].description,
             next(s for s in m.STEPS if s.title == "Take the KL away").body]
    for text in texts:
        assert "between and around" not in text and "around" in text


def test_adversarial_fgsm_step_says_the_change_is_visible():
    """On 8×8 digits the FGSM change at ε = 0.1 is plain to see; the step measures how many
    pixels move and by how much."""
    m = _page("adversarial")
    step = m.STEPS[0]
    assert "hard to spot" not in step.body and "plain to see" in step.body
    assert "pixels that move (over half of the 8×8)" in _whats(step)


def test_generalization_ridge_curve_is_named_by_its_colour_on_screen():
    """The ridge preset names its curve by the colour and legend label the figure draws."""
    from topics.generalization.compute import curves_of
    from topics.generalization.figures import double_descent_figure
    m = _page("generalization")
    preset = m.PRESETS["Ridge 0.01 removes the peak"]
    fig = double_descent_figure(curves_of(m.STATE.resolve(preset.settings)))
    trace = next(t for t in fig.data if t.name == "test, ridge 0.01")
    assert trace.line.color == "#d62728"                      # red
    assert "(the red curve, 'test, ridge 0.01'" in preset.description
    assert "orange" not in preset.description


def test_backpropagation_first_step_names_the_seed_and_the_table():
    """At backward step 0 the graph shows the seed 1 at the output and the table the final
    gradients: the step names both instead of 'nothing has been differentiated'."""
    m = _page("backpropagation")
    step = m.STEPS[0]
    assert "Nothing has been differentiated" not in step.body
    assert "dL/df = 1" in step.body and "(−4, −4, 3)" in step.body
    assert "the seed at the output, dL/df" in _whats(step)


def test_initialization_he_texts_state_the_fall_over_the_depth():
    """He's per-layer ratio is 0.97-0.98 at width 256 and the variance falls several-fold over
    50 layers: the texts state the per-layer bound and the fall, not 'keeps its size'."""
    from topics.initialization.compute import end_over_first, worst
    m = _page("initialization")
    preset = m.PRESETS["ReLU + He: a per-layer ratio near 1"]
    step = next(s for s in m.STEPS if s.title.startswith("He init"))
    assert worst(end_over_first)(m.STATE.resolve(preset.settings)) < 0.5
    for text in (preset.description, step.body):
        assert "ratio is 1 " not in text and "keeps its size" not in text
        assert "between 0.2 and 0.5" in text
    assert "Var(h_50)/Var(h_1), largest over seeds" in _whats(step)
