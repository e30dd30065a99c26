"""Figures of the generalization page: the decision boundary with the training points, the
train/validation curves with the best-validation and early-stopping steps, comparisons of
two runs, and the double-descent curve."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from plotly.subplots import make_subplots

from engine.generalization.double_descent import DoubleDescentCurve
from engine.generalization.polyfit import DegreeSweep, ToyRegression
from engine.generalization import DecisionGrid, GeneralizationSnapshot, SplitData
from ui.fastfig import Fig

CLASS_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
RUN_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e")
TRAIN_DASH, VAL_DASH = "solid", "dash"


def _f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _step_lines(fig: Fig, snap: GeneralizationSnapshot, rows: Sequence[int], col: int,
                patience: int) -> None:
    """Vertical markers: lowest validation loss, and where early stopping stops (none before
    training: one logged point is not a best of anything)."""
    if snap.step == 0:
        return
    marks = [(snap.best_step, "#2ca02c", "best val loss")]
    if snap.stop_step is not None:
        marks.append((snap.stop_step, "#7f7f7f", f"early stop (patience {patience})"))
    for step, color, text in marks:
        if step is None:
            continue
        for i, row in enumerate(rows):
            fig.vline(step, row, col, line=dict(color=color, dash="dot", width=2),
                      text=f"{text}: {step}" if i == 0 else None, top=color == "#2ca02c",
                      size=11)


def _iteration_range(steps: np.ndarray) -> list[float]:
    """x from 0 to the last logged iteration (at least 50, so iteration 0 is not centred)."""
    top = float(steps.max()) if len(steps) else 0.0
    return [0, max(top, 50.0)]


def _titled(title: str, setup: str) -> str:
    return f"{title} · {setup}" if setup else title


def overfit_figure(grid: DecisionGrid, data: SplitData, snap: GeneralizationSnapshot,
                   patience: int, boundary_of: str = "current model", setup: str = "") -> go.Figure:
    """Left: P(class 1) of the model on the plane, the 0.5 contour, the training points by
    their (possibly flipped) training label, flipped ones ringed. Right: accuracy and loss
    of train (solid) and validation (dashed). `setup` (the data and network) is written at
    the bottom left, on the legend's row."""
    fig = Fig(rows=2, cols=2, column_widths=[0.48, 0.52], row_heights=[0.5, 0.5],
              specs=[[{"rowspan": 2}, {}], [None, {}]], horizontal_spacing=0.1,
              vertical_spacing=0.14, shared_xaxes=True,
              subplot_titles=(f"Decision boundary ({boundary_of})",
                              "Accuracy vs iteration", "Cross-entropy loss vs iteration"))
    gx, gy, prob = _f32(grid.grid_x), _f32(grid.grid_y), _f32(grid.probability)
    fig.add("heatmap", 1, 1, x=gx, y=gy, z=prob, zmin=0, zmax=1, colorscale="RdBu_r",
            opacity=0.55, showscale=False,
            hovertemplate="x=%{x:.2f}, y=%{y:.2f}<br>P(class 1)=%{z:.2f}<extra></extra>")
    fig.add("contour", 1, 1, x=gx, y=gy, z=prob,
            contours=dict(start=0.5, end=0.5, size=1, coloring="none"),
            line=dict(color="black", width=2), showscale=False, hoverinfo="skip", name="boundary",
            showlegend=False)
    flipped = data.y_train != data.clean_train
    for c in range(data.n_classes):
        pick = data.y_train == c
        fig.add("scatter", 1, 1, x=_f32(data.x_train[pick, 0]), y=_f32(data.x_train[pick, 1]),
                mode="markers", name=f"train, label {c}",
                marker=dict(color=CLASS_COLORS[c % 4], size=8, line=dict(color="white", width=1)),
                legendgroup="pts", showlegend=False)
    if flipped.any():
        fig.add("scatter", 1, 1, x=_f32(data.x_train[flipped, 0]), y=_f32(data.x_train[flipped, 1]),
                mode="markers", name="flipped label",
                marker=dict(symbol="circle-open", size=15, color="black", line=dict(width=2)),
                showlegend=False, hoverinfo="skip")
    steps = _f32(snap.steps)
    for split, dash in (("train", TRAIN_DASH), ("val", VAL_DASH)):
        acc = snap.train_acc if split == "train" else snap.val_acc
        loss = snap.train_loss if split == "train" else snap.val_loss
        name = "train" if split == "train" else "validation"
        line = dict(color="#444" if split == "train" else "#ff7f0e", dash=dash, width=2.5)
        fig.add("scatter", 1, 2, x=steps, y=_f32(acc), name=name, mode="lines", line=line,
                legendgroup=split)
        fig.add("scatter", 2, 2, x=steps, y=_f32(loss), name=name, mode="lines",
                showlegend=False, line=line, legendgroup=split)
    _step_lines(fig, snap, (1, 2), 2, patience)
    for row in (1, 2):
        fig.axes(row, 2, x=dict(range=_iteration_range(snap.steps)))
    fig.axes(1, 2, y=dict(range=[0, 1.02]))
    # the setup (what the run trains on) as the boundary's x title: an axis title keeps its
    # room under the ticks at any figure height, where a text placed at a share of the
    # height ran past the figure's bottom on a tall screen
    fig.axes(1, 1, x=dict(range=[float(grid.grid_x[0]), float(grid.grid_x[-1])],
                          title=dict(text=setup or None)),
             y=dict(range=[float(grid.grid_y[0]), float(grid.grid_y[-1])]))
    fig.update(height=470, margin=dict(t=40, b=10, l=10, r=10),
               legend=dict(orientation="h", x=1, xanchor="right", y=-0.12, yanchor="top"))
    return fig.figure()


