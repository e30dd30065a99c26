"""AppTest helpers shared by the page tests: run the whole app (navigation + sidebar) and
switch to a page, as a user arriving from the gallery would."""
from __future__ import annotations

import base64
import functools
import json
from pathlib import Path
from unittest import mock

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "playground.py")
TIMEOUT = 120


def run_app(query: dict | None = None, page: str | None = None,
            timeout: float = TIMEOUT) -> AppTest:
    """Run playground.py (the script app.py serves) with the given URL query, then switch to
    `page` ("topics/<slug>/page.py")."""
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
    titles = []
    for chart in at.get("plotly_chart"):
        title = json.loads(chart.proto.spec).get("layout", {}).get("title", {})
        titles.append(title.get("text", "") if isinstance(title, dict) else str(title))
    return titles


def chart_figure(at: AppTest, key: str) -> dict:
    """The figure (plotly JSON: data, layout) of the chart drawn with `key`."""
    return json.loads(_chart(at, key).proto.spec)


def _chart(at: AppTest, key: str):
    return next(c for c in at.get("plotly_chart") if c.proto.id.endswith(key))


def plotly_array(value) -> np.ndarray:
    """A data array of plotly JSON as floats: a list (None -> NaN) or, for numpy data, the
    base64 typed array {"dtype", "bdata"[, "shape"]}."""
    if isinstance(value, dict):
        a = np.frombuffer(base64.b64decode(value["bdata"]), np.dtype(value["dtype"]))
        if "shape" in value:
            a = a.reshape([int(v) for v in str(value["shape"]).split(",")])
        return a.astype(float)
    return np.array(value, dtype=float)    # None -> nan


def _fragment_id(at: AppTest, key: str | None) -> str:
    """The id of the page's fragment whose key is `key` (None: the one without a key; a page
    with a single fragment: that one)."""
    store = at._fragment_storage
    if len(store._fragments) == 1:
        (fid,) = store._fragments
        return fid
    keyed = {i for ids in store._ids_by_target_key.values() for i in ids}
    (fid,) = (set(store._ids_by_target_key.get(key, {})) if key is not None
              else set(store._fragments) - keyed)
    return fid


def _run(at: AppTest, states, fragment: bool, key: str | None = None) -> AppTest:
    """at._run(states), as a rerun of one fragment only (`key`, see _fragment_id) when
    `fragment`. AppTest has no API for a fragment rerun; its runner builds a RerunData, so the
    fragment id is put into that (relies on AppTest internals: a Streamlit upgrade may need
    this adjusted)."""
    if not fragment:
        return at._run(states)
    from streamlit.runtime.scriptrunner import RerunData
    from streamlit.testing.v1 import local_script_runner
    fragment_run = functools.partial(RerunData, fragment_id_queue=[_fragment_id(at, key)],
                                     is_fragment_scoped_rerun=True)
    with mock.patch.object(local_script_runner, "RerunData", fragment_run):
        return at._run(states)


def rerun_fragment(at: AppTest, key: str | None = None, extra_states=()) -> AppTest:
    """One run_every tick as the browser sends it: a rerun of the fragment `key` only, with
    the widget states plus `extra_states` (a stale value the browser still sends).
    Afterwards the element tree holds only what the fragment drew."""
    states = at._tree.get_widget_states()
    states.widgets.extend(extra_states)
    _run(at, states, fragment=True, key=key)
    assert not at.exception, at.exception
    return at


def click_chart(at: AppTest, chart_key: str, point: dict, in_fragment: bool = False,
                fragment_key: str | None = None) -> AppTest:
    """What the browser sends when a point of the plotly chart `chart_key` is clicked: the
    chart's new selection; with `in_fragment`, as a rerun of that fragment only (a chart
    drawn inside the live-training fragment)."""
    chart = _chart(at, chart_key)
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = chart.proto.id
    state.string_value = json.dumps({"selection": {"points": [point], "point_indices": [0],
                                                   "box": [], "lasso": []}})
    return _run(at, states, fragment=in_fragment, key=fragment_key)


def open_view(at: AppTest, slug: str, title: str) -> AppTest:
    """Open the view (tab) `title` of the skeleton page `slug`, as a click on its tab does.
    (AppTest resends at.query_params on every run: a page opened with ?<slug>_view= keeps
    that tab unless the query parameter is changed too.)"""
    from ui.page_keys import view_key
    at.session_state[view_key(slug)] = title
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def show_step(at: AppTest, slug: str, index: int) -> AppTest:
    """Go to tour step `index` (0-based) of page `slug` and press its "Show me"."""
    from ui.page_keys import tour_key
    at.session_state[tour_key(slug)] = index
    at.run()
    at.button(key=f"{tour_key(slug)}__show").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def choose_preset(at: AppTest, slug: str, name: str) -> AppTest:
    from ui.page_keys import preset_key
    at.selectbox(key=preset_key(slug)).select(name).run()
    assert not at.exception, (name, [e.value for e in at.exception])
    return at


