"""Writing a lesson as TOML (the standard library reads TOML but does not write it): only the
value kinds a lesson holds: text, numbers, true/false, lists of those, and flat tables."""
from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping, Sequence

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def value(v: Any) -> str:
    """One TOML value. JSON's string escapes are valid in TOML basic strings."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r} cannot be written to a lesson")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"{type(v).__name__} cannot be written to a lesson")


def key(k: str) -> str:
    return k if _BARE_KEY.match(k) else json.dumps(k, ensure_ascii=False)


def lesson_text(title: str, slides: Sequence[Mapping[str, Any]], summary: str = "") -> str:
    """A lesson file: the title, then one [[slides]] table per slide (keys in given order)."""
    lines = [f"title = {value(title)}"]
    if summary:
        lines.append(f"summary = {value(summary)}")
    for slide in slides:
        lines += ["", "[[slides]]"]
        lines += [f"{key(k)} = {value(v)}" for k, v in slide.items()]
    return "\n".join(lines) + "\n"
