"""Lessons outside the player: their list in the gallery (with a teacher's upload), the
"Add this view to my lesson" builder in the sidebar of every page, and the link to a slide
(the figure index page is ui/figure_index.py)."""
from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import streamlit as st

from ui import lesson_library as library
from ui.lesson_format import MAX_BYTES, LessonError
from ui.lesson_toml import lesson_text
from ui.live_keys import live_keys
from ui.live_tabs import live_tabs
from ui.topics import TOPICS_BY_SLUG

DRAFT_KEY = "_lesson_draft"        # the slides a teacher collected with "Add this view"
UPLOAD_KEY = "lesson_upload"


def slide_link(lesson_id: str, index: int, classroom: bool = False) -> str:
    """The relative URL of slide `index` (from 0): the home page forwards to its page; in
    classroom mode the link keeps it (classroom=1)."""
    return f"./?lesson={lesson_id}&slide={index + 1}" + ("&classroom=1" if classroom else "")


# ------------------------------------------------------------------------------ gallery
def gallery_section() -> None:
    """The shipped lessons (title, slide count, pages, a link to slide 1) and the upload."""
    st.markdown("### Lessons")          # a heading, not a topic section (st.subheader)
    st.caption("A lesson is a sequence of live figures across the pages, in the order of a "
               "lecture. Next/Previous (or → ← Page Down Page Up, as a presenter's clicker "
               "sends) move between slides; the URL names the slide on screen.")
    rows = [{"lesson": les.get("title", lid), "slides": len(les.get("slides", [])),
             "pages": ", ".join(dict.fromkeys(_page_title(s) for s in les.get("slides", []))),
             "open": slide_link(lid, 0)} for lid, les in library.outlines().items()]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                     column_config={"open": st.column_config.LinkColumn(
                         "open", display_text="Play slide 1")})
    _upload()


def _upload() -> None:
    with st.expander("Play your own lesson file", key="lesson_upload_box"):
        st.caption("A TOML file in the format of the shipped lessons (the repository's "
                   "lessons/ folder); it is checked like them and stays in this browser "
                   "session. Build one with “Add this view to my lesson” in any page's sidebar.")
        up = st.file_uploader("Lesson file (.toml)", type=["toml"], key=UPLOAD_KEY)
        if up is None:
            return
        try:
            if up.size > MAX_BYTES:
                raise LessonError(up.name, f"the file has {up.size:,} bytes; a lesson may "
                                           f"have at most {MAX_BYTES:,}")
            lesson = library.from_upload(up.getvalue(), up.name)
        except LessonError as exc:
            st.error(f"This lesson cannot be played: {exc}", icon=":material/error:")
            return
        st.session_state[library.UPLOADED_KEY] = lesson
        st.success(f"“{lesson.title}”: {len(lesson.slides)} slides, all valid.",
                   icon=":material/check_circle:")
        st.button("Play it", key="lesson_play_upload", icon=":material/play_arrow:",
                  type="primary", on_click=_play, args=(lesson.id,),
                  help="Opens slide 1 in this tab (the file stays in this browser session).")


def _play(lesson_id: str) -> None:
    """In this tab and session (a link would open a new session without the upload): the URL
    names slide 1 and the gallery forwards to its page on the rerun."""
    st.query_params["lesson"] = lesson_id
    st.query_params["slide"] = "1"


# ------------------------------------------------------------------------------ builder
def builder(slug: str, state, views: Sequence[Any]) -> None:
    """Sidebar: add the page's current view (tab, changed controls and, on a trained live tab,
    `train = <its iteration>`) to the draft lesson, and download the draft as a lesson file."""
    from ui.page_keys import view_key
    draft: list[dict] = st.session_state.setdefault(DRAFT_KEY, [])

    def add() -> None:
        title = st.session_state.get(view_key(slug))
        view = next((v for v in views if v.title == title), views[0])
        changed = {k: state.value(k) for k, c in state.items()
                   if c.url and state.value(k) != c.default}
        row = {"page": slug, "title": f"{TOPICS_BY_SLUG[slug].title}: {view.title}",
               "text": "What to look at on this slide (write it in your words).",
               "tab": view.key, "settings": _plain(changed)}
        trained = _trained_steps(slug, view.key)
        if trained:                 # the figure on screen was trained: the slide trains to it
            row["train"] = trained
        draft.append(row)

    with st.sidebar.expander(f"My lesson ({len(draft)} slides)", key="lesson_builder"):
        st.button("Add this view to my lesson", key="lesson_add", on_click=add,
                  icon=":material/add:", width="stretch",
                  help="Keeps this page, its open tab and every control you changed.")
        if draft:
            st.download_button("Download my lesson", lesson_text("My lesson", draft),
                               file_name="my-lesson.toml", mime="application/toml",
                               key="lesson_download", icon=":material/download:",
                               width="stretch", on_click="ignore")
            st.button("Start over", key="lesson_clear", on_click=draft.clear,
                      width="stretch")


def _trained_steps(slug: str, tab: str) -> int:
    """Iterations the tab's live trainer shows now (the last view its panel drew, kept by
    live/controls.py at "<key>__view"), at most what a slide may train; 0 without training."""
    live = live_tabs().get((slug, tab))
    if live is None:
        return 0
    steps = int(getattr(st.session_state.get(live_keys(live.key).view), "steps", 0) or 0)
    return min(steps, live.train_max)


def _plain(values: dict) -> dict:
    """Settings as TOML can hold them (tuples become lists, numpy scalars Python numbers)."""
    out = {}
    for k, v in values.items():
        if isinstance(v, tuple):
            v = list(v)
        if hasattr(v, "item"):
            v = v.item()
        out[k] = v
    return out


def _page_title(slide: dict) -> str:
    topic = TOPICS_BY_SLUG.get(slide.get("page"))
    return topic.title if topic else str(slide.get("page"))
