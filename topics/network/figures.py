"""Figure builders of the A network you build page: plain data in, a Plotly figure out (no st.*). Figures
redrawn every live frame are plain dicts (ui/fastfig.py: the canvas paints them)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.fastfig import LEGEND_BELOW, f32, plain_figure
from ui.screen import block_means
from ui.theme import COLORWAY


def points_figure(points: np.ndarray, classes: np.ndarray, title: str) -> go.Figure:
    """The 2-D points coloured by `classes` (0 or 1)."""
    traces = [dict(type="scatter", x=f32(points[classes == c, 0]),
                   y=f32(points[classes == c, 1]), mode="markers", name=f"class {c}",
                   marker=dict(color=COLORWAY[c], size=6)) for c in (0, 1)]
    return plain_figure(traces, dict(title=dict(text=title), height=420, legend=LEGEND_BELOW,
                                     xaxis=dict(title=dict(text="x₁"), range=[-1.8, 2.8]),
                                     yaxis=dict(title=dict(text="x₂"), range=[-1.4, 1.9])))


def loss_figure(steps: np.ndarray, losses: np.ndarray) -> go.Figure:
    """The training loss against the iteration (block means: no more points than the screen
    shows)."""
    s, v = block_means(np.asarray(steps), np.asarray(losses, dtype=float))
    return plain_figure([dict(type="scatter", x=s, y=f32(v), mode="lines", name="loss")],
                        dict(title=dict(text="Training loss (binary cross-entropy)"),
                             height=420, showlegend=False,
                             xaxis=dict(title=dict(text="iteration")),
                             yaxis=dict(title=dict(text="loss"))))
