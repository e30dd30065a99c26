"""The live-training fragment in a real browser: Play advances the trainer on its own
(run_every ticks), Pause stops it, Step advances by one frame."""
from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e


def _steps(page) -> int:
    text = page.get_by_text(re.compile(r"^loss=")).first.inner_text()
    return int(text.split("steps=")[1])


def test_play_pause_step(page, harness_url):
    page.goto(harness_url)
    page.wait_for_selector("text=steps=0", timeout=90_000)
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_selector("text=steps=25", timeout=30_000)

    page.get_by_role("button", name="Play", exact=True).click()
    # several frames pass without any user action: the fragment reruns by itself
    page.wait_for_function(
        "() => { const m = document.body.innerText.match(/steps=(\\d+)/);"
        " return m && parseInt(m[1]) >= 100; }", timeout=60_000)
    page.get_by_role("button", name="Pause", exact=True).click()
    page.get_by_role("button", name="Play", exact=True).wait_for(timeout=30_000)
    wait_idle(page, heading=False)
    paused_at = _steps(page)
    page.wait_for_timeout(2000)
    assert _steps(page) == paused_at          # nothing moves while paused
    assert page.locator('[data-testid="stException"]').count() == 0
