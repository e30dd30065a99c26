"""Curves and their slopes side by side: the initialization page's activation functions
(φ and φ′) and the backpropagation page's regression losses (L and ∂L/∂ŷ). In the page kit
because two topics draw it and topics do not import one another."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.theme import COLORWAY


def value_slope_figure(z: np.ndarray, curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
                       titles: tuple[str, str] = ("φ(z)", "φ′(z) (autograd)"),
                       x_title: str = "z") -> go.Figure:
    """Each curve's value (left) and derivative (right) against z; also the backpropagation
    page's regression losses and their slopes against the error."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.1)
    for i, (name, (phi, dphi)) in enumerate(curves.items()):
        color = COLORWAY[i % len(COLORWAY)]
        fig.add_trace(go.Scatter(x=z, y=phi, name=name, mode="lines", legendgroup=name,
                                 line=dict(color=color, width=2.5)), row=1, col=1)
        fig.add_trace(go.Scatter(x=z, y=dphi, name=name, mode="lines", legendgroup=name,
                                 showlegend=False, line=dict(color=color, width=2.5)),
                      row=1, col=2)
    fig.update_xaxes(title_text=x_title, zeroline=True)
    fig.update_layout(height=420, legend=dict(orientation="h", y=-0.25, x=0),
                      margin=dict(t=50, b=90))
    return fig
