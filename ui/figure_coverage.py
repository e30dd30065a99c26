"""How far the app reproduces each computational figure of the notes' list (ui/figure_list.py):
a shipped slide cites it, a page draws it but no shipped slide cites it, or not yet."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping

from ui.figure_list import Figure, figure_id

SLIDE, PAGE, NOT_YET = "a slide", "a page without a slide", "not yet"
STATUSES = (SLIDE, PAGE, NOT_YET)


@dataclass(frozen=True)
class Citation:
    lesson: str                # lesson id
    index: int                 # slide index, from 0
    title: str                 # the slide's title


@dataclass(frozen=True)
class Coverage:
    figure: Figure
    status: str                # one of STATUSES
    slides: tuple[Citation, ...] = ()


def citations(outlines: Mapping[str, dict]) -> dict[str, list[Citation]]:
    """{figure id: the slides citing it, in lesson and slide order} of parsed lesson tables."""
    cited: dict[str, list[Citation]] = {}
    for lesson_id, table in outlines.items():
        for i, slide in enumerate(table.get("slides", [])):
            src = slide.get("source") if isinstance(slide, dict) else None
            if not isinstance(src, dict) or not {"notes", "figure"} <= set(src):
                continue
            fid = figure_id(str(src["notes"]), str(src["figure"]))
            cited.setdefault(fid, []).append(Citation(lesson_id, i, str(slide.get("title", ""))))
    return cited


def coverage(figures: Iterable[Figure], cited: Mapping[str, list[Citation]],
             pages: Iterable[str]) -> list[Coverage]:
    """One entry per computational figure, in the list's order: SLIDE when a slide cites it,
    PAGE when its page is one of `pages` (the app's page slugs), else NOT_YET."""
    pages = set(pages)
    out = []
    for fig in figures:
        if not fig.computational:
            continue
        slides = tuple(cited.get(fig.id, ()))
        status = SLIDE if slides else PAGE if fig.page in pages else NOT_YET
        out.append(Coverage(fig, status, slides))
    return out


def counts(entries: Iterable[Coverage]) -> dict[str, int]:
    """{status: number of figures}, every status present."""
    n = Counter(e.status for e in entries)
    return {s: n.get(s, 0) for s in STATUSES}


def unlisted(figures: Iterable[Figure], cited: Mapping[str, list[Citation]]) -> list[str]:
    """The figure ids slides cite that the list does not hold, sorted."""
    known = {f.id for f in figures}
    return sorted(set(cited) - known)
