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
