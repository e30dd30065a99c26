"""The gallery thumbnail of the representation-learning page (scripts/make_thumbnails.py draws
it): two moons as spectral clustering splits them, beside k-means' straight cut."""
from __future__ import annotations

from PIL import Image, ImageDraw

W, H = 320, 180
COLORS = ((31, 119, 180), (214, 39, 40))


def draw() -> Image.Image:
    from engine.representations import cluster, make_shape
    x, _, k = make_shape("moons", 400, 0, 0.05)
    img = Image.new("RGB", (W, H), (255, 255, 255))
    pen = ImageDraw.Draw(img)
    for panel, method in enumerate(("kmeans", "spectral")):
        labels, _ = cluster(x, method, k)
        px = panel * W / 2 + (x[:, 0] + 2.2) / 4.4 * (W / 2)
        py = (1 - (x[:, 1] + 2.2) / 4.4) * H
        for a, b, c in zip(px, py, labels):
            pen.ellipse([a - 2, b - 2, a + 2, b + 2], fill=COLORS[int(c) % 2])
    pen.line([W / 2, 10, W / 2, H - 10], fill=(200, 200, 200), width=1)
    return img
