"""Figure builders of the adversarial-examples page: engine results in, go.Figure out (no
Streamlit calls, no torch).

Digits are drawn with ink = 1 dark on white, as on the VAE and convolution pages. The
perturbation is drawn on its own diverging scale from -eps (blue) to +eps (red): its pixels
move by at most eps (L-inf), a small part of the 0..1 range of the images beside it, so on the
images' scale its signs would be faint.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go

from engine.adversarial import AttackResult, LinearEffect, RobustnessCurve
from ui.fastfig import Fig
from ui.theme import COLORWAY

INK = [[0.0, "white"], [1.0, "black"]]
DIVERGING = [[0.0, "#2166ac"], [0.5, "white"], [1.0, "#b2182b"]]
GALLERY_COLS = 12
CELL = 9                      # 8 pixels + 1 gutter
MODEL_COLORS = {"standard": COLORWAY[1], "robust": COLORWAY[0], "live": COLORWAY[2]}
ATTACK_DASH = {"FGSM": "dot", "PGD": "solid"}


def _image_axes(fig: Fig, row: int, col: int) -> None:
    x, _ = fig.refs(row, col)
    fig.axes(row, col, x=dict(showgrid=False, showticklabels=False, ticks="", constrain="domain"),
             y=dict(showgrid=False, showticklabels=False, ticks="", autorange="reversed",
                    scaleanchor=x, scaleratio=1, constrain="domain"))


def _f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _verdict(probs: np.ndarray) -> str:
    c = int(np.argmax(probs))
    return f"says <b>{c}</b> ({probs[c]:.0%})"


def attack_figure(r: AttackResult, model_name: str, attack_name: str, recipe: str = "",
                  grey_steps: int = 16) -> go.Figure:
    """Clean digit | perturbation (its own +-eps scale, in grey levels of 1/grey_steps) |
    attacked digit | class probabilities before and after; `recipe` (how the model was
    trained) as the subtitle."""
    goal = "untargeted" if r.target is None else f"target {r.target}"
    fig = Fig(rows=1, cols=4, column_widths=[0.2, 0.2, 0.2, 0.4], horizontal_spacing=0.06,
              subplot_titles=(f"digit {r.label}<br>{_verdict(r.probs_before)}",
                              f"perturbation<br>±{r.eps * grey_steps:.3g}/{grey_steps} "
                              "(rescaled)",
                              f"attacked<br>{_verdict(r.probs_after)}", "P(class 0-9)"))
    fig.add("heatmap", 1, 1, z=_f32(r.image), colorscale=INK, zmin=0, zmax=1, showscale=False,
            hovertemplate="pixel (%{y}, %{x}): %{z:.3f}<extra>clean</extra>")
    scale = max(float(np.abs(r.perturbation).max()), 1e-6)
    fig.add("heatmap", 1, 2, z=_f32(r.perturbation), colorscale=DIVERGING, zmin=-scale,
            zmax=scale, showscale=False,
            hovertemplate="pixel (%{y}, %{x}): %{z:+.3f}<extra>δ</extra>")
    fig.add("heatmap", 1, 3, z=_f32(r.adversarial), colorscale=INK, zmin=0, zmax=1,
            showscale=False, hovertemplate="pixel (%{y}, %{x}): %{z:.3f}<extra>attacked</extra>")
    classes = [str(c) for c in range(len(r.probs_before))]
    fig.add("bar", 1, 4, x=classes, y=_f32(r.probs_before), name="clean",
            marker=dict(color="#9e9e9e"))
    fig.add("bar", 1, 4, x=classes, y=_f32(r.probs_after), name="after the attack",
            marker=dict(color=COLORWAY[1] if r.success else COLORWAY[0]))
    for col in (1, 2, 3):
        _image_axes(fig, 1, col)
    # no y title: the panel's own title names the axis, and a y title in the gap between
    # the panels lay over the attacked digit on the projector
    fig.axes(1, 4, x=dict(type="category"), y=dict(range=[0, 1.02]))
    fig.update(barmode="group", height=340, showlegend=True,
               legend=dict(orientation="h", x=1, xanchor="right", y=-0.25, yanchor="top"),
               title=dict(text=f"{attack_name} on the {model_name} CNN, ε = {r.eps:.3g}, "
                               f"{goal}: {'fooled' if r.success else 'not fooled'}",
                          subtitle=dict(text=recipe)),
               margin=dict(l=10, r=10, t=155 if recipe else 100, b=70))
    return fig.figure()


def gallery_figure(images: np.ndarray, labels: np.ndarray, selected: int | None,
                   cols: int = GALLERY_COLS) -> go.Figure:
    """The first len(images) held-out digits tiled in rows of `cols`; a click on one picks it
    (the invisible markers carry the index). The selected digit is framed."""
    n = len(images)
    rows = int(np.ceil(n / cols))
    canvas = np.zeros((rows * CELL - 1, cols * CELL - 1), np.float32)
    for i, img in enumerate(images):
        r, c = divmod(i, cols)
        canvas[r * CELL:r * CELL + 8, c * CELL:c * CELL + 8] = img
    fig = Fig()
    fig.add("heatmap", z=canvas, colorscale=INK, zmin=0, zmax=1, showscale=False,
            hoverinfo="skip")
    idx = np.arange(n, dtype=np.int32)
    fig.add("scatter", x=((idx % cols) * CELL + 3.5).astype(np.float32),
            y=((idx // cols) * CELL + 3.5).astype(np.float32), mode="markers",
            marker=dict(size=22, opacity=0.0), customdata=idx, showlegend=False,
            hovertemplate="held-out digit #%{customdata}: label %{text}<extra></extra>",
            text=[str(int(v)) for v in labels])
    if selected is not None and 0 <= selected < n:
        r, c = divmod(int(selected), cols)
        fig.layout.setdefault("shapes", []).append(dict(
            type="rect", x0=c * CELL - 0.5, x1=c * CELL + 7.5, y0=r * CELL - 0.5,
            y1=r * CELL + 7.5, line=dict(color=COLORWAY[3], width=3)))
    fig.axes(x=dict(showgrid=False, showticklabels=False, ticks="",
                    range=[-0.5, cols * CELL - 1.5], constrain="domain"),
             y=dict(showgrid=False, showticklabels=False, ticks="", autorange="reversed",
                    scaleanchor="x", scaleratio=1, constrain="domain"))
    fig.update(height=68 + 34 * rows, margin=dict(l=5, r=5, t=48, b=5), dragmode=False,
               title=dict(text="Click a held-out digit to attack it"))   # t: room for the
    #                                       title, which the theme hangs 10 px from the top
    return fig.figure()


def gallery_index(event, n: int, cols: int = GALLERY_COLS) -> int | None:
    """The digit a selection event on the gallery points at (customdata, else x/y), or None."""
    points = ((event or {}).get("selection") or {}).get("points") or []
    if not points:
        return None
    p = points[0]
    try:
        if p.get("customdata") is not None:
            data = p["customdata"]
            i = int(data[0] if isinstance(data, (list, tuple)) else data)
        else:
            i = int(float(p["y"]) // CELL) * cols + int(float(p["x"]) // CELL)
    except (TypeError, ValueError, KeyError):
        return None
    return i if 0 <= i < n else None


def curves_figure(curves: Mapping[tuple[str, str], RobustnessCurve], eps_mark: float | None = None,
                  live: RobustnessCurve | None = None, live_label: str = "trained live") -> go.Figure:
    """Accuracy vs eps on the held-out digits: one colour per CNN, dotted FGSM, solid PGD."""
    fig = Fig()
    for (model, attack), c in curves.items():
        fig.add("scatter", x=_f32(c.eps), y=_f32(c.accuracy * 100), mode="lines+markers",
                name=f"{model} CNN, {c.attack}",
                line=dict(color=MODEL_COLORS[model], dash=ATTACK_DASH[attack]),
                hovertemplate="ε = %{x:.3g}: %{y:.1f}%<extra>%{fullData.name}</extra>")
    if live is not None:
        fig.add("scatter", x=_f32(live.eps), y=_f32(live.accuracy * 100), mode="lines+markers",
                name=f"{live_label}, {live.attack}", line=dict(color=MODEL_COLORS["live"], width=4),
                hovertemplate="ε = %{x:.3g}: %{y:.1f}%<extra>live</extra>")
    if eps_mark is not None:
        fig.vline(eps_mark, line=dict(color="#777", dash="dash", width=1))
    fig.axes(x=dict(title=dict(text="ε (L∞ radius, pixels in [0, 1])")),
             y=dict(title=dict(text="held-out accuracy (%)"), range=[0, 101]))
    fig.update(height=520, title=dict(text="Accuracy under attack on the 359 held-out digits"),
               legend=dict(orientation="h", x=0, xanchor="left", yref="container", y=0,
                           yanchor="bottom"), margin=dict(b=150))
    return fig.figure()


def linear_figure(e: LinearEffect, digits_dim: int = 64) -> go.Figure:
    """Score changes vs dimension d, log-log: the worst case eps ||w||_1 grows like d, a
    random perturbation of the same size like sqrt(d), and the score's own spread like sqrt(d)."""
    fig = Fig()
    fig.add("scatter", x=e.dims, y=e.worst_change, mode="lines+markers",
            name="worst case ε‖w‖₁ (η = ε·sign w)", line=dict(color=COLORWAY[1]))
    fig.add("scatter", x=e.dims, y=e.expected, mode="lines", name="theory ε·d·σ·√(2/π)",
            line=dict(color="#555", dash="dash"))
    fig.add("scatter", x=e.dims, y=e.random_change, mode="lines+markers",
            name="random-sign η, same size", line=dict(color=COLORWAY[0]))
    fig.add("scatter", x=e.dims, y=e.score_std, mode="lines", name="spread of wᵀx over inputs",
            line=dict(color=COLORWAY[2], dash="dot"))
    lo = float(min(e.worst_change.min(), e.random_change.min(), e.score_std.min()))
    hi = float(max(e.worst_change.max(), e.score_std.max()))
    fig.add("scatter", x=[digits_dim, digits_dim], y=[lo, hi], mode="lines",
            name=f"8×8 digits: d = {digits_dim}", hoverinfo="skip",
            line=dict(color="#999", dash="dash", width=1))
    fig.axes(x=dict(type="log", title=dict(text="input dimension d")),
             y=dict(type="log", title=dict(text="change of the score wᵀx")))
    fig.update(height=430, title=dict(text=f"A linear score under ‖η‖∞ ≤ ε = {e.eps:g}"),
               legend=dict(x=0.01, xanchor="left", y=0.99, yanchor="top"))
    return fig.figure()


def curve_table(curves: Mapping[tuple[str, str], RobustnessCurve]) -> list[dict]:
    """Rows (model, attack, eps, accuracy) for the export."""
    return [{"model": m, "attack": c.attack, "eps": float(e), "accuracy": float(a)}
            for (m, _), c in curves.items() for e, a in zip(c.eps, c.accuracy)]
