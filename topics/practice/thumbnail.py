"""The gallery thumbnail of the Training in practice page (scripts/make_thumbnails.py draws it):
a deep ensemble's predictive band on 1-D regression, wide in the gap without data."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

W, H = 320, 180
BAND, MEAN, DOTS = (198, 204, 253), (99, 110, 250), (239, 85, 59)


def draw() -> Image.Image:
    from engine.practice import uncertainty
    x, y = uncertainty.gap_data(60, 0.1, 0)
    b = uncertainty.ensemble_band(x, y, 5, seed=0)
    lim, top = uncertainty.X_PLOT, 3.5
    px = lambda v: (np.asarray(v) + lim) / (2 * lim) * W                 # noqa: E731
    py = lambda v: (1 - (np.asarray(v) + top) / (2 * top)) * H           # noqa: E731
    img = Image.new("RGB", (W, H), (255, 255, 255))
    pen = ImageDraw.Draw(img)
    up, lo = b.mean + 2 * b.std, b.mean - 2 * b.std
    pen.polygon(list(zip(px(b.xs), py(up))) + list(zip(px(b.xs[::-1]), py(lo[::-1]))),
                fill=BAND)
    pen.line(list(zip(px(b.xs), py(b.mean))), fill=MEAN, width=3)
    for cx, cy in zip(px(x), py(y)):
        pen.ellipse([cx - 2.5, cy - 2.5, cx + 2.5, cy + 2.5], fill=DOTS)
    return img
