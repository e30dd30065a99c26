"""Network page: what a live frame and a slider move compute (CPU time on the 2-core
machine). A live frame of 6 hidden layers x 8 neurons: every neuron's map over the plane
(numpy, one batched pass), the figure as a plain dict, and its canvas payload; the trainer's
SGD steps against a plain PyTorch loop on the same model and batches.

The drawn network puts each column of neuron maps in one heatmap on the network's axes
(topics/network/figures.column_image). `layout_ratio` compares it, in alternating rounds of
one run, with the same frame drawn the way a per-neuron layout does it (each map its own
heatmap on its own pair of axes, ~50 traces and ~50 axis pairs for 6x8): the figure object
and its canvas payload from the same dicts, CPU time."""
from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from benchmarks import Measurement, alternating_times, sized
from engine.network import NetworkTrainer
from live.parts import Figure

DEEP = dict(dataset="spiral", features=("x1", "x2"), hidden=(8,) * 6, activation="relu",
            lr=0.03)


class _View:
    """What live_parts hands the frame builder: a trainer's snapshot and history."""

    def __init__(self, trainer):
        self.trainer, self.steps = trainer, trainer.steps
        self.diverged_at, self.history = trainer.diverged_at, trainer.history

    def snapshot(self):
        return self.trainer.snapshot()


def _cpu(fn, repeat: int) -> float:
    """Median CPU seconds of fn() over `repeat` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return sorted(times)[len(times) // 2]


def frame_parts(part: str) -> Measurement:
    from topics.network.compute import OUT_RES, frame_maps
    from topics.network.page import network_frame_parts
    trainer = NetworkTrainer(**DEEP, seed=0)
    trainer.step(sized(200, 5))
    view = _View(trainer)
    snap = view.snapshot()
    repeat = sized(9, 1)
    if part == "maps":
        t = _cpu(lambda: (frame_maps(snap.layers, snap.activation, snap.features, set()),
                          frame_maps(snap.layers, snap.activation, snap.features, set(),
                                     OUT_RES)), repeat)
        return Measurement(t * 1e3, "ms", "every neuron's 20x20 map and the 48x48 output, "
                                          "6x8 ReLUs")

    def build():
        return network_frame_parts(view, None, knocked=frozenset(), show_test=True,
                                   discretize=False)
    if part == "parts":
        t = _cpu(build, repeat)
        return Measurement(t * 1e3, "ms", "network_frame_parts: maps + figure dict + "
                                          "caption, 6x8; target <= 30 ms")
    fig = build()["ne_fig_net"]
    assert isinstance(fig, Figure)
    t = _cpu(lambda: fig.payload(False), repeat)
    return Measurement(t * 1e3, "ms", "the figure's canvas payload (JSON), 6x8")


def training_ratio() -> Measurement:
    """The trainer's steps per CPU second over a plain loop's (same model, batches, SGD)."""
    n = sized(2000, 20)
    trainer = NetworkTrainer(**DEEP, seed=0)
    t0 = time.process_time()
    trainer.step(n)
    ours = time.process_time() - t0
    plain = NetworkTrainer(**DEEP, seed=0)
    model, opt, x, y = plain.model, plain.opt, plain.x, plain.y
    batches = [torch.randperm(len(y))[:plain.batch] for _ in range(n)]
    t0 = time.process_time()
    for idx in batches:
        loss = F.binary_cross_entropy_with_logits(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    base = time.process_time() - t0
    return Measurement(base / ours, "x plain loop",
                       "NetworkTrainer.step (train and test loss logged every 5th step) over a "
                       "bare SGD loop; 6x8 ReLUs")


def _array(value):
    """A plotly typed-array spec ({"dtype", "bdata"[, "shape"]}) or a list as numpy."""
    import base64

    import numpy as np
    if isinstance(value, dict):
        a = np.frombuffer(base64.b64decode(value["bdata"]), value["dtype"])
        shape = value.get("shape")
        return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
    return np.asarray(value, np.float32)


def _per_neuron(spec: dict) -> dict:
    """The frame's figure dict with every column heatmap on the network's axes split into
    one heatmap per neuron (its block of non-NaN rows), each on a pair of axes of its own
    whose domain is the block's place on the page: the per-neuron layout."""
    import numpy as np
    data, layout = [], dict(spec["layout"])
    axis = 10
    for t in spec["data"]:
        if t["type"] != "heatmap" or t.get("xaxis") != "x":
            data.append(t)
            continue
        z, xs, ys = (_array(t[k]) for k in ("z", "x", "y"))
        filled = np.isfinite(z).all(1)                                     # (rows,)
        starts = np.flatnonzero(filled & ~np.r_[False, filled[:-1]])
        ends = np.flatnonzero(filled & ~np.r_[filled[1:], False]) + 1
        dx, dy = xs[1] - xs[0], ys[1] - ys[0]
        for a, b in zip(starts, ends):
            data.append(dict(t, z=z[a:b], x=None, y=None, xaxis=f"x{axis}", yaxis=f"y{axis}",
                             hovertemplate="neuron %{z:.3g}<extra></extra>"))
            data[-1].pop("x"), data[-1].pop("y"), data[-1].pop("hoverinfo", None)
            layout[f"xaxis{axis}"] = dict(showgrid=False, zeroline=False,
                                          showticklabels=False, fixedrange=True,
                                          domain=[float(xs[0] - dx / 2), float(xs[-1] + dx / 2)],
                                          anchor=f"y{axis}")
            layout[f"yaxis{axis}"] = dict(showgrid=False, zeroline=False,
                                          showticklabels=False, fixedrange=True,
                                          domain=[float(ys[a] - dy / 2), float(ys[b - 1] + dy / 2)],
                                          anchor=f"x{axis}")
            axis += 1
    return {"data": data, "layout": layout}