def set_values(at: AppTest, **values) -> AppTest:
    """Write widget values into the session (as a preset does) and rerun; no exception."""
    for key, value in values.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def check_tabs_are_the_views(slug: str) -> AppTest:
    """The page opens with one tab per declared view, in order, and no error box."""
    from ui.claims import page_module
    at = open_page(f"topics/{slug}/page.py")
    assert [t.label for t in at.tabs] == [v.title for v in page_module(slug).VIEWS]
    assert not at.error, [e.value for e in at.error]
    return at


def check_every_preset_and_step(slug: str) -> None:
    """Every preset, then every tour step's "Show me", one after another on one session, as a
    teacher clicks through them: no exception and no error box after any of them."""
    from ui.claims import page_module
    m = page_module(slug)
    at = open_page(f"topics/{slug}/page.py")
    for name in m.PRESETS:
        choose_preset(at, slug, name)
        assert not at.error, (name, [e.value for e in at.error])
    for i in range(len(m.STEPS)):
        show_step(at, slug, i)
        assert not at.error, (i, [e.value for e in at.error])


def record_run_every(monkeypatch) -> list:
    """Replace st.fragment by one that records each fragment's run_every (and gives it none,
    so AppTest does not wait on timers); returns the list it appends to."""
    import streamlit
    asked = []
    real_fragment = streamlit.fragment

    def recording_fragment(func=None, *, run_every=None, **kw):
        asked.append(run_every)
        return real_fragment(func, run_every=None, **kw) if func else \
            (lambda f: real_fragment(f, run_every=None, **kw))

    monkeypatch.setattr(streamlit, "fragment", recording_fragment)
    return asked


def push_on(monkeypatch) -> list:
    """Playing frames fetched from the frame route in AppTest (live/push.py; trainers stay
    inline here): the route's switch forced on, a private frame budget, and each fragment's
    run_every recorded (the list returned)."""
    from live import push as live_push
    from live.budget import FrameBudget
    monkeypatch.setattr(live_push, "enabled", lambda mode: True)
    monkeypatch.setattr(live_push, "BUDGET", FrameBudget(fps=10.0))
    return record_run_every(monkeypatch)


def live_components(at: AppTest) -> list:
    """The page's custom components except the window-size reporter every page mounts
    (ui/viewport.py): the live views' canvases and pushed slots."""
    from ui.viewport import KEY
    return [c for c in at.get("bidi_component") if KEY not in c.proto.id]


def play_and_fetch(at: AppTest, key: str, slots, asked: list) -> tuple[dict, dict]:
    """Press Play on live page `key` (its parts checked drawable while paused) and check the
    push wiring: the fragment gets no run_every; the slots plus the status line are live
    components bound to the page's token; the route answers that token with the same slots.
    Returns (the mounted payloads by slot, the route's frame)."""
    import json

    from live import push as live_push
    from live.controls import RECONNECT_TIMER_S
    assert at.session_state[f"{key}__pushes"] is True               # checked while paused
    asked.clear()
    at.button(key=f"{key}__play").click().run()
    assert not at.exception and at.session_state[f"{key}__playing"]
    # the live fragment: no frame timer, only the hourly one that reruns after a reconnect
    assert asked and set(asked) <= {None, RECONNECT_TIMER_S} and RECONNECT_TIMER_S in asked
    mounted = {json.loads(c.proto.json)["poll"]["slot"]: json.loads(c.proto.json)
               for c in live_components(at)}
    assert set(mounted) == set(slots) | {live_push.STATUS_SLOT}
    token = at.session_state[f"{key}__push_token"]
    frame_id = at.session_state[f"{key}__push_id"]
    assert all(m["poll"]["url"] == "/_dlplay/frame/" + frame_id and m["poll"]["token"] == token
               and token not in m["poll"]["url"] for m in mounted.values())
    status, body = live_push.answer_request(frame_id, token, "browser-a")
    frame = json.loads(body)
    assert status == 200 and frame["rerun"] is False and set(frame["slots"]) == set(mounted)
    return mounted, frame


def pause_and_forget(at: AppTest, key: str) -> None:
    """Press Pause: no live component is left and the page's token stops answering (404)."""
    import gc

    from live import push as live_push
    token = at.session_state[f"{key}__push_token"]
    at.button(key=f"{key}__play").click().run()
    assert not at.exception and not at.session_state[f"{key}__playing"]
    assert not live_components(at)
    gc.collect()
    assert live_push.answer(token)[0] == 404
