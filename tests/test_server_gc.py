"""ui/server_gc.py: a rerun must not walk every imported object (a full gc after each run
cost ~0.2 s of CPU per frame and per slider move)."""
from __future__ import annotations

import gc
import sys
import tomllib
import types

import pytest

from ui import server_gc
from ui.topics import ROOT


@pytest.fixture
def serving(monkeypatch):
    monkeypatch.setattr(server_gc, "_serving", lambda: True)
    monkeypatch.setattr(server_gc, "_frozen_modules", 0)
    yield
    gc.unfreeze()


def test_streamlit_does_not_collect_after_every_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_app_freezes_after_its_run():
    assert "server_gc.after_run()" in (ROOT / "playground.py").read_text()


def test_freeze_moves_imported_objects_out_of_the_walk(serving):
    walked = server_gc.collect_cost_objects()
    assert server_gc.after_run() is True
    assert gc.get_freeze_count() > 0.5 * walked
    assert server_gc.collect_cost_objects() < 0.2 * walked


def test_freezes_again_only_after_new_imports(serving, monkeypatch):
    assert server_gc.after_run() is True
    assert server_gc.after_run() is False                  # nothing new: one comparison
    monkeypatch.setitem(sys.modules, "dlplay_fake_page_module", types.ModuleType("x"))
    assert server_gc.after_run() is True


def test_no_freeze_without_a_server():
    before = gc.get_freeze_count()
    assert server_gc._serving() is False                   # pytest: no Streamlit runtime
    assert server_gc.after_run() is False
    assert gc.get_freeze_count() == before
