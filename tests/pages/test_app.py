"""The app shell: gallery, navigation, shared sidebar, URL state; every page with defaults."""
import pytest

from engine.device import available_devices, default_device
from ui import session
from ui.sidebar import device_options
from tests.apptest import run_app
from ui.topics import SECTIONS, TOPICS


def test_home_gallery_lists_every_topic_by_section():
    at = run_app()
    assert not at.exception
    assert at.title[0].value == "Deep-learning playground"
    assert [s.value for s in at.subheader] == list(SECTIONS)
    text = " ".join(c.value for c in at.caption)
    for topic in TOPICS:
        assert topic.sentence in text
    assert all(t.thumbnail.exists() for t in TOPICS)


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.slug)
def test_every_page_runs_with_defaults(topic):
    at = run_app(page=topic.page_file)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == topic.title


def test_sidebar_device_lists_only_existing_devices():
    at = run_app()
    box = at.sidebar.selectbox(key="device")
    options, index = device_options(available_devices(), default_device())
    assert box.options == options and set(options) - {session.AUTO} == set(available_devices())
    assert box.value == options[index]
    assert any(c.value.startswith("In use: **") for c in at.sidebar.caption)


def test_url_seed_and_classroom_reproduce_state():
    at = run_app({"seed": "7", "classroom": "1"})
    assert not at.exception
    assert at.number_input(key="seed").value == 7
    assert at.toggle(key="classroom").value is True
    assert at.session_state["classroom"] is True


@pytest.mark.parametrize("bad, used", [("abc", 0), ("-5", 0), ("1e99", 2**31 - 1), ("", 0)])
def test_bad_seed_in_url_is_clamped_or_defaulted(bad, used):
    at = run_app({"seed": bad, "classroom": "maybe"})
    assert not at.exception
    assert at.number_input(key="seed").value == used
    assert at.toggle(key="classroom").value is False


def test_classroom_toggle_injects_css_and_collapses():
    at = run_app()
    off = [h.proto.body for h in at.get("html")]
    at.toggle(key="classroom").set_value(True).run()
    on = [h.proto.body for h in at.get("html")]
    from ui.page import load_css
    css = load_css("classroom")
    assert "font-size: 1.45rem" in css
    assert not any(css in body for body in off)
    assert any(css in body for body in on)


def test_seed_change_is_kept_across_pages():
    at = run_app()
    at.number_input(key="seed").set_value(42).run()
    at.switch_page(TOPICS[0].page_file)
    at.run()
    assert at.session_state["seed"] == 42
