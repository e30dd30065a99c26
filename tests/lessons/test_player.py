"""The lesson player in the app (AppTest): a slide link opens its page with the slide's
settings and tab, its text beside the figure; Next/Previous move across pages and keep the URL
naming the slide; bad links get a message, never a traceback. Also the gallery's lesson list
and the "Add this view to my lesson" builder (the figure index: test_figure_index.py)."""
from __future__ import annotations

import pytest

from tests.apptest import run_app
from ui import lesson_gallery as gallery
from ui import lesson_library as library
from ui.lesson_format import parse, validate
from ui.lesson_measures import MEASURES
from ui.lesson_toml import lesson_text

LESSON = "02-backprop-and-relu-networks"     # slides 8 -> 9 cross from backpropagation to ReLU


def _q(at, key: str) -> str:
    """One URL query parameter's value (AppTest may hold a str or a list)."""
    value = at.query_params[key]
    return str(value[0] if isinstance(value, list) else value)


def _bold(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**")]


def test_slide_link_opens_its_page_with_its_settings():
    at = run_app({"lesson": LESSON, "slide": "9"})
    assert not at.exception, [e.value for e in at.exception]
    slide = library.shipped(LESSON).slides[8]
    assert [t.value for t in at.title] == ["ReLU linear regions"]
    assert f"**{slide.title}**" in _bold(at) and "**9/15**" in _bold(at)
    assert at.session_state["rr_widths"] == "3" and at.session_state["rr_box"] == 4.0
    assert at.session_state["relu_regions_view"] == "1-D & sawtooth"
    assert any(slide.source.label in c.value for c in at.caption)


def test_next_and_previous_cross_pages_and_keep_the_url():
    at = run_app({"lesson": LESSON, "slide": "8", "classroom": "1"})
    assert [t.value for t in at.title] == ["Backpropagation on a graph"]
    at.button(key="lesson_next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["ReLU linear regions"]
    assert _q(at, "slide") == "9" and _q(at, "lesson") == LESSON
    assert _q(at, "classroom") == "1"
    at.button(key="lesson_prev").click().run()
    assert [t.value for t in at.title] == ["Backpropagation on a graph"]
    assert _q(at, "slide") == "8"
    assert at.session_state["bp_m"] == 64          # the preset of slide 8 applied again


def test_first_and_last_slides_disable_their_button():
    first = run_app({"lesson": LESSON, "slide": "1"})
    assert first.button(key="lesson_prev").disabled
    last = run_app({"lesson": LESSON, "slide": "999"})          # clamped to the last slide
    assert not last.exception
    assert last.button(key="lesson_next").disabled
    assert _q(last, "slide") == "15"


def test_close_leaves_the_page_as_it_is():
    at = run_app({"lesson": LESSON, "slide": "9"})
    at.button(key="lesson_close").click().run()
    assert not at.exception
    assert "lesson" not in at.query_params
    assert [t.value for t in at.title] == ["ReLU linear regions"]
    assert at.session_state["rr_widths"] == "3"


@pytest.mark.parametrize("query,words", [
    ({"lesson": "no-such-lesson"}, "no such lesson"),
    ({"lesson": "../../etc/passwd"}, "no such lesson"),
    ({"lesson": "my-gone"}, "upload the file again"),
])
def test_bad_lesson_links_say_why(query, words):
    at = run_app(query)
    assert not at.exception, [e.value for e in at.exception]
    assert any(words in e.value for e in at.error), [e.value for e in at.error]
    assert [t.value for t in at.title] == ["Deep-learning playground"]   # the gallery stays


def test_bad_slide_number_falls_back_to_the_first():
    at = run_app({"lesson": LESSON, "slide": "two"})
    assert not at.exception
    assert _q(at, "slide") == "1"


def test_gallery_lists_the_lessons():
    at = run_app()
    assert not at.exception
    frames = at.dataframe
    assert frames, "the gallery shows the lessons table"
    listed = frames[0].value
    assert len(listed) == len(library.shipped_ids())
    assert listed["slides"].sum() == sum(len(library.shipped(i).slides)
                                         for i in library.shipped_ids())


def test_add_this_view_builds_a_lesson_that_validates():
    at = run_app(page="topics/gradient_descent/page.py")
    at.session_state["gd_kappa"] = 50
    at.session_state["gradient_descent_view"] = "Step factor |1 − ηλ|"
    at.run()
    at.button(key="lesson_add").click().run()
    assert not at.exception, [e.value for e in at.exception]
    draft = at.session_state[gallery.DRAFT_KEY]
    assert len(draft) == 1 and draft[0]["page"] == "gradient_descent"
    assert draft[0]["tab"] == "factor" and draft[0]["settings"]["gd_kappa"] == 50
    lesson = validate(parse(lesson_text("My lesson", draft), "my.toml"), "my.toml", "my",
                      library.PAGES, MEASURES)
    assert lesson.slides[0].settings["gd_kappa"] == 50 and lesson.slides[0].view == "factor"


def test_add_this_view_on_a_trained_tab_trains_the_slide_to_it():
    at = run_app(page="topics/generalization/page.py")
    at.button(key="gen_overfit__play").click().run()         # one frame of training
    at.button(key="gen_overfit__play").click().run()         # Pause
    shown = at.session_state["gen_overfit__handle"].steps
    assert shown > 0
    at.button(key="lesson_add").click().run()
    assert not at.exception, [e.value for e in at.exception]
    draft = at.session_state[gallery.DRAFT_KEY]
    assert draft[0]["tab"] == "overfit" and draft[0]["train"] == shown
    lesson = validate(parse(lesson_text("My lesson", draft), "my.toml"), "my.toml", "my",
                      library.PAGES, MEASURES)
    assert lesson.slides[0].train == shown and lesson.slides[0].play == "gen_overfit"


def test_a_training_slide_presses_play_and_can_be_skipped():
    at = run_app({"lesson": "11-generalization", "slide": "6"})     # L2: play = true
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["_lesson_play"] == "gen_overfit"
    scripts = [h.proto.body for h in at.get("html")]
    assert any(".st-key-gen_overfit__play button" in b for b in scripts)   # presses Play
    assert any("trains live" in c.value for c in at.caption)
    assert "gen_overfit__train_to" not in at.session_state                # no stop of its own
    at.button(key="gen_overfit__play").click().run()        # what the script's click does
    assert at.session_state["gen_overfit__playing"] is True
    at.button(key="lesson_next").click().run()              # skip while it trains
    assert not at.exception, [e.value for e in at.exception]
    assert _q(at, "slide") == "7" and at.session_state["generalization_view"] == "Random labels"
    assert at.session_state["_lesson_play"] == "gen_random"              # train = 400
    assert at.session_state["gen_random__train_to"] == 400
    assert at.session_state["gen_random__playing"] is False   # a fresh, paused trainer
    assert any(".st-key-gen_random__play button" in h.proto.body for h in at.get("html"))


def test_activations_tab_draws_phi_and_its_slope():
    at = run_app({"lesson": "00-activation-functions", "slide": "4"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["initialization_view"] == "Activations φ, φ′"
    caption = " ".join(c.value for c in at.caption)
    assert "sigmoid: max φ′ = 0.25" in caption and "relu: max φ′ = 1" in caption
    from tests.apptest import chart_figure
    fig = chart_figure(at, "in_phi_fig")
    assert len(fig["data"]) == 6                     # φ and φ′ of three activations


def _uploaded(text: str, name: str):
    """(AppTest, lesson): a teacher's lesson file uploaded in the session, its slide 1 open."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest import APP, TIMEOUT
    lesson = library.from_upload(text.encode(), name)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[library.UPLOADED_KEY] = lesson
    at.query_params["lesson"] = lesson.id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, lesson


def test_an_uploaded_lesson_plays_in_its_session():
    text = ('title = "Mine"\n[[slides]]\npage = "attention"\ntitle = "Causal"\ntext = "x"\n'
            'tab = "masks"\nsettings = { at_mask = "causal", at_mask_n = 8 }\n')
    at, _ = _uploaded(text, "mine.toml")
    assert [t.value for t in at.title] == ["Attention maps"]
    assert at.session_state["at_mask_n"] == 8 and "**Causal**" in _bold(at)


TRAIN_N = 150        # two frames at the tab's 100 steps per frame: the cap cuts the second
TRAIN_LESSON = ('title = "Trained"\n[[slides]]\npage = "generalization"\ntitle = "To 150"\n'
                f'text = "x"\ntab = "overfit"\ntrain = {TRAIN_N}\n'
                '[[slides]]\npage = "generalization"\ntitle = "Poly"\ntext = "y"\ntab = "poly"\n')


def _train_slide():
    return _uploaded(TRAIN_LESSON, "trained.toml")


def _steps(at) -> int:
    return at.session_state["gen_overfit__handle"].steps


def _play(at):
    """What the player's script does in the browser: one click on the panel's Play."""
    return at.button(key="gen_overfit__play").click().run()


def _until_stopped(at, most: int = 20) -> None:
    """Frames (full runs: each runs the live fragment once) until the panel pauses itself."""
    for _ in range(most):
        if not at.session_state["gen_overfit__playing"]:
            return
        at.run()


def test_a_train_slide_trains_to_exactly_n_and_stops():
    from tests.apptest import metric
    from topics.generalization import compute
    at, lesson = _train_slide()
    assert at.session_state["_lesson_play"] == "gen_overfit" and _steps(at) == 0
    assert any(f"trains to iteration {TRAIN_N}" in c.value for c in at.caption)
    _play(at)
    assert 0 < _steps(at) < TRAIN_N
    assert any(f"Training to {TRAIN_N}: **{_steps(at)}** / {TRAIN_N}" in c.value
               for c in at.caption)
    _until_stopped(at)
    assert not at.exception, [e.value for e in at.exception]
    assert _steps(at) == TRAIN_N and at.session_state["gen_overfit__playing"] is False
    at.run()                               # stopped: a further frame trains nothing
    assert _steps(at) == TRAIN_N
    assert any(f"Iteration **{TRAIN_N}**" in c.value for c in at.caption)
    assert any(f"Trained to iteration {TRAIN_N}" in c.value for c in at.caption)
    # the figure's numbers are the claim measurement's at N (same seed, same CPU run)
    settings = lesson.slides[0].settings
    assert float(metric(at, "Gap")) == pytest.approx(compute.gap_at(settings, step=TRAIN_N),
                                                     abs=0.006)      # shown to 2 decimals
    _play(at)                              # Play after N trains on, as Play does
    assert _steps(at) > TRAIN_N
    at.button(key="gen_overfit__reset").click().run()      # Reset: the slide again, to N
    assert _steps(at) == 0 and at.session_state["gen_overfit__train_to"] == TRAIN_N
    _play(at)
    _until_stopped(at)
    assert _steps(at) == TRAIN_N


def test_a_train_slide_pauses_and_can_be_skipped():
    at, _ = _train_slide()
    _play(at)
    first = _steps(at)
    at.button(key="gen_overfit__play").click().run()        # Pause: it stops where it is
    at.run()
    assert _steps(at) == first and at.session_state["gen_overfit__playing"] is False
    _play(at)                                              # Play again: on to N, no further
    _until_stopped(at)
    assert _steps(at) == TRAIN_N
    at, _ = _train_slide()
    _play(at)
    partial = _steps(at)
    assert partial < TRAIN_N
    at.button(key="lesson_next").click().run()             # skip while it trains
    assert not at.exception, [e.value for e in at.exception]
    assert _q(at, "slide") == "2" and at.session_state["generalization_view"] == "Polynomial fit"
    assert at.session_state["gen_overfit__playing"] is False
    assert "gen_overfit__train_to" not in at.session_state
    assert _steps(at) == partial                           # stopped where it was
