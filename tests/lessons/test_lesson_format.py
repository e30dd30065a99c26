"""The lesson validator: a malformed or hostile file gets a message naming the file, the slide
and the field; parsing never executes anything; a valid file round-trips through the writer."""
from __future__ import annotations

import pytest

from ui import lesson_library as library
from ui.lesson_format import MAX_BYTES, LessonError, parse, validate
from ui.lesson_measures import MEASURES
from ui.lesson_toml import lesson_text

GOOD_SLIDE = """
[[slides]]
page = "gradient_descent"
title = "One step"
text = "A round bowl."
source = { notes = "004", figure = "2.6" }
tab = "race"
settings = { gd_kappa = 1, gd_loglr = 0.0, gd_methods = ["gd"] }
[[slides.claims]]
measure = "gradient_descent.gap"
args = { method = "gd", k = 1 }
what = "f − f* after one step"
hi = 1e-20
"""


def load(text: str | bytes, name: str = "t.toml"):
    return validate(parse(text, name), name, "t", library.PAGES, MEASURES)


def rejected(text: str | bytes) -> LessonError:
    with pytest.raises(LessonError) as info:
        load(text)
    return info.value


def test_good_file_loads_and_its_claim_holds():
    lesson = load('title = "T"\n' + GOOD_SLIDE)
    slide = lesson.slides[0]
    assert slide.view == "race" and slide.settings["gd_kappa"] == 1
    assert slide.source.label == "notes 004, Figure 2.6"
    value, ok = slide.claims[0].check(slide.settings)
    assert ok, value


@pytest.mark.parametrize("edit,slide,field,words", [
    (("gradient_descent\"", "nosuchpage\""), 1, "page", "unknown page"),
    (("tab = \"race\"", "tab = \"nosuchtab\""), 1, "tab", "no tab"),
    (("gd_kappa = 1,", "gd_nosuch = 1,"), 1, "settings.gd_nosuch", "no control"),
    (("gd_kappa = 1,", "gd_kappa = 8,"), 1, "settings.gd_kappa", "not a valid value"),
    (("gd_kappa = 1,", "gd_kappa = \"1\","), 1, "settings.gd_kappa", "not a valid value"),
    (("gd_loglr = 0.0", "gd_loglr = 99.0"), 1, "settings.gd_loglr", "not a valid value"),
    (("gd_methods = [\"gd\"]", "gd_methods = [\"sgd9\"]"), 1, "settings.gd_methods",
     "not a valid value"),
    (("title = \"One step\"", "title = 3"), 1, "title", "expected text"),
    (("title = \"One step\"", "titel = \"One step\""), 1, "titel", "unknown key"),
    (("tab = \"race\"", "step = 99"), 1, "step", "tour steps"),
    (("tab = \"race\"", "preset = \"nope\""), 1, "preset", "unknown preset"),
    (("gradient_descent.gap", "gradient_descent.__init__"), 1, "claims[1].measure",
     "unknown measure"),
    (("gradient_descent.gap", "convolution.field"), 1, "claims[1].measure", "another page"),
    (("k = 1 }", "k = 1, evil = 2 }"), 1, "claims[1].args", "evil"),
    (("hi = 1e-20", "lo = 2\nhi = 1"), 1, "claims[1].lo", "must not exceed"),
    (("hi = 1e-20", ""), 1, "claims[1].lo", "threshold"),
    (("figure = \"2.6\"", "figure = \"2.6\", page = 3"), 1, "source.page", "unknown key"),
])
def test_bad_slide_names_file_slide_and_field(edit, slide, field, words):
    text = 'title = "T"\n' + GOOD_SLIDE.replace(*edit)
    err = rejected(text)
    assert (err.file, err.slide, err.field) == ("t.toml", slide, field), str(err)
    assert words in err.message, str(err)
    assert str(err).startswith(f"t.toml, slide {slide}, field '{field}'")


def test_error_names_the_second_slide():
    text = 'title = "T"\n' + GOOD_SLIDE + GOOD_SLIDE.replace("gd_kappa = 1,", "gd_kappa = 0.5,")
    assert rejected(text).slide == 2


