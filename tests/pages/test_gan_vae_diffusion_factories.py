"""The trainer factories of the GAN, VAE, diffusion and flows pages are pure.

With DLPLAY_TRAINERS=process the factory a page hands to live.controls.live_training is pickled
(cloudpickle) and called in a worker process that has no Streamlit session. Each test runs the
page under AppTest, takes the factory it passed, pickles it, builds the trainer from the bytes
in a fresh interpreter (no Streamlit script context) and compares numbers with the trainer the
same factory builds here, outside any script run: steps, parameters, the first iterations.
A factory that read st.session_state or a Streamlit cache inside would fail or differ there.
"""
from __future__ import annotations

import json
import subprocess
import sys
from unittest import mock

import cloudpickle
import numpy as np
import pytest

from tests.apptest import ROOT, open_page
from live import controls as live

# runs in a fresh interpreter: the factory's bytes on stdin, the trainer's numbers out
CHILD = """
import json, sys
import cloudpickle, torch
torch.set_num_threads(1)
factory = cloudpickle.loads(sys.stdin.buffer.read())
import streamlit.runtime.scriptrunner as sr
assert sr.get_script_run_ctx(suppress_warning=True) is None
from tests.pages.test_gan_vae_diffusion_factories import fingerprint
print("RESULT" + json.dumps(fingerprint(factory())))
"""


def fingerprint(trainer) -> dict:
    """Numbers that identify a trainer: its steps, the first values of every parameter
    tensor, and its metrics after 3 more iterations (its data, RNG and optimizer too)."""
    import torch
    params = [p.detach().cpu().reshape(-1)[:5].tolist()
              for m in (getattr(trainer, n, None) for n in ("G", "D", "model"))
              if isinstance(m, torch.nn.Module) for p in m.parameters()]
    steps = int(trainer.steps)
    trainer.step(3)
    after = {k: float(v[-1]) for k, v in trainer.history.values.items() if v}
    return {"steps": steps, "params": params, "after": after}


def _captured_factory(page: str, key: str):
    """The factory `page` passes to live_training for `key`, from a real run of the page."""
    seen = {}
    original = live.live_training

    def spy(k, make_trainer, *args, **kwargs):
        seen.setdefault(k, make_trainer)
        return original(k, make_trainer, *args, **kwargs)

    with mock.patch.object(live, "live_training", spy):
        at = open_page(page)
    if key not in seen:                           # the live training sits on the train view
        from tests.apptest import open_view
        from ui.claims import page_module
        slug = page.split("/")[1]
        title = next(v.title for v in page_module(slug).VIEWS if v.key == "train")
        with mock.patch.object(live, "live_training", spy):
            open_view(at, slug, title)
    return seen[key]


def _built_elsewhere(data: bytes) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], input=data, capture_output=True,
                         cwd=ROOT, timeout=300, env={"PYTHONPATH": str(ROOT),
                                                     "PATH": "/usr/bin:/bin",
                                                     "OMP_NUM_THREADS": "1"})
    lines = [ln for ln in out.stdout.decode().splitlines() if ln.startswith("RESULT")]
    assert out.returncode == 0 and lines, out.stderr.decode()[-3000:]
    return json.loads(lines[-1][len("RESULT"):])


def _same(a: dict, b: dict) -> None:
    assert a["steps"] == b["steps"]
    assert len(a["params"]) == len(b["params"]) > 0
    for x, y in zip(a["params"], b["params"]):
        np.testing.assert_allclose(x, y, rtol=0, atol=0)
    assert a["after"].keys() == b["after"].keys()
    for k in a["after"]:
        np.testing.assert_allclose(a["after"][k], b["after"][k], rtol=1e-5, atol=1e-6,
                                   err_msg=k)


@pytest.mark.parametrize("page, key, steps, max_kb", [
    ("topics/gan/page.py", "gan", 3000, 120),            # the pretrained snapshot's bytes
    ("topics/vae/page.py", "vae_live", None, 8),         # the shipped file goes as its path
    ("topics/diffusion/page.py", "df_train", 0, 40),     # 1,000 points
    ("topics/flows/page.py", "fl_train", 0, 8),          # the data set's name, not its points
])
def test_the_page_factory_pickles_and_builds_the_same_trainer_without_streamlit(
        page, key, steps, max_kb):
    factory = _captured_factory(page, key)
    data = cloudpickle.dumps(factory)
    assert len(data) < max_kb * 1024, f"{len(data) // 1024} kB: the factory carries too much"
    here = fingerprint(factory())                 # outside any script run, in this process
    if steps is not None:
        assert here["steps"] == steps
    else:                                         # the VAE: the shipped model, trained offline
        assert here["steps"] > 0
    _same(here, _built_elsewhere(data))


def test_gan_factory_reads_no_session_state_and_uses_the_snapshot_once():
    """The first default GAN of a session is the pretrained snapshot; the factory the page
    hands over after that (Reset) builds a fresh trainer: the decision is made in the page."""
    from engine.gan import PRETRAINED
    factory = _captured_factory("topics/gan/page.py", "gan")
    assert factory.func.__module__ == "engine.gan.reads"
    with mock.patch("streamlit.session_state", new=None):   # no session: must not matter
        t = factory()
    assert t.steps == PRETRAINED["default"].steps
    fresh = factory.func(*factory.args[:-1], None)
    assert fresh.steps == 0 and fresh.pretrained is None
