"""Page scaffolding: the page skeleton every topic uses (topic_page, View, Panel), the honest
"coming soon" card, and the error boundary that turns an exception into a clear message
(never a traceback)."""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import streamlit as st

from ui import lesson_player
from ui.live_keys import live_keys
from ui.page_keys import apply_setting, hold_asked_view, preset_key, tour_key, view_key
from ui import session
from ui import url_check
from ui import viewport
from ui.state import Control
from ui.topics import ROOT, TOPICS_BY_SLUG
from ui.widgets import CHOOSE, settings_match

log = logging.getLogger("dlplay")


@contextlib.contextmanager
def user_errors(what: str):
    """Run a block; an exception becomes st.error("Could not <what>: <reason>") and is logged
    with its traceback on the server. Streamlit's rerun/stop signals pass through (they are
    BaseException, not Exception). An exception with a `user_status` (a passing condition,
    e.g. live.handle.TrainerBusy: the class server is loaded) shows that text as a status
    line instead, and logs one line without a traceback."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the boundary is the point
        status = getattr(exc, "user_status", None)
        if isinstance(status, str):
            log.warning("could not %s: %s", what, exc)
            st.info(status, icon=":material/hourglass:")
            return
        log.exception("error while trying to %s", what)
        st.error(f"Could not {what}: {exc}", icon=":material/error:")


def load_css(name: str) -> str:
    """The text of assets/<name>.css."""
    return (ROOT / "assets" / f"{name}.css").read_text(encoding="utf-8")


def inject_css(name: str) -> None:
    st.html(f"<style>{load_css(name)}</style>")


# ==================================================================================== skeleton
# One page skeleton for every topic (docs/ADDING_A_PAGE.md). A page file declares its STATE
# (ui.state.StateTable), PRESETS and STEPS (ui.widgets.Preset / Step, each with the view it
# opens and its claims), one function per view, and ends with
#
#     if __name__ == "__main__":
#         topic_page("<slug>", formula=..., state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS)
#
# Layout, figure first (a projector at 1280x720 shows the figure without scrolling):
#   [title · what you will see · formula] [preset picker] [guided tour: ◀ k/N ▶]
#   [tabs: one per view, keyed and URL-bound; only the open one runs]
#   [controls column | the figure ......................................]
#   [notes: explanations, tables, export .................................]
# Each view runs inside its own st.fragment: moving one of its widgets reruns that view only.


PRESENT_CONTROLS = 0.85     # classroom mode: the controls column's share of its width
CLAIMS_KEY = "dlplay_claims"  # the card's claim lines (smaller on the projector: classroom.css)


@dataclass(frozen=True)
class Live:
    """A tab's live training: the key its view passes to live.controls.live_training, and the
    most iterations a lesson's `train = N` may ask of it (a file cannot keep a lecture, or the
    server, training for long: at the page's default pace 20 to 75 s, above every iteration
    count the page's texts name)."""
    key: str
    train_max: int


@dataclass(frozen=True)
class View:
    """One tab of a page. `draw(panel)` fills panel.controls (the narrow column beside the
    figure), panel.figure (the wide column) and panel.notes (full width, below). A tab that
    trains live declares it (`live`): lessons, the live tests and benchmarks find it there."""
    key: str                                  # short id that presets and steps name
    title: str                                # the tab label (also its ?<slug>_view= value)
    draw: Callable[["Panel"], None]
    split: tuple[float, float] = (1.0, 2.7)   # controls : figure width
    fragment: bool = True                     # widgets rerun this view only
    live: "Live | None" = None                # its live training, if it has one


@dataclass(frozen=True)
class Panel:
    controls: Any
    figure: Any
    notes: Any


def _apply_everywhere(slug: str, views: Sequence[View], settings: Mapping[str, Any],
                      view: str | None) -> None:
    """apply_setting, then a rerun of the whole page: "Show me" sits inside the view's
    fragment, and a fragment-only rerun could neither switch the tab nor redraw the header.
    (Callbacks run before the script: st.rerun(scope="app") here turns the fragment run into
    one full run.)"""
    apply_setting(slug, views, settings, view)
    st.session_state[preset_key(slug)] = None      # the picker no longer names a preset
    st.rerun(scope="app")


def _show_active_step(slug: str, views: Sequence[View], steps) -> None:
    """"Show me": the settings of the step the tour is at WHEN the click arrives. (A click on
    the button while the rerun that draws the next step is under way reaches the callback
    registered by the run before: its arguments would be the previous step's.)"""
    active = st.session_state.get(tour_key(slug))
    if active is not None and 0 <= active < len(steps):
        step = steps[active]
        _apply_everywhere(slug, views, step.settings, step.view)