@pytest.mark.parametrize("text,words", [
    (b"\xff\xfe not utf-8", "not UTF-8"),
    ("title = \"T\"\n[[slides]\n", "not a TOML file"),
    ("title: T\nslides:\n  - page: x\n", "not a TOML file"),                 # YAML
    ("import os\nos.system('echo owned')\n", "not a TOML file"),              # Python
    ('title = "T"\n', "at least one"),
    ('title = "T"\nslides = 3\n', "expected a list"),
    ('title = "T"\nslides = [1, 2]\n', "must be a table"),
    ('title = "T"\nhack = 1\n' + GOOD_SLIDE, "unknown key"),
    ('title = ""\n' + GOOD_SLIDE, "is empty"),
    ('title = "T"\n[[slides]]\npage = "gradient_descent"\ntitle = "x"\n', "missing"),
])
def test_malformed_files_are_rejected(text, words):
    err = rejected(text)
    assert words in str(err)
    assert str(err).startswith("t.toml")


def test_huge_file_is_rejected_before_parsing():
    err = rejected(b"#" * (MAX_BYTES + 1))
    assert "at most" in str(err)


def test_too_many_slides():
    text = 'title = "T"\n' + "".join(GOOD_SLIDE.replace("One step", f"S{i}")
                                     for i in range(201))
    assert "at most 200" in str(rejected(text))


def test_deeply_nested_toml_does_not_crash():
    text = 'title = "T"\nx = ' + "[" * 2000 + "]" * 2000 + "\n"
    with pytest.raises(LessonError):
        load(text)


def test_written_lesson_round_trips():
    lesson = load('title = "T"\n' + GOOD_SLIDE)
    slide = lesson.slides[0]
    text = lesson_text("Mine: \"quoted\" ✓", [{"page": slide.page, "title": "A \\ b",
                                              "text": "line\nbreak", "tab": slide.view,
                                              "settings": dict(slide.own)}])
    again = load(text)
    assert again.title == "Mine: \"quoted\" ✓"
    assert again.slides[0].settings == slide.settings
    assert again.slides[0].text == "line\nbreak"


def test_upload_gets_its_own_id():
    lesson = library.from_upload(('title = "T"\n' + GOOD_SLIDE).encode(), "My Lecture!.toml")
    assert lesson.id.startswith("my-") and lesson.id not in library.shipped_ids()


def test_play_needs_a_tab_with_live_training():
    err = rejected('title = "T"\n' + GOOD_SLIDE.replace('tab = "race"', 'tab = "race"\nplay = true'))
    assert (err.slide, err.field) == (1, "play") and "no live training" in err.message


def test_play_on_a_training_tab_names_its_live_key():
    text = ('title = "T"\n[[slides]]\npage = "generalization"\ntitle = "t"\ntext = "x"\n'
            'tab = "overfit"\nplay = true\n')
    assert load(text).slides[0].play == "gen_overfit"


def test_live_tabs_are_the_pages_own():
    """Every declared live tab (View(..., live=Live(key, ...))) is a tab of its page whose
    folder passes that key to live_training; and every live_training key a topic folder
    passes is declared, so no live tab escapes the lessons, the live tests and benchmarks."""
    import re
    from ui.live_tabs import live_keys
    from ui.topics import ROOT, TOPICS
    declared = live_keys()
    for (slug, tab), key in declared.items():
        assert tab in [v.key for v in library.PAGES[slug].VIEWS], (slug, tab)
        source = "".join(p.read_text(encoding="utf-8")
                         for p in (ROOT / "topics" / slug).glob("*.py"))
        assert f'"{key}"' in source, (slug, key)
    for t in TOPICS:
        for path in (ROOT / "topics" / t.slug).glob("*.py"):
            used = re.findall(r'live_training\(\s*"([^"]+)"', path.read_text(encoding="utf-8"))
            undeclared = set(used) - {k for (slug, _), k in declared.items() if slug == t.slug}
            assert not undeclared, f"{path.name}: live_training keys {undeclared} are not " \
                                   "declared by a View(..., live=Live(key, train_max))"


TRAIN_SLIDE = ('title = "T"\n[[slides]]\npage = "generalization"\ntitle = "t"\ntext = "x"\n'
               'tab = "overfit"\n')


