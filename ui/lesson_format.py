"""The lesson file format: a lecture as an ordered list of slides, each a live state of one page.

A lesson is a TOML file (lessons/<id>.toml), parsed by the standard library's tomllib: a data
format, so reading a file never executes anything from it.

    title = "Gradient descent"
    summary = "Why plain gradient descent zigzags, and what momentum changes."

    [[slides]]
    page = "gradient_descent"            # a topic slug (ui/topics.py)
    preset = "κ = 50: the zigzag"        # optional: a preset of the page (settings, tab, claims)
    # step = 2                           # or a guided-tour step of the page (1-based)
    tab = "factor"                       # optional: a view key of the page (default: the
                                         #   preset's/step's view, else the first tab)
    settings = { gd_kappa = 10 }         # optional: declared STATE controls, on top of the preset
    title = "Ill-conditioning"
    text = "Two sentences in your own words."
    source = { notes = "004", figure = "2.16" }   # the figure of the course notes it reproduces
    [[slides.claims]]                    # optional: measured on the slide's full settings
    measure = "gradient_descent.tail_rate"        # a name of ui/lesson_measures.py
    args = { method = "gd" }
    what = "GD's measured rate"
    lo = 0.955
    hi = 0.97

`play = true` starts the tab's live training when the slide opens (tabs that declare one,
ui/live_tabs.py); Pause stops it and Next moves on while it runs. `train = N` does the same from a
fresh trainer and stops by itself at iteration N (1 <= N <= the tab's declared train_max), so the
figure and the text read the same iteration; it already plays, so `play` beside it is refused.
A claim of such a slide whose measurement takes a `step` or `steps` argument is measured at N
unless the file names another one (never beyond N: the screen stops there).

A slide's claims are the preset's/step's own claims (unless `preset_claims = false`) plus its
own; all are measured on the slide's settings: the page's defaults, then the preset or step,
then `settings`. `validate` rejects anything else with a message naming the file, the slide
and the field (LessonError); nothing of a rejected file is shown.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any, Mapping

from ui.claims import Claim

MAX_BYTES = 200_000        # a 120-slide lesson is ~60 kB
MAX_SLIDES = 200
MAX_TITLE = 120
MAX_TEXT = 1_500
MAX_CLAIMS = 12
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}$")

LESSON_KEYS = {"title": str, "summary": str, "slides": list}
SLIDE_KEYS = {"page": str, "title": str, "text": str, "source": dict, "preset": str,
              "step": int, "tab": str, "settings": dict, "claims": list,
              "preset_claims": bool, "play": bool, "train": int}
SOURCE_KEYS = {"notes": str, "figure": str}
CLAIM_KEYS = {"measure": str, "args": dict, "what": str, "lo": (int, float),
              "hi": (int, float)}
REQUIRED_SLIDE = ("page", "title", "text")

STEP_ARGS = ("step", "steps")      # a measurement's argument that names the iteration


class LessonError(ValueError):
    """A lesson file that cannot be played: `where` names the file, the slide and the field."""

    def __init__(self, file: str, message: str, slide: int | None = None,
                 field: str | None = None):
        self.file, self.slide, self.field, self.message = file, slide, field, message
        where = [file]
        if slide is not None:
            where.append(f"slide {slide}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}")


@dataclass(frozen=True)
class Source:
    notes: str            # which notes ("004")
    figure: str           # the figure number ("2.5") or the notes' line of an uncaptioned slide

    @property
    def label(self) -> str:
        fig = self.figure
        return f"notes {self.notes}, " + (f"Figure {fig}" if fig[:1].isdigit() else fig)


@dataclass(frozen=True)
class Slide:
    page: str
    title: str
    text: str
    view: str                                  # the view key of the tab it opens
    settings: Mapping[str, Any]                # the full settings (defaults + preset + own)
    own: Mapping[str, Any]                     # what the slide sets (preset + its settings)
    claims: tuple[Claim, ...] = ()
    source: Source | None = None
    preset: str | None = None
    step: int | None = None
    play: str | None = None                    # the live-training key it starts
    train: int | None = None                   # `train = N`: it stops by itself at N


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    summary: str
    slides: tuple[Slide, ...]
    file: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------ parsing
def parse(data: bytes | str, file: str) -> dict:
    """The TOML table of a lesson file, or LessonError (too large, not UTF-8, not TOML)."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise LessonError(file, f"the file has {len(raw):,} bytes; a lesson may have at most "
                                f"{MAX_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LessonError(file, "the file is not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LessonError(file, f"not a TOML file ({exc})") from None
    except RecursionError:     # tomllib recurses per nested array or inline table
        raise LessonError(file, "not a TOML file a lesson can use (nested too deeply)") \
            from None


def _check_keys(table: Mapping, allowed: Mapping[str, Any], file: str, slide: int | None,
                prefix: str = "") -> None:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if key not in allowed:
            raise LessonError(file, f"unknown key (allowed: {', '.join(sorted(allowed))})",
                              slide, name)
        kinds = allowed[key]
        if isinstance(value, bool) and kinds is not bool:
            ok = False
        else:
            ok = isinstance(value, kinds)
        if not ok:
            want = " or ".join(k.__name__ for k in kinds) if isinstance(kinds, tuple) \
                else kinds.__name__
            raise LessonError(file, f"expected {_kind_name(want)}, got "
                                    f"{_kind_name(type(value).__name__)}", slide, name)


