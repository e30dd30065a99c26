"""The frame route: GET /_dlplay/frame/<frame id>, with the page's token in the X-Dlplay-Token
header and the browser's dlplay_client cookie, answers a playing page's latest frame as JSON
(live/push.py builds it and checks the three belong together). The token is never in the
path, so access logs do not hold it. app.py serves it next to Streamlit's own routes (st.App)."""
from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from live import push as live_push

HEADERS = {"Cache-Control": "no-store"}
SERVER_HEADER = "X-Dlplay-Server"      # which web process answered (live/canvas.js: a page whose
#                                        frames suddenly come from another one reloads)


async def frame(request: Request) -> Response:
    """The frame is built in a worker thread (a view fetched from the trainer, the page's
    figures): the event loop keeps serving the websockets meanwhile."""
    status, body = await run_in_threadpool(
        live_push.answer_request, request.path_params["frame_id"],
        request.headers.get(live_push.TOKEN_HEADER),
        request.cookies.get(live_push.CLIENT_COOKIE),
        bool(request.query_params.get("pause")))     # the Pause click, before Streamlit's rerun
    return Response(body, status_code=status, media_type="application/json",
                    headers={**HEADERS, SERVER_HEADER: live_push.SERVER_ID})


async def plotly_js(request: Request) -> Response:
    """The installed plotly package's plotly.js, for live figures the canvas does not draw
    (3-D, bars, fills): the live component loads it once per page (offline, no CDN)."""
    from live.canvas import plotly_js as path
    return FileResponse(path(), media_type="text/javascript",
                        headers={"Cache-Control": "public, max-age=86400"})


def routes() -> list[Route]:
    """The routes app.py adds to Streamlit's; from now on live pages may push their frames."""
    live_push.MOUNTED = True
    return [Route(live_push.url_prefix() + "{frame_id}", frame, methods=["GET"]),
            Route(live_push.url_prefix(live_push.PLOTLY_PATH), plotly_js, methods=["GET"])]