def test_train_to_n_names_its_live_key_and_n():
    slide = load(TRAIN_SLIDE + "train = 300\n").slides[0]
    assert (slide.play, slide.train) == ("gen_overfit", 300)
    assert load(TRAIN_SLIDE + "play = true\n").slides[0].train is None


@pytest.mark.parametrize("line,field,words", [
    ('train = "300"', "train", "expected an integer"),
    ("train = 300.0", "train", "expected an integer"),
    ("train = true", "train", "expected an integer"),
    ("train = [300]", "train", "expected an integer"),
    ("train = 0", "train", "trains 1 to 5,000"),
    ("train = -5", "train", "trains 1 to 5,000"),
    ("train = 5001", "train", "trains 1 to 5,000"),
    ("train = 9223372036854775807", "train", "trains 1 to 5,000"),     # hours: refused
    ("train = 300\nplay = true", "play", "leave `play` out"),
    ("train = 300\nplay = false", "play", "leave `play` out"),
])
def test_bad_train_is_rejected(line, field, words):
    err = rejected(TRAIN_SLIDE + line + "\n")
    assert (err.slide, err.field) == (1, field), str(err)
    assert words in err.message, str(err)


def test_train_needs_a_tab_with_live_training():
    err = rejected('title = "T"\n' + GOOD_SLIDE.replace('tab = "race"', 'tab = "race"\ntrain = 10'))
    assert (err.slide, err.field) == (1, "train") and "no live training to train" in err.message
    poly = TRAIN_SLIDE.replace('"overfit"', '"poly"')             # the same page, a closed form
    assert rejected(poly + "train = 10\n").field == "train"


def test_every_live_tab_has_a_bounded_train_maximum():
    from ui.live_tabs import live_keys, train_max
    most = train_max()
    assert set(most) == set(live_keys().values())
    assert all(1 <= n <= 10_000 for n in most.values())
    from engine.adversarial.training import AdvTrainConfig
    assert most["adv_live"] == AdvTrainConfig().total_steps   # its run ends there anyway


def _trained_claim(args: str) -> str:
    return (TRAIN_SLIDE + 'train = 300\n[[slides.claims]]\nmeasure = "generalization.gap_at"\n'
            f'{args}what = "gap"\nlo = -1\n')


def test_a_trained_claim_of_a_train_slide_is_measured_at_n(monkeypatch):
    import inspect
    asked = []
    spec = MEASURES["generalization.gap_at"]

    def fake(s, step=1000, seed=None):           # records the iteration instead of training
        asked.append(step)
        return 0.0
    fake.__signature__ = inspect.signature(spec.func)
    monkeypatch.setitem(spec.__dict__, "func", fake)   # its cached_property, restored after
    for args, step in (("", 300), ("args = { step = 200 }\n", 200)):
        slide = load(_trained_claim(args)).slides[0]
        slide.claims[0].measure(slide.settings)
        assert asked[-1] == step                 # N unless the file names an earlier one
    err = rejected(_trained_claim("args = { step = 1000 }\n"))
    assert err.field == "claims[1].args.step" and "at iteration 300 or earlier" in err.message


def test_images_in_a_lesson_file_are_placeholders_naming_their_address():
    """A slide never makes the browser fetch an address: Markdown and HTML images in the
    title, text and summary become "[image not shown: <address>]"."""
    text = ('title = "T ![logo](http://a.example/t.png)"\n'
            'summary = "<img src=\'http://a.example/s.png\'>"\n' +
            GOOD_SLIDE.replace('text = "', 'text = "![x](https://a.example/x.png) and ![y][r] ')
            + '\n')
    lesson = load(text)
    slide = lesson.slides[0]
    for shown in (lesson.title, lesson.summary, slide.text):
        assert "![" not in shown and "<img" not in shown.lower(), shown
    assert "[image not shown: http://a.example/t.png]" in lesson.title
    assert "[image not shown: http://a.example/s.png]" in lesson.summary
    assert "[image not shown: https://a.example/x.png]" in slide.text
    assert "[image not shown: r]" in slide.text
