"""Claims: what a preset's or a tour step's text states as fact, as a measurement with a
threshold, computed by the same function the page draws from.

    Claim("GD error after one step", lambda s: race(s)["gd"].losses[1], hi=1e-12)

`measure` receives the full settings (the page's declared defaults with the preset's settings
on top, ui.state.StateTable.resolve) and returns one number; the claim holds when
lo <= value <= hi. tests/test_claims.py checks every claim of every page; `python -m benchmarks
claims` prints each measured value next to its threshold.

The card that shows a preset's or step's text lists its claims with the value measured live on
the settings on screen (`claim_line`, through the same `measured` that the tests call), so every
number the text states is on screen. A claim that needs training (slow) or another tab says so
(`needs`) instead of showing a number; a slow claim that says how to read it on the tab's live
run (`run=OnRun(...)`) shows the value measured on that run once the run has reached the
iteration it names, and until then how far the run is (`run_line`).
"""
from __future__ import annotations

import importlib

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class OnRun:
    """How a slow claim reads the live run on its tab, once the run has reached iteration
    `at`: the history metrics `metrics` at the last iteration <= `at` they were logged at (what
    a run stopped at `at` shows), combined by `combine` (default: the first metric's value);
    or `snapshot(view.snapshot())`
    for a quantity the run's snapshot keeps per iteration (read at `at` by that function).
    The claim's `measure` trains from scratch on its seeds (what the tests assert); this is
    the same quantity on the one run the class watches."""
    at: int
    metrics: tuple[str, ...] = ()
    combine: Callable[..., float] | None = None
    snapshot: Callable[[Any], float] | None = None
    seed: int | None = None     # the claim is about the run on this seed: others are not read
    when: Mapping[str, Any] = field(default_factory=dict)   # settings the run must have ...
    when_text: str = ""         # ... in words ("the curriculum on")

    def elsewhere(self, settings: Mapping[str, Any] | None, seed: int | None) -> str:
        """Why the run on screen is not the one the claim is about (another seed, other
        settings), in words; "" when it is (or when that is not known)."""
        if self.seed is not None and seed is not None and int(seed) != self.seed:
            return f"read on seed {self.seed} (this run: seed {seed}; the sidebar sets it)"
        if settings is not None and any(settings.get(k) != v for k, v in self.when.items()):
            return "read on a run with " + (self.when_text or "the text's settings")
        return ""

    def read(self, view: Any) -> tuple[int, float] | None:
        """(the iteration read, the value) from a live run's view (its `history`, or its
        `snapshot()`), or None when a metric was never logged up to `at`."""
        if self.snapshot is not None:
            return self.at, float(self.snapshot(view.snapshot()))
        step, values = None, []
        for name in self.metrics:
            steps, vals = view.history.as_arrays(name)
            upto = [i for i, s in enumerate(steps) if s <= self.at]
            if not upto:
                return None
            step = int(steps[upto[-1]]) if step is None else step
            values.append(float(vals[upto[-1]]))
        if step is None:
            return None
        value = self.combine(*values) if self.combine is not None else values[0]
        return step, float(value)


@dataclass(frozen=True)
class Claim:
    what: str                                           # the quantity, as the text names it
    measure: Callable[[Mapping[str, Any]], float]       # full settings -> the number
    lo: float = -math.inf
    hi: float = math.inf
    slow: bool = False                                  # needs training: a slow test
    fmt: Any = ""              # how the card prints the value: "{:.1%}", a function (YES_NO)
                               # or "" = 3 significant digits
    needs: str = ""            # not measurable on the screen the text is shown with: what it
                               # takes ("press Train"); the card says so instead of a number
    run: OnRun | None = None   # a slow claim read on the tab's live run (OnRun)

    def check(self, settings: Mapping[str, Any]) -> tuple[float, bool]:
        """(measured value, whether it lies in [lo, hi])."""
        value = measured(self, settings)
        return value, bool(self.lo <= value <= self.hi)

    def format(self, value: float) -> str:
        """The value as the card prints it."""
        if callable(self.fmt):
            return self.fmt(value)
        if self.fmt:
            return self.fmt.format(value)
        return format_number(value)

    @property
    def live(self) -> bool:
        """Measurable on the screen its text is shown with (no training, no other tab)."""
        return not (self.slow or self.needs)

    @property
    def bound(self) -> str:
        """What the ✓ checked, in the value's own format: " (≥ 85%)", " (0.6 to 1.1)"; the
        bound a text states ("over 85%") is then on the screen beside the value measured.
        Empty for a value printed in words (YES_NO)."""
        if callable(self.fmt):
            return ""
        lo, hi = self.lo > -math.inf, self.hi < math.inf
        if lo and hi:
            return f" ({self.format(self.lo)} to {self.format(self.hi)})"
        if lo or hi:
            return f" ({'≥' if lo else '≤'} {self.format(self.lo if lo else self.hi)})"
        return ""

    @property
    def threshold(self) -> str:
        if self.lo > -math.inf and self.hi < math.inf:
            return f"{self.lo:g} ≤ x ≤ {self.hi:g}"
        return f"≥ {self.lo:g}" if self.lo > -math.inf else f"≤ {self.hi:g}"


