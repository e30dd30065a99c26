"""The VAE page's replay of the latent space in a real browser: Play steps through the
trainer's snapshots by itself (run_every ticks of a fragment), the axes keep one range for
every frame, play stops at the last snapshot, Pause stops it midway."""
from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import wait_for_counter, wait_idle

pytestmark = pytest.mark.e2e

EXCEPTION = '[data-testid="stException"]'
CAPTION = re.compile(r"Snapshot (\d+) of (\d+): iteration ([\d,]+), epoch ([\d.]+)")
PLAY = ".st-key-vae_snap_play button"
RANGES = """() => { const live = Array.from(document.querySelectorAll(
        '.st-key-vae_replay .js-plotly-plot')).filter(g => !g.closest('[data-stale="true"]')
        && g._fullLayout && g._fullLayout.xaxis);
    return live.length === 1 ? [live[0]._fullLayout.xaxis.range, live[0]._fullLayout.yaxis.range,
                                live[0]._fullLayout.title.text] : null; }"""   # null mid-redraw


def _state(page) -> tuple[int, int]:
    """(snapshot shown, 0-based; number of snapshots) from the caption under the replay."""
    text = page.get_by_text(CAPTION).first.inner_text()
    m = CAPTION.search(text)
    assert m, text
    return int(m.group(1)) - 1, int(m.group(2))


def test_replay_plays_by_itself_with_fixed_axes_and_stops(page, server_url):
    page.goto(f"{server_url}/vae?vae_snap_speed=8&vae_view=Replay+%26+interpolation")
    wait_idle(page)
    plot = page.locator(".st-key-vae_replay .js-plotly-plot")
    plot.wait_for(timeout=60_000)
    plot.scroll_into_view_if_needed()
    page.wait_for_function(RANGES, timeout=30_000)
    pos, n = _state(page)
    assert pos == n - 1 and n >= 50                      # the shipped model's last snapshot
    page.locator(PLAY).click()                           # Play at the last starts over
    page.locator(PLAY, has_text="Pause").wait_for(timeout=30_000)
    frames = {}                                          # plot title (epoch) -> axis ranges
    deadline = time.time() + 60
    while len(frames) < 5:                               # sample the moving replay
        assert time.time() < deadline, f"the replay did not move: {frames}"
        got = page.evaluate(RANGES)
        if got and _state(page)[0] < n - 1:
            frames[got[2]] = (tuple(got[0]), tuple(got[1]))
        page.wait_for_timeout(100)
    assert len(set(frames.values())) == 1                # 5 epochs shown, one pair of ranges
    wait_for_counter(page, "Snapshot", n - 1, n - 1)           # got there by itself, stopped
    page.locator(PLAY, has_text="Play").wait_for(timeout=30_000)
    wait_idle(page, heading=False)
    page.wait_for_timeout(1500)
    assert _state(page)[0] == n - 1

    page.locator(PLAY).click()                           # again from 0, then Pause midway
    page.locator(PLAY, has_text="Pause").wait_for(timeout=30_000)
    wait_for_counter(page, "Snapshot", 3, n - 10)
    page.locator(PLAY).click()
    page.locator(PLAY, has_text="Play").wait_for(timeout=30_000)
    wait_idle(page, heading=False)
    paused = _state(page)
    page.wait_for_timeout(2000)
    assert _state(page) == paused and paused[0] < n - 1
    assert page.locator(EXCEPTION).count() == 0
