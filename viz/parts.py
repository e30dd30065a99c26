"""What a live frame shows, as plain values: the parts of a frame (frames without reruns).

A live page's frame is built by a pure function `parts(view, read, **inputs) -> {slot: Part}`
(no st.* inside: it may run in the frame route's thread, viz/frame_route.py). Each part can
be drawn two ways:

  show(slot)   with Streamlit, in the page's script run (paused: interactive Plotly,
               st.metric with tooltips, st.image...; viz.render decides canvas vs Plotly);
  payload(classroom)
               as JSON for the live component (viz/live_canvas.js), which a playing page
               fetches from the frame route instead of rerunning its fragment:
               {"spec": canvas spec} or {"html": markup}.

The kinds are a registry of small classes, one job each.
"""
from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import plotly.graph_objects as go
import streamlit as st

from viz import live_canvas
from viz.screen import is_large
from viz.theme import style_figure

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


@dataclass
class Figure:
    """A Plotly figure. `on_select` etc. as for st.plotly_chart (used when paused)."""
    fig: go.Figure
    on_select: Any = "ignore"
    selection_mode: Any = ("points", "box", "lasso")

    def show(self, slot: str) -> None:
        from viz.render import show_figure
        show_figure(self.fig, key=slot, on_select=self.on_select,
                    selection_mode=self.selection_mode)

    def payload(self, classroom: bool) -> dict | None:
        """{"spec"} for the canvas; a figure the canvas refuses (3-D, bars, fills...) as
        {"plotly": its JSON, "height"}: the live component draws it with plotly.js
        (Plotly.react), still no rerun per frame; None only where that is switched off."""
        style_figure(self.fig, classroom)
        spec = live_canvas.to_spec(self.fig) if live_canvas.enabled() else None
        if spec is None:
            return live_canvas.plotly_payload(self.fig)
        if self.on_select != "ignore":
            from viz.render import subtitle
            subtitle(spec, "Press Pause to click on this chart")
        return {"spec": spec}


@dataclass
class Html:
    """Markup the page composed (e.g. viz/gan_summary.py). `markdown`: drawn paused with
    st.markdown(unsafe_allow_html) rather than st.html (what the page's tests read)."""
    markup: str
    markdown: bool = False

    def show(self, slot: str) -> None:
        if self.markdown:
            st.markdown(self.markup, unsafe_allow_html=True)
        else:
            st.html(self.markup)

    def payload(self, classroom: bool) -> dict:
        return {"html": self.markup}


@dataclass
class Caption:
    """A caption (the inline markdown of inline_markdown)."""
    text: str

    def show(self, slot: str) -> None:
        st.caption(self.text)

    def payload(self, classroom: bool) -> dict:
        size = "1.1rem" if classroom else "0.875rem"
        return {"html": f'<p style="font-size:{size};color:rgba(49,51,63,.6);margin:0 0 '
                        f'0.5rem 0">{inline_markdown(self.text)}</p>'}


@dataclass
class Markdown:
    """A paragraph of markdown (st.markdown), e.g. the attention page's answer line."""
    text: str

    def show(self, slot: str) -> None:
        st.markdown(self.text)

    def payload(self, classroom: bool) -> dict:
        return {"html": f'<p style="margin:0 0 1rem 0">{inline_markdown(self.text)}</p>'}


@dataclass
class Info:
    """A blue note (st.info)."""
    text: str
    icon: str | None = None

    def show(self, slot: str) -> None:
        st.info(self.text, icon=self.icon)

    def payload(self, classroom: bool) -> dict:
        return {"html": '<div style="background:rgba(28,131,225,.1);color:#004280;border-radius:'
                        f'.5rem;padding:1rem">{inline_markdown(self.text)}</div>'}


@dataclass
class Metrics:
    """A row of metrics: st.metric in columns when shown by Streamlit (paused: their help
    tooltips, what the tests read); one html element in a playing frame (viz.render.metrics)."""
    items: Sequence[Metric]

    def show(self, slot: str) -> None:
        from viz.render import metrics
        metrics(self.items)

    def payload(self, classroom: bool) -> dict:
        return {"html": metrics_html(self.items, classroom)}


@dataclass
class Image:
    """A small PNG (e.g. the VAE's decoded digit) with a caption."""
    png: bytes
    caption: str = ""

    def show(self, slot: str) -> None:
        st.image(self.png, width="stretch", output_format="PNG", caption=self.caption or None)

    def payload(self, classroom: bool) -> dict:
        src = "data:image/png;base64," + base64.b64encode(self.png).decode()
        cap = (f'<figcaption style="text-align:center;font-size:0.875rem;color:rgba(49,51,63,.6)">'
               f'{html.escape(self.caption)}</figcaption>' if self.caption else "")
        return {"html": f'<figure style="margin:0"><img src="{src}" alt="{html.escape(self.caption)}"'
                        f' style="width:100%;image-rendering:pixelated">{cap}</figure>'}


Part = Figure | Html | Caption | Markdown | Info | Metrics | Image
Parts = Mapping[str, Part]
# parts(view, read, **inputs): read(fn) runs fn next to the trainer (TrainerHandle.read)
PartsFn = Callable[..., Parts]


@dataclass
class Payload:
    """The JSON a frame route answers: the slots' payloads, or None for a part the canvas
    cannot draw (the page then falls back to rerunning its fragment)."""
    slots: dict[str, dict | None] = field(default_factory=dict)

    @classmethod
    def of(cls, parts: Parts, classroom: bool, present_px: int | None = None) -> "Payload":
        """`present_px`: classroom mode's height for large figures (viz.render.show_figure
        sizes the paused ones the same way, so Play does not change the picture's size)."""
        slots = {slot: part.payload(classroom) for slot, part in parts.items()}
        if classroom and present_px:
            for payload in slots.values():
                layout = (payload or {}).get("spec", {}).get("layout")
                if layout is not None and is_large(layout.get("height")):
                    layout["height"] = int(present_px)
        return cls(slots)

    def drawable(self) -> bool:
        return all(p is not None for p in self.slots.values())
