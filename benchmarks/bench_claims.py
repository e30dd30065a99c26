"""`python -m benchmarks claims`: every claim of every preset and tour step of every page,
the measured value next to its threshold (the numbers tests/test_claims.py asserts)."""
from __future__ import annotations

from benchmarks import Measurement
from ui.claims import page_claims
from ui.topics import TOPICS


def _entry(pc):
    def run() -> Measurement:
        value, ok = pc.claim.check(pc.settings)
        return Measurement(value, "", f"{'holds' if ok else 'FAILS'}: {pc.claim.threshold}")
    return run


BENCHMARKS = {pc.id: _entry(pc) for t in TOPICS for pc in page_claims(t.slug)}
