"""The lesson player: ?lesson=<id>&slide=<n> opens slide n of a lesson on its page, with the
slide's settings applied and its tab open, and shows the slide's title, text and source
beside the figure with Previous/Next buttons (and the keys a presenter's clicker sends:
→ ← PageDown PageUp). The URL always names the slide on screen, so a slide link can be shared.

Hooks into the page skeleton (ui/page.py): `enter(slug, state, views)` at the top of a topic
page (switches to the slide's page, applies the slide once per visit) and `card(slug)` at the
top of the controls column (draws the slide). The gallery calls `enter(None)` so a lesson link
to the home page lands on its slide.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import streamlit as st

from ui import live_hooks
from ui import lesson_library as library
from ui.lesson_format import Lesson, LessonError, Slide
from ui.lesson_gallery import builder
from ui.live_keys import live_keys
from ui.page_keys import (apply_setting, preset_key,
                          tour_key)

LESSON, SLIDE = "lesson", "slide"
KEPT_PARAMS = ("classroom", "seed", "device")   # what a lesson keeps in the URL across pages
APPLIED_KEY = "_lesson_applied"                 # (lesson id, slide, page) applied last
PLAY_KEY = "_lesson_play"                       # live key of the slide that plays
PLAY_NONCE = "_lesson_play_nonce"               # one Play press per visit of such a slide
NEXT_KEY, PREV_KEY, CLOSE_KEY = "lesson_next", "lesson_prev", "lesson_close"

# Presses a live panel's Play button once (per token) when it appears and is not playing yet.
PLAY_JS = """<script>
(() => {
  const token = TOKEN, sel = BUTTON;
  window.__dlplayPlayed = window.__dlplayPlayed || {};
  if (window.__dlplayPlayed[token]) return;
  let tries = 0;
  const timer = setInterval(() => {
    const b = document.querySelector(sel);
    if (b && !b.disabled && b.innerText.includes("Play")) {
      window.__dlplayPlayed[token] = true; clearInterval(timer); b.click();
    } else if (b && b.innerText.includes("Pause")) {
      window.__dlplayPlayed[token] = true; clearInterval(timer);
    } else if (++tries > 120) clearInterval(timer);
  }, 250);
})();
</script>"""

# Clicks the Next/Previous button when a presenter's key arrives (not while typing in a field
# or moving a slider). Installed once per browser tab; harmless on pages without a lesson. A
# key that arrives while a rerun swaps the button out (or holds it disabled) waits for it, up
# to 6 s (a loaded server's rerun), instead of being lost: the class would see the slide stay
# put; one that arrives while the rerun has the whole card out waits 1.5 s for the card.
# A click can still reach the server while a rerun is drawing the card: the server then takes
# it for the button of the run before, the slide before's (_go ignores it). So when the slide
# counter has not moved once the page has been quiet for 2 s, the key presses once more, at
# most twice: the button names the slide it goes to, so a second press never skips a slide.
KEYS_JS = """<script>
(() => {
  if (window.__dlplayLessonKeys) return;
  window.__dlplayLessonKeys = true;
  const moves = {ArrowRight: "next", PageDown: "next", ArrowLeft: "prev", PageUp: "prev"};
  const card = () => document.querySelector('.st-key-lesson_card');
  const busy = () => document.querySelector('[data-stale="true"], '
      + '[data-testid="stStatusWidget"]');
  const counter = () => {
    const c = card(), m = c && String(c.innerText || "").match(/\\d+\\/\\d+/);
    return m ? m[0] : null;
  };
  const press = (move, tries, again) => {
    const button = document.querySelector(`.st-key-lesson_${move} button`);
    if (button && !button.disabled) {
      const was = counter();
      button.click();
      if (was !== null && again > 0) check(move, was, again, 0, 0);
    } else if (tries > 0) setTimeout(() => press(move, tries - 1, again), 150);
  };
  const check = (move, was, again, quiet, waited) => setTimeout(() => {
    if (counter() !== was) return;                  // the slide moved (or the page did)
    quiet = busy() ? 0 : quiet + 1;
    if (quiet >= 4) press(move, 40, again - 1);
    else if (waited < 120) check(move, was, again, quiet, waited + 1);
  }, 500);
  const later = (move, tries) => {      // the card swapped out by a rerun: wait for it
    if (card()) press(move, 40, 2);
    else if (tries > 0) setTimeout(() => later(move, tries - 1), 150);
  };
  document.addEventListener("keydown", (e) => {
    const move = moves[e.key];
    if (!move || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t && t.closest && t.closest('input, textarea, select, [contenteditable="true"], '
        + '[role="slider"], [role="combobox"], [role="listbox"], [role="tab"]')) return;
    if (!card()) { later(move, 10); return; }      // no lesson here (or not yet): not ours
    e.preventDefault();
    press(move, 40, 2);
  }, true);
})();
</script>"""


def requested() -> tuple[str, int] | None:
    """(lesson id, slide number from 1) named by the URL, else None."""
    lesson_id = str(st.query_params.get(LESSON, "")).strip()
    if not lesson_id:
        return None
    try:
        n = int(str(st.query_params.get(SLIDE, "1")))
    except ValueError:
        n = 1
    return lesson_id, n


def active() -> tuple[Lesson, int] | None:
    """The lesson and slide index (from 0) the URL names; a bad link shows why and plays
    nothing (None)."""
    req = requested()
    if req is None:
        return None
    lesson_id, n = req
    try:
        lesson = library.find(lesson_id, st.session_state)
    except LessonError as exc:
        st.error(f"Could not open the lesson: {exc}", icon=":material/error:")
        return None
    return lesson, min(max(n, 1), len(lesson.slides)) - 1


def slide_params(lesson_id: str, index: int) -> dict[str, str]:
    """The query parameters of slide `index` (from 0): the lesson, the slide, and the
    classroom/seed/device choices already in the URL."""
    kept = {k: str(st.query_params[k]) for k in KEPT_PARAMS if k in st.query_params}
    if st.session_state.get("classroom"):
        kept["classroom"] = "1"
    return {**kept, LESSON: lesson_id, SLIDE: str(index + 1)}


def enter(slug: str | None, state=None, views: Sequence[Any] = ()) -> Slide | None:
    """At the top of a page: if the URL names a lesson slide of another page, switch there;
    on the slide's own page apply its settings and tab once per visit. Returns the slide.
    Also draws the sidebar's "My lesson" builder on every topic page."""
    if slug is not None:
        builder(slug, state, views)
    got = active()
    if got is None:
        return None
    lesson, index = got
    slide = lesson.slides[index]
    if slide.page != slug:
        st.switch_page(f"topics/{slide.page}/page.py",
                       query_params=slide_params(lesson.id, index))
    visit = (lesson.id, index, slug)
    if st.session_state.get(APPLIED_KEY) != visit:
        _apply(slide, slug, state, views)
        st.session_state[APPLIED_KEY] = visit
    if str(st.query_params.get(SLIDE)) != str(index + 1):
        st.query_params[SLIDE] = str(index + 1)
    return slide


