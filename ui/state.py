"""A page's state, declared once: every widget key with its default, label, range or options
and whether the URL carries it. Widgets, presets, tour steps, URL binding and tests all read
the same table (in the spirit of tensorflow/playground's state.ts).

    STATE = StateTable([
        Control("gd_kappa", 20, "Condition number κ", kind="select_slider", options=KAPPAS),
        Control("gd_steps", 200, "Steps", kind="slider", lo=10, hi=1000, step=10),
        Control("gd_methods", ["gd", "adam"], "Methods", kind="multiselect",
                options=list(OPTIMIZERS), format_func=label),
    ])
    kappa = STATE.widget("gd_kappa")          # draws it (bound to ?gd_kappa=), returns the value
    s = STATE.values()                        # {key: current value}, defaults where not drawn

A value outside the control's range (a preset, a bad URL value, a range that depends on other
widgets) is clamped or replaced by the default before the widget is drawn, never raised; a bad
URL value is also named in the page's notice (ui.url_check).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import streamlit as st

from ui import url_check

KINDS = ("slider", "select_slider", "selectbox", "radio", "segmented", "multiselect", "number",
         "checkbox", "toggle", "text")


@dataclass(frozen=True)
class Control:
    """One widget of a page. `lo`/`hi`/`step` for slider and number; `options` for the
    select kinds; `url=False` for state a URL should not carry (it is then kept while the
    widget is hidden on the page, e.g. in another tab)."""
    key: str
    default: Any
    label: str
    kind: str = "slider"
    lo: float | int | None = None
    hi: float | int | None = None
    step: float | int | None = None
    options: Sequence[Any] | None = None
    format_func: Callable[[Any], str] | None = None
    help: str | None = None
    url: bool = True
    fmt: str | None = None          # printf format of sliders / number inputs
    extra: Mapping[str, Any] = field(default_factory=dict)   # other st.* keyword arguments

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.key}: unknown control kind {self.kind!r}")
        if not self.valid(self.default):
            raise ValueError(f"{self.key}: default {self.default!r} is outside its range")

    # ----------------------------------------------------------------- validation
    def valid(self, value: Any, lo: Any = None, hi: Any = None) -> bool:
        """True when `value` is a value this control can show (within [lo, hi] if given)."""
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        if self.kind in ("slider", "number"):
            values = value if isinstance(value, (list, tuple)) else [value]
            return all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       and (lo is None or v >= lo) and (hi is None or v <= hi) for v in values)
        if self.kind in ("checkbox", "toggle"):
            return isinstance(value, bool)
        if self.kind == "text":
            return isinstance(value, str)
        if self.kind == "multiselect":
            return isinstance(value, (list, tuple)) and all(v in self.options for v in value)
        return value in (self.options or ())

    def coerce(self, value: Any, lo: Any = None, hi: Any = None) -> Any:
        """`value` made valid: numbers clamped into [lo, hi], unknown options dropped or
        replaced by the default."""
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        if self.valid(value, lo, hi):
            return value
        if self.kind in ("slider", "number") and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and value == value:
            v = min(max(value, lo if lo is not None else value), hi if hi is not None else value)
            return type(self.default)(v) if isinstance(self.default, (int, float)) else v
        if self.kind == "multiselect" and isinstance(value, (list, tuple)):
            return [v for v in value if v in self.options]
        default = self.default
        if self.kind in ("slider", "number") and lo is not None and hi is not None:
            default = min(max(default, lo), hi)
        return default

    # ----------------------------------------------------------------- drawing
    def draw(self, box=None, lo: Any = None, hi: Any = None, **overrides: Any) -> Any:
        """Draw the widget in `box` (default: the current container) and return its value.
        `lo`/`hi` override the declared range (a range that depends on other widgets); a
        session value outside it is clamped first."""
        box = box or st
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        if self.url:
            url_check.apply([self], {self.key: (lo, hi)})
        current = st.session_state.get(self.key)
        if current is not None and not self.valid(current, lo, hi):
            st.session_state[self.key] = self.coerce(current, lo, hi)
        default = self.coerce(self.default, lo, hi)
        label = overrides.pop("label", self.label)
        common: dict[str, Any] = {"key": self.key, "help": self.help, **self.extra}
        if self.url:
            common["bind"] = "query-params"
        else:
            common["persist_state"] = "page"
        common.update(overrides)
        draw = _DRAWERS[self.kind]
        return draw(box, self, label, default, lo, hi, common)


def _fmt(c: Control) -> dict[str, Any]:
    return {"format": c.fmt} if c.fmt else {}


def _ff(c: Control) -> dict[str, Any]:
    return {"format_func": c.format_func} if c.format_func else {}


def _index(c: Control, default: Any) -> int:
    return list(c.options).index(default)


_DRAWERS: dict[str, Callable[..., Any]] = {
    "slider": lambda box, c, label, d, lo, hi, kw: box.slider(
        label, lo, hi, d, c.step, **_fmt(c), **kw),
    "number": lambda box, c, label, d, lo, hi, kw: box.number_input(
        label, lo, hi, d, c.step, **_fmt(c), **kw),
    "select_slider": lambda box, c, label, d, lo, hi, kw: box.select_slider(
        label, list(c.options), d, **_ff(c), **kw),
    "selectbox": lambda box, c, label, d, lo, hi, kw: box.selectbox(
        label, list(c.options), _index(c, d), **_ff(c), **kw),
    "radio": lambda box, c, label, d, lo, hi, kw: box.radio(
        label, list(c.options), _index(c, d), **_ff(c), **kw),
    "segmented": lambda box, c, label, d, lo, hi, kw: box.segmented_control(
        label, list(c.options), default=d, required=True, **_ff(c), **kw),
    "multiselect": lambda box, c, label, d, lo, hi, kw: box.multiselect(
        label, list(c.options), list(d), **_ff(c), **kw),
    "checkbox": lambda box, c, label, d, lo, hi, kw: box.checkbox(label, d, **kw),
    "toggle": lambda box, c, label, d, lo, hi, kw: box.toggle(label, d, **kw),
    "text": lambda box, c, label, d, lo, hi, kw: box.text_input(label, d, **kw),
}


class StateTable(Mapping[str, Control]):
    """The declared controls of one page, by key."""

    def __init__(self, controls: Iterable[Control]):
        self._controls: dict[str, Control] = {}
        for c in controls:
            if c.key in self._controls:
                raise ValueError(f"control {c.key!r} declared twice")
            self._controls[c.key] = c

    def __getitem__(self, key: str) -> Control:
        return self._controls[key]

    def __iter__(self):
        return iter(self._controls)

    def __len__(self) -> int:
        return len(self._controls)

    @property
    def defaults(self) -> dict[str, Any]:
        """{key: declared default}."""
        return {k: c.default for k, c in self._controls.items()}

    def widget(self, key: str, box=None, **overrides: Any) -> Any:
        """Draw the control `key` (see Control.draw) and return its value."""
        return self._controls[key].draw(box, **overrides)

    def value(self, key: str) -> Any:
        """The current value of `key`: the session's (made valid), else the default."""
        c = self._controls[key]
        v = st.session_state.get(key, c.default)
        return v if c.valid(v) else c.coerce(v)

    def values(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """{key: current value} for every control, with `overrides` on top."""
        out = {k: self.value(k) for k in self._controls}
        out.update(overrides or {})
        return out

    def resolve(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The full settings a preset or step produces: defaults with `settings` on top
        (what tests and claims use, independent of any session)."""
        unknown = set(settings) - set(self._controls)
        if unknown:
            raise KeyError(f"settings name undeclared keys: {sorted(unknown)}")
        return {**self.defaults, **settings}

    def problems(self, settings: Mapping[str, Any]) -> list[str]:
        """What is wrong with a preset/step setting: undeclared keys, values out of range."""
        out = [f"{k}: not in the state table" for k in settings if k not in self._controls]
        out += [f"{k}: {v!r} is not a valid value" for k, v in settings.items()
                if k in self._controls and not self._controls[k].valid(v)]
        return out
