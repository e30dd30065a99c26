"""AppTest of the A network you build page: its tabs, every preset and tour step, and a Step of its live
training."""
from __future__ import annotations

from tests.apptest import choose_preset, open_page, show_step

PAGE = "topics/network/page.py"
SLUG = "network"


def _module():
    import topics.network.page as page
    return page


def test_tabs_and_defaults():
    at = open_page(PAGE)
    assert [t.label for t in at.tabs] == [v.title for v in _module().VIEWS]


def test_every_preset_applies_without_an_error():
    at = open_page(PAGE)
    for name in _module().PRESETS:
        choose_preset(at, SLUG, name)
        assert not at.exception and not at.error, name


def test_every_step_shows_without_an_error():
    at = open_page(PAGE)
    for i in range(len(_module().STEPS)):
        show_step(at, SLUG, i)
        assert not at.exception and not at.error, i


def test_step_trains_the_live_view():
    at = open_page(PAGE)
    at.button(key="ne_train__step").click().run()
    assert not at.exception
    assert at.session_state["ne_train__view"].steps > 0
