"""The gallery thumbnail of the autoregressive page (scripts/make_thumbnails.py draws it): the
receptive field of one output pixel through three masked 3 × 3 layers, shaded by its route
counts, with the blind spot above-right of the red target."""
from __future__ import annotations

from PIL import Image, ImageDraw

W, H = 320, 180
CELL = 16
TARGET = (214, 39, 40)
BLIND = (255, 127, 14)


def draw() -> Image.Image:
    import numpy as np

    from engine.autoregressive import blind_spot, field_by_gradient
    size, row, col, layers = 11, 7, 5, 3
    routes = field_by_gradient("pixelcnn", size, 3, layers, row, col)
    spot = blind_spot(routes, 3, layers, row, col)
    shade = np.log1p(routes) / np.log1p(routes).max()
    img = Image.new("RGB", (W, H), (255, 255, 255))
    pen = ImageDraw.Draw(img)
    x0, y0 = (W - size * CELL) // 2, (H - size * CELL) // 2 + 1
    for r in range(size):
        for c in range(size):
            t = float(shade[r, c])
            fill = (int(255 - t * 224), int(255 - t * 177), int(255 - t * 134))
            if (r, c) == (row, col):
                fill = TARGET
            elif spot[r, c]:
                fill = BLIND
            box = [x0 + c * CELL, y0 + r * CELL, x0 + (c + 1) * CELL - 2,
                   y0 + (r + 1) * CELL - 2]
            pen.rectangle(box, fill=fill, outline=(225, 225, 225))
    return img
