"""A new page in one command: the topic folder, its engine package, its tests, its gallery
entry and thumbnail, all passing before any topic code is written.

    python -m scripts.new_page <slug> "<title>" [--sentence "..."] [--section Foundations]
                               [--prefix xy] [--icon :material/science:]

Writes (from scripts/page_template/, an example live page: an MLP fitted to two moons):

    topics/<slug>/    __init__.py, page.py (STATE, views, footer), compute.py, figures.py,
                      tour.py (PRESETS, STEPS, claims), thumbnail.py
    engine/<slug>/    __init__.py, trainer.py (a TrainerBase subclass)
    tests/engine/test_<slug>.py, tests/pages/test_<slug>.py
    assets/thumbnails/<slug>.png
    ui/topics.py      one Topic entry, appended (gallery order: move it if you like)
    README.md         one row of the page table, appended

then replace the example with the page's own model and figures (docs/ADDING_A_PAGE.md says
what to fill in and which tests run for the page). Nothing existing is overwritten: the
command stops if any of these files exists.
"""
from __future__ import annotations

import argparse
import keyword
import re
import sys
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "page_template"
SLUG = re.compile(r"^[a-z][a-z0-9_]{1,30}$")

# template -> where it goes ({slug} filled in)
FILES = {"page.py.tmpl": "topics/{slug}/page.py", "compute.py.tmpl": "topics/{slug}/compute.py",
         "figures.py.tmpl": "topics/{slug}/figures.py", "tour.py.tmpl": "topics/{slug}/tour.py",
         "thumbnail.py.tmpl": "topics/{slug}/thumbnail.py",
         "engine_init.py.tmpl": "engine/{slug}/__init__.py",
         "engine_trainer.py.tmpl": "engine/{slug}/trainer.py",
         "test_engine.py.tmpl": "tests/engine/test_{slug}.py",
         "test_page.py.tmpl": "tests/pages/test_{slug}.py"}
EMPTY = ("topics/{slug}/__init__.py",)


def used_prefixes(root: Path = ROOT) -> set[str]:
    """The key prefixes the pages' controls use already ("gd" of gd_kappa)."""
    out = set()
    for page in (root / "topics").glob("*/*.py"):
        out |= set(re.findall(r'Control\(\s*"([a-z0-9]+)_', page.read_text(encoding="utf-8")))
    return out


def prefix_for(slug: str, taken: set[str]) -> str:
    """Initials of the slug's words ("normalizing_flows" -> "nf"), or its first letters, not
    one of `taken`."""
    words = slug.split("_")
    candidates = ["".join(w[0] for w in words)] if len(words) > 1 else []
    candidates += [slug[:k] for k in range(2, len(slug) + 1)]
    return next(c for c in candidates if len(c) >= 2 and c not in taken)


def class_name(slug: str) -> str:
    return "".join(w.capitalize() for w in slug.split("_"))


def topic_entry(slug: str, title: str, section: str, sentence: str, icon: str) -> str:
    return (f"    Topic({slug!r}, {title!r}, {section!r},\n"
            f"          {sentence!r},\n"
            f"          {icon!r},\n"
            f"          engine=(\"engine.{slug}\",)),\n")


def add_topic(topics_py: Path, entry: str) -> None:
    """Append `entry` as the last item of the TOPICS tuple."""
    text = topics_py.read_text(encoding="utf-8")
    start = text.index("TOPICS: tuple[Topic, ...] = (")
    end = text.index("\n)\n", start)
    topics_py.write_text(text[:end + 1] + entry + text[end + 1:], encoding="utf-8")


def add_readme_row(readme: Path, slug: str, title: str, sentence: str) -> None:
    """Append the page's row to the README's page table (the last row of "## Pages")."""
    text = readme.read_text(encoding="utf-8")
    start = text.index("## Pages\n")
    rows = [i for i, line in enumerate(text[start:].split("\n")) if line.startswith("| ![")]
    lines = text[start:].split("\n")
    lines.insert(rows[-1] + 1, f"| ![{slug}](assets/thumbnails/{slug}.png) | **{title}** | "
                               f"{sentence} |")
    readme.write_text(text[:start] + "\n".join(lines), encoding="utf-8")


def plan(slug: str, root: Path = ROOT) -> list[Path]:
    return [root / p.format(slug=slug) for p in (*FILES.values(), *EMPTY)] + \
           [root / "assets" / "thumbnails" / f"{slug}.png"]


def create(slug: str, title: str, *, sentence: str = "", section: str = "Foundations",
           prefix: str = "", icon: str = ":material/science:", root: Path = ROOT,
           thumbnail: bool = True) -> list[Path]:
    """Write the new page's files under `root`; returns them. ValueError for a bad slug, a
    prefix in use, or a file that exists already."""
    sys.path.insert(0, str(root))
    from ui.topics import SECTIONS, TOPICS_BY_SLUG
    if not SLUG.match(slug) or keyword.iskeyword(slug):
        raise ValueError(f"{slug!r}: a slug is 2-31 lower-case letters, digits or _, "
                         "starting with a letter")
    if slug in TOPICS_BY_SLUG:
        raise ValueError(f"a page {slug!r} exists already")
    if section not in SECTIONS:
        raise ValueError(f"section {section!r} is not one of {', '.join(SECTIONS)}")
    taken = used_prefixes(root)
    prefix = prefix or prefix_for(slug, taken)
    if prefix in taken or not re.match(r"^[a-z][a-z0-9]{1,5}$", prefix):
        raise ValueError(f"key prefix {prefix!r} is in use or not 2-6 letters/digits")
    existing = [str(p.relative_to(root)) for p in plan(slug, root) if p.exists()]
    if existing:
        raise ValueError(f"these files exist already: {', '.join(existing)}")
    sentence = sentence or f"{title}: an example live page to fill in."
    fill = dict(slug=slug, title=title, sentence=sentence, prefix=prefix,
                Class=class_name(slug))
    written = []
    for template, target in FILES.items():
        path = root / target.format(slug=slug)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template((TEMPLATES / template).read_text(encoding="utf-8"))
                        .substitute(fill), encoding="utf-8")
        written.append(path)
    for target in EMPTY:
        path = root / target.format(slug=slug)
        path.write_text("", encoding="utf-8")
        written.append(path)
    add_topic(root / "ui" / "topics.py", topic_entry(slug, title, section, sentence, icon))
    add_readme_row(root / "README.md", slug, title, sentence)
    if thumbnail:
        from scripts.make_thumbnails import draw_topic_thumbnail
        written.append(draw_topic_thumbnail(slug, root / "assets" / "thumbnails"))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.new_page", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slug", help="the page's folder and URL path, e.g. normalizing_flows")
    parser.add_argument("title", help='the page title, e.g. "Normalizing flows"')
    parser.add_argument("--sentence", default="", help="one sentence for the gallery card")
    parser.add_argument("--section", default="Foundations", help="the navigation group")
    parser.add_argument("--prefix", default="", help="the controls' key prefix (default: "
                                                     "the slug's initials)")
    parser.add_argument("--icon", default=":material/science:", help="a Material icon")
    args = parser.parse_args(argv)
    from engine.device import configure_threads
    configure_threads()
    try:
        written = create(args.slug, args.title, sentence=args.sentence, section=args.section,
                         prefix=args.prefix, icon=args.icon)
    except ValueError as err:
        print(f"new_page: {err}", file=sys.stderr)
        return 2
    for path in written:
        print("wrote", path.relative_to(ROOT))
    print("and added its Topic to ui/topics.py and its row to README.md's page table.\n"
          "Next: docs/ADDING_A_PAGE.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
