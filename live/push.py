"""Playing frames without a Streamlit rerun per frame: the browser fetches them.

Where a worker trains (DLPLAY_TRAINERS=process|ray) a playing frame only draws the latest view.
Rerunning the page's fragment for that cost the student's browser ~135-175 ms of CPU per frame
(Streamlit's React tree re-rendered), so a few browsers on one machine starved each other.
Instead, while Play is on:

  1. the fragment runs once: the page's `draw` builds its frame with live_parts() and lays the
     parts out with place(); each part is a live component (live/canvas.js) told which
     token and slot it shows, and the fragment gets no run_every;
  2. the component polls GET /_dlplay/frame/<frame id> with the token in a header
     (live/route.py, served by app.py) every `next_ms`; the route calls
     answer_request -> answer(token): the trainer's view, the page's pure
     parts function on it, each part as JSON ({"spec"} for the canvas, {"html"});
  3. the component paints the slots: a fetch, a JSON parse and a canvas draw per frame;
  4. when the run must end (diverged, the step cap, a lost worker) or a part is no longer
     drawable, the answer says `rerun` and the component asks Streamlit to rerun the
     fragment once: the usual code path then pauses, shows the message or falls back.

Pause, Step, Reset and every widget stay Streamlit: a widget inside the fragment (the VAE's
decode sliders) reruns it, which registers the parts function again with the new inputs.

A token is random per session and page, known only to that session's browser, and travels in
the X-Dlplay-Token header, never in the path (so no access log holds it; the path carries a
public frame id). The first request of a token binds it to the browser's `dlplay_client`
cookie (random, set by the component); a request with another cookie or none, with another
frame id or an unknown token is answered 404 alike. The registry holds its Source weakly (the session's state owns it), and a source whose session is gone is
answered 410. The frame budget (live/budget.py) sets next_ms: all playing pages of the
process together ask for at most DLPLAY_FRAME_BUDGET frames a second.
"""
from __future__ import annotations

import functools
import json
import math
import os
import secrets
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, MutableMapping

import numpy as np

from live.budget import BUDGET
from live.parts import Caption, Parts, PartsFn, Payload
from ui.live_keys import live_keys

PATH = "/_dlplay/frame/"
TOKEN_HEADER = "x-dlplay-token"
CLIENT_COOKIE = "dlplay_client"
NOT_FOUND = b'{"error": "unknown frame token"}'
PLOTLY_PATH = "/_dlplay/plotly.min.js"    # plotly.js for the figures the canvas does not draw
STATUS_SLOT = "status"
MOUNTED = False              # True once app.py serves the frame route (live.route.routes)
ENV_VAR = "DLPLAY_PUSH"      # 0: playing frames rerun the fragment
# This web process, told to each live component and sent with each frame answer: a component
# whose frame requests reach another process (a replica behind the proxy) reloads its page
# (live/canvas.js); checkpoints say which process wrote them (live/resume.py).
SERVER_ID = secrets.token_hex(8)


def enabled(mode: str) -> bool:
    """Frames are fetched (not rerun) when a worker trains, the route is served and
    DLPLAY_PUSH is not 0."""
    return MOUNTED and mode != "inline" and os.environ.get(ENV_VAR, "1") != "0"


def url_prefix(path: str = PATH) -> str:
    """The route's path under the server's baseUrlPath (nginx may serve the app below /)."""
    try:
        from streamlit import config
        base = (config.get_option("server.baseUrlPath") or "").strip("/")
    except Exception:                                   # noqa: BLE001 - no config loaded
        base = ""
    return f"/{base}{path}" if base else path


# ---- one playing page of one session ------------------------------------------------------

@dataclass(eq=False)
class Source:
    """What the route needs to build one page's frame: the handle, the page's parts function
    (its inputs bound), and what the fragment knew (classroom, intervals, the step cap)."""
    handle: Any
    parts: Callable[..., Parts]          # parts(view, read) -> {slot: Part}
    who: Hashable                        # (session id, page key): the frame budget's id
    session_id: str | None
    base_interval_s: float
    classroom: bool
    max_total_steps: int | None = None
    present_px: int | None = None        # a large figure's height (ui.screen.present_height)
    status: Callable[[Any, Any], str] | None = None
    fallback: bool = False               # set by the route: a part stopped being drawable
    pause_asked: bool = False            # set by the route: the browser's Pause was clicked
    frames: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    frame_id: str = ""                   # the public part of its URL (set at register)
    client: str | None = None            # the browser cookie its first request came with
    on_client: Callable[[str], None] | None = None    # told that cookie (live/resume.py)
    claim_marks: tuple[int, ...] = ()    # iterations the card's claims read on this run: a
    claim_seen: int = 0                  # frame passing one (from claim_seen on) asks a rerun


_REGISTRY: "weakref.WeakValueDictionary[str, Source]" = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()


