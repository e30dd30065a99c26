"""Deep links that name no page: `/gan/extra/path` is redirected to `/gan`.

Streamlit answers every unknown path with its index page, whose scripts are linked relative to
the path (`./static/js/...`): below two segments they resolve to `/gan/extra/static/...`, which
is the index page again, and the browser shows a blank page. A page's address has one segment,
so a GET of a longer path that is none of the server's own routes is sent to its first segment:
the page of that name, or Streamlit's "page not found" over the gallery when there is none.
A path with a server route's segment anywhere is left alone: the browser looks for the server
below the page's own address first (`/gan/_stcore/health`) and must get Streamlit's answer."""
from __future__ import annotations

from starlette.datastructures import URL
from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

# First path segments the server itself answers below (Streamlit's routes, the frame route).
SERVER_PREFIXES = frozenset({"_stcore", "media", "component", "static", "app", "_dlplay"})


def base_path() -> str:
    """The server's baseUrlPath as '/base' ('' when the app is served at /)."""
    from streamlit import config
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def page_path(path: str, base: str = "") -> str | None:
    """The page address to send `path` to, or None when the path is one to serve as it is."""
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):]
    elif base:
        return None
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2 or SERVER_PREFIXES.intersection(parts):
        return None
    return f"{base}/{parts[0]}"


class DeepPathRedirect:
    """ASGI middleware: GET/HEAD of a deep path that names no route -> its first segment."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            target = page_path(scope["path"], base_path())
            if target is not None:
                query = URL(scope=scope).query
                response = RedirectResponse(target + (f"?{query}" if query else ""),
                                            status_code=307)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