def compare_figure(snaps: Mapping[str, GeneralizationSnapshot],
                   panels: Sequence[str] = ("acc", "weight_norm"),
                   chance: float | None = None, height: int = 470, setup: str = "") -> go.Figure:
    """One row per panel ("acc": train solid / validation dashed; "loss"; "weight_norm"),
    one colour per run; `setup` (what both runs share) follows the last panel's title."""
    titles = {"acc": "Accuracy vs iteration (train solid, validation dashed)",
              "loss": "Validation loss vs iteration", "weight_norm": "Weight norm ‖θ‖ vs iteration"}
    fig = Fig(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.1,
              subplot_titles=[titles[p] for p in panels[:-1]] + [_titled(titles[panels[-1]], setup)])
    for i, (name, snap) in enumerate(snaps.items()):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        for row, panel in enumerate(panels, start=1):
            if panel == "acc":
                series = [(snap.train_acc, TRAIN_DASH, f"{name}: train"),
                          (snap.val_acc, VAL_DASH, f"{name}: validation")]
            elif panel == "loss":
                series = [(snap.val_loss, VAL_DASH, f"{name}: validation loss")]
            else:
                series = [(snap.weight_norm, "solid", f"{name}: ‖θ‖")]
            for y, dash, label in series:
                fig.add("scatter", row, 1, x=_f32(snap.steps), y=_f32(y), mode="lines", name=label,
                        line=dict(color=color, dash=dash, width=2.5),
                        showlegend=row == 1 or panel == "weight_norm" and len(panels) == 1)
    if chance is not None and "acc" in panels:
        fig.hline(chance, panels.index("acc") + 1, 1, line=dict(color="#7f7f7f", dash="dot"),
                  text=f"chance {chance:g}")
    if "acc" in panels:
        fig.axes(panels.index("acc") + 1, 1, y=dict(range=[0, 1.02]))
    if "weight_norm" in panels:
        # before training (one value per run) Plotly spans two decades of its own and labels
        # every digit between them, piled up on a tall figure: label the decades
        fresh = all(len(s.weight_norm) < 2 for s in snaps.values())
        fig.axes(panels.index("weight_norm") + 1, 1,
                 y=dict(type="log", **(dict(dtick=1, exponentformat="power") if fresh else {})))
    last = max((s.steps for s in snaps.values()), key=len, default=np.zeros(0))
    fig.all_axes("x", dict(range=_iteration_range(last)))
    fig.update(height=height, margin=dict(t=40, b=10, l=10, r=10),
               legend=dict(orientation="h", x=1, xanchor="right", y=-0.14, yanchor="top"))
    return fig.figure()


