"""What a card's words point to (Preset.shows, Step.shows): widget keys the page draws, which
the projector walk (tests/e2e) finds on the first screen."""
from __future__ import annotations

from pathlib import Path

import pytest

from ui.claims import page_module
from ui.topics import TOPICS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.slug)
def test_every_key_a_card_points_to_is_drawn_by_its_page(topic):
    module = page_module(topic.slug)
    source = "\n".join(p.read_text(encoding="utf-8")
                       for p in (ROOT / "topics" / topic.slug).glob("*.py"))
    cards = [*module.PRESETS.values(), *module.STEPS]
    for card in cards:
        for key in card.shows:
            assert f'"{key}"' in source, f"{topic.slug}: {key!r} is not a key of the page"


def test_the_cards_that_point_below_the_figure_say_so():
    """The cards whose words name a count or a control under or beside the main figure."""
    named = {t.slug: sum(bool(c.shows) for c in (*page_module(t.slug).PRESETS.values(),
                                                 *page_module(t.slug).STEPS))
             for t in TOPICS}
    for slug in ("gradient_descent", "gan", "vae", "adversarial", "relu_regions",
                 "convolution", "lstm_gating"):
        assert named[slug] >= 1, slug
