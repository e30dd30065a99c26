"""Draw the gallery thumbnails (assets/thumbnails/<slug>.png, 320x180) from real computations:
the computational graph of a sigmoid neuron with its forward values and backpropagated
gradients, a GD path on a quadratic, a ReLU net's activation patterns, a Sobel filter on a bundled photo,
an LSTM's forget gates, a softmax attention map, a ring of Gaussians, bundled digits, and the
forward noising of a spiral, signal variance through deep nets, an overfitted boundary on noisy
moons, an adversarial digit. Run: python -m scripts.make_thumbnails [slug ...]"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.datasets import load_digits, make_dataset, sample_photo  # noqa: E402

W, H = 320, 180
BLUE, RED, GREEN, ORANGE = (31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14)


def _canvas(color=(255, 255, 255)):
    img = Image.new("RGB", (W, H), color)
    return img, ImageDraw.Draw(img)


def _to_px(p, box):
    x0, x1, y0, y1 = box
    return ((p[..., 0] - x0) / (x1 - x0) * W, (1 - (p[..., 1] - y0) / (y1 - y0)) * H)


def _colormap(v):
    """v in [0, 1] -> RGB uint8 (white to blue)."""
    v = np.clip(v, 0, 1)[..., None]
    return (255 * (1 - v) + np.array(BLUE) * v).astype(np.uint8)


def gradient_descent():
    img, d = _canvas()
    A = np.diag([1.0, 12.0])
    box = (-4, 4, -2.25, 2.25)
    xs, ys = np.meshgrid(np.linspace(*box[:2], W), np.linspace(box[3], box[2], H))
    f = 0.5 * (A[0, 0] * xs**2 + A[1, 1] * ys**2)
    bands = (np.sqrt(f) * 2).astype(int) % 2
    img.paste(Image.fromarray(np.where(bands[..., None], 245, 230).astype(np.uint8).repeat(3, 2)))
    for lr, color in ((0.16, RED), (0.05, GREEN)):
        w, path = np.array([-3.5, 1.8]), []
        for _ in range(40):
            path.append(w.copy())
            w = w - lr * A @ w
        px, py = _to_px(np.array(path), box)
        d.line(list(zip(px, py)), fill=color, width=3)
    return img


def relu_regions():
    g = torch.Generator().manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8),
                              torch.nn.ReLU())
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
        xs, ys = np.meshgrid(np.linspace(-2, 2, W), np.linspace(1.1, -1.1, H))
        x = torch.tensor(np.stack([xs.ravel(), ys.ravel()], 1), dtype=torch.float32)
        h1 = net[1](net[0](x))
        h2 = net[3](net[2](h1))
        pattern = torch.cat([h1 > 0, h2 > 0], 1).numpy().astype(np.int64)
    code = (pattern * (np.arange(16) * 7919 + 104729)).sum(1) % 997
    rgb = np.stack([(code * 37) % 200 + 55, (code * 91) % 200 + 55, (code * 53) % 200 + 55], 1)
    return Image.fromarray(rgb.reshape(H, W, 3).astype(np.uint8))


def convolution():
    gray = sample_photo("china", grayscale=True)[60:60 + 2 * H:2, 0:2 * W:2]
    k = torch.tensor([[[[1., 0., -1.], [2., 0., -2.], [1., 0., -1.]]]])
    edges = torch.nn.functional.conv2d(torch.tensor(gray)[None, None], k, padding=1)[0, 0].abs()
    edges = (edges / edges.max()).numpy()
    out = np.where(np.arange(W)[None, :] < W // 2, gray, 1 - edges)
    img = Image.fromarray((out * 255).astype(np.uint8)).convert("RGB")
    d = ImageDraw.Draw(img)
    d.rectangle([W // 2 - 30, 70, W // 2 + 6, 106], outline=RED, width=3)
    return img


def lstm_gating():
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(1, 12)
    t = torch.arange(64.0)
    x = (torch.sin(t / 5) + (t % 16 == 0).float() * 2).reshape(64, 1, 1)
    with torch.no_grad():
        w_ih, w_hh, b = lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0 + lstm.bias_hh_l0
        h, c, gates = torch.zeros(12), torch.zeros(12), []
        for xt in x[:, 0]:
            z = w_ih @ xt + w_hh @ h + b
            i, f, gg, o = z.chunk(4)
            i, f, o, gg = i.sigmoid(), f.sigmoid(), o.sigmoid(), gg.tanh()
            c = f * c + i * gg
            h = o * c.tanh()
            gates.append(f)
    f = torch.stack(gates, 1).numpy()
    rgb = _colormap((f - f.min()) / (f.max() - f.min()))
    return Image.fromarray(rgb).resize((W, H), Image.NEAREST)


def attention():
    n, dk = 12, 16
    pos = np.arange(n)[:, None] / 10000 ** (np.arange(0, dk, 2)[None] / dk)
    pe = np.concatenate([np.sin(pos), np.cos(pos)], 1) * 2.5
    scores = pe @ pe.T / np.sqrt(dk)
    w = np.exp(scores - scores.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    rgb = _colormap(w / w.max())
    img = Image.fromarray(rgb).resize((H, H), Image.NEAREST)
    canvas, _ = _canvas()
    canvas.paste(img, ((W - H) // 2, 0))
    return canvas


def _scatter(points, colors, box, r=2, bg=(255, 255, 255)):
    img, d = _canvas(bg)
    px, py = _to_px(points, box)
    for x, y, c in zip(px, py, colors):
        d.ellipse([x - r, y - r, x + r, y + r], fill=c)
    return img


def gan():
    data = make_dataset("ring", 800, seed=0, noise=0.08)
    colors = [BLUE if lab % 2 else ORANGE for lab in data.labels]
    return _scatter(data.points, colors, (-4.2, 4.2, -2.6, 2.6))


def vae():
    digits = load_digits()
    img, _ = _canvas((20, 20, 20))
    tile = 34
    order = np.concatenate([np.flatnonzero(digits.labels == k)[:2] for k in range(10)])
    for j, idx in enumerate(order[:18]):
        im = Image.fromarray((255 * digits.images[idx]).astype(np.uint8)).resize((tile, tile),
                                                                                 Image.BILINEAR)
        img.paste(im.convert("RGB"), (8 + (j % 9) * (tile + 1), 40 + (j // 9) * (tile + 30)))
    return img


def diffusion():
    data = make_dataset("spiral", 600, seed=0, noise=0.03)
    betas = np.linspace(1e-4, 0.02, 1000)
    alpha_bar = np.cumprod(1 - betas)
    rng = np.random.default_rng(0)
    pts, cols = [], []
    for j, t in enumerate((1, 60, 250)):
        ab = alpha_bar[t - 1]
        x = np.sqrt(ab) * data.points + np.sqrt(1 - ab) * rng.standard_normal(data.points.shape)
        pts.append(x / 2.6 + np.array([-2.2 + 2.2 * j, 0]))
        cols += [[BLUE, GREEN, RED][j]] * len(x)
    return _scatter(np.concatenate(pts), cols, (-3.3, 3.3, -1.85, 1.85), r=1)


def initialization():
    """log Var(h_l) over 30 layers of width 128: tanh σ_w = 0.5 dies (red), ReLU + Xavier halves
    (orange), ReLU + He stays (green); engine.signal.propagate, seed 0."""
    from engine.signal import propagate
    img, d = _canvas()
    for y in range(0, H, 30):
        d.line([(0, y), (W, y)], fill=(235, 235, 235))
    runs = ((("tanh", "normal", 0.5), RED), (("relu", "xavier_normal", 1.0), ORANGE),
            (("relu", "kaiming_normal", 1.0), GREEN))
    for (act, init, sw), color in runs:
        p = propagate(30, 128, act, init, 256, seed=0, sigma_w=sw)
        logv = np.log10(np.maximum(p.act_var, 1e-30))
        px = 12 + np.arange(31) / 30 * (W - 24)
        py = 14 + (0.5 - logv) / 19.5 * (H - 28)
        d.line(list(zip(px, np.clip(py, 0, H - 1))), fill=color, width=4)
    return img


def generalization():
    """The decision boundary of an unregularized 2x128 net after 600 Adam steps on 100 noisy
    moons (20% of the labels flipped): it bends around the flipped points."""
    from engine.generalization import GeneralizationTrainer, TrainConfig, decision_grid
    tr = GeneralizationTrainer(TrainConfig(n_train=100, noise=0.2, label_noise=0.2), seed=0,
                               device="cpu")
    tr.step(600)
    box = (-1.6, 2.6, -1.05, 1.3)
    grid = decision_grid(tr.model, box, res=W)
    p = np.flipud(grid.probability[np.linspace(0, W - 1, H).astype(int)])[..., None]
    bg = 255 - (255 - np.array(RED)) * np.clip(2 * p - 1, 0, 1) * 0.45 \
        - (255 - np.array(BLUE)) * np.clip(1 - 2 * p, 0, 1) * 0.45
    img = Image.fromarray(bg.astype(np.uint8))
    d = ImageDraw.Draw(img)
    px, py = _to_px(tr.data.x_train, box)
    for x, y, lab, clean in zip(px, py, tr.data.y_train, tr.data.clean_train):
        d.ellipse([x - 4, y - 4, x + 4, y + 4], fill=RED if lab else BLUE, outline=(255, 255, 255))
        if lab != clean:
            d.ellipse([x - 7, y - 7, x + 7, y + 7], outline=(0, 0, 0), width=2)
    return img


def backpropagation():
    from engine.autodiff import differentiate
    d = differentiate("sigmoid(w0*x0 + w1*x1 + w2)",
                      {"w0": 2.0, "x0": -1.0, "w1": -3.0, "x1": -2.0, "w2": -3.0})
    ascii_label = {"mul": "*", "add": "+", "sigmoid": "sig"}     # the bitmap font's glyphs
    img, draw = _canvas()
    lx, ly = d.layout.x, d.layout.y
    px = 84 + lx / max(lx.max(), 1) * (W - 108)
    py = 20 + ly / max(ly.max(), 1) * (H - 44)
    for e in d.edges:
        draw.line([(px[e.src], py[e.src]), (px[e.dst], py[e.dst])], fill=(150, 150, 150),
                  width=2)
    for n, value, grad in zip(d.nodes, d.values, d.grads):
        x, y, r = px[n.id], py[n.id], 11
        fill = (219, 233, 246) if n.op == "input" else (238, 238, 238) if n.op == "const" \
            else (255, 255, 255)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=fill, outline=(60, 60, 60), width=2)
        draw.text((x, y), ascii_label.get(n.op, n.label), fill=(20, 20, 20), anchor="mm")
        if n.inputs:          # operations: value above (green), gradient below (red)
            draw.text((x, y - r - 2), f"{value:.2g}", fill=GREEN, anchor="md")
            draw.text((x, y + r + 2), f"{grad:.2g}", fill=RED, anchor="ma")
        else:                 # inputs: value and gradient to the left
            draw.text((x - r - 4, y), f"{value:.2g} ", fill=GREEN, anchor="rm")
            draw.text((x - r - 30, y), f"{grad:.2g}", fill=RED, anchor="rm")
    return img


THUMBNAILS = {"backpropagation": backpropagation, "gradient_descent": gradient_descent,
              "relu_regions": relu_regions,
              "convolution": convolution, "lstm_gating": lstm_gating, "attention": attention,
              "gan": gan, "vae": vae, "diffusion": diffusion, "initialization": initialization,
              "generalization": generalization}


def adversarial():
    """Held-out digit #12 (a 0), the PGD perturbation at eps = 0.125 (red +, blue -, rescaled)
    and the attacked digit the shipped standard CNN reads as a 9."""
    from engine.adversarial import AttackSpec, attack_one
    from engine.adversarial.training import heldout_digits, load_snapshot
    d = heldout_digits()
    r = attack_one(load_snapshot("standard")[0], d.images[12], int(d.labels[12]), 0.125,
                   AttackSpec("pgd"))
    img, draw = _canvas()
    side, top = 88, 30
    delta = r.perturbation / max(float(np.abs(r.perturbation).max()), 1e-6)
    pert = np.stack([1 - np.clip(-delta, 0, 1) * 0.8 - np.clip(delta, 0, 1) * 0.2,
                     1 - np.abs(delta) * 0.75, 1 - np.clip(delta, 0, 1) * 0.8
                     - np.clip(-delta, 0, 1) * 0.2], -1)
    panels = [np.repeat((1 - r.image)[..., None], 3, 2), pert,
              np.repeat((1 - r.adversarial)[..., None], 3, 2)]
    for j, p in enumerate(panels):
        tile = Image.fromarray((255 * np.clip(p, 0, 1)).astype(np.uint8)).resize((side, side),
                                                                                Image.NEAREST)
        img.paste(tile, (12 + j * (side + 16), top))
    draw.text((12 + side // 2 - 20, top + side + 12), f"says {r.pred_before}", fill=GREEN)
    draw.text((12 + side + 16 + side // 2 - 18, top + side + 12), "+ delta", fill=(90, 90, 90))
    draw.text((12 + 2 * (side + 16) + side // 2 - 20, top + side + 12), f"says {r.pred_after}",
              fill=RED)
    return img


THUMBNAILS["adversarial"] = adversarial


def _drawer(slug: str):
    """The function that draws `slug`'s thumbnail: here, or the page's own
    topics/<slug>/thumbnail.py (its `draw()`)."""
    if slug in THUMBNAILS:
        return THUMBNAILS[slug]
    import importlib
    return importlib.import_module(f"topics.{slug}.thumbnail").draw


def draw_topic_thumbnail(slug: str, out_dir: Path | None = None) -> Path:
    """Draw and save assets/thumbnails/<slug>.png (or into `out_dir`); returns its path."""
    out = Path(out_dir) if out_dir is not None else ROOT / "assets" / "thumbnails"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{slug}.png"
    _drawer(slug)().save(path, optimize=True)
    return path


def main(only: list[str]) -> None:
    """Draw every thumbnail, or only the slugs named on the command line."""
    own = sorted(p.parent.name for p in (ROOT / "topics").glob("*/thumbnail.py"))
    for slug in [*THUMBNAILS, *own]:
        if only and slug not in only:
            continue
        print("wrote", draw_topic_thumbnail(slug))


if __name__ == "__main__":
    from engine.device import configure_threads
    configure_threads()      # one torch thread, as the app: all cores make it slower here
    main(sys.argv[1:])
