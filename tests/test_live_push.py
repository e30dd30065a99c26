"""live/push.py, live/parts.py, live/route.py: a playing page's frames fetched from the
frame route instead of a fragment rerun per frame."""
from __future__ import annotations

import base64
import functools
import gc
import json

import numpy as np
import plotly.graph_objects as go
import pytest
from tests.apptest import live_components

from live.controls import RECONNECT_TIMER_S
from live.handle import TrainerHandle
from engine.training import TrainerBase
from live import push as live_push
from live.budget import FrameBudget
from live.parts import Caption, Figure, Html, Image, Info, Metrics, Payload
from ui.markup import inline_markdown


class Counter(TrainerBase):
    def _iteration(self):
        return {"loss": float(self.steps)}

    def snapshot(self):
        return self.steps


def _parts(view, read, scale: float) -> dict:
    x = np.arange(20.0)
    return {"line": Figure(go.Figure(go.Scatter(x=x, y=scale * x, mode="lines"),
                                     {"title": {"text": "t"}})),
            "row": Metrics([("Steps", f"{view.steps:,}", "iterations so far")]),
            "note": Html("<b>hi</b>")}


@pytest.fixture
def budget(monkeypatch):
    b = FrameBudget(fps=10.0)
    monkeypatch.setattr(live_push, "BUDGET", b)
    return b


def _source(handle, parts=None, **kw) -> live_push.Source:
    import functools
    kw = {"session_id": None, **kw}
    return live_push.Source(handle=handle, parts=parts or functools.partial(_parts, scale=2.0),
                            who=("s", "k"), base_interval_s=0.3, classroom=False,
                            status=lambda view, tick: f"Iteration **{view.steps}**", **kw)


def _playing(steps: int = 0) -> TrainerHandle:
    handle = TrainerHandle(Counter())
    if steps:
        handle.step(steps)
    handle.play()
    return handle


def _get(token: str) -> tuple[int, dict]:
    status, body = live_push.answer(token)
    return status, json.loads(body)


def test_a_frame_is_every_slot_as_canvas_spec_or_html_plus_the_status_line(budget):
    source = _source(_playing(steps=7))
    live_push.register("tok-a", source)
    status, frame = _get("tok-a")
    assert status == 200 and frame["rerun"] is False and frame["steps"] == 7
    assert set(frame["slots"]) == {"line", "row", "note", live_push.STATUS_SLOT}
    spec = frame["slots"]["line"]["spec"]
    y = spec["data"][0]["y"]
    ys = np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]) if isinstance(y, dict) \
        else np.asarray(y)
    np.testing.assert_allclose(ys, 2.0 * np.arange(20.0))        # the inputs bound at register
    assert spec["style"]["font"] and spec["layout"]["meta"] == {"dlplay_classroom": False}
    assert ">7<" in frame["slots"]["row"]["html"] and 'title="iterations so far"' in \
        frame["slots"]["row"]["html"]
    assert frame["slots"]["note"] == {"html": "<b>hi</b>"}
    assert "Iteration <b>7</b>" in frame["slots"][live_push.STATUS_SLOT]["html"]
    assert frame["next_ms"] == 300 and budget.playing() == 1      # it counts as playing
    assert source.frames == 1


def test_the_next_frame_interval_follows_the_frame_budget(budget):
    live_push.register("tok-b", source := _source(_playing()))  # noqa: F841 (held)
    for i in range(7):
        budget.seen((f"other-{i}", "gan"))
    assert _get("tok-b")[1]["next_ms"] == 800                   # 8 playing / 10 frames/s


def test_unknown_tokens_404_and_a_dropped_source_stops_answering(budget):
    assert live_push.answer("never-registered")[0] == 404
    source = _source(_playing())
    live_push.register("tok-c", source)
    assert live_push.answer("tok-c")[0] == 200
    del source                                  # the session's state let go of it
    gc.collect()
    assert live_push.answer("tok-c")[0] == 404


def test_reset_or_a_gone_session_answers_410(budget, monkeypatch):
    handle = _playing()
    source = _source(handle)
    live_push.register("tok-d", source)
    handle.cancel()
    assert live_push.answer("tok-d")[0] == 410
    source2 = _source(_playing(), session_id="gone")
    live_push.register("tok-e", source2)
    monkeypatch.setattr(live_push, "session_alive", lambda sid: sid != "gone")
    assert live_push.answer("tok-e")[0] == 410


@pytest.mark.parametrize("why", ["paused", "cap", "diverged"])
def test_a_run_that_must_end_asks_the_page_to_rerun(budget, why):
    handle = _playing(steps=5)
    cap = None
    if why == "paused":
        handle.pause()
    elif why == "cap":
        cap = 5
    else:
        handle.trainer.diverged_at = 3
    live_push.register("tok-f", source := _source(handle, max_total_steps=cap))
    status, frame = _get("tok-f")
    assert status == 200 and frame["rerun"] is True and frame["slots"] == {}
    assert source.frames == 0


