"""The card beside the figure shows each claim of the applied preset or tour step with its value
measured live on the settings on screen: the value tests/test_claims.py asserts (one function,
ui.claims.measured, computes both). A claim not measurable on that screen says so."""
from __future__ import annotations

import math

import pytest

from tests.apptest import choose_preset, open_page, show_step
from ui.claims import Claim, claim_line, format_number
from ui.page_keys import preset_key, tour_key

PAGE = "topics/gradient_descent/page.py"
SLUG = "gradient_descent"


def _block_markdown(node, key: str, inside: bool = False) -> list[str]:
    """The markdown texts inside the container keyed `key` (its id ends with the key)."""
    out = []
    for child in getattr(node, "children", {}).values():
        proto = getattr(child, "proto", None)
        here = inside or str(getattr(proto, "id", "")).endswith(f"-{key}")
        if here and child.type == "markdown":
            out.append(child.value)
        out += _block_markdown(child, key, here)
    return out


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


def test_the_words_come_first_and_the_claim_lines_after_in_their_own_compact_block():
    """With three or more claims a card that listed its claims first pushed the preset's own
    words under the projector's fold: the words come first on every screen, the claim lines
    follow in the block that assets/classroom.css sets in a smaller type."""
    from topics.gradient_descent.page import STEPS
    from ui.page import CLAIMS_KEY, load_css
    for query in ({"classroom": "1"}, None):
        at = show_step(open_page(PAGE, query), SLUG, 2)
        texts = [m.value for m in at.markdown]
        body = texts.index(STEPS[2].body)
        claims = next(i for i, t in enumerate(texts) if t.startswith("- ") and "✓" in t)
        assert body < claims, texts
        assert texts[claims] in _block_markdown(at._tree, CLAIMS_KEY), "in their own block"
    css = load_css("classroom")
    assert f".st-key-{CLAIMS_KEY}" in css and "font-size: 0.95rem" in css


@pytest.mark.slow
def test_a_trained_claim_reads_the_live_run_once_it_reaches_the_claims_iteration():
    """A slow claim with `run` (ui.claims.OnRun): before its iteration the card says how far the
    run on screen is; once the run has passed it, the line prints the value that run logged
    there (the trainer's own history) with its mark, not "measured after training"."""
    from topics.generalization.page import PRESETS
    name = "No regularization overfits the noisy moons"
    gen = "topics/generalization/page.py"
    at = choose_preset(open_page(gen), "generalization", name)
    claims = PRESETS[name].claims
    assert all(c.run is not None for c in claims)
    before = _markdown(at)
    assert "measured after training" not in before
    assert f"{claims[0].what}: *this run: 0 / 1,000 iterations" in before, before
    at.button(key="gen_overfit__to1000").click().run()
    assert not at.exception
    history = at.session_state["gen_overfit__trainer"].history
    text = _markdown(at)
    for c in claims:
        step, value = c.run.read(at.session_state["gen_overfit__view"])
        assert step == 1000
        mark = "✓" if c.lo <= value <= c.hi else "✗"
        assert f"{c.what} · *this run, iteration 1,000*: **{c.format(value)}** {mark}" in text, text
    train, val = (history.as_arrays(m)[1][list(history.as_arrays(m)[0]).index(1000)]
                  for m in ("train_acc", "val_acc"))
    assert f"**{claims[2].format(train - val)}**" in text      # the gap: train − val at 1,000


def test_a_run_line_before_and_after_the_iteration():
    from engine.training import History
    from ui.claims import OnRun, run_line
    h = History()
    for step in range(0, 40, 10):
        h.log(step, {"a": step / 100, "b": 0.05})
    c = Claim("a − b at 25", lambda s: 1 / 0, lo=0.1, slow=True,
              run=OnRun(25, ("a", "b"), lambda a, b: a - b))

    class View:
        def __init__(self, steps):
            self.steps, self.history = steps, h

        def snapshot(self):
            return [self.steps / 10, 7.0]
    assert run_line(c, None) == "a − b at 25: *this run: 0 / 25 iterations (≥ 0.1)*"
    assert run_line(c, View(20)) == "a − b at 25: *this run: 20 / 25 iterations (≥ 0.1)*"
    # the last point logged up to 25 (what a run stopped at 25 shows): iteration 20
    assert run_line(c, View(30)) == "a − b at 25 · *this run, iteration 20*: **0.15** ✓ (≥ 0.1)"
    assert "✗" in run_line(Claim("a", lambda s: 0, hi=0.05, slow=True, run=OnRun(15, ("a",))),
                           View(30))
    assert "not logged" in run_line(Claim("c", lambda s: 0, run=OnRun(5, ("c",))), View(30))
    kept = Claim("k", lambda s: 0, lo=6, run=OnRun(25, snapshot=lambda snap: snap[1]))
    assert run_line(kept, View(30)) == "k · *this run, iteration 25*: **7** ✓ (≥ 6)"