def layout_ratio() -> Measurement:
    """CPU time of the per-neuron layout's figure + payload over the column layout's, the
    same 6x8 frame, median of per-round ratios (alternating rounds)."""
    from topics.network.page import network_frame_parts
    from ui.fastfig import plain_figure
    trainer = NetworkTrainer(**DEEP, seed=0)
    trainer.step(sized(200, 5))
    fig = network_frame_parts(_View(trainer), None, knocked=frozenset(), show_test=True,
                              discretize=False)["ne_fig_net"].fig
    columns = {"data": [dict(t) for t in fig.to_plotly_json()["data"]],
               "layout": dict(fig.to_plotly_json()["layout"])}
    neurons = _per_neuron(columns)

    def draw(spec):
        return lambda: Figure(plain_figure(spec["data"], spec["layout"])).payload(False)

    times = alternating_times({"columns": draw(columns), "neurons": draw(neurons)},
                              rounds=sized(9, 1))
    ratios = sorted(n[1] / max(c[1], 1e-9) for c, n in zip(times["columns"], times["neurons"]))
    col = sorted(c[1] for c in times["columns"])[len(ratios) // 2]
    per = sorted(n[1] for n in times["neurons"])[len(ratios) // 2]
    return Measurement(ratios[len(ratios) // 2], "x",
                       f"per-neuron layout ({len(neurons['data'])} traces, {per * 1e3:.1f} ms) "
                       f"over one heatmap per column ({len(columns['data'])} traces, "
                       f"{col * 1e3:.1f} ms): figure + canvas payload, 6x8")


BENCHMARKS = {
    "network: per-neuron layout / column layout (figure + payload)": layout_ratio,
    "network: neuron maps of a 6x8 network": lambda: frame_parts("maps"),
    "network: live frame parts, 6x8": lambda: frame_parts("parts"),
    "network: live frame canvas payload, 6x8": lambda: frame_parts("payload"),
    "network: training vs a plain PyTorch loop": training_ratio,
}
