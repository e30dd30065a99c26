"""The sliding-window auto-play of the convolution page in a real browser: Play moves the
window by itself (run_every ticks of a fragment), the value shown at each position is
F.conv2d's output there, play stops at the last position, Pause stops it midway."""
from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from engine import conv
from tests.e2e.conftest import wait_for_counter, wait_idle

pytestmark = pytest.mark.e2e

EXCEPTION = '[data-testid="stException"]'
CAPTION = re.compile(r"Output \((\d+), (\d+)\) = Σ products = (-?[\d.]+) .*Position (\d+) of (\d+)")
PLAY = ".st-key-cv_play button"


def _state(page) -> tuple[int, float, int]:
    """(position, value shown, number of positions) from the caption under the figure."""
    text = page.get_by_text("Σ products").first.inner_text()
    m = CAPTION.search(text)
    assert m, text
    return int(m.group(4)) - 1, float(m.group(3)), int(m.group(5))


def test_play_runs_to_the_end_and_pause_stops(page, server_url):
    small = conv.downscale(conv.load_image("china (photo)", max_side=256), 5)
    ref = F.conv2d(torch.as_tensor(small)[None, None],
                   torch.as_tensor(conv.KERNELS["sobel x"])[None, None], padding=1)[0, 0].numpy()
    page.goto(f"{server_url}/convolution?convolution_view=Sliding+window&cv_anim_n=5&cv_speed=4")
    wait_idle(page)
    pos, value, n_pos = _state(page)
    assert (pos, n_pos) == (0, ref.size)
    page.locator(PLAY).click()
    page.get_by_role("button", name=re.compile("Pause")).wait_for(timeout=30_000)
    seen = {}
    while len(seen) < 4:                    # sample the moving window
        pos, value, _ = _state(page)
        seen[pos] = value
        page.wait_for_timeout(150)
    for p, v in seen.items():
        assert v == pytest.approx(ref.ravel()[p], abs=5e-5), (p, v)
    wait_for_counter(page, "Position", n_pos - 1, n_pos - 1)   # got there by itself, stopped
    page.get_by_role("button", name=re.compile("Play")).wait_for(timeout=30_000)
    wait_idle(page, heading=False)
    page.wait_for_timeout(1500)
    assert _state(page)[0] == n_pos - 1

    page.locator(PLAY).click()              # Play at the end starts again from 0
    page.get_by_role("button", name=re.compile("Pause")).wait_for(timeout=30_000)
    wait_for_counter(page, "Position", 2, n_pos - 3)
    page.locator(PLAY).click()              # Pause
    page.get_by_role("button", name=re.compile("Play")).wait_for(timeout=30_000)
    wait_idle(page, heading=False)
    paused = _state(page)
    page.wait_for_timeout(2000)
    assert _state(page) == paused and paused[0] < n_pos - 1
    assert paused[1] == pytest.approx(ref.ravel()[paused[0]], abs=5e-5)
    assert page.locator(EXCEPTION).count() == 0
