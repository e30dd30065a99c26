"""The lesson player's presenter keys (ui/lesson_player.KEYS_JS), run in Node on a stub page: a
key that arrives while a rerun holds the Previous/Next button disabled (or has it swapped out)
is kept until the button is back, not lost; keys on a page without a lesson do nothing."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from ui.lesson_player import KEYS_JS

HARNESS = r"""
const script = %s.replace(/<\/?script>/g, "");
const listeners = [];
let clicks = [], card = %s, disabled = true, present = false;
const button = {get disabled() { return disabled; }, click() { clicks.push(Date.now()); }};
global.window = {};
global.document = {
  addEventListener: (kind, fn) => listeners.push(fn),
  querySelector: (sel) => sel.includes("lesson_card") ? (card ? {} : null)
                        : sel.includes("lesson_prev") && present ? button : null,
};
eval(script);
let prevented = false;
const event = {key: "PageUp", target: {closest: () => null}, preventDefault() { prevented = true; }};
listeners.forEach(fn => fn(event));
setTimeout(() => { present = true; }, 200);        // the rerun brings the button back ...
setTimeout(() => { disabled = false; }, 500);      // ... and enables it
setTimeout(() => console.log(JSON.stringify({clicks: clicks.length, prevented})), 1200);
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
@pytest.mark.parametrize("lesson, clicks", [(True, 1), (False, 0)], ids=["lesson", "no-lesson"])
def test_a_key_pressed_while_the_button_is_busy_is_kept_not_lost(lesson, clicks):
    code = HARNESS % (json.dumps(KEYS_JS), json.dumps(lesson))
    run = subprocess.run([shutil.which("node"), "-e", code], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out == {"clicks": clicks, "prevented": lesson}


RETRY = r"""
const script = %s.replace(/<\/?script>/g, "");
const listeners = [];
const moves = %s;             // does the n-th click move the slide?
let clicks = 0, shown = "2/15", busy = false;
const button = {disabled: false, click() {
  clicks += 1;
  busy = true;                                     // the rerun the click starts ...
  setTimeout(() => { busy = false; if (moves[clicks - 1]) shown = "3/15"; }, 300);
}};
global.window = {};
global.document = {
  addEventListener: (kind, fn) => listeners.push(fn),
  querySelector: (sel) => sel.includes("lesson_card") ? {innerText: `chevron_left ${shown} x 1/16`}
                        : sel.includes("lesson_next") ? button
                        : sel.includes("stale") && busy ? {} : null,
};
eval(script);
const event = {key: "ArrowRight", target: {closest: () => null}, preventDefault() {}};
listeners.forEach(fn => fn(event));
setTimeout(() => console.log(JSON.stringify({clicks, shown})), 9000);
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
@pytest.mark.parametrize("moves, clicks, shown", [
    ([True], 1, "3/15"),                    # the slide moved: pressed once
    ([False, True], 2, "3/15"),             # the server took the click for the slide before
    ([False, False, False, False], 3, "2/15"),   # at most two more presses
], ids=["moved", "lost-once", "gives-up"])
def test_a_click_the_server_ignored_is_pressed_again_once_the_page_is_quiet(moves, clicks,
                                                                           shown):
    code = RETRY % (json.dumps(KEYS_JS), json.dumps(moves))
    run = subprocess.run([shutil.which("node"), "-e", code], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"clicks": clicks, "shown": shown}