def _kind_name(name: str) -> str:
    return {"str": "text", "dict": "a table", "list": "a list", "int": "an integer",
            "float": "a number", "bool": "true/false"}.get(name, name)


# Markdown images make the browser fetch their address when the slide is drawn: a lesson file
# from elsewhere could make every student's browser call an outside host. They are shown as a
# placeholder that names the address instead ("![alt](url)", "![alt][ref]", "<img ...>").
REMOTE_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?[^)]*\)|!\[([^\]]*)\]\[([^\]]*)\]"
                          r"|<img\b(?:[^>]*?\bsrc\s*=\s*[\"']?([^\"'\s>]*))?[^>]*>",
                          re.IGNORECASE)
REFERENCE = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)


def no_remote_images(text: str) -> str:
    """`text` with every Markdown or HTML image replaced by "[image not shown: <address>]"."""
    refs = {k.lower(): v for k, v in REFERENCE.findall(text)}

    def placeholder(m: re.Match) -> str:
        ref = m.group(4) or m.group(3)
        where = (m.group(2) or m.group(5) or (refs.get(ref.lower()) if ref else None)
                 or ref or m.group(1) or "an image")
        return f"[image not shown: {where}]"
    return REMOTE_IMAGE.sub(placeholder, text)


def _text(value: str, limit: int, file: str, slide: int | None, name: str) -> str:
    value = value.strip()
    if not value:
        raise LessonError(file, "is empty", slide, name)
    if len(value) > limit:
        raise LessonError(file, f"has {len(value)} characters; at most {limit}", slide, name)
    return no_remote_images(value)


def validate(table: Mapping, file: str, lesson_id: str, pages: Mapping[str, Any],
             measures: Mapping[str, Any]) -> Lesson:
    """The Lesson a parsed file describes, or LessonError naming file, slide and field.

    `pages`: slug -> page module (STATE, VIEWS, PRESETS, STEPS); `measures`: name -> function
    (ui/lesson_measures.py)."""
    if not ID_PATTERN.match(lesson_id):
        raise LessonError(file, "the lesson id (file name) may use a-z, 0-9, '-' and '_' only")
    _check_keys(table, LESSON_KEYS, file, None)
    title = _text(table.get("title", ""), MAX_TITLE, file, None, "title")
    summary = no_remote_images(str(table.get("summary", "")).strip()[:MAX_TEXT])
    rows = table.get("slides", [])
    if not rows:
        raise LessonError(file, "a lesson needs at least one [[slides]] table", None, "slides")
    if len(rows) > MAX_SLIDES:
        raise LessonError(file, f"{len(rows)} slides; at most {MAX_SLIDES}", None, "slides")
    slides = []
    for i, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise LessonError(file, "each entry of slides must be a table", i, "slides")
        slides.append(_slide(row, file, i, pages, measures))
    return Lesson(lesson_id, title, summary, tuple(slides), file)


def _slide(row: Mapping, file: str, i: int, pages, measures) -> Slide:
    _check_keys(row, SLIDE_KEYS, file, i)
    for key in REQUIRED_SLIDE:
        if key not in row:
            raise LessonError(file, "missing", i, key)
    slug = row["page"]
    if slug not in pages:
        raise LessonError(file, f"unknown page {slug!r} (pages: {', '.join(sorted(pages))})",
                          i, "page")
    module = pages[slug]
    state, views = module.STATE, [v.key for v in module.VIEWS]
    if "preset" in row and "step" in row:
        raise LessonError(file, "name a preset or a step, not both", i, "step")
    base, view, inherited = {}, None, ()
    if "preset" in row:
        preset = module.PRESETS.get(row["preset"])
        if preset is None:
            raise LessonError(file, f"unknown preset {row['preset']!r} of page {slug!r} "
                                    f"(presets: {'; '.join(module.PRESETS)})", i, "preset")
        base, view, inherited = dict(preset.settings), preset.view, tuple(preset.claims)
    if "step" in row:
        k = row["step"]
        if not 1 <= k <= len(module.STEPS):
            raise LessonError(file, f"page {slug!r} has tour steps 1 to {len(module.STEPS)}",
                              i, "step")
        step = module.STEPS[k - 1]
        base, view, inherited = dict(step.settings), step.view, tuple(step.claims)
    own = row.get("settings", {})
    for key, value in own.items():
        if key not in state:
            raise LessonError(file, f"page {slug!r} declares no control {key!r}", i,
                              f"settings.{key}")
        control = state[key]
        if isinstance(value, dict) or not control.valid(value):
            raise LessonError(file, f"{value!r} is not a valid value of {control.label!r}"
                                    f"{_range(control)}", i, f"settings.{key}")
    if "tab" in row:
        if row["tab"] not in views:
            raise LessonError(file, f"page {slug!r} has no tab {row['tab']!r} (tabs: "
                                    f"{', '.join(views)})", i, "tab")
        view = row["tab"]
    if len(row.get("claims", [])) > MAX_CLAIMS:
        raise LessonError(file, f"at most {MAX_CLAIMS} claims per slide", i, "claims")
    settings = {**base, **own}
    view = view or views[0]
    play, train = _live(row, file, i, slug, next(v for v in module.VIEWS if v.key == view))
    claims = (inherited if row.get("preset_claims", True) else ()) + tuple(
        _claim(c, file, i, j, slug, measures, train)
        for j, c in enumerate(row.get("claims", []), 1))
    source = None
    if "source" in row:
        _check_keys(row["source"], SOURCE_KEYS, file, i, "source.")
        try:
            source = Source(_text(row["source"]["notes"], 20, file, i, "source.notes"),
                            _text(row["source"]["figure"], 20, file, i, "source.figure"))
        except KeyError as missing:
            raise LessonError(file, "missing", i, f"source.{missing.args[0]}") from None
    return Slide(slug, _text(row["title"], MAX_TITLE, file, i, "title"),
                 _text(row["text"], MAX_TEXT, file, i, "text"), view,
                 state.resolve(settings), settings, claims, source, row.get("preset"),
                 row.get("step"), play, train)


def _live(row: Mapping, file: str, i: int, slug: str,
          tab: Any) -> tuple[str | None, int | None]:
    """(the live key the slide starts or None, N of `train = N` or None), from the tab's
    declaration (`View.live`, ui/page.py)."""
    view = tab.key
    if "train" in row and "play" in row:
        raise LessonError(file, "`train = N` already plays (and stops at N): leave `play` out",
                          i, "play")
    field = "train" if "train" in row else "play"
    if field == "play" and not row.get("play"):
        return None, None
    if tab.live is None:
        raise LessonError(file, f"tab {view!r} of page {slug!r} has no live training to "
                                f"{field}", i, field)
    key = tab.live.key
    if field == "play":
        return key, None
    n, most = row["train"], tab.live.train_max
    if not 1 <= n <= most:
        raise LessonError(file, f"{n} iterations; tab {view!r} of page {slug!r} trains 1 to "
                                f"{most:,} on a slide", i, "train")
    return key, n


def _range(control) -> str:
    if control.options is not None:
        shown = ", ".join(repr(o) for o in list(control.options)[:12])
        return f" (one of: {shown}{', …' if len(control.options) > 12 else ''})"
    if control.lo is not None or control.hi is not None:
        return f" (from {control.lo} to {control.hi})"
    return ""


def _claim(row, file: str, i: int, j: int, slug: str, measures,
           train: int | None = None) -> Claim:
    prefix = f"claims[{j}]."
    if not isinstance(row, dict):
        raise LessonError(file, "each claim must be a table", i, f"claims[{j}]")
    _check_keys(row, CLAIM_KEYS, file, i, prefix)
    for key in ("measure", "what"):
        if key not in row:
            raise LessonError(file, "missing", i, prefix + key)
    name = row["measure"]
    if name not in measures:
        raise LessonError(file, f"unknown measure {name!r}", i, prefix + "measure")
    if not name.startswith(f"{slug}."):
        raise LessonError(file, f"measure {name!r} belongs to another page than {slug!r}", i,
                          prefix + "measure")
    if "lo" not in row and "hi" not in row:
        raise LessonError(file, "a claim needs a threshold: lo, hi or both", i, prefix + "lo")
    lo, hi = float(row.get("lo", -math.inf)), float(row.get("hi", math.inf))
    if not (lo <= hi) or math.isnan(lo) or math.isnan(hi):
        raise LessonError(file, f"lo = {lo} must not exceed hi = {hi}", i, prefix + "lo")
    args = dict(row.get("args", {}))
    for key, value in args.items():
        if not isinstance(value, (str, int, float, bool)):
            raise LessonError(file, "arguments are text, numbers or true/false", i,
                              f"{prefix}args.{key}")
    spec = measures[name]
    try:
        spec.bind(args)
    except TypeError as exc:
        raise LessonError(file, str(exc), i, prefix + "args") from None
    if train is not None and spec.slow:
        args = _at_train(spec, args, train, file, i, prefix)
    what = _text(row["what"], MAX_TITLE, file, i, prefix + "what")
    return Claim(what, spec.measure(args), lo, hi, slow=spec.slow)


def _at_train(spec, args: dict, train: int, file: str, i: int, prefix: str) -> dict:
    """A trained claim of a `train = N` slide: a measurement that takes the iteration is at N
    (what the screen shows when the training stops), or at an earlier iteration the file names
    (the curves keep it); never later."""
    for name in STEP_ARGS:
        if name in args:
            if isinstance(args[name], bool) or not isinstance(args[name], int) \
                    or args[name] > train:
                raise LessonError(file, f"{args[name]!r}: the slide trains to {train:,}, so a "
                                        f"claim is measured at iteration {train:,} or earlier",
                                  i, f"{prefix}args.{name}")
            return args
        try:
            spec.bind({**args, name: train})
        except TypeError:
            continue
        return {**args, name: train}
    return args