def _present_header(topic, presets, steps, views, slug: str) -> None:
    """Classroom mode: ONE line (title, preset picker, tour arrows), so the screen height goes
    to the figure; the sentence becomes the title's tooltip and the formula moves under the
    tabs (topic_page)."""
    head = st.columns([1.5, 1.25, 1.25], vertical_alignment="center", gap="small")
    with head[0]:
        st.title(topic.title, help=topic.sentence)
    if presets:
        with head[1]:
            _preset_picker(slug, presets, views)
    if steps:
        with head[2]:
            _tour_bar(slug, steps, views, counter=False)


def _header(topic, formula: str | None, presets, steps, views, slug: str) -> None:
    """Title and sentence on the left; preset picker and tour over the formula on the right."""
    head = st.columns([2.1, 2.9], vertical_alignment="top", gap="medium")
    with head[0]:
        st.title(topic.title)
        st.caption(topic.sentence)
    with head[1]:
        pick, tour = st.columns(2, gap="small")
        with pick:
            if presets:
                _preset_picker(slug, presets, views)
        with tour:
            if steps:
                _tour_bar(slug, steps, views)
        if formula:
            st.latex(formula)


def _preset_picker(slug: str, presets, views) -> None:
    key = preset_key(slug)

    def _apply() -> None:
        chosen = st.session_state.get(key)
        if chosen in presets:
            st.session_state[tour_key(slug)] = None
            apply_setting(slug, views, presets[chosen].settings, presets[chosen].view)

    st.selectbox("Preset", list(presets), index=None, placeholder=CHOOSE, key=key,
                 on_change=_apply, label_visibility="collapsed",
                 help="Each preset sets the controls (and opens the tab) to show one "
                      "phenomenon; its text appears beside the figure.")


def _tour_bar(slug: str, steps, views, counter: bool = True) -> None:
    key = tour_key(slug)
    active = st.session_state.get(key)
    n = len(steps)

    def _go(i: int | None) -> None:
        st.session_state[key] = i
        if i is not None:        # a step's settings replace the preset's: the picker must not
            st.session_state[preset_key(slug)] = None          # keep naming the old preset

    def _step_by(delta: int) -> None:
        # from the step the tour is at when the click arrives, not when the arrow was drawn:
        # a click while the next step's rerun is drawing reaches the run before's callback
        at = st.session_state.get(key)
        if at is not None and 0 <= at < n:
            _go(min(max(at + delta, 0), n - 1))

    if active is None or not 0 <= active < n:
        st.button(f"Guided tour ({n} steps)", key=f"{key}__start", on_click=_go, args=(0,),
                  icon=":material/school:", width="stretch")
        return
    cols = st.columns([1, 1, 1], gap="small")
    cols[0].button("", key=f"{key}__prev", on_click=_step_by, args=(-1,),
                   icon=":material/chevron_left:", disabled=active == 0, width="stretch",
                   help="Previous step")
    cols[1].button("", key=f"{key}__next", on_click=_step_by, args=(1,),
                   icon=":material/chevron_right:", disabled=active == n - 1,
                   width="stretch", help="Next step")
    cols[2].button("", key=f"{key}__close", on_click=_go, args=(None,),
                   icon=":material/close:", width="stretch", help="Close the tour")
    if counter:                     # (the card beside the figure also says "k/N")
        st.caption(f"Tour step {active + 1} of {n}")


def _claim_list(claims, state, on_screen: bool, own=None,
                run_key: str | None = None) -> Callable[[], None] | None:
    """Each claim of the card with its value measured live on the settings on screen
    (ui.claims.claim_line: the value tests/test_claims.py asserts); `own`: settings the
    text's own action changes, read at the text's values. A claim read on the live run
    (`Claim.run`) on a tab that trains live (`run_key`, its live panel) shows that run's
    value once the run has reached the claim's iteration (ui.claims.run_line); the live panel
    is told that iteration, so a frame passing it redraws the page. Returns what writes the
    lines again once the tab has drawn this run's frame (the view the card read before it
    may be the previous trainer's), or None."""
    if not claims:
        return None
    from ui.claims import claim_line, run_line
    settings = state.values(own) if (on_screen and state is not None) else None
    on_run = [c for c in claims if c.run is not None] if (run_key and settings is not None) else []
    if not on_run:
        st.markdown("\n".join(f"- {claim_line(c, settings)}" for c in claims))
        return None
    keys = live_keys(run_key)
    st.session_state[keys.claim_marks] = tuple(sorted({c.run.at for c in on_run}))
    slot = st.empty()

    def write() -> None:
        view, seed = st.session_state.get(keys.view), session.seed()
        slot.markdown("\n".join(
            f"- {run_line(c, view, settings, seed) if c in on_run else claim_line(c, settings)}"
            for c in claims))

    write()
    return write