def test_a_run_passing_an_iteration_the_cards_claims_read_asks_for_a_rerun(budget):
    """The card beside the figure sits outside the pushed frames: when the run passes an
    iteration one of its claims reads (ui.claims.OnRun), the page reruns to show the value."""
    live_push.register("tok-m", source := _source(_playing(steps=5), claim_marks=(5, 50),
                                                  claim_seen=5))
    assert _get("tok-m")[1]["rerun"] is False                # 5 was already on the card
    source.handle.step(45)
    assert _get("tok-m")[1]["rerun"] is True and source.frames == 1


def test_a_part_the_canvas_cannot_draw_makes_the_page_fall_back(budget, monkeypatch):
    monkeypatch.setenv("DLPLAY_LIVE_PLOTLY", "0")     # else plotly.js draws it (no fallback)

    def bars(view, read):
        return {"b": Figure(go.Figure(go.Bar(x=[1, 2], y=[3, 4])))}
    live_push.register("tok-g", source := _source(_playing(), parts=bars))
    status, frame = _get("tok-g")
    assert frame["rerun"] is True and source.fallback


def test_nan_goes_out_as_null_and_numpy_scalars_as_numbers():
    body = live_push._dumps({"a": [1.0, float("nan")], "b": np.float32(2.5),
                             "c": np.array([1, 2]), "d": float("inf")})
    assert json.loads(body) == {"a": [1.0, None], "b": 2.5, "c": [1, 2], "d": None}


def test_parts_payloads_escape_text_and_keep_the_help(monkeypatch):
    assert inline_markdown("a < b, **c** & d  \nnext") == "a &lt; b, <b>c</b> &amp; d<br>next"
    assert "<script>" not in Caption("<script>x</script>").payload(False)["html"]
    assert "&lt;b&gt;" in Info("<b>").payload(False)["html"]
    png = b"\x89PNG\r\n\x1a\nfake"
    html = Image(png, "z = (0, 1)").payload(False)["html"]
    src = html.split('src="', 1)[1].split('"', 1)[0]
    assert base64.b64decode(src.split(",", 1)[1]) == png and "z = (0, 1)" in html
    big, small = (Metrics([("L", "1")]).payload(c)["html"] for c in (True, False))
    assert "2.6rem" in big and "2.25rem" in small
    assert Payload.of({"x": Html("a")}, False).drawable()
    monkeypatch.setenv("DLPLAY_LIVE_PLOTLY", "0")
    assert not Payload.of({"x": Figure(go.Figure(go.Bar(x=[1], y=[1])))}, False).drawable()


def _in_thread(coro) -> None:
    """Run `coro` on its own event loop in a thread (the suite's browser tests may leave a
    loop running in this one)."""
    import asyncio
    import threading
    worker = threading.Thread(target=asyncio.run, args=(coro,))
    worker.start()
    worker.join(30)


def test_the_route_serves_answers_with_no_caching(budget, monkeypatch):
    from live import route as frame_route
    monkeypatch.setattr(live_push, "MOUNTED", False)       # restored after the test
    routes = frame_route.routes()
    assert live_push.MOUNTED and routes[0].path == "/_dlplay/frame/{frame_id}"
    source = _source(_playing(steps=2))
    source.frame_id = "f1"
    live_push.register("tok-h", source)

    sent = []

    async def call(frame_id, token, cookie):
        headers = [(b"x-dlplay-token", token.encode())] if token else []
        if cookie:
            headers.append((b"cookie", f"dlplay_client={cookie}".encode()))
        scope = {"type": "http", "method": "GET", "path": f"/_dlplay/frame/{frame_id}",
                 "raw_path": f"/_dlplay/frame/{frame_id}".encode(), "query_string": b"",
                 "headers": headers, "root_path": "", "scheme": "http", "server": ("t", 80)}

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)
        await routes[0].handle(scope | {"path_params": {"frame_id": frame_id}}, receive, send)

    _in_thread(call("f1", "tok-h", "browser-a"))
    start, body = sent[0], sent[1]["body"]
    assert start["status"] == 200 and (b"cache-control", b"no-store") in start["headers"]
    assert json.loads(body)["steps"] == 2
    for frame_id, token, cookie in [("f1", "nope", "browser-a"),     # unknown token
                                    ("f1", "tok-h", "browser-b"),    # another browser
                                    ("f1", "tok-h", None),           # no cookie
                                    ("f1", None, "browser-a"),       # no token
                                    ("f2", "tok-h", "browser-a")]:   # another frame id
        sent.clear()
        _in_thread(call(frame_id, token, cookie))
        assert sent[0]["status"] == 404, (frame_id, token, cookie)
    sent.clear()
    _in_thread(call("f1", "tok-h", "browser-a"))                     # its own still works
    assert sent[0]["status"] == 200


