"""Every claim of every preset and tour step of every page holds (viz/claims.py): the number
the text states, measured by the function the page draws from, inside its threshold."""
from __future__ import annotations

import pytest

from viz.claims import claim_line, page_claims
from viz.topics import TOPICS

CLAIMS = [c for t in TOPICS if t.ready for c in page_claims(t.slug)]


@pytest.mark.parametrize("pc", [pytest.param(c, marks=pytest.mark.slow) if c.claim.slow else c
                                for c in CLAIMS], ids=lambda c: c.id)
def test_claim_holds(pc):
    value, ok = pc.claim.check(pc.settings)
    assert ok, f"{pc.id}: measured {value:.6g}, expected {pc.claim.threshold}"
    if pc.claim.live:       # the card beside the figure prints this same value
        assert f"**{pc.claim.format(value)}** ✓" in claim_line(pc.claim, pc.settings), pc.id


def test_claims_exist():
    assert len(CLAIMS) >= 10
