"""Figures of the backpropagation page: data in, go.Figure out (no Streamlit, no math beyond
arranging what engine/autodiff computed)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.autodiff import Differentiation, GradcheckCurve, JacobianCost, LayerExample
from ui.theme import COLORWAY

VALUE_COLOR, GRAD_COLOR, STEP_COLOR = "#2ca02c", "#d62728", "#ff7f0e"
NODE_FILL = {"input": "#dbe9f6", "const": "#eeeeee"}
NODE_SIZE = 38                  # px (before the classroom scale)
CROWDED_ROW_PX = 60             # rows closer than this: small nodes, numbers only on hover
EDGE_LABELS_UP_TO = 40          # larger graphs: only the current step's edges are labelled
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
CELL_NUMBERS_UP_TO = 40         # heatmap cells get their number written in them
ERROR_FLOOR = 1e-17             # a relative error of exactly 0 is drawn here (log axis)


def fmt(v: float) -> str:
    """A compact number: 3 significant digits, no trailing zeros, −0 shown as 0."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "∞" if v > 0 else "−∞"
    if v == 0:
        return "0"
    return f"{v:.3g}".replace("-", "−")


def _edge_path(x0, y0, x1, y1, bend: float, n: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Points of a quadratic curve from (x0, y0) to (x1, y1) bent by `bend` at its middle."""
    t = np.linspace(0, 1, n)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2 + bend
    return ((1 - t) ** 2 * x0 + 2 * t * (1 - t) * cx + t ** 2 * x1,
            (1 - t) ** 2 * y0 + 2 * t * (1 - t) * cy + t ** 2 * y1)


def _bends(d: Differentiation) -> list[float]:
    """0 for a single edge; ±0.22 for the two edges of x*x (same source and target)."""
    seen: dict[tuple[int, int], int] = {}
    for e in d.edges:
        seen[(e.src, e.dst)] = seen.get((e.src, e.dst), 0) + 1
    return [0.0 if seen[(e.src, e.dst)] == 1 else (0.22 if e.slot == 0 else -0.22)
            for e in d.edges]


def graph_figure(d: Differentiation, step: int, big: bool = False) -> go.Figure:
    """The graph left to right: op symbol in each node, its forward value above (green),
    the gradient that has arrived after `step` backward steps below (red). The node the
    step processes is ringed orange; its input edges carry upstream × local = downstream.
    A graph too tall for the figure gets small nodes and shows the numbers on hover."""
    x, y = d.layout.x, -d.layout.y                  # first leaf on top
    grads = d.grads_at_step(step)
    current = d.trace[step - 1] if 0 < step <= len(d.trace) else None
    size = 19 if big else 12
    rows = float(d.layout.y.max()) + 1 if len(d.nodes) else 1
    height = int(np.clip(110 * rows + 120, 320, 900))
    span = rows + 0.15                               # the y range below, in rows
    px_per_row = (height - 60) / span
    # the shared template scales marker sizes by 1.6 in classroom mode (ui/theme.py)
    scale = 1.6 if big else 1.0
    crowded = px_per_row < CROWDED_ROW_PX            # big graphs: small nodes, numbers on hover
    node_size = max(6.0, 0.7 * px_per_row / scale) if crowded else NODE_SIZE
    offset = (node_size * scale / 2 + 0.7 * size + 2) / px_per_row   # text outside the circle
    fig = go.Figure()
    bends = _bends(d)
    hot = {(i, current.node, s) for i, s in zip(current.inputs, current.slots)} \
        if current else set()
    for is_hot in (False, True):
        xs, ys = [], []
        for e, bend in zip(d.edges, bends):
            if ((e.src, e.dst, e.slot) in hot) != is_hot:
                continue
            px, py = _edge_path(x[e.src], y[e.src], x[e.dst], y[e.dst], bend)
            xs += [*px, None]
            ys += [*py, None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip",
                                     showlegend=False, name="edges",
                                     line=dict(color=STEP_COLOR if is_hot else "#9a9a9a",
                                               width=4 if is_hot else 1.6)))
    _edge_labels(fig, d, current, bends, x, y, size)
    fill = [NODE_FILL.get(n.op, "white") for n in d.nodes]
    ring = ["#444"] * len(d.nodes)
    width = [1.5] * len(d.nodes)
    if current is not None:
        ring[current.node], width[current.node] = STEP_COLOR, 5
    hover = [f"node {n.id}: {n.label} ({n.op})<br>value {fmt(v)}<br>dL/d(node) "
             f"{fmt(g) if g == g else 'not reached yet'}"
             for n, v, g in zip(d.nodes, d.values, grads)]
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="markers" if crowded else "markers+text",
        text=[n.label for n in d.nodes], hovertext=hover,
        hoverinfo="text", textfont=dict(size=size + 3, color="#111"), showlegend=False,
        name="nodes", marker=dict(size=node_size, color=fill,
                                  line=dict(color=ring, width=width))))
    if not crowded:
        fig.add_trace(go.Scatter(x=x, y=y + offset, mode="text", name="forward value",
                                 text=[fmt(v) for v in d.values], hoverinfo="skip",
                                 textfont=dict(size=size, color=VALUE_COLOR), showlegend=False))
        fig.add_trace(go.Scatter(x=x, y=y - offset, mode="text", name="gradient",
                                 text=["" if g != g else fmt(g) for g in grads],
                                 hoverinfo="skip", textfont=dict(size=size, color=GRAD_COLOR),
                                 showlegend=False))
    n_steps = len(d.trace)
    title = (f"Forward pass: f = {fmt(d.output)} · press Step to backpropagate" if step <= 0
             else f"Backward step {min(step, n_steps)} of {n_steps}" +
             (" · done" if step >= n_steps else ""))
    fig.update_layout(
        title=dict(text=title, subtitle=dict(text=step_products(d, current))), height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(visible=False, range=[-0.5, d.layout.width - 0.5]),
        yaxis=dict(visible=False, range=[-rows + 0.45, 0.6]),      # span = rows + 0.15
    )
    key = "large graph: hover a node for its value and gradient" if crowded else \
        (f"<span style='color:{VALUE_COLOR}'>green: forward value</span> · "
         f"<span style='color:{GRAD_COLOR}'>red: dL/d(node)</span>")
    fig.add_annotation(text=key,
                       x=1, y=1.0, xref="paper", yref="paper", xanchor="right",
                       yanchor="bottom", showarrow=False, font=dict(size=size), name="key")
    return fig


def step_products(d: Differentiation, current) -> str:
    """The current step's chain rule, one product per input edge,

        dL/d(input) = upstream × local   ("0.197 × −1 = −0.197 → w0"),

    or "" before the first backward step."""
    if current is None:
        return ""
    return f"at {d.nodes[current.node].label}: " + "  ·  ".join(
        f"{fmt(current.upstream)} × {fmt(loc)} = <b>{fmt(c)}</b> → {d.nodes[i].label}"
        for i, loc, c in zip(current.inputs, current.local, current.contribution))


def _edge_labels(fig, d: Differentiation, current, bends, x, y, size) -> None:
    """Labels at edge midpoints: the current step's downstream gradients (orange boxes drawn
    over everything, so a nearby value cannot hide them; the products that make them are
    the title's subtitle: a whole product on an edge met the nodes' numbers on the
    projector); for small graphs also every contribution that has already flowed (red)."""
    flowed: dict[tuple[int, int, int], float] = {}
    done = {s.node for s in d.trace[:d.trace.index(current) + 1]} if current else set()
    for s in d.trace:
        if s.node in done:
            for i, slot, c in zip(s.inputs, s.slots, s.contribution):
                flowed[(i, s.node, slot)] = c
    xs, ys, texts = [], [], []
    for e, bend in zip(d.edges, bends):
        key = (e.src, e.dst, e.slot)
        mx, my = (x[e.src] + x[e.dst]) / 2, (y[e.src] + y[e.dst]) / 2 + bend / 2
        if current is not None and e.dst == current.node and e.src in current.inputs:
            k = current.slots.index(e.slot)
            fig.add_annotation(x=mx, y=my, showarrow=False, name="step",
                               text=f"<b>{fmt(current.contribution[k])}</b>",
                               font=dict(size=size, color="#8a4b00"),
                               bgcolor="rgba(255,255,255,0.92)", bordercolor=STEP_COLOR,
                               borderwidth=2, borderpad=2)
        elif key in flowed and len(d.nodes) <= EDGE_LABELS_UP_TO:
            xs.append(mx)
            ys.append(my + 0.12)
            texts.append(fmt(flowed[key]))
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="text", text=texts, hoverinfo="skip",
                                 name="edge gradients", showlegend=False,
                                 textfont=dict(size=size, color=GRAD_COLOR)))


def gradcheck_figure(c: GradcheckCurve) -> go.Figure:
    """Relative error of forward and central differences against autodiff, log-log."""
    fig = go.Figure()
    for (kind, err), color in zip(c.errors.items(), (COLORWAY[0], COLORWAY[1])):
        fig.add_trace(go.Scatter(x=c.hs, y=np.maximum(err, ERROR_FLOOR), mode="lines+markers",
                                 name=f"{kind} difference", line=dict(color=color),
                                 marker=dict(size=4)))
        fig.add_trace(go.Scatter(x=[c.best_h[kind]], y=[max(c.best_error[kind], ERROR_FLOOR)],
                                 mode="markers", name=f"best h ({kind}) = "
                                                      f"{c.best_h[kind]:.1e}",
                                 marker=dict(size=14, symbol="star", color=color,
                                             line=dict(color="#222", width=1))))
        fig.add_vline(x=c.theory_h[kind], line=dict(color=color, dash="dot", width=1.5))
    fig.update_layout(
        title="Finite differences vs autodiff",
        xaxis=dict(type="log", title="step h (larger to the right)", exponentformat="power"),
        yaxis=dict(type="log", title="relative error of the gradient", exponentformat="power"),
        legend=dict(x=1.02, y=1, xanchor="left", yanchor="top"), height=470,
        margin=dict(r=10))
    return fig


def layer_figure(ex: LayerExample) -> go.Figure:
    """Heatmaps of the linear layer's arrays and gradients, each titled with its shape."""
    panels = [("x", ex.x, ex.x.shape), ("W", ex.W, ex.W.shape),
              ("dL/dy = δ", ex.delta, ex.delta.shape),
              ("dL/dW = δᵀx", ex.grads.dW, ex.grads.dW.shape),
              ("dL/dx = δW", ex.grads.dx, ex.grads.dx.shape),
              ("dL/db = Σ δ", ex.grads.db[None, :], ex.grads.db.shape)]   # a row, shape (n,)
    titles = [f"{name}  {tuple(shape)}" for name, _, shape in panels]
    fig = make_subplots(rows=2, cols=3, subplot_titles=titles, horizontal_spacing=0.06,
                        vertical_spacing=0.16)
    for k, (name, a, _) in enumerate(panels):
        m = float(np.abs(a).max()) or 1.0
        numbers = {"texttemplate": "%{z:.2f}"} if a.size <= CELL_NUMBERS_UP_TO else {}
        fig.add_trace(go.Heatmap(z=a, zmin=-m, zmax=m, colorscale="RdBu", reversescale=True,
                                 showscale=False, name=name, **numbers,
                                 hovertemplate="row %{y}, col %{x}: %{z:.4g}<extra></extra>"),
                      row=k // 3 + 1, col=k % 3 + 1)
    fig.update_yaxes(autorange="reversed", showticklabels=False, ticks="")
    fig.update_xaxes(showticklabels=False, ticks="")
    fig.update_layout(title="Linear layer y = Wx + b (rows = examples)", height=500,
                      margin=dict(t=90))
    return fig


def modes_figure(ns: Sequence[int], costs: Sequence[JacobianCost], current: JacobianCost
                 ) -> go.Figure:
    """Passes each mode needs for the full Jacobian as the number of inputs n grows (m fixed),
    with the current (n, m) marked."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(ns), y=[c.forward_passes for c in costs],
                             mode="lines+markers", name="forward mode<br>(one JVP per input)",
                             line=dict(color=COLORWAY[0])))
    fig.add_trace(go.Scatter(x=list(ns), y=[c.reverse_passes for c in costs],
                             mode="lines+markers", name="reverse mode<br>(one VJP per output)",
                             line=dict(color=COLORWAY[1])))
    fig.add_trace(go.Scatter(x=[current.n_in, current.n_in],
                             y=[current.forward_passes, current.reverse_passes], mode="markers",
                             name=f"n = {current.n_in}, m = {current.n_out}",
                             marker=dict(size=16, symbol="circle-open", color="#222",
                                         line=dict(width=3))))
    fig.update_layout(title=f"Passes for the full {current.n_out}×n Jacobian of f: ℝⁿ → "
                            f"ℝ{str(current.n_out).translate(SUPERSCRIPTS)}",
                      xaxis=dict(title="inputs n", type="log", tickvals=list(ns)),
                      yaxis=dict(title="passes (counted)", type="log", dtick=1),
                      legend=dict(x=1.02, y=1, xanchor="left", yanchor="top"), height=450)
    return fig