def _apply(slide: Slide, slug: str, state, views) -> None:
    _skip_training()          # a slide reached without Next/Previous (the URL) leaves one too
    st.session_state[tour_key(slug)] = None
    st.session_state.pop(preset_key(slug), None)
    settings = {k: v for k, v in slide.settings.items() if state is None or k in state}
    apply_setting(slug, views, settings, slide.view)
    if slide.play:
        # A fresh trainer for the slide: the live panel (live/controls.py) drops its trainer and
        # builds a new one, paused, on this run's draw; _start_play presses Play on the run after.
        st.session_state[live_keys(slide.play).reset_asked] = True
        st.session_state[PLAY_KEY] = slide.play
        st.session_state[PLAY_NONCE] = st.session_state.get(PLAY_NONCE, 0) + 1
        st.session_state.pop(live_keys(slide.play).train_reached, None)
        if slide.train is not None:         # the panel's Play stops by itself at N
            st.session_state[live_keys(slide.play).train_to] = slide.train


def _go(lesson_id: str, shown: int, index: int) -> None:
    """Button callback: the URL names the new slide; the full rerun that follows applies it
    (or switches page). `shown`: the slide the button was drawn on; a click that arrives after
    the page has moved on (a replayed click of a coalesced run) is ignored."""
    applied = st.session_state.get(APPLIED_KEY)
    if applied is not None and applied[:2] != (lesson_id, shown):
        return
    _skip_training()
    st.query_params[LESSON] = lesson_id          # set one by one: classroom, seed and the
    st.query_params[SLIDE] = str(index + 1)      # widgets' own parameters stay
    st.session_state.pop(APPLIED_KEY, None)
    st.session_state.pop(PLAY_KEY, None)
    st.rerun(scope="app")