def _note_card(slug: str, presets, steps, views, state=None,
               run_key: str | None = None) -> Callable[[], None] | None:
    """The text of the active tour step (with Show me), else of the applied preset, at the
    top of the controls column: beside the figure, never above it. The words come first,
    then the claim lines (the measured numbers), in a smaller type on the projector
    (CLAIMS_KEY, assets/classroom.css) so that words and numbers both fit the first screen.
    Returns what writes the claim lines again after the tab's live frame (_claim_list), or
    None."""
    if run_key:                        # the card names its claims' iterations anew each run
        st.session_state.pop(live_keys(run_key).claim_marks, None)
    if lesson_player.card(slug):
        return None
    active = st.session_state.get(tour_key(slug))
    if steps and active is not None and 0 <= active < len(steps):
        step = steps[active]
        with st.container(border=True, key=f"{slug}__card"):
            st.markdown(f"**{active + 1}/{len(steps)} · {step.title}**")
            if step.settings or step.view:   # before the text: on the first screen always
                st.button("Show me", key=f"{tour_key(slug)}__show", type="primary",
                          icon=":material/visibility:", width="stretch",
                          on_click=_show_active_step, args=(slug, views, steps))
            st.markdown(step.body)
            with st.container(key=CLAIMS_KEY):
                return _claim_list(step.claims, state, settings_match(step.held),
                                   {k: step.settings[k] for k in step.acts_on}, run_key)
    chosen = st.session_state.get(preset_key(slug))
    if presets and chosen in presets:
        preset = presets[chosen]
        if settings_match(preset.held):
            if preset.description:
                with st.container(key=f"{slug}__preset_card"):
                    st.info(f"**{chosen}.** {preset.description}", icon=":material/lightbulb:")
                    with st.container(key=CLAIMS_KEY):
                        return _claim_list(preset.claims, state, True,
                                           {k: preset.settings[k] for k in preset.acts_on},
                                           run_key)
        else:
            st.caption(f"Controls changed since the preset “{chosen}” was applied.")
    return None


def _split(view: View) -> tuple[float, float]:
    """Controls : figure width; classroom mode gives the figure a bit more (the projector's
    figure must cover at least 45% of the screen)."""
    controls, figure = view.split
    return (controls * PRESENT_CONTROLS, figure) if session.classroom() else (controls, figure)


def _run_view(slug: str, view: View, presets, steps, views, state=None) -> None:
    def body() -> None:
        if len(views) > 1 and st.session_state.get(view_key(slug), view.title) != view.title:
            st.rerun(scope="app")      # a fragment rerun after another tab was asked for
        left, right = st.columns(_split(view), gap="medium")
        notes = st.container()
        with left:
            rewrite = _note_card(slug, presets, steps, views, state,
                                 view.live.key if view.live is not None else None)
        with user_errors(f"draw the {view.title.lower()} view"):
            view.draw(Panel(left, right, notes))
        if rewrite is not None:            # the claims read on this run's frame, not the last
            rewrite()

    if view.fragment:
        st.fragment(body)()
    else:
        body()


def topic_page(slug: str, *, state, views: Sequence[View], formula: str | None = None,
               presets: Mapping[str, Any] | None = None, steps: Sequence[Any] = ()) -> None:
    """Draw the page `slug`: compact header with presets and the tour, then one keyed tab per
    view (only the open one runs, inside its own fragment). `state` is the page's StateTable:
    presets and steps may only name its keys (tests/pages/test_skeleton.py checks)."""
    topic = TOPICS_BY_SLUG[slug]
    presets = presets or {}
    titles = [v.title for v in views]
    url_check.apply(state[k] for k in state)    # every URL value, drawn now or later
    if len(views) > 1:
        url_check.apply([Control(view_key(slug), titles[0], "View", kind="selectbox",
                                 options=titles)])
    url_check.declare_page()                    # unknown URL parameters dropped after the run
    lesson_player.enter(slug, state, views)     # a slide's settings, over the URL's
    present = session.classroom()
    viewport.watch()                  # figure heights follow the window (projector or laptop)
    if present:
        _present_header(topic, presets, steps, views, slug)
    else:
        _header(topic, formula, presets, steps, views, slug)
    if st.session_state.get(view_key(slug)) not in (None, *titles):
        st.session_state[view_key(slug)] = titles[0]          # stale value from an old URL
    hold_asked_view(st.session_state, slug)
    if len(views) == 1:
        _run_view(slug, views[0], presets, steps, views, state)
    else:
        tabs = st.tabs(titles, key=view_key(slug), bind="query-params", on_change="rerun")
        for tab, view in zip(tabs, views):
            if tab.open:
                with tab:
                    _run_view(slug, view, presets, steps, views, state)
    if present and formula:
        st.latex(formula)
