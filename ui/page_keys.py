"""The session/URL keys of a page's shared widgets, and writing a preset's or a slide's settings
into them: what the page skeleton (ui/page.py) and the lesson player both use."""
from __future__ import annotations

import time
from typing import Any, Mapping, MutableMapping, Sequence

import streamlit as st

# A tab opened from a callback is held this long against a browser message that still
# carries the tab the browser showed before (see hold_asked_view)
VIEW_HOLD_S = 3.0


def view_key(slug: str) -> str:
    """Session/URL key of the open view (tab) of page `slug`."""
    return f"{slug}_view"


def preset_key(slug: str) -> str:
    return f"{slug}__preset"


def tour_key(slug: str) -> str:
    return f"{slug}__tour"


def asked_view_key(slug: str) -> str:
    return f"{slug}__view_asked"


def view_title(views: Sequence, key: str | None) -> str | None:
    return next((v.title for v in views if v.key == key), None)


def apply_setting(slug: str, views: Sequence, settings: Mapping[str, Any],
                  view: str | None) -> None:
    """Write a preset's/step's widget values and open its view (use from a callback)."""
    for key, value in settings.items():
        st.session_state[key] = value
    title = view_title(views, view)
    if title is not None:
        previous = st.session_state.get(view_key(slug))
        st.session_state[view_key(slug)] = title
        if previous != title:
            st.session_state[asked_view_key(slug)] = (title, previous, time.monotonic())


def hold_asked_view(state: MutableMapping, slug: str, now: float | None = None) -> None:
    """Keep the tab a callback opened (apply_setting) for VIEW_HOLD_S seconds against a
    rerun whose widget values the browser sent before it learnt of the new tab: every
    browser message carries all widget values, so one sent in that moment (a viewport
    report, a click elsewhere) names the old tab and would close the new one. Within the
    hold, a run that finds the old tab gets the asked one back; a run that finds the asked
    tab or a third one (the user chose it) ends the hold. Call before the tabs are drawn."""
    asked = state.get(asked_view_key(slug))
    if not asked:
        return
    title, previous, at = asked
    now = time.monotonic() if now is None else now
    current = state.get(view_key(slug))
    if now - at <= VIEW_HOLD_S and current == previous:
        state[view_key(slug)] = title
    elif now - at > VIEW_HOLD_S or current not in (title, previous):
        state.pop(asked_view_key(slug), None)
