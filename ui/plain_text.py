"""Text a user typed (or a URL carried), shown as typed by Streamlit's Markdown elements
(st.error, st.warning, st.caption, ...): `__import__` must not turn bold, `$x$` must not turn
into LaTeX, `<b>` must not be read as HTML."""
from __future__ import annotations

import re

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def plain(text: str) -> str:
    """`text` with every ASCII punctuation mark backslash-escaped (CommonMark: a backslash
    before ASCII punctuation shows that character literally)."""
    return _PUNCTUATION.sub(r"\\\1", str(text))


def elide(text: str, n: int = 40) -> str:
    """`text` cut to n characters with "…" and its length when longer."""
    text = str(text)
    return text if len(text) <= n else f"{text[:n]}… ({len(text):,} characters)"
