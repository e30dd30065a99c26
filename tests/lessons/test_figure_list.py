"""The shipped list of the notes' figures (lessons/figures.csv): every figure a shipped slide
cites is in it, as a computational figure; how many computational figures have a slide; the
list is what scripts/make_figure_list.py makes from the course table (compared with the course
material where this machine has it, else the script is tried on a small table of its own);
no description repeats the caption of its figure."""
from __future__ import annotations

import os

import re
from pathlib import Path

import pytest

from scripts import make_figure_list as maker
from ui import figure_coverage as cov
from ui import figure_list
from ui import lesson_library as library
from ui.figure_list import FigureListError
from ui.topics import TOPICS_BY_SLUG

# the course material's own table, where a checkout has it beside it: DLPLAY_COURSE_TABLE
COURSE_TABLE = Path(os.environ.get("DLPLAY_COURSE_TABLE") or "/nonexistent/figures.csv")
HEADER = ("id,notes_file,section,what_it_shows,app_page,app_tab,settings,status,"
          "status_detail,new_page_topic,fidelity,line\n")
SMALL_TABLE = HEADER + (
    '004:Fig2.16,004.txt,2.6 Conditioning,"a zigzag path, on a narrow valley",'
    "gradient_descent (Gradient descent & the optimizer race),race,,reproducible now,,,"
    "same kind of figure,900\n"
    "004:Fig2.5,004.txt,2.3 Steps,a step too large,gradient_descent (GD),race,,"
    "needs a small addition,,,toy analog,700\n"
    "004:Fig1.1,004.txt,1.1 Intro,photos of churches,,,,not computational,photos,,,10\n"
    "001:L849,001.txt,Module 2,a path of a new method,,,,needs a new page,,"
    "Normalizing flows,,849\n"
    "004:Fig13.25,004.txt,13 Zero-shot,zero-shot classification with CLIP,,,,"
    "not computational,diagram,,,5000\n")


def _cited() -> dict[str, list[cov.Citation]]:
    return cov.citations(library.outlines())


def test_every_cited_figure_is_a_computational_figure_of_the_list():
    figures = {f.id: f for f in figure_list.load()}
    cited = _cited()
    assert cited
    assert not cov.unlisted(figures.values(), cited), "slides cite figures the list lacks"
    assert all(figures[fid].computational for fid in cited)


def test_count_of_computational_figures_with_a_slide():
    figures = figure_list.load()
    entries = cov.coverage(figures, _cited(), TOPICS_BY_SLUG)
    n = cov.counts(entries)
    assert len(entries) == sum(f.computational for f in figures) == sum(n.values())
    assert n[cov.SLIDE] == len(_cited())          # every cited figure is listed (above)
    assert n[cov.SLIDE] >= 100 and n[cov.PAGE] + n[cov.NOT_YET] > 0
    print(f"{n[cov.SLIDE]} of {len(entries)} computational figures have a slide, "
          f"{n[cov.PAGE]} a page without a slide, {n[cov.NOT_YET]} not yet")


def test_every_page_of_the_list_is_a_page_of_the_app_or_a_topic_to_write():
    for fig in figure_list.load():
        if not fig.computational:
            assert fig.page == "", fig.id
            continue
        assert fig.page, fig.id
        if re.fullmatch(r"[a-z0-9_]+", fig.page):      # a slug: not a misspelt one
            assert fig.page in TOPICS_BY_SLUG or fig.page in maker.TOPIC_PAGES.values(), \
                (fig.id, fig.page)


def test_the_list_stays_small():
    assert figure_list.FIGURE_LIST.stat().st_size < 100_000


@pytest.mark.skipif(not COURSE_TABLE.is_file(), reason="the course material is not here")
def test_the_shipped_list_is_what_the_script_makes_from_the_course_table():
    shipped = figure_list.FIGURE_LIST.read_text(encoding="utf-8")
    assert maker.make(COURSE_TABLE) == shipped, \
        "run: python -m scripts.make_figure_list $DLPLAY_COURSE_TABLE"


def test_the_script_on_a_small_table(tmp_path, capsys):
    source, out = tmp_path / "course.csv", tmp_path / "figures.csv"
    source.write_text(SMALL_TABLE, encoding="utf-8")
    assert maker.main([str(source), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert maker.make(source) == text                  # the same bytes every time
    figures = figure_list.load(out)
    assert [f.id for f in figures] == ["001:L849", "004:Fig1.1", "004:Fig2.5", "004:Fig2.16",
                                       "004:Fig13.25"]
    by_id = {f.id: f for f in figures}
    assert by_id["004:Fig2.16"].page == "gradient_descent"
    assert by_id["004:Fig2.16"].shows == "a zigzag path, on a narrow valley"
    assert by_id["001:L849"].page == maker.TOPIC_PAGES["Normalizing flows"] == "flows"
    assert by_id["001:L849"].computational
    assert not by_id["004:Fig1.1"].computational and by_id["004:Fig1.1"].page == ""
    assert by_id["004:Fig13.25"].shows == maker.REWORDED["004:Fig13.25"]
    assert maker.main([str(source), "--out", str(out), "--check"]) == 0
    out.write_text(text.replace("zigzag", "zig-zag"), encoding="utf-8")
    assert maker.main([str(source), "--out", str(out), "--check"]) == 1
    assert "differs" in capsys.readouterr().out


@pytest.mark.parametrize("table,words", [
    ("id,section\n004:Fig1.1,x\n", "no column"),
    (HEADER + "004:Figure1,004.txt,s,w,,,,not computational,,,,1\n", "not a figure id"),
    (HEADER + "004:Fig1.1,f,s,w,,,,not computational,,,,1\n" * 2, "appears twice"),
])
def test_the_script_refuses_a_bad_table(tmp_path, capsys, table, words):
    source = tmp_path / "course.csv"
    source.write_text(table, encoding="utf-8")
    assert maker.main([str(source), "--out", str(tmp_path / "out.csv")]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


def test_figure_ids_follow_the_slides_sources():
    assert figure_list.figure_id("004", "2.16") == "004:Fig2.16"
    assert figure_list.figure_id("001", "L3817") == "001:L3817"
    assert figure_list.figure_id("000", "L342a") == "000:L342a"
    fig = figure_list.Figure("004:Fig2.16", "004", "", "", True, "gradient_descent")
    assert fig.figure == "2.16"


@pytest.mark.parametrize("content,words", [
    (None, "is missing"),
    (b"id,notes,section,shows,computational\n", "has no column page"),
    (b"id,notes,section,shows,computational,page\n", "lists no figure"),
    (b"id,notes,section,shows,computational,page\n004:Fig1.1,004,s,w,maybe,\n",
     "not yes or no"),
    (b"id,notes,section,shows,computational,page\n004:Fig1.1,003,s,w,no,\n",
     "does not start with its notes"),
    (b"id,notes,section,shows,computational,page\n" + b"004:Fig1.1,004,s,w,no,\n" * 2,
     "appears twice"),
    (b"\xff\xfe not text", "not UTF-8"),
])
def test_a_bad_list_file_says_why(tmp_path, content, words):
    path = tmp_path / "figures.csv"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(FigureListError, match=words):
        figure_list.load(path)


def _longest_shared_run(words: list[str], text: str) -> int:
    """The most consecutive words of `words` that appear together in `text`."""
    padded, best = f" {text} ", 0
    for i in range(len(words)):
        for j in range(i + best + 1, len(words) + 1):
            if f" {' '.join(words[i:j])} " not in padded:
                break
            best = j - i
    return best


@pytest.mark.skipif(not COURSE_TABLE.is_file(), reason="the course material is not here")
def test_no_description_repeats_its_caption():
    """A description shares at most two consecutive words, or less than half its words in a
    row, with the caption of its figure in notes 004."""
    notes = next((COURSE_TABLE.parent / "notes").glob("004_*.txt")).read_text(encoding="utf-8")
    captions = {f"004:Fig{n}": " ".join(re.findall(r"\w+", text.lower()))
                for n, text in re.findall(r"Figure (\d+\.\d+):(.*)", notes)}
    checked = 0
    for fig in figure_list.load():
        if fig.id not in captions:
            continue
        words = re.findall(r"\w+", fig.shows.lower())
        run = _longest_shared_run(words, captions[fig.id])
        assert run < 3 or run < len(words) / 2, (fig.id, fig.shows)
        checked += 1
    assert checked > 250
