"""Every set of course notes a shipped slide cites is named, on the figure index page and in
docs/LESSONS.md, so that "notes 004, Figure 2.2" can be looked up."""
from pathlib import Path

from ui import figure_index as index
from ui import lesson_library as library

ROOT = Path(__file__).resolve().parents[2]


def _cited() -> set[str]:
    return {r["notes"] for r in index.figure_rows(library.outlines())}


def test_every_cited_set_of_notes_is_named_on_the_figure_index():
    cited = _cited()
    assert cited and cited <= set(index.COURSE_NOTES)
    rows = index.figure_rows(library.outlines())
    assert all(r["course"] == index.COURSE_NOTES[r["notes"]][0] for r in rows)


def test_every_cited_set_of_notes_is_named_in_the_lessons_doc():
    doc = (ROOT / "docs" / "LESSONS.md").read_text()
    table = doc.split("## The course notes", 1)[1].split("\n## ", 1)[0]
    for notes in _cited():
        assert f"\n| {notes} | " in table, notes
