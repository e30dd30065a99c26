"""URL parameters checked in one place, against the declared controls (ui.state.Control),
before any widget bound to them is drawn.

A shared link can carry anything: `?seed=inf`, `?gd_steps=1e400`, `?gan_loss=<10 kB>`,
`?nosuch=1`. Streamlit parses a bound widget's URL value itself and either drops a bad one
silently or, for an integer input given a non-finite number, raises (OverflowError: the
whole page turns into an error box). So each URL value is parsed here first, by the control's
kind, and a bad one is replaced in the URL the widget reads its initial value from:

    number / slider    parsed with float(); NaN or text -> default; ±inf and out-of-range
                       values clamped into [lo, hi] (no bound -> default); int controls rounded
    checkbox / toggle  "true" / "false" (any case), else the default
    select kinds       the option's label (format_func) must be one of the labels
    multiselect        unknown labels dropped; nothing left -> the default
    text               at most `max_chars` (else MAX_TEXT) characters, else the default

Each replacement is a Fix(key, given, used); the page shows them in one short notice
(`notice_text`). Parameters that no control of the page (or the sidebar) declares are dropped
with a notice too, after the page ran (`drop_unknown`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ui.plain_text import elide, plain

MAX_TEXT = 2000         # characters a URL-bound text box accepts unless it declares max_chars
SHOWN_FIXES = 4         # fixes told in full; the others only by name
SHOWN = 40              # characters of a bad value repeated in the notice
# Parameters that are not widgets: classroom mode (ui.sidebar), Streamlit's embed options,
# the lesson player's slide address (ui.lesson_player).
NOT_WIDGETS = frozenset({"classroom", "embed", "embed_options", "lesson", "slide"})
NOTICE_KEY = "_url_fixes"
NOTICE_VALUES = "_url_notice_values"    # the page's control values when the notice first showed
NOTICE_KEYS = "_url_notice_keys"        # the controls the last finished page run checked
DISMISS_KEY = "_url_notice_dismiss"

DECLARED_KEY = "_url_declared"   # the keys this run checked (session state, per run)
PAGE_KEY = "_url_page_declared"  # set once the page's whole table was checked this run


@dataclass(frozen=True)
class Fix:
    key: str
    given: str        # the URL value as given (elided)
    used: str         # what the page uses instead ("" for a dropped parameter)

    def text(self) -> str:
        if not self.used:
            return f"{self.key} is not a setting of this page (ignored)"
        return f"{self.key}={self.given} is not valid; using {self.used}"


def _raw_values(raw: str | list[str]) -> list[str]:
    return list(raw) if isinstance(raw, (list, tuple)) else [raw]


def _label(control, option: Any) -> str:
    return str(control.format_func(option) if control.format_func else option)


def _number_url(v: Any) -> str:
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)


def _check_number(control, raws: list[str], lo: Any, hi: Any) -> list[Any] | None:
    """The values to use instead of `raws`, or None when they are valid."""
    default = control.default
    defaults = list(default) if isinstance(default, (list, tuple)) else [default]
    is_int = isinstance(defaults[0], int) and not isinstance(defaults[0], bool)
    if len(raws) != len(defaults):
        return defaults
    out, bad = [], False
    for raw, d in zip(raws, defaults):
        try:
            v = float(raw)
        except (TypeError, ValueError):
            out.append(d)
            bad = True
            continue
        if math.isnan(v):
            out.append(d)
            bad = True
            continue
        c = v
        if lo is not None and c < lo:
            c = lo
        if hi is not None and c > hi:
            c = hi
        if math.isinf(c):           # no bound on that side
            out.append(d)
            bad = True
            continue
        if is_int and c != int(c):
            c = round(c)
        c = int(c) if is_int else float(c)
        bad |= c != v
        out.append(c)
    return out if bad else None


def check_value(control, raw: str | list[str], lo: Any = None, hi: Any = None) -> str | list[str] | None:
    """The URL form of the value to use instead of `raw` for `control`, or None when `raw` is
    valid. `lo`/`hi` override the declared range."""
    lo = control.lo if lo is None else lo
    hi = control.hi if hi is None else hi
    raws = _raw_values(raw)
    kind = control.kind
    if kind in ("slider", "number"):
        fixed = _check_number(control, raws, lo, hi)
        if fixed is None:
            return None
        urls = [_number_url(v) for v in fixed]
        return urls if isinstance(control.default, (list, tuple)) else urls[0]
    if kind in ("checkbox", "toggle"):
        return None if raws[-1].lower() in ("true", "false") else str(control.default).lower()
    if kind == "text":
        limit = int(control.extra.get("max_chars") or MAX_TEXT)
        return None if len(raws[-1]) <= limit else str(control.default)
    labels = [_label(control, o) for o in control.options or ()]
    if kind == "multiselect":
        kept = [r for r in raws if r in labels]
        if len(kept) == len(raws):
            return None
        return kept or [_label(control, o) for o in control.default]
    if kind == "select_slider" and isinstance(control.default, (list, tuple)):
        if len(raws) == len(control.default) and all(r in labels for r in raws):
            return None
        return [_label(control, o) for o in control.default]
    return None if raws[-1] in labels else _label(control, control.default)


def _shown(url: str | list[str]) -> str:
    return ", ".join(_raw_values(url)) or "nothing"


def check(controls: Iterable[Any], params: Mapping[str, Any],
          bounds: Mapping[str, tuple[Any, Any]] | None = None) -> tuple[dict[str, Any], list[Fix]]:
    """({key: URL value to use instead}, fixes) for the URL-bound `controls` whose key is in
    `params` with an invalid value. Pure: no Streamlit."""
    out: dict[str, Any] = {}
    fixes: list[Fix] = []
    for c in controls:
        if not c.url or c.key not in params:
            continue
        lo, hi = (bounds or {}).get(c.key, (None, None))
        raw = params[c.key]
        fixed = check_value(c, raw, lo, hi)
        if fixed is not None:
            out[c.key] = fixed
            given = elide(", ".join(_raw_values(raw)))
            fixes.append(Fix(c.key, given, elide(_shown(fixed))))
    return out, fixes


def unknown(params: Iterable[str], known: Iterable[str] = ()) -> list[Fix]:
    """A fix for each parameter no control of this page (or the sidebar) declares."""
    names = NOT_WIDGETS | set(known)
    return [Fix(elide(k), "", "") for k in params if k not in names]


def _unknown_first(fixes: list[Fix]) -> list[Fix]:
    return sorted(fixes, key=lambda f: bool(f.used))


def notice_text(fixes: list[Fix]) -> str:
    """One short notice for the page (plain text: the values come from the URL)."""
    head = "This link carried a setting the page cannot use: " if len(fixes) == 1 else \
        "This link carried settings the page cannot use: "
    shown, rest = fixes[:SHOWN_FIXES], fixes[SHOWN_FIXES:]
    tail = ("; defaults also used for " + elide(", ".join(f.key for f in rest), 300)) if rest \
        else ""
    return head + "; ".join(f.text() for f in shown) + tail + "."


# ------------------------------------------------------------------ the Streamlit side
def _query_params():
    """Streamlit's QueryParams of this session (its initial values seed bound widgets)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_state.query_params()


