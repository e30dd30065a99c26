"""A deep path that names no route is redirected to its first segment; the server's own routes
and one-segment page addresses pass through."""
from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from live import deep_paths
from live.deep_paths import DeepPathRedirect, page_path


@pytest.mark.parametrize("path,base,target", [
    ("/gan/extra/path", "", "/gan"),
    ("/nosuch/x", "", "/nosuch"),
    ("//gan//x/", "", "/gan"),
    ("/gan", "", None),
    ("/", "", None),
    ("/static/js/index.js", "", None),
    ("/_stcore/health", "", None),
    ("/_dlplay/frame/abc", "", None),
    ("/media/abc.png", "", None),
    ("/gan/_stcore/health", "", None),
    ("/gan/_stcore/stream", "", None),
    ("/gan/static/js/a.js", "", None),
    ("/component/x/index.html", "", None),
    ("/class/gan/extra", "/class", "/class/gan"),
    ("/class/gan", "/class", None),
    ("/class/static/js/a.js", "/class", None),
    ("/elsewhere/gan/x", "/class", None),
])
def test_page_path(path, base, target):
    assert page_path(path, base) == target


def test_the_middleware_redirects_with_the_query_and_passes_the_rest(monkeypatch):
    monkeypatch.setattr(deep_paths, "base_path", lambda: "")

    async def ok(request):
        return PlainTextResponse(request.url.path)

    app = Starlette(routes=[Route("/{p:path}", ok, methods=["GET", "POST"])],
                    middleware=[Middleware(DeepPathRedirect)])
    client = TestClient(app)
    r = client.get("/gan/extra/path?classroom=1", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "/gan?classroom=1"
    assert client.get("/gan/extra", follow_redirects=True).text == "/gan"
    assert client.get("/static/js/a.js").text == "/static/js/a.js"
    assert client.post("/gan/extra/path").text == "/gan/extra/path"     # only GET and HEAD