def test_a_frame_token_is_bound_to_the_first_browser_and_kept_out_of_the_path(budget):
    """The token is a header, the path a public id; the first browser to use the token owns
    it: another session's cookie, a missing cookie or a mismatched id get 404."""
    source = _source(_playing(steps=3))
    source.frame_id = "pub"
    live_push.register("tok-secret", source)
    assert live_push.answer_request("pub", "tok-secret", "mine")[0] == 200
    assert live_push.answer_request("pub", "tok-secret", "theirs")[0] == 404
    assert live_push.answer_request("pub", "tok-secret", "")[0] == 404
    assert live_push.answer_request("tok-secret", "tok-secret", "mine")[0] == 404
    assert live_push.answer_request("pub", "tok-secret", "mine")[0] == 200
    assert live_push.answer_request("pub", "tok-secre", "mine")[0] == 404


def test_a_playing_gan_page_mounts_its_slots_once_and_the_route_serves_its_frames(
        budget, monkeypatch):
    """The wiring on the real page (trainers inline here, the route's switch forced on):
    paused, the page checks its parts are drawable; on Play its fragment gets NO run_every,
    every slot (the two figures, the summary, the status line) is a live component bound to
    the page's token, and the route answers that token with the same slots; Pause drops the
    source (the route answers 404, the browser's poller stops) and draws Plotly again."""
    from tests.apptest import open_page, pause_and_forget, play_and_fetch, push_on
    asked = push_on(monkeypatch)
    at = open_page("topics/gan/page.py")
    mounted, frame = play_and_fetch(
        at, "gan", {"gan_fig_samples", "gan_summary", "gan_fig_curves"}, asked)
    assert "spec" in mounted["gan_fig_samples"] and "gan-badge" in mounted["gan_summary"]["html"]
    assert not at.get("plotly_chart") or all(
        "gan_fig" not in c.proto.id for c in at.get("plotly_chart"))
    assert "spec" in frame["slots"]["gan_fig_curves"] and "Iteration" in \
        frame["slots"][live_push.STATUS_SLOT]["html"]
    pause_and_forget(at, "gan")
    assert len(at.get("plotly_chart")) >= 2


def _fallback_page():
    import plotly.graph_objects as go
    import streamlit as st

    from engine.training import TrainerBase
    from live.controls import live_training
    from live.push import live_parts, place_all
    from live.parts import Figure

    class Steps(TrainerBase):
        def _iteration(self):
            return {"loss": 1.0}

        def snapshot(self):
            return self.steps

    def parts(view, read, bars: bool):
        trace = go.Bar(x=[1, 2], y=[3, 4]) if bars else go.Scatter(x=[1, 2], y=[3, 4])
        return {"fig": Figure(go.Figure(trace))}

    bars = st.session_state.get("bars", False)
    live_training("fb", Steps, lambda view, tick: place_all(
        live_parts(parts, view, bars=bars)), {"x": 1}, interval_s=0.5)


def test_a_page_whose_part_stops_being_drawable_falls_back_to_reruns_for_good(
        budget, monkeypatch):
    """The route finds a part the canvas cannot draw (here: the page switched to bars while
    playing): it asks for a rerun, the fragment turns pushing off for this page and the page
    reruns with a timer again; it does not flip back to pushing on the next drawable frame."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest import record_run_every
    monkeypatch.setattr(live_push, "enabled", lambda mode: True)
    monkeypatch.setenv("DLPLAY_LIVE_PLOTLY", "0")     # else plotly.js draws the bars
    asked = record_run_every(monkeypatch)
    at = AppTest.from_function(_fallback_page, default_timeout=60).run()
    assert at.session_state["fb__pushes"] is True
    at.button(key="fb__play").click().run()
    assert asked[-1] == RECONNECT_TIMER_S and live_components(at)     # no frame timer
    token = at.session_state["fb__push_token"]
    source = at.session_state["fb__push_source"]
    source.parts = functools.partial(source.parts.func, bars=True)   # the next frame: bars
    assert _get(token)[1]["rerun"] is True and source.fallback
    at.run()                                        # the rerun the component asks for
    assert at.session_state["fb__pushes"] is False and at.session_state["fb__push_off"]
    assert asked[-1] == pytest.approx(0.5)          # a timer again (inline: the page's 0.5 s)
    assert at.get("plotly_chart") or not any(
        json.loads(c.proto.json).get("poll") for c in live_components(at))
    at.run()
    assert at.session_state["fb__pushes"] is False and asked[-1] == pytest.approx(0.5)
