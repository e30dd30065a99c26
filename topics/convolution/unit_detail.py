"""The Feature maps tab's unit on demand, as CNN Explainer shows it: the map pixel a click picks
(else the strongest unit of the last convolution), its input window, kernel, products and the
sum that gives its value."""
from __future__ import annotations

import streamlit as st

from engine.conv.units import unit_computation
from topics.convolution import figures as figs
from topics.convolution.compute import UNIT_KEY, strongest_unit, unit_at
from ui.render import show_figure


def _picked_unit(maps, event, idx: int) -> tuple[int, int, int, int]:
    """(layer, channel, row, col): the map pixel the last click chose (kept per digit in the
    session), else the strongest unit of the last convolution."""
    points = (getattr(event, "selection", None) or {}).get("points") or [] if event else []
    for pt in points:
        layer = int(pt.get("curve_number", -1))
        if 0 <= layer < len(maps) and "x" in pt and "y" in pt:
            hit = unit_at(maps[layer].maps.shape, int(pt["x"]), int(pt["y"]))
            if hit is not None:
                st.session_state[UNIT_KEY] = (idx, layer, *hit)
    kept = st.session_state.get(UNIT_KEY)
    if kept and kept[0] == idx and kept[1] < len(maps):
        layer, ch, r, q = kept[1:]
        c, h, w = maps[layer].maps.shape
        if ch < c and r < h and q < w:
            return layer, ch, r, q
    last_conv = max(i for i, fm in enumerate(maps) if fm.name.startswith("conv"))
    return strongest_unit(maps, last_conv)


def unit_detail(model, img8, maps, event, idx: int) -> None:
    """The clicked unit's computation: its input window, its kernel and their products, and
    the sum that gives the value in the map."""
    layer, ch, r, q = _picked_unit(maps, event, idx)
    u = unit_computation(model, img8, layer, ch, r, q)
    name = maps[layer].name
    where = f"{name}, channel {ch}, row {r}, column {q}"
    if u.kind == "conv":
        act = f" → ReLU → **{u.value:.3f}**" if u.relu else ""
        line = (f"**{where}** = Σ window ⊙ kernel + b = {u.pre - u.bias:.3f} "
                f"{'+' if u.bias >= 0 else '−'} {abs(u.bias):.3f} = **{u.pre:.3f}**{act} "
                f"(window: {u.window.shape[0]} input channels × {u.window.shape[1]}×"
                f"{u.window.shape[2]} at row {u.origin[0]}, column {u.origin[1]} of the "
                "layer's input; outside it, zero padding)")
    else:
        line = (f"**{where}** = the largest of its {u.window.shape[1]}×{u.window.shape[2]} "
                f"window in channel {ch} of the layer's input = **{u.value:.3f}**")
    st.markdown(line)
    show_figure(figs.unit_figure(u.window, u.kernel, f"How {where} is computed"),
                key="cv_fig_unit")
