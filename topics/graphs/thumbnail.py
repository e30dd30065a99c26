"""The gallery thumbnail of the graphs page (scripts/make_thumbnails.py draws it): the karate
club coloured by the faction a briefly trained GCN predicts from two labelled members."""
from __future__ import annotations

from PIL import Image, ImageDraw

W, H = 320, 180
COLORS = ((31, 119, 180), (214, 39, 40))
EDGE = (190, 190, 190)


def draw() -> Image.Image:
    from engine.graphs import GraphsTrainer, make_graph
    graph = make_graph("karate")
    trainer = GraphsTrainer(per_class=1, seed=0)
    trainer.step(100)
    snap = trainer.snapshot()
    p = graph.positions
    lo, hi = p.min(0), p.max(0)
    x = 20 + (p[:, 0] - lo[0]) / (hi[0] - lo[0]) * (W - 40)
    y = 14 + (p[:, 1] - lo[1]) / (hi[1] - lo[1]) * (H - 28)
    img = Image.new("RGB", (W, H), (255, 255, 255))
    pen = ImageDraw.Draw(img)
    for i, j in graph.edges:
        pen.line([x[i], y[i], x[j], y[j]], fill=EDGE, width=1)
    for i, c in enumerate(snap.predicted.astype(int)):
        r = 7 if snap.labelled[i] else 5
        pen.ellipse([x[i] - r, y[i] - r, x[i] + r, y[i] + r], fill=COLORS[c],
                    outline=(30, 30, 30))
    return img
