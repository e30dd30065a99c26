"""AppTest helpers shared by the page tests: run the whole app (navigation + sidebar) and
switch to a page, as a user arriving from the gallery would."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 120


def run_app(query: dict | None = None, page: str | None = None,
            timeout: float = TIMEOUT) -> AppTest:
    """Run app.py with the given URL query, then switch to `page` ("topic_pages/<slug>.py")."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


def open_page(page: str, query: dict | None = None) -> AppTest:
    """run_app(query, page) and assert the page raised no exception."""
    at = run_app(query, page=page)
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    """The value of the st.metric whose label is `label` (else the first that starts with it)."""
    exact = [m.value for m in at.metric if m.label == label]
    if exact:
        return exact[0]
    return next(m.value for m in at.metric if m.label.startswith(label))


def chart_titles(at: AppTest) -> list[str]:
    """The layout titles of every Plotly chart on the page, in order."""
    import json
    titles = []
    for chart in at.get("plotly_chart"):
        title = json.loads(chart.proto.spec).get("layout", {}).get("title", {})
        titles.append(title.get("text", "") if isinstance(title, dict) else str(title))
    return titles
