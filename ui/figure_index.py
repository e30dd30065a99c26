"""The figure index page: every computational figure of the course notes' list
(lessons/figures.csv) with how the app reproduces it (a slide, a page without a slide, not yet),
searchable, each reproduced one linking to its slide; and every slide that cites a figure."""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from ui import figure_coverage as cov
from ui import lesson_library as library
from ui import session, viewport
from ui.figure_list import FigureListError, load
from ui.lesson_format import Source
from ui.lesson_gallery import slide_link
from ui.topics import TOPICS_BY_SLUG

# The course notes a slide's `source = { notes = "004", ... }` cites, as the notes name
# themselves (docs/LESSONS.md): id -> (short name for the table, full reference).
COURSE_NOTES = {
    "000": ("Böhmer, TU Delft, 2023",
            "CS4400 Deep Reinforcement Learning, lecture 4: Generalization; Wendelin Böhmer, "
            "TU Delft, 28 November 2023 (slides)"),
    "001": ("Krawiec, Poznan, 2019-2024",
            "Deep Learning (Uczenie głębokie); Krzysztof Krawiec, Poznan University of "
            "Technology, 2019-2024 (course slides, modules 0-10)"),
    "002": ("Lelarge, Vie, Scaman, ENS",
            "Deep Learning, class notes by Antoine Groudiev of the lectures of Marc Lelarge, "
            "Jill-Jênn Vie and Kevin Scaman, Computer Science Department, ENS Ulm (year not "
            "stated)"),
    "003": ("Scaman, Mathematics of DL",
            "Mathematics of Deep Learning, lesson 3: Structure of ReLU networks and group "
            "invariances; Kevin Scaman (slides; institution and year not stated)"),
    "004": ("Ilin, Aalto, 2023",
            "Deep Learning, lecture notes of course CS-E4890; Alexander Ilin, Aalto "
            "University, 2023 (the main reference)"),
}
ALL = "all"
# Both tables are TABLE_PX wide, their columns' widths summed: in classroom mode the CSS
# zooms a table by 1.3 (assets/classroom.css), and a stretched table would then overflow a
# 1280 px projector, while 840 px zoomed still fits beside the page's margins.
TABLE_PX = 840
# the projector: what lies above the table (title, the counts, the notes' expander, the
# search row), so that the whole table is on the first screen
ABOVE_TABLE_PX = 290
MIN_TABLE_PX = 200
TABLE_ZOOM = 1.3        # assets/classroom.css draws tables 1.3x on the projector
STATUS_COLUMNS = ("cited", "shows", "page", "status", "open")
SLIDE_COLUMNS = ("notes", "figure", "slide", "lesson", "open")


def _page_title(slug: str) -> str:
    topic = TOPICS_BY_SLUG.get(slug)
    return topic.title if topic else slug


def _figure_label(source: Source) -> str:
    return source.label.split(", ", 1)[1]          # "Figure 2.16" or "L3817"


def figure_rows(outlines: dict[str, dict], classroom: bool = False) -> list[dict]:
    """One row per (figure, slide) of the shipped lessons, in notes and figure order."""
    rows = []
    for lid, les in outlines.items():
        for i, s in enumerate(les.get("slides", [])):
            src = s.get("source") if isinstance(s, dict) else None
            if not isinstance(src, dict) or not {"notes", "figure"} <= set(src):
                continue
            source = Source(str(src["notes"]), str(src["figure"]))
            rows.append({"notes": source.notes,
                         "course": COURSE_NOTES.get(source.notes, ("",))[0],
                         "figure": _figure_label(source),
                         "chapter": _chapter(source.figure), "slide": s.get("title", ""),
                         "page": _page_title(str(s.get("page"))), "lesson": les.get("title", lid),
                         "open": slide_link(lid, i, classroom), "_key": _sort_key(source)})
    rows.sort(key=lambda r: r.pop("_key"))
    return rows


def status_rows(entries: list[cov.Coverage], classroom: bool = False) -> list[dict]:
    """One row per computational figure: its status, and a link to the first slide citing it
    (empty without one)."""
    rows = []
    for e in entries:
        fig = e.figure
        source = Source(fig.notes, fig.figure)
        first = e.slides[0] if e.slides else None
        rows.append({"cited": f"{fig.notes} {fig.figure}",
                     "notes": fig.notes, "figure": _figure_label(source),
                     "chapter": _chapter(source.figure), "shows": fig.shows,
                     "page": _page_title(fig.page) if fig.page in TOPICS_BY_SLUG
                     else f"new: {fig.page}" if fig.page else "",
                     "status": e.status, "section": fig.section,
                     "open": slide_link(first.lesson, first.index, classroom) if first else ""})
    return rows


