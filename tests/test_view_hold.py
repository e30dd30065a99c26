"""A tab opened by a callback (a preset, "Show me", a lesson slide) is held for a moment
against a browser message that still names the tab shown before (ui.page_keys)."""
from __future__ import annotations

from ui.page_keys import VIEW_HOLD_S, asked_view_key, hold_asked_view, view_key

SLUG = "convolution"


def _asked(state: dict, at: float = 100.0) -> dict:
    """The state a Show me callback leaves: Feature maps asked while Effective field showed."""
    state[view_key(SLUG)] = "Feature maps"
    state[asked_view_key(SLUG)] = ("Feature maps", "Effective field", at)
    return state


def test_a_stale_message_naming_the_old_tab_gets_the_asked_one_back():
    state = _asked({})
    state[view_key(SLUG)] = "Effective field"           # a message sent before the switch
    hold_asked_view(state, SLUG, now=101.0)
    assert state[view_key(SLUG)] == "Feature maps"
    assert asked_view_key(SLUG) in state                 # still held: more may come


def test_the_hold_ends_after_its_time_and_when_the_user_picks_a_third_tab():
    state = _asked({})
    state[view_key(SLUG)] = "Effective field"
    hold_asked_view(state, SLUG, now=100.0 + VIEW_HOLD_S + 0.1)
    assert state[view_key(SLUG)] == "Effective field"    # too late: the user's choice stands
    assert asked_view_key(SLUG) not in state
    state = _asked({})
    state[view_key(SLUG)] = "Equivariance"               # the user clicked another tab
    hold_asked_view(state, SLUG, now=101.0)
    assert state[view_key(SLUG)] == "Equivariance"
    assert asked_view_key(SLUG) not in state


def test_the_asked_tab_itself_passes_and_nothing_asked_changes_nothing():
    state = _asked({})
    hold_asked_view(state, SLUG, now=100.5)
    assert state[view_key(SLUG)] == "Feature maps"
    plain = {view_key(SLUG): "Convolution"}
    hold_asked_view(plain, SLUG, now=0.0)
    assert plain == {view_key(SLUG): "Convolution"}
