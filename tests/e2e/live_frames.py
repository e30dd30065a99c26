"""Real live frames, as the pages build them: each live view (every tab that trains live,
ui.live_tabs.live_keys(), plus the views a widget switches: the ReLU page's 3-D surface
and plain edges) opened under AppTest, its trainer stepped a few times with the page's own
Step button, and the figures of its last frame collected as the frame's parts (live/parts.py
Figure) - the same parts function, inputs and trainer state the frame route would turn into
payloads. Used by test_live_fidelity.py."""
from __future__ import annotations

from dataclasses import dataclass, field
from unittest import mock

from ui.live_tabs import live_keys


@dataclass(frozen=True)
class LiveView:
    slug: str
    tab: str
    key: str                                   # the live_training key (its Step button)
    state: dict = field(default_factory=dict)  # widget values set before stepping


def live_views() -> dict[str, LiveView]:
    """view id -> LiveView: every live tab, then the widget-switched variants."""
    views: dict[str, LiveView] = {}
    for (slug, tab), key in live_keys().items():   # two tabs may show one trainer (GAN)
        views[key if key not in views else f"{key}_{tab}"] = LiveView(slug, tab, key)
    # the page opens on the shipped model, whose frames are not live: train one here
    views["at_train"] = LiveView("attention", "trained", "at_train",
                                 {"at_source": "train from scratch"})
    views["rr_train_3d"] = LiveView("relu_regions", "regions", "rr_train",
                                    {"rr_out": "3-D surface"})
    views["rr_train_plain_edges"] = LiveView("relu_regions", "regions", "rr_train",
                                             {"rr_layers": False})
    return views


def capture(view: LiveView, steps: int = 2) -> list:
    """[(slot, live.parts.Figure)] of the view's frame after `steps` presses of Step."""
    import live.parts as lp
    from tests.apptest import open_page, open_view
    from ui import lesson_library as library

    title = next(v.title for v in library.PAGES[view.slug].VIEWS if v.key == view.tab)
    at = open_view(open_page(f"topics/{view.slug}/page.py"), view.slug, title)
    for k, v in view.state.items():
        at.session_state[k] = v
    if view.state:
        at.run()
    got = []
    show = lp.Figure.show

    def record(part, slot):
        got.append((slot, part))
        return show(part, slot)
    with mock.patch.object(lp.Figure, "show", record):
        for _ in range(steps):
            got.clear()
            at.button(key=f"{view.key}__step").click().run()
            assert not at.exception, [e.value for e in at.exception]
    assert got, f"{view.key}: no figure drawn"
    return got
