"""Claims: what a preset's or a tour step's text states as fact, as a measurement with a
threshold, computed by the same function the page draws from.

    Claim("GD error after one step", lambda s: race(s)["gd"].losses[1], hi=1e-12)

`measure` receives the full settings (the page's declared defaults with the preset's settings
on top, viz.state.StateTable.resolve) and returns one number; the claim holds when
lo <= value <= hi. tests/test_claims.py checks every claim of every page; `python -m benchmarks
claims` prints each measured value next to its threshold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Claim:
    what: str                                           # the quantity, as the text names it
    measure: Callable[[Mapping[str, Any]], float]       # full settings -> the number
    lo: float = -math.inf
    hi: float = math.inf
    slow: bool = False                                  # needs training: a slow test

    def check(self, settings: Mapping[str, Any]) -> tuple[float, bool]:
        """(measured value, whether it lies in [lo, hi])."""
        value = float(self.measure(settings))
        return value, bool(self.lo <= value <= self.hi)

    @property
    def threshold(self) -> str:
        if self.lo > -math.inf and self.hi < math.inf:
            return f"{self.lo:g} ≤ x ≤ {self.hi:g}"
        return f"≥ {self.lo:g}" if self.lo > -math.inf else f"≤ {self.hi:g}"


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


def skeleton_module(slug: str):
    """The page module topic_pages/<slug>.py, imported without drawing (its footer runs only
    as __main__), or None when the page is not on the skeleton."""
    import importlib
    from viz.topics import ROOT
    source = (ROOT / "topic_pages" / f"{slug}.py").read_text(encoding="utf-8")
    if 'if __name__ == "__main__":' not in source or "topic_page(" not in source:
        return None
    return importlib.import_module(f"topic_pages.{slug}")


def page_claims(slug: str) -> list[PageClaim]:
    """Every claim of every preset and tour step of page `slug` (empty off the skeleton)."""
    module = skeleton_module(slug)
    if module is None:
        return []
    state = module.STATE
    out = [PageClaim(slug, f'preset "{name}"', c, state.resolve(p.settings))
           for name, p in module.PRESETS.items() for c in p.claims]
    out += [PageClaim(slug, f'step {i + 1} "{s.title}"', c, state.resolve(s.settings))
            for i, s in enumerate(module.STEPS) for c in s.claims]
    return out
