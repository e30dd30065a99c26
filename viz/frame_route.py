"""The frame route: GET /_dlplay/frame/<frame id>, with the page's token in the X-Dlplay-Token
header and the browser's dlplay_client cookie, answers a playing page's latest frame as JSON
(viz/live_push.py builds it and checks the three belong together). The token is never in the
path, so access logs do not hold it. app.py serves it next to Streamlit's own routes (st.App)."""
from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from viz import live_push

HEADERS = {"Cache-Control": "no-store"}


async def frame(request: Request) -> Response:
    """The frame is built in a worker thread (a view fetched from the trainer, the page's
    figures): the event loop keeps serving the websockets meanwhile."""
    status, body = await run_in_threadpool(
        live_push.answer_request, request.path_params["frame_id"],
        request.headers.get(live_push.TOKEN_HEADER),
        request.cookies.get(live_push.CLIENT_COOKIE))
    return Response(body, status_code=status, media_type="application/json", headers=HEADERS)


def routes() -> list[Route]:
    """The routes app.py adds to Streamlit's; from now on live pages may push their frames."""
    live_push.MOUNTED = True
    return [Route(live_push.url_prefix() + "{frame_id}", frame, methods=["GET"])]