PERCENT = "{:.1%}"


def YES_NO(value: float) -> str:          # noqa: N802 - a format, named like PERCENT
    """A 0/1 measurement (does the digit flip?) as the card states it."""
    return "yes" if value >= 0.5 else "no"


def format_number(value: float) -> str:
    """3 significant digits; scientific notation outside [1e-3, 1e5)."""
    if not math.isfinite(value):
        return str(value)
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:.2e}".replace("e-0", "e-").replace("e+0", "e")


_MEASURED: dict[tuple, float] = {}          # (claim, settings) -> value; the card redraws often
_MEASURED_MAX = 512


def _settings_key(settings: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in settings.items()))


def measured(claim: Claim, settings: Mapping[str, Any]) -> float:
    """claim.measure(settings) as a float, memoised on the claim and the settings: the card and
    the tests read the value through this one function."""
    key = (id(claim), _settings_key(settings))
    if key not in _MEASURED:
        if len(_MEASURED) >= _MEASURED_MAX:
            _MEASURED.pop(next(iter(_MEASURED)))
        _MEASURED[key] = float(claim.measure(settings))
    return _MEASURED[key]


def claim_line(claim: Claim, settings: Mapping[str, Any] | None) -> str:
    """One markdown line of the card: the claim's value measured on `settings` (the settings on
    screen) with ✓ and the bound it checked when it holds, or why it is not measured here
    (with the bound it will be checked against). `settings` None: the screen
    does not show the text's settings yet (a tour step before "Show me")."""
    if claim.slow or claim.needs:      # not measured here: the bound the text states, still
        return f"{claim.what}: *{claim.needs or 'measured after training'}{claim.bound}*"
    if settings is None:
        return f"{claim.what}: *press Show me to measure it*"
    try:
        value, ok = claim.check(settings)
    except Exception:  # noqa: BLE001 - an unmeasurable setting is stated, never raised
        return f"{claim.what}: *not measurable on these settings*"
    mark = f"✓{claim.bound}" if ok else f"✗ (the text expects {claim.threshold})"
    return f"{claim.what}: **{claim.format(value)}** {mark}"


def run_line(claim: Claim, view: Any, settings: Mapping[str, Any] | None = None,
             seed: int | None = None) -> str:
    """One card line for a claim read on the live run (`claim.run`): `view` is the run's last
    drawn view (steps, history), or None before its first frame; `settings` and `seed` those
    of the run on screen. Before the claim's iteration: how far the run is; from then on the
    value that run logged there, with ✓ or ✗. A run on another seed or other settings than
    the claim's (OnRun.seed, OnRun.when) is not read: the line says which run it needs."""
    assert claim.run is not None
    elsewhere = claim.run.elsewhere(settings, seed)
    if elsewhere:
        return f"{claim.what}: *{elsewhere}{claim.bound}*"
    at, steps = claim.run.at, int(getattr(view, "steps", 0) or 0)
    if view is None or steps < at:
        return f"{claim.what}: *this run: {steps:,} / {at:,} iterations{claim.bound}*"
    got = claim.run.read(view)
    if got is None:
        return f"{claim.what}: *not logged on this run{claim.bound}*"
    step, value = got
    ok = bool(claim.lo <= value <= claim.hi)
    mark = f"✓{claim.bound}" if ok else f"✗ (the text expects {claim.threshold})"
    return f"{claim.what} · *this run, iteration {step:,}*: **{claim.format(value)}** {mark}"


@dataclass(frozen=True)
class PageClaim:
    """One claim of one page, with where it comes from and the settings it is measured on."""
    slug: str
    source: str            # 'preset "<name>"' or 'step k "<title>"'
    claim: Claim
    settings: Mapping[str, Any]

    @property
    def id(self) -> str:
        return f"{self.slug} · {self.source} · {self.claim.what}"


def page_module(slug: str):
    """The page module topics/<slug>/page.py (STATE, PRESETS, STEPS, VIEWS), imported without
    drawing: its footer runs only as __main__. Found by name because the kit sits below the
    topics (tests/test_layers.py): it never imports a topic's folder itself."""
    return importlib.import_module(f"topics.{slug}.page")


def page_claims(slug: str) -> list[PageClaim]:
    """Every claim of every preset and tour step of page `slug`."""
    module = page_module(slug)
    state = module.STATE
    out = [PageClaim(slug, f'preset "{name}"', c, state.resolve(p.settings))
           for name, p in module.PRESETS.items() for c in p.claims]
    out += [PageClaim(slug, f'step {i + 1} "{s.title}"', c, state.resolve(s.settings))
            for i, s in enumerate(module.STEPS) for c in s.claims]
    return out
