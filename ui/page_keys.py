"""The session/URL keys of a page's shared widgets, and writing a preset's or a slide's settings
into them: what the page skeleton (ui/page.py) and the lesson player both use."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import streamlit as st

# set by whoever wants a live panel's trainer replaced (the lesson player, for a slide that
# plays); the panel (live/controls.py) resets itself on its next draw
RESET_ASKED = "{key}__reset_asked"

def view_key(slug: str) -> str:
    """Session/URL key of the open view (tab) of page `slug`."""
    return f"{slug}_view"


def preset_key(slug: str) -> str:
    return f"{slug}__preset"


def tour_key(slug: str) -> str:
    return f"{slug}__tour"


def view_title(views: Sequence, key: str | None) -> str | None:
    return next((v.title for v in views if v.key == key), None)


def apply_setting(slug: str, views: Sequence, settings: Mapping[str, Any],
                  view: str | None) -> None:
    """Write a preset's/step's widget values and open its view (use from a callback)."""
    for key, value in settings.items():
        st.session_state[key] = value
    title = view_title(views, view)
    if title is not None:
        st.session_state[view_key(slug)] = title
