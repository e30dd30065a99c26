"""The gallery thumbnail of the language models page (scripts/make_thumbnails.py draws it): the
shipped model's next-character probabilities after a prompt, as bars, the cut tail grey."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

W, H = 320, 180
KEPT, CUT = (31, 119, 180), (199, 199, 199)
PROMPT = "The return statement leaves the current function call with "


def draw() -> Image.Image:
    from engine.language_models import encode, next_logits, shape
    from engine.language_models.pretrained import load_shipped
    sh = shape(next_logits(load_shipped(), encode(PROMPT).ids), 1.0, 0, 0.9)
    top = np.argsort(-sh.raw)[:16]
    img = Image.new("RGB", (W, H), (255, 255, 255))
    pen = ImageDraw.Draw(img)
    bar = (W - 20) / len(top)
    scale = (H - 20) / max(float(sh.raw[top[0]]), 1e-9)
    for k, i in enumerate(top):
        x0 = 10 + k * bar
        pen.rectangle([x0 + 2, H - 10 - sh.raw[i] * scale, x0 + bar - 2, H - 10],
                      fill=KEPT if sh.keep[i] else CUT)
    return img
