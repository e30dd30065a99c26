"""Every slide of every shipped lesson plays: its page and tab exist, its settings are declared
controls with valid values (the validator, ui/lesson_format.py), it cites a figure of the
notes, and every claim it makes holds on its settings."""
from __future__ import annotations

import pytest

from ui import lesson_library as library
from ui.claims import page_claims
from ui.lesson_library import PAGES
from ui.topics import TOPICS

IDS = library.shipped_ids()
SLIDES = [(lid, i) for lid in IDS for i in range(len(library.shipped(lid).slides))]


def _key(claim, settings) -> tuple:
    return id(claim), tuple(sorted((k, repr(v)) for k, v in settings.items()))


# A slide that shows a preset or tour step carries that text's own Claim objects on the same
# settings: tests/test_claims.py measures those already. Training claims (minutes each) are
# measured once, there; every other slide claim is measured here.
ON_PAGES = {_key(pc.claim, pc.settings) for t in TOPICS for pc in page_claims(t.slug)}


def _measured_here(lid, i, j) -> bool:
    slide = library.shipped(lid).slides[i]
    claim = slide.claims[j]
    return not (claim.slow and _key(claim, slide.settings) in ON_PAGES)


CLAIMS = [(lid, i, j) for lid, i in SLIDES
          for j in range(len(library.shipped(lid).slides[i].claims)) if _measured_here(lid, i, j)]


def _claim_param(lid, i, j):
    claim = library.shipped(lid).slides[i].claims[j]
    marks = [pytest.mark.slow] if claim.slow else []
    return pytest.param(lid, i, j, marks=marks, id=f"{lid}:{i + 1}:{claim.what}")


def test_lessons_are_shipped():
    assert len(IDS) >= 1
    assert all(library.shipped(lid).slides for lid in IDS)


@pytest.mark.parametrize("lid,i", SLIDES, ids=lambda v: str(v))
def test_slide_is_playable(lid, i):
    slide = library.shipped(lid).slides[i]
    module = PAGES[slide.page]
    assert slide.view in [v.key for v in module.VIEWS]
    assert not module.STATE.problems(slide.settings)
    assert set(slide.settings) == set(module.STATE)
    assert slide.source is not None, "every shipped slide cites the figure it reproduces"
    assert slide.claims, "every shipped slide states something measured"


@pytest.mark.parametrize("lid,i,j", [_claim_param(*c) for c in CLAIMS])
def test_slide_claim_holds(lid, i, j):
    slide = library.shipped(lid).slides[i]
    claim = slide.claims[j]
    value, ok = claim.check(slide.settings)
    assert ok, f"{lid} slide {i + 1} ({slide.title}): {claim.what} measured {value:.6g}, " \
               f"expected {claim.threshold}"


def test_slide_sources_are_distinct_states():
    """Two slides of one lesson never show the identical state (a copy-paste slip)."""
    for lid in IDS:
        seen = {}
        for i, s in enumerate(library.shipped(lid).slides, 1):
            key = (s.page, s.view, repr(sorted(s.settings.items())), s.title)
            assert key not in seen, f"{lid}: slides {seen[key]} and {i} are the same"
            seen[key] = i


def test_training_slides_stop_at_the_iteration_their_text_reads():
    """A `train = N` slide's text and its trained claims read the figure at iteration N, where
    its training stops (a claim that names an iteration names N)."""
    import re
    trained = [(lid, i, s) for lid in IDS
               for i, s in enumerate(library.shipped(lid).slides, 1) if s.train]
    assert trained
    for lid, i, slide in trained:
        assert f"{slide.train:,}" in slide.text, (lid, i)
        for claim in slide.claims:
            named = re.findall(r"iteration ([\d,]+)", claim.what)
            assert all(int(n.replace(",", "")) == slide.train for n in named), (lid, i,
                                                                              claim.what)


def test_optimization_slides_show_what_their_cited_figures_are_about():
    """The notes' Figure 2.6 shows an ill-conditioned bowl zigzagging slowly and Figure 2.18
    the heavy ball damping the zigzag: those slides' screens zigzag, and damp it."""
    from topics.gradient_descent.compute import eigen_flip_share, gd_at_effective_step
    slides = library.shipped("01-optimization").slides
    by_figure: dict = {}
    for s in slides:
        by_figure.setdefault((s.source.notes, s.source.figure), []).append(s)
    slow = [s for s in by_figure[("004", "2.6")] if s.settings["gd_kappa"] > 1]
    assert slow and all(eigen_flip_share(s.settings, "gd", 1) >= 0.95 for s in slow)
    (heavy,) = by_figure[("004", "2.18")]
    assert heavy.settings["gd_methods"] == ["momentum"]
    assert eigen_flip_share(heavy.settings, "momentum", 1) <= 0.2
    assert gd_at_effective_step(heavy.settings, "flip") >= 0.95


def test_no_two_slides_of_a_lesson_show_the_same_screen():
    """A new title over an unchanged screen reads as a repeat on the projector: two slides of
    one lesson differ in page, tab, settings or the iteration their training stops at."""
    repeats = set()
    for lid in IDS:
        seen = {}
        for i, s in enumerate(library.shipped(lid).slides, 1):
            key = (s.page, s.view, repr(sorted(s.settings.items())), s.train)
            if key in seen:
                repeats.add((lid, seen[key], i))
            seen.setdefault(key, i)
    assert not repeats, sorted(repeats)


def test_feature_map_slides_show_different_digits():
    """The Feature maps tab draws every layer of one digit (the layer setting only picks the
    exported layer): its slides differ in the digit they show."""
    maps = [s for lid in IDS for s in library.shipped(lid).slides
            if s.page == "convolution" and s.view == "maps"]
    assert len(maps) >= 3
    assert len({s.settings["cv_digit"] for s in maps}) == len(maps)