def _chapter(figure: str) -> str:
    m = re.match(r"^(\d+)\.", figure)
    return m.group(1) if m else ""


def _sort_key(source) -> tuple:
    nums = [int(n) for n in re.findall(r"\d+", source.figure)]
    return (source.notes, nums, source.figure)


def figure_index() -> None:
    """The figure index page."""
    st.title("Figures of the course notes, live")
    classroom = session.classroom()
    outlines = library.outlines()
    slides = figure_rows(outlines, classroom)
    try:
        figures = load()
    except FigureListError as exc:
        st.warning(f"The list of the notes' figures cannot be shown: {exc}. The slides that "
                   "cite a figure are listed below.", icon=":material/warning:")
        entries = []
    else:
        entries = cov.coverage(figures, cov.citations(outlines), TOPICS_BY_SLUG)
    if entries:
        n = cov.counts(entries)
        st.caption(f"**{n[cov.SLIDE]} of {len(entries)}** computational figures of the notes "
                   f"have a slide; {n[cov.PAGE]} are drawn by a page without a slide yet; "
                   f"{n[cov.NOT_YET]} not yet. Search by notes (004), chapter (2) or figure "
                   "(2.5), or by words; each link opens the slide.")
    with st.expander("Which notes? 000-004 name these course notes"):
        st.markdown("\n".join(f"- **{nid}**: {full}" for nid, (_, full) in COURSE_NOTES.items()))
    # the projector: search and status filter in one row, the table sized to the screen
    search, status = (st.columns(2, vertical_alignment="bottom") if classroom
                      else (st.container(), st.container()))
    query = search.text_input("Search", key="figure_search",
                              placeholder="e.g. 004 2.5, momentum", max_chars=100)
    height = (max(MIN_TABLE_PX, int((viewport.height() - ABOVE_TABLE_PX) / TABLE_ZOOM))
              if classroom else "auto")
    if entries:
        _status_table(status_rows(entries, classroom), query, status, height)
        if classroom:       # the zoomed table overflows its box: keep what follows clear
            st.html(f'<div style="height:{int(height * (TABLE_ZOOM - 1))}px"></div>')
    with st.expander(f"Every slide that cites a figure ({len(slides)})", expanded=not entries):
        shown = [r for r in slides if _matches(r, query)]
        if shown:
            st.dataframe(pd.DataFrame(shown), hide_index=True, width=TABLE_PX,
                         column_order=SLIDE_COLUMNS,
                         column_config={
                             "notes": st.column_config.TextColumn("notes", width=60),
                             "figure": st.column_config.TextColumn("figure", width=100),
                             "slide": st.column_config.TextColumn("slide", width=340),
                             "lesson": st.column_config.TextColumn("lesson", width=260),
                             "open": st.column_config.LinkColumn(
                                 "open", display_text="Open slide", width=80)})
        else:
            st.info("No slide matches this search.", icon=":material/search_off:")


def _status_table(rows: list[dict], query: str, filter_box, height) -> None:
    status = filter_box.radio("Show", (ALL, *cov.STATUSES), horizontal=True,
                              key="figure_status", label_visibility="collapsed")
    shown = [r for r in rows if _matches(r, query) and _has_status(r, status)]
    if not shown:
        st.info("No figure matches this search.", icon=":material/search_off:")
        return
    st.dataframe(pd.DataFrame(shown), hide_index=True, width=TABLE_PX, height=height,
                 column_order=STATUS_COLUMNS,
                 column_config={
                     "cited": st.column_config.TextColumn(
                         "figure", width=80, help="notes, then figure number or line"),
                     "shows": st.column_config.TextColumn("what it shows", width=340),
                     "page": st.column_config.TextColumn("page", width=190),
                     "status": st.column_config.TextColumn("status", width=150),
                     "open": st.column_config.LinkColumn("open", display_text="Open slide",
                                                         width=80)})


def _has_status(row: dict, status: str) -> bool:
    return status == ALL or row["status"] == status


def _matches(row: dict, query: str) -> bool:
    """Every word of `query` appears in the row (a number like 2.5 must be the figure or the
    notes or the chapter exactly, so 2.5 does not match 2.50)."""
    for word in (query or "").lower().split():
        word = word.strip(",;")
        if not word:
            continue
        if re.fullmatch(r"[\d.]+", word):
            if word not in (row["notes"], row["figure"].removeprefix("Figure "),
                            row["chapter"], row["figure"].lower()):
                return False
        elif word not in " ".join(str(v) for v in row.values()).lower():
            return False
    return True
