"""Page scaffolding: the header every page starts with, the honest "coming soon" card,
and the error boundary that turns an exception into a clear message (never a traceback)."""
from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import streamlit as st

from viz.topics import ROOT, TOPICS_BY_SLUG

log = logging.getLogger("dlplay")


def page_header(title: str, what_you_see: str, formula: str | None = None) -> None:
    """Title, the one sentence "what you will see", and the key formula (LaTeX)."""
    st.title(title)
    st.markdown(f"**What you will see.** {what_you_see}")
    if formula:
        st.latex(formula)


def coming_soon(slug: str) -> None:
    """The card a not-yet-built topic shows: what it will be, and that it is not there yet."""
    topic = TOPICS_BY_SLUG[slug]
    st.title(topic.title)
    with st.container(border=True):
        st.subheader("Coming soon")
        st.markdown(f"{topic.sentence}\n\nThis page is **not built yet**: nothing on it is "
                    f"computed so far, so it shows no demo rather than a fake one. "
                    f"It is planned in issue #{topic.issue}.")
        if topic.thumbnail.exists():
            st.image(str(topic.thumbnail), width=320)
    with contextlib.suppress(Exception):  # no navigation context (a page run on its own)
        st.page_link(_home_target(), label="Back to the gallery", icon=":material/home:")


def _home_target():
    """The home page object registered by app.py (st.navigation), else the file path."""
    return st.session_state.get("_home_page", "app.py")


@contextlib.contextmanager
def user_errors(what: str):
    """Run a block; an exception becomes st.error("Could not <what>: <reason>") and is logged
    with its traceback on the server. Streamlit's rerun/stop signals pass through (they are
    BaseException, not Exception)."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the boundary is the point
        log.exception("error while trying to %s", what)
        st.error(f"Could not {what}: {exc}", icon=":material/error:")


def load_css(name: str) -> str:
    """The text of assets/<name>.css."""
    return (ROOT / "assets" / f"{name}.css").read_text(encoding="utf-8")


def inject_css(name: str) -> None:
    st.html(f"<style>{load_css(name)}</style>")
