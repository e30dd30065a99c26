"""The little HTML the pages and live frames share: Streamlit's inline markdown (`code`,
**bold**, ~~strike~~, :green[..]/:red[..]) as HTML, and a row of metrics as ONE element."""
from __future__ import annotations

import html
import re
from typing import Sequence

# (label, value) or (label, value, help): one metric of a row
Metric = tuple[str, str] | tuple[str, str, str]

# the markdown live frames use (Streamlit's own), as HTML for a frame fetched by the browser
_MD_COLORS = {"green": "#158237", "red": "#d6282b"}      # Streamlit's light-theme text colours
_MD = [(re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
       (re.compile(r"\*\*(.+?)\*\*"), r"<b>\1</b>"),
       (re.compile(r"~~(.+?)~~"), r"<s>\1</s>"),
       (re.compile(r":(green|red)\[(.+?)\]"),
        lambda m: f'<span style="color:{_MD_COLORS[m[1]]}">{m[2]}</span>')]


def inline_markdown(text: str) -> str:
    """The little markdown live frames use, as HTML: `code`, **bold**, ~~strike~~,
    :green[..] and :red[..], &nbsp; and a hard break ("  \\n"); everything else is escaped."""
    out = html.escape(text, quote=False).replace("&amp;nbsp;", "&nbsp;")
    for pattern, repl in _MD:
        out = pattern.sub(repl, out)
    return out.replace("  \n", "<br>").replace("\n", " ")


def metrics_html(items: Sequence[Metric], classroom: bool) -> str:
    """A row of metrics as ONE html element: label over value, the help as a tooltip."""
    big = classroom
    cells = "".join(
        f'<div style="flex:1 1 0;min-width:0"{_title(tip)}><div class="dlplay-metric-label" '
        f'style="font-size:{"1.2rem" if big else "0.875rem"};color:rgba(49,51,63,.6);'
        f'white-space:nowrap;overflow:hidden;text-overflow:ellipsis;line-height:1.6">'
        f'{html.escape(label)}</div><div class="dlplay-metric-value" style="font-size:'
        f'{"2.6rem" if big else "2.25rem"};line-height:1.4;white-space:nowrap;overflow:hidden;'
        f'text-overflow:ellipsis">{html.escape(value)}</div></div>'
        for label, value, *tip in items)
    return f'<div data-testid="dlplay-metrics" style="display:flex;gap:1rem">{cells}</div>'


def _title(tip: list[str]) -> str:
    return f' title="{html.escape(tip[0])}"' if tip else ""
