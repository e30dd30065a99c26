"""What a live frame shows, as plain values: the parts of a frame (frames without reruns).

A live page's frame is built by a pure function `parts(view, read, **inputs) -> {slot: Part}`
(no st.* inside: it may run in the frame route's thread, live/route.py). Each part can
be drawn two ways:

  show(slot)   with Streamlit, in the page's script run (paused: interactive Plotly,
               st.metric with tooltips, st.image...; ui.render decides canvas vs Plotly);
  payload(classroom)
               as JSON for the live component (live/canvas.js), which a playing page
               fetches from the frame route instead of rerunning its fragment:
               {"spec": canvas spec} or {"html": markup}.

The kinds are a registry of small classes, one job each.
"""
from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import plotly.graph_objects as go
import streamlit as st

from live import canvas as live_canvas
from ui.render import show_figure
from ui.markup import Metric, inline_markdown, metrics_html
from ui.screen import is_large
from ui.theme import style_figure

@dataclass
class Figure:
    """A Plotly figure. `on_select` etc. as for st.plotly_chart (used when paused)."""
    fig: go.Figure
    on_select: Any = "ignore"
    selection_mode: Any = ("points", "box", "lasso")

    def show(self, slot: str) -> None:
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
            live_canvas.subtitle(spec, "Press Pause to click on this chart")
        return {"spec": spec}


@dataclass
class Html:
    """Markup the page composed (e.g. topics/gan/summary.py). `markdown`: drawn paused with
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
    tooltips, what the tests read); one html element in a playing frame (ui.render.metrics)."""
    items: Sequence[Metric]

    def show(self, slot: str) -> None:
        from ui.render import metrics
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
        """`present_px`: the window's height for large figures (ui.render.show_figure
        sizes the paused ones the same way, so Play does not change the picture's size)."""
        if present_px:     # before styling: the title's room follows it
            for part in parts.values():
                fig = getattr(part, "fig", None)
                if fig is not None and is_large(fig.layout.height):
                    fig.update_layout(height=int(present_px))
        return cls({slot: part.payload(classroom) for slot, part in parts.items()})

    def drawable(self) -> bool:
        return all(p is not None for p in self.slots.values())
