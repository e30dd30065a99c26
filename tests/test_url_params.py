"""A bad URL never breaks a page: every URL-bound control of every page (and the sidebar's seed)
given NaN, ±inf, 1e400, -0, huge integers, 10 kB strings and unknown names is clamped or
defaulted to a value the control accepts, and the page names what it used instead."""
from __future__ import annotations

import math

import pytest

from tests.apptest import run_app
from ui import url_check
from ui.claims import page_module
from ui.sidebar import SEED
from ui.topics import TOPICS

BAD = ["nan", "NaN", "inf", "-inf", "1e400", "-1e400", "-0", "1" * 400, "-" + "9" * 40,
       "x" * 10_000, "nosuch", "", "0x10", "true"]


def _controls():
    out = [("sidebar", SEED)]
    for t in TOPICS:
        state = page_module(t.slug).STATE
        out += [(t.slug, state[k]) for k in state if state[k].url]
    return out


CONTROLS = _controls()


def _parse(control, url):
    """The value Streamlit seeds the widget with from the URL form `url`."""
    values = url if isinstance(url, list) else [url]
    if control.kind in ("slider", "number"):
        nums = [float(v) for v in values]
        d = control.default
        is_int = isinstance(d[0] if isinstance(d, (list, tuple)) else d, int)
        nums = [int(v) if is_int else v for v in nums]
        return nums if isinstance(d, (list, tuple)) else nums[0]
    if control.kind in ("checkbox", "toggle"):
        return values[-1].lower() == "true"
    if control.kind == "text":
        return values[-1]
    by_label = {url_check._label(control, o): o for o in control.options}
    if control.kind == "multiselect" or isinstance(control.default, (list, tuple)):
        return [by_label[v] for v in values]
    return by_label[values[-1]]


def test_every_url_control_is_covered():
    assert len(CONTROLS) > 100
    assert {c.kind for _, c in CONTROLS} >= {"slider", "select_slider", "selectbox", "checkbox",
                                              "text", "number"}


@pytest.mark.parametrize("bad", BAD)
def test_every_control_clamps_or_defaults_a_bad_url_value(bad):
    for page, c in CONTROLS:
        raw = [bad, bad] if isinstance(c.default, (list, tuple)) else bad
        fixed = url_check.check_value(c, raw)
        url = raw if fixed is None else fixed
        if fixed is not None:
            assert url_check.check_value(c, fixed) is None, (page, c.key, bad, fixed)
        if c.kind == "text" and fixed is None:
            continue        # any short string is a text box's value
        value = _parse(c, url)
        assert c.valid(value), (page, c.key, bad, url, value)
        if bad in ("nan", "NaN", "inf", "-inf", "1e400", "x" * 10_000) and c.kind != "text":
            assert fixed is not None, (page, c.key, bad)
        if bad == "x" * 10_000:
            assert fixed is not None, (page, c.key)


def test_numbers_are_clamped_and_nan_defaulted():
    assert url_check.check_value(SEED, "inf") == str(SEED.hi)
    assert url_check.check_value(SEED, "1e400") == str(SEED.hi)
    assert url_check.check_value(SEED, "-inf") == "0"
    assert url_check.check_value(SEED, "nan") == "0"
    assert url_check.check_value(SEED, "12.7") == "13"
    assert url_check.check_value(SEED, "-0") is None
    assert url_check.check_value(SEED, "42") is None


def test_the_notice_names_each_parameter_and_is_plain_text():
    fixed, fixes = url_check.check([SEED], {"seed": "x" * 10_000})
    fixes += url_check.unknown(["__import__"])
    text = url_check.notice_text(fixes)
    assert "seed=xxxx" in text and "using 0" in text and "10,000 characters" in text
    assert len(text) < 300
    assert "__import__ is not a setting" in text
    assert url_check.plain("__import__") == r"\_\_import\_\_"
    assert math.isfinite(float(fixed["seed"]))


def _notices(at):
    return [w.value.replace("\\", "") for w in at.warning
            if "This link carried" in w.value]


def test_seed_inf_no_longer_breaks_the_app():
    at = run_app({"seed": "inf"})
    assert not at.exception and not at.error
    assert at.session_state["seed"] == SEED.hi
    assert any(f"seed=inf is not valid; using {SEED.hi}" in n for n in _notices(at))


PAGE_LOADS = ["gradient_descent", "gan", "backpropagation", "vae"]


@pytest.mark.parametrize("slug", PAGE_LOADS)
def test_a_page_with_every_parameter_bad_loads_and_says_so(slug):
    state = page_module(slug).STATE
    keys = [k for k in state if state[k].url]
    # nan .. -1e400; a text box gets 10 kB (a short bad text is the page's own message to give)
    query = {k: "x" * 10_000 if state[k].kind == "text" else BAD[i % 6]
             for i, k in enumerate(keys)}
    query[keys[0]] = "x" * 10_000
    query["nosuch"] = "1"
    at = run_app(query)
    at.switch_page(f"topics/{slug}/page.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    notices = _notices(at)
    assert len(notices) == 1, notices
    assert f"{keys[0]}=xxxx" in notices[0] and "nosuch is not a setting" in notices[0]
    assert len(notices[0]) < 2000
    for k, v in query.items():
        if k in state and k in at.query_params:
            assert url_check.check_value(state[k], at.query_params[k]) is None, k


def test_another_pages_parameter_is_not_a_setting_here():
    at = run_app({"gan_loss": "hinge", "gd_steps": "300"})
    at.switch_page("topics/gradient_descent/page.py")
    at.run()
    assert not at.exception and not at.error
    notices = _notices(at)
    assert len(notices) == 1 and "gan_loss is not a setting of this page" in notices[0]
    assert "gd_steps" not in notices[0] and at.query_params.get("gd_steps") == "300"
    assert "gan_loss" not in at.query_params


def test_the_notice_stays_over_reruns_until_dismissed_or_a_control_changes():
    page = "topics/gradient_descent/page.py"
    at = run_app({"gd_lmax": "nan", "nosuch": "1"}, page=page)
    first = _notices(at)
    assert len(first) == 1 and "gd_lmax=nan" in first[0] and "nosuch" in first[0]
    at.run()                                            # a rerun nobody asked for
    assert _notices(at) == first
    at.button(key=url_check.DISMISS_KEY).click().run()
    assert not _notices(at)
    at.run()
    assert not _notices(at)

    at = run_app({"gd_lmax": "nan"}, page=page)
    assert _notices(at)
    at.slider(key="gd_angle").set_value(45).run()       # the user moves a control
    assert not at.exception and not _notices(at)
