"""Where lessons come from: the shipped files lessons/<id>.toml, and a teacher's uploaded file
(kept in the session). Each is validated (ui/lesson_format.py) against the page modules it
names, imported lazily without drawing them."""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Iterator, Mapping

from ui.claims import page_module
from ui.lesson_format import ID_PATTERN, Lesson, LessonError, parse, validate
from ui.lesson_measures import MEASURES
from ui.topics import ROOT, TOPICS_BY_SLUG

LESSON_DIR = ROOT / "lessons"
UPLOADED_KEY = "_lesson_uploaded"         # session key of a teacher's validated Lesson
UPLOAD_PREFIX = "my-"                     # uploaded lesson ids: never shadow a shipped one

log = logging.getLogger("dlplay")


class PageModules(Mapping[str, Any]):
    """slug -> topics/<slug>/page.py module (STATE, VIEWS, PRESETS, STEPS), imported on first
    use: a lesson about two pages imports two pages."""

    def __getitem__(self, slug: str):
        if slug not in TOPICS_BY_SLUG:
            raise KeyError(slug)
        return _page_module(slug)

    def __iter__(self) -> Iterator[str]:
        return iter(TOPICS_BY_SLUG)

    def __len__(self) -> int:
        return len(TOPICS_BY_SLUG)


@functools.cache
def _page_module(slug: str):
    if slug not in TOPICS_BY_SLUG:
        raise KeyError(slug)
    return page_module(slug)


PAGES = PageModules()


def shipped_ids() -> list[str]:
    """The ids of the shipped lessons, in file-name order (a number prefix orders them)."""
    return sorted(p.stem for p in LESSON_DIR.glob("*.toml") if ID_PATTERN.match(p.stem))


@functools.cache
def shipped(lesson_id: str) -> Lesson:
    """The shipped lesson `lesson_id` (LessonError when missing or invalid)."""
    path = LESSON_DIR / f"{lesson_id}.toml"
    name = f"lessons/{lesson_id}.toml"
    if not ID_PATTERN.match(lesson_id) or not path.is_file():
        raise LessonError(name, "no such lesson")
    return validate(parse(path.read_bytes(), name), name, lesson_id, PAGES, MEASURES)


def from_upload(data: bytes, filename: str) -> Lesson:
    """A teacher's lesson file, validated like a shipped one; its id is my-<file stem>."""
    stem = Path(filename or "lesson.toml").stem.lower()
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in stem)[:40] or "lesson"
    lesson_id = UPLOAD_PREFIX + stem.strip("-_") if stem.strip("-_") else UPLOAD_PREFIX + "lesson"
    return validate(parse(data, filename or "upload"), filename or "upload", lesson_id, PAGES,
                    MEASURES)


def find(lesson_id: str, session: Mapping[str, Any] | None = None) -> Lesson:
    """A shipped lesson, or the session's uploaded one (ids starting with my-)."""
    if lesson_id.startswith(UPLOAD_PREFIX):
        uploaded = (session or {}).get(UPLOADED_KEY)
        if isinstance(uploaded, Lesson) and uploaded.id == lesson_id:
            return uploaded
        raise LessonError(lesson_id, "this uploaded lesson is not in this browser session any "
                                     "more: upload the file again from the gallery")
    return shipped(lesson_id)


@functools.cache
def outline(lesson_id: str) -> dict:
    """A shipped lesson's parsed table, without importing the pages it names (what the gallery
    and the figure index list; tests/lessons/ validates every shipped file in full)."""
    name = f"lessons/{lesson_id}.toml"
    return parse((LESSON_DIR / f"{lesson_id}.toml").read_bytes(), name)


def outlines() -> dict[str, dict]:
    """{lesson id: outline} of every shipped lesson that parses."""
    out = {}
    for lesson_id in shipped_ids():
        try:
            out[lesson_id] = outline(lesson_id)
        except LessonError:
            log.exception("shipped lesson %s does not parse", lesson_id)
    return out


