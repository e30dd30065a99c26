"""Figures of the generalization page: the decision boundary with the training points, the
train/validation curves with the best-validation and early-stopping steps, comparisons of
two runs, and the double-descent curve."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.double_descent import DoubleDescentCurve
from engine.generalization import DecisionGrid, GeneralizationSnapshot, SplitData

CLASS_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
RUN_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e")
TRAIN_DASH, VAL_DASH = "solid", "dash"


def _f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _step_lines(fig: go.Figure, snap: GeneralizationSnapshot, rows: Sequence[int], col: int,
                patience: int) -> None:
    """Vertical markers: lowest validation loss, and where early stopping stops."""
    marks = [(snap.best_step, "#2ca02c", "best val loss")]
    if snap.stop_step is not None:
        marks.append((snap.stop_step, "#7f7f7f", f"early stop (patience {patience})"))
    for step, color, text in marks:
        if step is None:
            continue
        for i, row in enumerate(rows):
            label = dict(annotation_text=f"{text}: {step}", annotation_font_size=11,
                         annotation_position="top right" if color == "#2ca02c" else "bottom right"
                         ) if i == 0 else {}
            fig.add_vline(x=step, line=dict(color=color, dash="dot", width=2), row=row, col=col,
                          **label)


def _iteration_axis(fig: go.Figure, steps: np.ndarray, **where) -> None:
    """x from 0 to the last logged iteration (at least 50, so iteration 0 is not centred)."""
    top = float(steps.max()) if len(steps) else 0.0
    fig.update_xaxes(range=[0, max(top, 50.0)], **where)


def overfit_figure(grid: DecisionGrid, data: SplitData, snap: GeneralizationSnapshot,
                   patience: int, boundary_of: str = "current model") -> go.Figure:
    """Left: P(class 1) of the model on the plane, the 0.5 contour, the training points by
    their (possibly flipped) training label, flipped ones ringed. Right: accuracy and loss
    of train (solid) and validation (dashed)."""
    fig = make_subplots(rows=2, cols=2, column_widths=[0.48, 0.52], row_heights=[0.5, 0.5],
                        specs=[[{"rowspan": 2}, {}], [None, {}]], horizontal_spacing=0.1,
                        vertical_spacing=0.14, shared_xaxes=True,
                        subplot_titles=(f"Decision boundary ({boundary_of})",
                                        "Accuracy vs iteration", "Cross-entropy loss vs iteration"))
    fig.add_trace(go.Heatmap(x=_f32(grid.grid_x), y=_f32(grid.grid_y), z=_f32(grid.probability),
                             zmin=0, zmax=1, colorscale="RdBu_r", opacity=0.55, showscale=False,
                             hovertemplate="x=%{x:.2f}, y=%{y:.2f}<br>P(class 1)=%{z:.2f}<extra></extra>"),
                  row=1, col=1)
    fig.add_trace(go.Contour(x=_f32(grid.grid_x), y=_f32(grid.grid_y), z=_f32(grid.probability),
                             contours=dict(start=0.5, end=0.5, size=1, coloring="none"),
                             line=dict(color="black", width=2), showscale=False,
                             hoverinfo="skip", name="boundary", showlegend=False), row=1, col=1)
    flipped = data.y_train != data.clean_train
    for c in range(data.n_classes):
        pick = data.y_train == c
        fig.add_trace(go.Scatter(x=_f32(data.x_train[pick, 0]), y=_f32(data.x_train[pick, 1]),
                                 mode="markers", name=f"train, label {c}",
                                 marker=dict(color=CLASS_COLORS[c % 4], size=8,
                                             line=dict(color="white", width=1)),
                                 legendgroup="pts", showlegend=False), row=1, col=1)
    if flipped.any():
        fig.add_trace(go.Scatter(x=_f32(data.x_train[flipped, 0]), y=_f32(data.x_train[flipped, 1]),
                                 mode="markers", name="flipped label",
                                 marker=dict(symbol="circle-open", size=15, color="black",
                                             line=dict(width=2)),
                                 showlegend=False, hoverinfo="skip"), row=1, col=1)
    for split, dash in (("train", TRAIN_DASH), ("val", VAL_DASH)):
        acc = snap.train_acc if split == "train" else snap.val_acc
        loss = snap.train_loss if split == "train" else snap.val_loss
        name = "train" if split == "train" else "validation"
        fig.add_trace(go.Scatter(x=snap.steps, y=_f32(acc), name=name, mode="lines",
                                 line=dict(color="#444" if split == "train" else "#ff7f0e", dash=dash,
                                           width=2.5), legendgroup=split), row=1, col=2)
        fig.add_trace(go.Scatter(x=snap.steps, y=_f32(loss), name=name, mode="lines", showlegend=False,
                                 line=dict(color="#444" if split == "train" else "#ff7f0e", dash=dash,
                                           width=2.5), legendgroup=split), row=2, col=2)
    _step_lines(fig, snap, (1, 2), 2, patience)
    for row in (1, 2):
        _iteration_axis(fig, snap.steps, row=row, col=2)
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    fig.update_xaxes(range=[float(grid.grid_x[0]), float(grid.grid_x[-1])], row=1, col=1)
    fig.update_yaxes(range=[float(grid.grid_y[0]), float(grid.grid_y[-1])], row=1, col=1)
    fig.update_layout(height=470, margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(orientation="h", x=1, xanchor="right", y=-0.12, yanchor="top"))
    return fig


def compare_figure(snaps: Mapping[str, GeneralizationSnapshot],
                   panels: Sequence[str] = ("acc", "weight_norm"),
                   chance: float | None = None, height: int = 470) -> go.Figure:
    """One row per panel ("acc": train solid / validation dashed; "loss"; "weight_norm"),
    one colour per run."""
    titles = {"acc": "Accuracy vs iteration (train solid, validation dashed)",
              "loss": "Validation loss vs iteration", "weight_norm": "Weight norm ‖θ‖ vs iteration"}
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=[titles[p] for p in panels])
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
                fig.add_trace(go.Scatter(x=snap.steps, y=_f32(y), mode="lines", name=label,
                                         line=dict(color=color, dash=dash, width=2.5),
                                         showlegend=row == 1 or panel == "weight_norm" and len(panels) == 1),
                              row=row, col=1)
    if chance is not None and "acc" in panels:
        fig.add_hline(y=chance, line=dict(color="#7f7f7f", dash="dot"), row=panels.index("acc") + 1,
                      col=1, annotation_text=f"chance {chance:g}", annotation_position="bottom right")
    if "acc" in panels:
        fig.update_yaxes(range=[0, 1.02], row=panels.index("acc") + 1, col=1)
    if "weight_norm" in panels:
        fig.update_yaxes(type="log", row=panels.index("weight_norm") + 1, col=1)
    last = max((s.steps for s in snaps.values()), key=len, default=np.zeros(0))
    _iteration_axis(fig, last)
    fig.update_layout(height=height, margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(orientation="h", x=1, xanchor="right", y=-0.14, yanchor="top"))
    return fig


def double_descent_figure(curves: Mapping[str, DoubleDescentCurve]) -> go.Figure:
    """Test error (and training error) against the number of random features p, log-log,
    one colour per ridge; the interpolation threshold p = n dotted. Below: ||a||."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.68, 0.32],
                        vertical_spacing=0.08,
                        subplot_titles=("Test error vs number of random features p",
                                        "‖a‖ of the fitted coefficients"))
    n = None
    for i, (name, c) in enumerate(curves.items()):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        n = c.n_train
        fig.add_trace(go.Scatter(x=c.widths, y=c.test_error, mode="lines+markers", name=f"test, {name}",
                                 line=dict(color=color, width=2.5), marker=dict(size=5)), row=1, col=1)
        fig.add_trace(go.Scatter(x=c.widths, y=np.maximum(c.train_error, 1e-6), mode="lines",
                                 name=f"train, {name}", line=dict(color=color, dash="dot", width=1.5)),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=c.widths, y=c.coef_norm, mode="lines", name=f"‖a‖, {name}",
                                 line=dict(color=color, width=2), showlegend=False), row=2, col=1)
    if n is not None:       # shapes on a log axis take log10 coordinates
        for row in (1, 2):
            label = dict(annotation_text=f"p = n = {n}", annotation_position="top left") \
                if row == 1 else {}
            fig.add_vline(x=float(np.log10(n)), line=dict(color="#7f7f7f", dash="dash"), row=row,
                          col=1, **label)
    fig.update_xaxes(type="log", title_text="number of random features p", row=2, col=1)
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=1, title_text="mean squared error")
    fig.update_yaxes(type="log", row=2, col=1)
    fig.update_layout(height=480, margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(orientation="h", x=1, xanchor="right", y=-0.16, yanchor="top"))
    return fig
