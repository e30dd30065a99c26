"""docs/SCREENSHOTS.md, the screenshots of every page, written from the page declarations
(ui/topics.py) and the files scripts/refresh_screenshots.sh took: per page in the navigation's
order, the laptop view (assets/screenshots/<slug>.png) and the projector's view
(<slug>_projector.png), each where its file exists.
Run: python -m scripts.screenshot_gallery  (refresh_screenshots.sh runs it after the shots)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "SCREENSHOTS.md"
SHOTS = ROOT / "assets" / "screenshots"


def gallery(shots: Path = SHOTS) -> str:
    """The Markdown of docs/SCREENSHOTS.md for the screenshot files in `shots`."""
    from ui.topics import TOPICS
    out = ["# Screenshots", "",
           "Every page as `scripts/refresh_screenshots.sh` took it in headless Chromium: the",
           "laptop view at 1400x1000 (`tests/e2e/test_browser.py`) and the projector's view at",
           "1280x720 with `?classroom=1` (the first screen of the projector walk,",
           "`tests/e2e/test_skeleton_pages.py`). A page without a file here has not been shot yet.",
           ""]
    for topic in TOPICS:
        laptop, projector = shots / f"{topic.slug}.png", shots / f"{topic.slug}_projector.png"
        if not laptop.exists() and not projector.exists():
            continue
        out += [f"## {topic.title}", ""]
        if laptop.exists():
            out += [f"![{topic.title}](../assets/screenshots/{laptop.name})", ""]
        if projector.exists():
            out += ["Projector (1280x720, classroom mode):", "",
                    f"![{topic.title} on a projector](../assets/screenshots/{projector.name})", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    DOC.write_text(gallery())
    print(f"wrote {DOC.relative_to(ROOT)}")
