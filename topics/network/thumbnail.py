"""The gallery thumbnail of the A network you build page (scripts/make_thumbnails.py draws it): the points
coloured by the class a briefly trained network predicts."""
from __future__ import annotations

from PIL import Image, ImageDraw

W, H = 320, 180
COLORS = ((31, 119, 180), (255, 127, 14))


def draw() -> Image.Image:
    from engine.network import NetworkTrainer
    trainer = NetworkTrainer(n=300, noise=0.1, seed=0)
    trainer.step(300)
    snap = trainer.snapshot()
    img = Image.new("RGB", (W, H), (255, 255, 255))
    pen = ImageDraw.Draw(img)
    x = (snap.points[:, 0] + 1.5) / 4.0 * W
    y = (1 - (snap.points[:, 1] + 1.0) / 2.6) * H
    for px, py, c in zip(x, y, snap.predicted.astype(int)):
        pen.ellipse([px - 3, py - 3, px + 3, py + 3], fill=COLORS[c])
    return img