def _skip_training() -> None:
    """Leaving a slide that trains to N: before N its training stops where it is (paused, in
    whichever process trains it); Play and Reset no longer stop at N."""
    key = st.session_state.get(PLAY_KEY)
    if key is None:
        return
    st.session_state.pop(live_keys(key).train_reached, None)   # Reset off the slide: no cap
    if st.session_state.pop(live_keys(key).train_to, None) is None:
        return
    live_hooks.pause(st.session_state, key)


def _close() -> None:
    _skip_training()
    for k in (LESSON, SLIDE):
        if k in st.query_params:
            del st.query_params[k]
    st.session_state.pop(APPLIED_KEY, None)
    st.rerun(scope="app")


def card(slug: str) -> bool:
    """The slide beside the figure: lesson and position, title, text, source, and the
    Previous/Next/Close buttons. False (nothing drawn) outside a lesson of this page."""
    got = _active_quiet()
    if got is None:
        return False
    lesson, index = got
    slide = lesson.slides[index]
    if slide.page != slug:
        return False
    n = len(lesson.slides)
    with st.container(border=True, key="lesson_card"):
        cols = st.columns([1, 1.4, 1, 1], gap="small", vertical_alignment="center")
        cols[0].button("", key=PREV_KEY, icon=":material/chevron_left:", width="stretch",
                       disabled=index == 0, on_click=_go, args=(lesson.id, index, index - 1),
                       help="Previous slide (← or Page Up)")
        cols[1].markdown(f"**{index + 1}/{n}**", help=lesson.title)
        cols[2].button("", key=NEXT_KEY, icon=":material/chevron_right:", width="stretch",
                       type="primary", disabled=index == n - 1, on_click=_go,
                       args=(lesson.id, index, index + 1), help="Next slide (→ or Page Down)")
        cols[3].button("", key=CLOSE_KEY, icon=":material/close:", width="stretch",
                       on_click=_close, help="Leave the lesson (the page stays as it is)")
        st.markdown(f"**{slide.title}**")
        st.markdown(slide.text)
        if slide.play:
            _start_play()
            st.caption(_training_caption(slide))
        if slide.source is not None:
            st.caption(f"{lesson.title} · reproduces {slide.source.label}.")
    st.html(KEYS_JS, unsafe_allow_javascript=True)
    return True


def _training_caption(slide: Slide) -> str:
    if slide.train is None:
        return ("This slide trains live: the figure fills in as it runs. Pause stops it; → "
                "moves on whenever you like.")
    if st.session_state.get(live_keys(slide.play).train_reached) == slide.train:
        return (f"Trained to iteration {slide.train:,}, where the text reads the figure. Play "
                f"trains on.")
    return (f"This slide trains to iteration {slide.train:,} and stops there (the line above "
            f"the figure counts). Pause stops it; → skips ahead.")


def _start_play() -> None:
    """Press the slide's Play button once it is on screen, as the teacher would (a script in
    the browser, once per slide visit): a new trainer starts paused, and only a click goes
    through the live panel's own path (live/controls.py) without a rerun of ours."""
    key = st.session_state.get(PLAY_KEY)
    if key is None:
        return
    token = json.dumps(f"{key}:{st.session_state.get(APPLIED_KEY)}:{st.session_state.get(PLAY_NONCE, 0)}")
    button = json.dumps(f".st-key-{key}__play button")
    st.html(PLAY_JS.replace("TOKEN", token).replace("BUTTON", button),
            unsafe_allow_javascript=True)


def _active_quiet() -> tuple[Lesson, int] | None:
    """active() without a second error message (enter() has shown it)."""
    req = requested()
    if req is None:
        return None
    try:
        lesson = library.find(req[0], st.session_state)
    except LessonError:
        return None
    return lesson, min(max(req[1], 1), len(lesson.slides)) - 1