def double_descent_figure(curves: Mapping[str, DoubleDescentCurve]) -> go.Figure:
    """Test error (and training error) against the number of random features p, log-log,
    one colour per ridge; the interpolation threshold p = n dotted. Below: ||a||."""
    fig = Fig(rows=2, cols=1, shared_xaxes=True, row_heights=[0.68, 0.32], vertical_spacing=0.08,
              subplot_titles=("Test error vs number of random features p",
                              "‖a‖ of the fitted coefficients"))
    n = None
    for i, (name, c) in enumerate(curves.items()):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        n = c.n_train
        fig.add("scatter", 1, 1, x=c.widths, y=c.test_error, mode="lines+markers",
                name=f"test, {name}", line=dict(color=color, width=2.5), marker=dict(size=5))
        fig.add("scatter", 1, 1, x=c.widths, y=np.maximum(c.train_error, 1e-6), mode="lines",
                name=f"train, {name}", line=dict(color=color, dash="dot", width=1.5))
        fig.add("scatter", 2, 1, x=c.widths, y=c.coef_norm, mode="lines", name=f"‖a‖, {name}",
                line=dict(color=color, width=2), showlegend=False)
    if n is not None:       # on the log axis: the line at p = n, its label at log10(n)
        for row in (1, 2):
            fig.vline(float(n), row, 1, line=dict(color="#7f7f7f", dash="dash"),
                      text=f"p = n = {n}" if row == 1 else None, left=True, log_x=True)
    fig.axes(2, 1, x=dict(type="log", title=dict(text="number of random features p")),
             y=dict(type="log"))
    fig.axes(1, 1, x=dict(type="log"), y=dict(type="log", title=dict(text="mean squared error")))
    fig.update(height=480, margin=dict(t=40, b=10, l=10, r=10),
               legend=dict(orientation="h", x=1, xanchor="right", y=-0.16, yanchor="top"))
    return fig.figure()


def polyfit_figure(data: ToyRegression, grid: np.ndarray, truth: np.ndarray, fit: np.ndarray,
                   degree: int, sweep: DegreeSweep, show_val: bool) -> go.Figure:
    """Left: the training points, the true curve and the fitted polynomial (validation points
    if shown); the y range is fixed, so a wild fit leaves the frame. Right: training and
    validation error against the degree, this degree marked."""
    fig = make_subplots(1, 2, column_widths=[0.6, 0.4], horizontal_spacing=0.1,
                        subplot_titles=(f"Polynomial of degree {degree}",
                                        "Error vs degree"))
    fig.add_trace(go.Scatter(x=grid, y=truth, mode="lines", name="true function",
                             line=dict(color="#2ca02c", width=2)), 1, 1)
    fig.add_trace(go.Scatter(x=grid, y=fit, mode="lines", name="fitted polynomial",
                             line=dict(color="#d62728", width=2.5)), 1, 1)
    fig.add_trace(go.Scatter(x=data.x_train, y=data.y_train, mode="markers",
                             name="training points",
                             marker=dict(size=10, color="rgba(0,0,0,0)",
                                         line=dict(color="#1f77b4", width=2))), 1, 1)
    if show_val:
        fig.add_trace(go.Scatter(x=data.x_val, y=data.y_val, mode="markers",
                                 name="validation points",
                                 marker=dict(size=6, color="black")), 1, 1)
    fig.add_trace(go.Scatter(x=sweep.degrees, y=sweep.train_mse, mode="lines+markers",
                             name="training error", line=dict(color="#1f77b4")), 1, 2)
    if show_val:
        fig.add_trace(go.Scatter(x=sweep.degrees, y=sweep.val_mse, mode="lines+markers",
                                 name="validation error", line=dict(color="black", dash="dash")),
                      1, 2)
    fig.add_vline(x=degree, line=dict(color="#d62728", dash="dot"), row=1, col=2)
    fig.update_yaxes(range=[-2, 2], title_text="y", row=1, col=1)
    fig.update_xaxes(range=[-0.02, 1.02], title_text="x", row=1, col=1)
    fig.update_yaxes(type="log", title_text="mean squared error", exponentformat="power",
                     row=1, col=2)
    fig.update_xaxes(title_text="degree M", row=1, col=2)
    fig.update_layout(height=420, margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig
