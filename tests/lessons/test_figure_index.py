"""The figure index page: every computational figure of the notes' list with its status and,
when a slide cites it, a link to that slide (classroom=1 kept in classroom mode); the search;
a missing list gives a plain message, never a traceback."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui import figure_coverage as cov
from ui import figure_index as index
from ui import figure_list
from ui import lesson_library as library
from ui.topics import TOPICS_BY_SLUG


def _entries() -> list[cov.Coverage]:
    outlines = library.outlines()
    return cov.coverage(figure_list.load(), cov.citations(outlines), TOPICS_BY_SLUG)


def _page():
    from ui.figure_index import figure_index
    figure_index()


def _run(classroom: bool = False) -> AppTest:
    at = AppTest.from_function(_page, default_timeout=60)
    at.session_state["classroom"] = classroom
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_figure_index_rows_and_search():
    rows = index.figure_rows(library.outlines())
    assert len(rows) == sum(len(library.shipped(i).slides) for i in library.shipped_ids())
    fig25 = [r for r in rows if index._matches(r, "004 2.5")]
    assert fig25 and all(r["figure"] == "Figure 2.5" and r["notes"] == "004" for r in fig25)
    assert not [r for r in rows if index._matches(r, "004 2.50")]
    assert all(r["chapter"] == "3" for r in rows if index._matches(r, "004 3"))
    assert [r for r in rows if index._matches(r, "momentum")]
    assert all(r["open"].startswith("./?lesson=") for r in rows)


def test_status_rows_link_the_first_slide_that_cites_the_figure():
    entries = _entries()
    rows = index.status_rows(entries)
    assert len(rows) == len(entries) == sum(f.computational for f in figure_list.load())
    for entry, row in zip(entries, rows):
        assert row["status"] == entry.status
        if entry.status == cov.SLIDE:
            first = entry.slides[0]
            assert row["open"] == f"./?lesson={first.lesson}&slide={first.index + 1}"
        else:
            assert row["open"] == ""
    line = [r for r in rows if r["figure"].startswith("L")]
    assert line and all(r["chapter"] == "" for r in line)
    assert [r for r in rows if index._matches(r, "004 2.16")][0]["figure"] == "Figure 2.16"


def test_links_keep_classroom_mode():
    rows = index.status_rows(_entries(), classroom=True)
    links = [r["open"] for r in rows if r["open"]]
    assert links and all(link.endswith("&classroom=1") for link in links)
    assert all(r["open"].endswith("&classroom=1")
               for r in index.figure_rows(library.outlines(), classroom=True))


def test_page_shows_the_counts_and_the_status_table():
    n = cov.counts(_entries())
    total = sum(n.values())
    at = _run(classroom=True)
    caption = " ".join(c.value for c in at.caption)
    assert f"**{n[cov.SLIDE]} of {total}** computational figures" in caption
    assert f"{n[cov.PAGE]} are drawn by a page without a slide" in caption
    assert f"{n[cov.NOT_YET]} not yet" in caption
    table = at.dataframe[0].value
    assert len(table) == total
    opened = table["open"][table["open"] != ""]
    assert len(opened) == n[cov.SLIDE] and opened.str.endswith("&classroom=1").all()


def test_page_filters_by_status_and_search():
    at = _run()
    at.radio(key="figure_status").set_value(cov.NOT_YET).run()
    table = at.dataframe[0].value
    assert len(table) == cov.counts(_entries())[cov.NOT_YET]
    assert set(table["status"]) == {cov.NOT_YET}
    at.radio(key="figure_status").set_value(index.ALL)
    at.text_input(key="figure_search").set_value("004 2.16").run()
    assert list(at.dataframe[0].value["figure"]) == ["Figure 2.16"]


def test_a_missing_list_gives_a_plain_message(tmp_path, monkeypatch):
    monkeypatch.setattr(figure_list, "FIGURE_LIST", tmp_path / "figures.csv")
    at = _run()
    assert any("cannot be shown" in w.value and "is missing" in w.value for w in at.warning)
    assert len(at.dataframe) == 1                   # the slides are still listed
    (tmp_path / "figures.csv").write_text("id,notes\n004:Fig1.1,004\n")
    at = _run()
    assert any("has no column" in w.value for w in at.warning)


def test_both_tables_fit_the_projector():
    """Every shown column has a width and the widths sum to TABLE_PX (zoomed x1.3 in
    classroom mode, 1,092 px of a 1280 px projector)."""
    import json
    at = _run(classroom=True)
    assert len(at.dataframe) == 2          # the status table, and the slides (an expander)
    for frame, order in zip(at.dataframe, (index.STATUS_COLUMNS, index.SLIDE_COLUMNS)):
        columns = json.loads(frame.proto.columns)
        assert list(frame.proto.column_order) == list(order)
        assert sum(columns[c]["width"] for c in order) == index.TABLE_PX
    assert index.TABLE_PX * 1.3 <= 1280 - 2 * 58        # the page's side margins
