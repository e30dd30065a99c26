"""The list of the course notes' figures the project ships (lessons/figures.csv, written by
scripts/make_figure_list.py), read and checked. A slide's source = { notes, figure } names a
figure of the list by its id: notes "004", figure "2.16" is 004:Fig2.16; notes "001", figure
"L3817" (a line of notes without numbered figures) is 001:L3817."""
from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from pathlib import Path

from ui.topics import ROOT

FIGURE_LIST = ROOT / "lessons" / "figures.csv"
COLUMNS = ("id", "notes", "section", "shows", "computational", "page")
MAX_BYTES = 500_000            # the list of 377 figures is ~42 kB


class FigureListError(ValueError):
    """The list is missing or cannot be read; the message says which line and why."""


@dataclass(frozen=True)
class Figure:
    id: str                    # "004:Fig2.16" or "001:L3817"
    notes: str                 # "004"
    section: str
    shows: str                 # a short description in the project's words
    computational: bool
    page: str                  # a page slug, the topic of a page to write, or ""

    @property
    def figure(self) -> str:
        """As a slide's source names it: "2.16" or "L3817"."""
        return self.id.split(":", 1)[1].removeprefix("Fig")


def figure_id(notes: str, figure: str) -> str:
    """The list's id of the figure a slide's source names."""
    figure = figure.strip()
    return f"{notes.strip()}:" + (f"Fig{figure}" if figure[:1].isdigit() else figure)


def parse(text: str, name: str = "lessons/figures.csv") -> tuple[Figure, ...]:
    """The figures of the list's CSV text, in its order (FigureListError naming the line)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise FigureListError(f"{name} has no column {', '.join(missing)}")
    figures, seen = [], set()
    for line, row in enumerate(reader, start=2):
        values = {c: (row.get(c) or "").strip() for c in COLUMNS}
        if ":" not in values["id"] or values["id"].split(":", 1)[0] != values["notes"]:
            raise FigureListError(f"{name}, line {line}: id {values['id']!r} does not start "
                                  f"with its notes {values['notes']!r}")
        if values["computational"] not in ("yes", "no"):
            raise FigureListError(f"{name}, line {line}: computational is "
                                  f"{values['computational']!r}, not yes or no")
        if values["id"] in seen:
            raise FigureListError(f"{name}, line {line}: {values['id']} appears twice")
        seen.add(values["id"])
        figures.append(Figure(values["id"], values["notes"], values["section"],
                              values["shows"], values["computational"] == "yes",
                              values["page"]))
    if not figures:
        raise FigureListError(f"{name} lists no figure")
    return tuple(figures)


def load(path: Path | None = None) -> tuple[Figure, ...]:
    """The list at `path`, by default the shipped one (FigureListError when it is missing,
    too large or malformed)."""
    path = FIGURE_LIST if path is None else path
    try:
        stat = path.stat()
    except OSError:
        raise FigureListError(f"{_name(path)} is missing") from None
    return _load(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _load(path: Path, mtime_ns: int, size: int) -> tuple[Figure, ...]:
    name = _name(path)
    if size > MAX_BYTES:
        raise FigureListError(f"{name} has {size:,} bytes; the list may have at most "
                              f"{MAX_BYTES:,}")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError:
        raise FigureListError(f"{name} cannot be read") from None
    except UnicodeDecodeError:
        raise FigureListError(f"{name} is not UTF-8 text") from None
    try:
        return parse(text, name)
    except csv.Error as exc:
        raise FigureListError(f"{name} is not a CSV file the index can use ({exc})") from None


def _name(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name