def apply(controls: Iterable[Any], bounds: Mapping[str, tuple[Any, Any]] | None = None) -> None:
    """Check the URL values of `controls` and replace the bad ones, in the values widgets are
    seeded from and in the browser's URL; the fixes go into the page's notice."""
    import streamlit as st
    manager = _query_params()
    if manager is None:
        return
    controls = list(controls)
    declared = st.session_state.setdefault(DECLARED_KEY, set())
    declared.update(c.key for c in controls if c.url)
    with manager as qp:
        initial = qp._initial_query_params
        params = {c.key: initial[c.key] for c in controls if c.url and c.key in initial}
        if not params:
            return
        fixed, fixes = check(controls, params, bounds)
        for key, value in fixed.items():
            values = _raw_values(value)
            initial[key] = values
            if not qp.is_bound(key) and key in qp._query_params:
                qp._query_params[key] = values if len(values) > 1 else values[0]
        if fixed:
            qp._send_query_param_msg()
    if fixes:
        _record(st, fixes)


def declare_page() -> None:
    """Called by a page once its whole table is checked: only then may drop_unknown judge."""
    import streamlit as st
    st.session_state[PAGE_KEY] = True


def drop_unknown() -> None:
    """Drop URL parameters that no control this run checked declares (after a page that
    called declare_page ran; a run stopped before that judges nothing)."""
    import streamlit as st
    declared = st.session_state.pop(DECLARED_KEY, set())
    if not st.session_state.pop(PAGE_KEY, False):
        return
    st.session_state[NOTICE_KEYS] = sorted(declared)
    manager = _query_params()
    if manager is None:
        return
    with manager as qp:
        fixes = unknown(list(qp._query_params), declared)
        for f in fixes:
            for key in [k for k in qp._query_params if elide(k) == f.key]:
                del qp._query_params[key]
                qp._initial_query_params.pop(key, None)
        if fixes:
            qp._send_query_param_msg()
    if fixes:
        _record(st, fixes)


def _record(st, fixes: list[Fix]) -> None:
    have = st.session_state.setdefault(NOTICE_KEY, [])
    have.extend(f for f in fixes if f not in have)


def _dismiss() -> None:
    import streamlit as st
    for key in (NOTICE_KEY, NOTICE_VALUES):
        st.session_state.pop(key, None)


def _control_values(session_state) -> dict[str, Any]:
    return {k: session_state.get(k) for k in session_state.get(NOTICE_KEYS, ())}


def show_notice(box) -> None:
    """Draw the pending notice in `box` with a Dismiss button. It stays over reruns until the
    user dismisses it or changes one of the page's controls (or opens another page)."""
    import streamlit as st
    fixes = st.session_state.get(NOTICE_KEY)
    if not fixes:
        return
    values = _control_values(st.session_state)
    seen = st.session_state.setdefault(NOTICE_VALUES, values)
    if seen != values:
        _dismiss()
        return
    with box.container():
        st.warning(plain(notice_text(_unknown_first(fixes))), icon=":material/link_off:")
        st.button("Dismiss", key=DISMISS_KEY, on_click=_dismiss,
                  help="Hide this notice; the page already uses the values it names.")
