"""The gallery thumbnail of the normalizing-flows page (scripts/make_thumbnails.py draws it):
the exact density of an 8-layer Real NVP after 1,000 Adam steps on the moons, with the base
space's grid lines pulled back through the inverse flow."""
from __future__ import annotations

import numpy as np
import torch
from PIL import Image, ImageDraw

W, H = 320, 180
BLUE, ORANGE = (31, 119, 180), (255, 127, 14)


def draw() -> Image.Image:
    from engine.flows.measures import flow_log_prob
    from engine.flows.reads import build_trainer
    from engine.flows.trainer import base_grid_lines
    tr = build_trainer("moons", 8, 64, 2e-3, 0, "cpu")
    tr.step(1000)
    box = (-2.8, 2.8, -1.575, 1.575)
    xs, ys = np.meshgrid(np.linspace(box[0], box[1], W), np.linspace(box[3], box[2], H))
    pts = torch.as_tensor(np.stack([xs.ravel(), ys.ravel()], 1), dtype=torch.float32)
    with torch.no_grad():
        p = flow_log_prob(tr.model, pts).exp().numpy().reshape(H, W)
        lines = tr.model.inverse(torch.as_tensor(base_grid_lines()).reshape(-1, 2))[0]
    v = np.clip(p / p.max(), 0, 1)[..., None]                 # white to blue
    img = Image.fromarray((255 * (1 - v) + np.array(BLUE) * v).astype(np.uint8))
    pen = ImageDraw.Draw(img)
    for line in lines.numpy().reshape(base_grid_lines().shape)[::2]:
        px = (line[:, 0] - box[0]) / (box[1] - box[0]) * W
        py = (1 - (line[:, 1] - box[2]) / (box[3] - box[2])) * H
        pen.line(list(zip(px, py)), fill=ORANGE, width=1)
    return img
