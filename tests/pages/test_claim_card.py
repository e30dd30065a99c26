"""The card beside the figure shows each claim of the applied preset or tour step with its value
measured live on the settings on screen: the value tests/test_claims.py asserts (one function,
ui.claims.measured, computes both). A claim not measurable on that screen says so."""
from __future__ import annotations

import math

from tests.apptest import choose_preset, open_page, show_step
from ui.claims import Claim, claim_line, format_number
from ui.page_keys import preset_key, tour_key

PAGE = "topics/gradient_descent/page.py"
SLUG = "gradient_descent"


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_claim_line_states_the_measured_value_or_why_not():
    c = Claim("x", lambda s: s["a"] * 2, lo=0, hi=10)
    assert claim_line(c, {"a": 2.0}) == "x: **4** ✓ (0 to 10)"     # the bound beside it
    assert claim_line(Claim("r", lambda s: 0.91, lo=0.85, fmt="{:.0%}"), {}) == "r: **91%** ✓ (≥ 85%)"
    assert claim_line(Claim("w", lambda s: 1.0, lo=0.5, fmt=lambda v: "yes"), {}) == "w: **yes** ✓"
    assert "✗" in claim_line(c, {"a": 6.0}) and "**12**" in claim_line(c, {"a": 6.0})
    assert "press Show me" in claim_line(c, None)
    assert "not measurable" in claim_line(Claim("y", lambda s: 1 / 0), {"a": 1})
    slow = claim_line(Claim("z", lambda s: 1 / 0, slow=True, needs="press Train"), {})
    assert slow == "z: *press Train*"
    trained = claim_line(Claim("gap", lambda s: 1 / 0, lo=0.15, slow=True), {})
    assert trained == "gap: *measured after training (≥ 0.15)*"     # the bound the text states
    assert Claim("p", lambda s: 0.469, fmt="{:.1%}").format(0.469) == "46.9%"
    assert format_number(1.234e-8) == "1.23e-8" and format_number(math.nan) == "nan"


def test_preset_card_lists_each_claim_with_the_value_the_test_asserts():
    from topics.gradient_descent.page import PRESETS, STATE
    name = "κ = 50: the zigzag"
    at = choose_preset(open_page(PAGE), SLUG, name)
    text = _markdown(at)
    for c in PRESETS[name].claims:
        value, ok = c.check(STATE.resolve(PRESETS[name].settings))
        assert ok and f"{c.what}: **{c.format(value)}** ✓" in text, (c.what, text)


def test_step_card_measures_only_once_its_settings_are_on_screen():
    from topics.gradient_descent.page import STATE, STEPS
    at = open_page(PAGE)
    at.session_state[tour_key(SLUG)] = 2
    at.run()
    assert "press Show me to measure it" in _markdown(at)
    at = show_step(at, SLUG, 2)
    c = STEPS[2].claims[0]
    value = c.check(STATE.resolve(STEPS[2].settings))[0]
    assert f"**{c.format(value)}** ✓" in _markdown(at)


def test_a_tour_step_clears_the_preset_picker():
    at = choose_preset(open_page(PAGE), SLUG, "κ = 50: the zigzag")
    assert at.selectbox(key=preset_key(SLUG)).value == "κ = 50: the zigzag"
    at.button(key=f"{tour_key(SLUG)}__start").click().run()
    assert at.selectbox(key=preset_key(SLUG)).value is None


def test_no_preset_is_chosen_at_first_paint_and_choosing_one_sets_the_widgets():
    from topics.gradient_descent.page import PRESETS, STATE
    from ui.widgets import CHOOSE
    at = open_page(PAGE)
    box = at.selectbox(key=preset_key(SLUG))
    assert box.value is None and box.placeholder == CHOOSE
    assert list(box.options) == list(PRESETS)
    name = next(iter(PRESETS))
    at = choose_preset(at, SLUG, name)
    for key, value in PRESETS[name].settings.items():
        assert STATE.resolve(PRESETS[name].settings)[key] == value
        assert at.session_state[key] == value, key


def test_on_the_projector_the_measured_numbers_come_before_the_words():
    """A long step text pushed its claim list under the fold of the projector: in classroom
    mode the card lists the claims first; on a laptop the words come first."""
    from topics.gradient_descent.page import STEPS
    for classroom, claims_first in (("1", True), (None, False)):
        at = show_step(open_page(PAGE, {"classroom": classroom} if classroom else None), SLUG, 2)
        texts = [m.value for m in at.markdown]
        body = texts.index(STEPS[2].body)
        claims = next(i for i, t in enumerate(texts) if t.startswith("- ") and "✓" in t)
        assert (claims < body) == claims_first, texts