def register(token: str, source: Source) -> None:
    with _REGISTRY_LOCK:
        _REGISTRY[token] = source


def lookup(token: str) -> Source | None:
    with _REGISTRY_LOCK:
        return _REGISTRY.get(token)


def frame_id_of(state: MutableMapping[str, Any], key: str) -> str:
    """The public id in the frame URL of page `key` (random, kept for the session)."""
    name = live_keys(key).push_id
    if name not in state:
        state[name] = secrets.token_hex(6)
    return state[name]


def token_of(state: MutableMapping[str, Any], key: str) -> str:
    """The session's token for page `key` (random, kept for the session)."""
    name = live_keys(key).push_token
    if name not in state:
        state[name] = secrets.token_urlsafe(18)
    return state[name]


# ---- the fragment's side: build the parts, register them, lay them out --------------------

_run = threading.local()     # per script thread: the push context of the frame being drawn


@dataclass
class FrameContext:
    """Set by live.controls.live_training around `draw`: whose frame this is and whether it is a
    playing frame that the browser will fetch from now on (push)."""
    state: MutableMapping[str, Any]
    key: str
    handle: Any
    push: bool                       # a playing frame of a pushing page
    probe: bool                      # paused, worker mode: check the parts are drawable
    classroom: bool
    make_source: Callable[[Callable[..., Parts]], Source]
    present_px: int | None = None
    registered: Source | None = None
    payload: Payload | None = None       # the registered frame's payloads (mounted as they are)


def current() -> FrameContext | None:
    return getattr(_run, "ctx", None)


class frame_context:
    """`with frame_context(ctx): draw(view, tick)` (live.controls)."""

    def __init__(self, ctx: FrameContext | None):
        self.ctx = ctx

    def __enter__(self) -> FrameContext | None:
        self.before = current()
        _run.ctx = self.ctx
        return self.ctx

    def __exit__(self, *exc: Any) -> None:
        _run.ctx = self.before


def pushes_key(key: str) -> str:
    return live_keys(key).pushes


def live_parts(fn: PartsFn, view: Any, **inputs: Any) -> Parts:
    """fn(view, read, **inputs): the frame's parts, built now for this script run. Inside a
    playing frame of a worker-mode page the parts function is also registered (inputs bound)
    for the frame route, and whether every part is drawable by the canvas is recorded: only
    then does the page push its frames."""
    ctx = current()
    if ctx is None:
        raise RuntimeError("live_parts() is for the `draw` of live.controls.live_training")
    bound = functools.partial(fn, **inputs)
    parts = bound(view, ctx.handle.read)
    if ctx.push or ctx.probe:
        payload = Payload.of(parts, ctx.classroom, ctx.present_px)
        drawable = payload.drawable()
        ctx.state[pushes_key(ctx.key)] = drawable
        if ctx.push and drawable:
            ctx.registered, ctx.payload = ctx.make_source(bound), payload
            ctx.registered.frame_id = frame_id_of(ctx.state, ctx.key)
            # registered before the state lets go of the previous source: the registry holds
            # sources weakly, so the other order left the token unknown for a moment (a
            # Pause sent to the route then was answered 404)
            register(token_of(ctx.state, ctx.key), ctx.registered)
            ctx.state[live_keys(ctx.key).push_source] = ctx.registered     # the session owns it
    return parts


def place(parts: Parts, slot: str) -> None:
    """Draw parts[slot] here: a live component bound to the frame route while pushing,
    else the part's own Streamlit drawing."""
    part = parts[slot]
    ctx = current()
    if ctx is not None and ctx.registered is not None:
        mount(ctx, slot, ctx.payload.slots.get(slot) or part.payload(ctx.classroom))
    else:
        part.show(slot)


def place_all(parts: Parts) -> None:
    """Every part, one under the other, in their order."""
    for slot in parts:
        place(parts, slot)


def mount(ctx: FrameContext, slot: str, payload: dict) -> None:
    """The live component of `slot`, drawn now with `payload`, then fed by the route."""
    from live import canvas as live_canvas
    poll = {"url": url_prefix() + frame_id_of(ctx.state, ctx.key),
            "token": token_of(ctx.state, ctx.key), "slot": slot,
            "next_ms": round(1000 * BUDGET.interval(ctx.registered.base_interval_s)),
            "plotly_js": url_prefix(PLOTLY_PATH),
            "pause": f".st-key-{live_keys(ctx.key).play} button",     # live.controls's Play/Pause button
            "server": SERVER_ID}                            # where this page's session lives
    live_canvas.mount(f"{ctx.key}-{slot}", payload, poll)


# ---- the route's side ---------------------------------------------------------------------

