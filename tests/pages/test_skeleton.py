"""Every page follows the page skeleton (ui/page.py, docs/ADDING_A_PAGE.md): it declares its
state table, presets and steps name only declared keys with valid values and existing views,
and its footer calls topic_page."""
from __future__ import annotations

import pytest

from ui.claims import page_module
from ui.page import View
from ui.state import StateTable
from ui.topics import ROOT, TOPICS
from ui.widgets import Preset, Step

READY = list(TOPICS)


def _module(slug):
    module = page_module(slug)
    assert module is not None, f"{slug} is not on the page skeleton (docs/ADDING_A_PAGE.md)"
    return module


@pytest.mark.parametrize("topic", READY, ids=lambda t: t.slug)
def test_page_declares_state_presets_steps_views(topic):
    m = _module(topic.slug)
    assert isinstance(m.STATE, StateTable) and len(m.STATE)
    assert all(isinstance(v, View) for v in m.VIEWS) and m.VIEWS
    assert len({v.key for v in m.VIEWS}) == len(m.VIEWS)
    assert all(isinstance(p, Preset) for p in m.PRESETS.values())
    assert all(isinstance(s, Step) for s in m.STEPS)
    source = (ROOT / topic.page_file).read_text(encoding="utf-8")
    footer = source[source.index('if __name__ == "__main__":'):]
    assert "topic_page(" in footer and f'"{topic.slug}"' in footer


@pytest.mark.parametrize("topic", READY, ids=lambda t: t.slug)
def test_presets_and_steps_name_only_declared_keys_and_views(topic):
    m = _module(topic.slug)
    views = {v.key for v in m.VIEWS}
    items = [(f"preset {n}", p) for n, p in m.PRESETS.items()]
    items += [(f"step {s.title}", s) for s in m.STEPS]
    for name, item in items:
        assert m.STATE.problems(item.settings) == [], name
        assert item.view is None or item.view in views, (name, item.view)


@pytest.mark.parametrize("topic", READY, ids=lambda t: t.slug)
def test_defaults_are_valid(topic):
    m = _module(topic.slug)
    assert m.STATE.problems(m.STATE.defaults) == []


def _live_draw_functions(tree):
    import ast
    names = {node.args[2].id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "live_training"
             and len(node.args) >= 3 and isinstance(node.args[2], ast.Name)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in names]


@pytest.mark.parametrize("topic", READY, ids=lambda t: t.slug)
def test_no_download_is_built_inside_a_live_fragment(topic):
    """A download button drawn by live_training's `draw` is rewritten into the media store on
    every tick and the previous file disappears (404 on click): exports live outside it."""
    import ast
    tree = ast.parse((ROOT / topic.page_file).read_text(encoding="utf-8"))
    for fn in _live_draw_functions(tree):
        called = {n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
                  for n in ast.walk(fn) if isinstance(n, ast.Call)}
        assert not called & {"export_buttons", "download_button"}, (topic.slug, fn.name)
