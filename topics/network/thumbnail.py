"""The gallery thumbnail of the network page (scripts/make_thumbnails.py draws it): the output
map of a small network trained on XOR, with the training points on it."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

W, H = 320, 180
POSITIVE, NEGATIVE, WHITE = (8, 119, 189), (245, 147, 34), (247, 247, 247)


def draw() -> Image.Image:
    from engine.network import BOX, NetworkTrainer, neuron_maps
    trainer = NetworkTrainer("xor", hidden=(8,), activation="relu", seed=0)
    trainer.step(600)
    snap = trainer.snapshot()
    p = neuron_maps(snap.layers, snap.activation, snap.features, BOX, 90).output  # (90, 90)
    t = (2 * p - 1)[::-1]                                                          # top row: x2 = 6
    pos, neg, white = (np.array(c, float) for c in (POSITIVE, NEGATIVE, WHITE))
    mix = np.where(t[..., None] > 0, white + t[..., None] * (pos - white),
                   white - t[..., None] * (neg - white))
    img = Image.fromarray(mix.astype(np.uint8)).resize((W, H))
    pen = ImageDraw.Draw(img)
    for (x1, x2), y in zip(snap.x_train[::2], snap.y_train[::2]):
        px, py = (x1 + 6) / 12 * W, (6 - x2) / 12 * H
        pen.ellipse([px - 3, py - 3, px + 3, py + 3], fill=POSITIVE if y > 0.5 else NEGATIVE,
                    outline=(255, 255, 255))
    return img