def session_connected(session_id: str) -> bool:
    """Whether Streamlit still has this browser session connected (the janitor's probe:
    live/workers.py frees the trainers of a session gone for longer than its lease).
    Without a running server (AppTest) every session counts as active."""
    from streamlit.runtime import Runtime
    if not Runtime.exists():
        return True
    return Runtime.instance().is_active_session(session_id)


def session_alive(session_id: str | None) -> bool:
    return session_id is None or session_connected(session_id)


def answer_request(frame_id: str, token: str | None, client: str | None,
                   pause_now: bool = False) -> tuple[int, bytes]:
    """(HTTP status, JSON body) for an HTTP request of frame `frame_id` carrying `token` (the
    header) and `client` (the cookie): answer(token), or pause(token) for the Pause click's
    request, when they belong together and to the browser the token first answered; else 404,
    the same as an unknown token."""
    source = lookup(token) if token else None
    if source is None or not client or source.frame_id != frame_id:
        return 404, NOT_FOUND
    with _REGISTRY_LOCK:
        first = source.client is None
        if first:
            source.client = client
    if not secrets.compare_digest(source.client, client):
        return 404, NOT_FOUND
    if first and source.on_client is not None:
        source.on_client(client)
    return pause(token) if pause_now else answer(token)


def answer(token: str) -> tuple[int, bytes]:
    """(HTTP status, JSON body) for GET /_dlplay/frame/<token>.

    404: no such token (never registered, or its session's state is gone); 410: the session
    left or the page paused, reset or rebuilt its trainer (the component stops polling);
    200: {"slots": {slot: payload}, "next_ms", "rerun", "steps"}."""
    source = lookup(token)
    if source is None:
        return 404, NOT_FOUND
    if not session_alive(source.session_id) or source.handle.cancelled:
        return 410, b'{"error": "this page is no longer playing"}'
    if not source.lock.acquire(blocking=False):           # a frame of it is being built
        return 200, _dumps({"slots": {}, "next_ms": 100, "rerun": False})
    try:
        return 200, _dumps(_frame(source))
    finally:
        source.lock.release()


def pause(token: str) -> tuple[int, bytes]:
    """The browser's Pause, told to the route the moment it is clicked (the component stops
    polling at once): the trainer stops before its next chunk, and the page's next script
    run (the click's own, or the one the component asks for should Streamlit drop the click)
    reads `pause_asked` and shows the page paused. No lock: a flag and the handle's pause."""
    source = lookup(token)
    if source is None:
        return 404, NOT_FOUND
    source.pause_asked = True
    source.handle.pause()
    return 200, b'{"paused": true}'


def _frame(source: Source) -> dict:
    from live.handle import TrainerBusy, TrainerLost
    handle = source.handle
    BUDGET.seen(source.who)
    next_ms = round(1000 * BUDGET.interval(source.base_interval_s))
    if not handle.playing:
        BUDGET.gone(source.who)
        return {"slots": {}, "next_ms": next_ms, "rerun": True}
    try:
        tick = handle.tick(max_steps=0, budget_s=0.0, epoch=0)   # worker modes: what it trained since
        view = handle.view()
    except TrainerBusy:
        return {"slots": {}, "next_ms": next_ms, "rerun": False}
    except TrainerLost:
        return {"slots": {}, "next_ms": next_ms, "rerun": True}
    cap = source.max_total_steps
    finished = view.error is not None or view.diverged_at is not None or (
        cap is not None and view.steps >= cap)
    if finished or any(source.claim_seen < at <= view.steps for at in source.claim_marks):
        # (a claim's iteration passed: the rerun shows the card beside the figure its value)
        return {"slots": {}, "next_ms": next_ms, "rerun": True, "steps": view.steps}
    try:
        parts = dict(source.parts(view, handle.read))
    except (TrainerBusy, TrainerLost):
        return {"slots": {}, "next_ms": next_ms, "rerun": False}
    if source.status is not None:
        parts[STATUS_SLOT] = Caption(source.status(view, tick))
    payload = Payload.of(parts, source.classroom, source.present_px)
    if not payload.drawable():
        source.fallback = True
        return {"slots": {}, "next_ms": next_ms, "rerun": True}
    source.frames += 1
    return {"slots": payload.slots, "next_ms": next_ms, "rerun": False, "steps": view.steps,
            "at": time.time()}


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _finite(value: Any) -> Any:
    """NaN and infinities as null (JSON has neither; Plotly reads null as a gap)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, np.generic):
        return _finite(value.item())
    if isinstance(value, np.ndarray):
        return _finite(value.tolist())
    return value


def _dumps(obj: Any) -> bytes:
    try:
        text = json.dumps(obj, default=_default, allow_nan=False, separators=(",", ":"))
    except ValueError:                                   # a NaN somewhere: the slow path
        text = json.dumps(_finite(obj), default=_default, allow_nan=False,
                          separators=(",", ":"))
    return text.encode()
