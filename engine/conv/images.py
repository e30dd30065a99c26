"""Demo images (IMAGES: generated and bundled photos), resizing, and uploads checked
for size and format before decoding."""
from __future__ import annotations

import functools
import io
import torch.nn.functional as F
from typing import Callable

import numpy as np
import torch

from engine.datasets import load_digits, sample_photo


def checkerboard(size: int = 128, square: int = 16) -> np.ndarray:
    """(size, size) float32: 1 where (row // square + col // square) is even, else 0."""
    i = np.arange(size) // square
    return ((i[:, None] + i[None, :]) % 2 == 0).astype(np.float32)


def shapes(size: int = 128) -> np.ndarray:
    """(size, size) float32 in [0, 1]: a filled square, a disc, a triangle and a thin line."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    img = np.zeros((size, size), np.float32)
    img[(yy > 0.1) & (yy < 0.4) & (xx > 0.1) & (xx < 0.4)] = 1.0
    img[(yy - 0.25) ** 2 + (xx - 0.72) ** 2 < 0.15 ** 2] = 0.7
    tri = (yy > 0.55) & (yy < 0.9) & (np.abs(xx - 0.27) < (yy - 0.55) * 0.6)
    img[tri] = 0.85
    img[(np.abs(yy - xx - (-0.05)) < 0.012) & (xx > 0.55) & (yy > 0.5)] = 1.0
    return img


def downscale(img: np.ndarray, max_side: int) -> np.ndarray:
    """Area-average downscale so max(H, W) <= max_side (no change if already small)."""
    h, w = img.shape[:2]
    scale = max(h, w) / max_side
    if scale <= 1:
        return img
    size = (max(1, int(round(h / scale))), max(1, int(round(w / scale))))
    x = torch.as_tensor(img if img.ndim == 3 else img[..., None]).permute(2, 0, 1)[None]
    y = F.interpolate(x, size=size, mode="area")[0].permute(1, 2, 0).numpy()
    return y if img.ndim == 3 else y[..., 0]


def square_image(img: np.ndarray, n: int) -> np.ndarray:
    """The centre square of a (H, W) or (H, W, C) image, side s = min(H, W), resized to (n, n):
    area average when shrinking (s >= n: out = mean of each (s/n)^2 block when n divides s),
    nearest neighbour when enlarging (out[i, j] = crop[floor(i s / n), floor(j s / n)], pixels
    stay sharp). The receptive-field tab's n x n input."""
    n = int(n)
    if n < 1:
        raise ValueError(f"the square side must be >= 1 (got {n})")
    img = np.asarray(img, dtype=np.float32)
    h, w = img.shape[:2]
    s = min(h, w)
    top, left = (h - s) // 2, (w - s) // 2
    crop = img[top:top + s, left:left + s]
    x = torch.as_tensor(np.ascontiguousarray(crop if crop.ndim == 3 else crop[..., None]))
    y = F.interpolate(x.permute(2, 0, 1)[None], size=(n, n), mode="area" if s >= n else "nearest")
    y = y[0].permute(1, 2, 0).numpy()
    return y if img.ndim == 3 else y[..., 0]


def _to_gray(img: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma 0.299 R + 0.587 G + 0.114 B."""
    return img if img.ndim == 2 else (img[..., :3] @ np.array([0.299, 0.587, 0.114], np.float32))


def _gray_to_rgb(img: np.ndarray) -> np.ndarray:
    return img if img.ndim == 3 else np.repeat(img[..., None], 3, axis=2)


IMAGES: dict[str, Callable[[], np.ndarray]] = {
    "china (photo)": lambda: sample_photo("china"),
    "flower (photo)": lambda: sample_photo("flower"),
    "digit (8x8)": lambda: load_digits().images[0],
    "checkerboard": lambda: checkerboard(128, 16),
    "shapes": lambda: shapes(128),
}


@functools.lru_cache(maxsize=8)
def _raw_image(name: str) -> np.ndarray:
    return IMAGES[name]()


@functools.lru_cache(maxsize=32)
def _cached_image(name: str, grayscale: bool, max_side: int) -> np.ndarray:
    img = downscale(_raw_image(name), max_side)
    # a copy: small images come back as the lru-cached raw array itself, and freezing that
    # made torch.as_tensor warn (non-writable array) in later downscale() calls
    img = np.array(_to_gray(img) if grayscale else _gray_to_rgb(img))
    img.setflags(write=False)
    return img


def load_image(name: str, grayscale: bool = True, max_side: int = 256) -> np.ndarray:
    """IMAGES[name], float32 in [0, 1], downscaled to max side `max_side`, (H, W) if grayscale
    else (H, W, 3). Cached (deterministic); the returned array is a fresh copy."""
    if name not in IMAGES:
        raise KeyError(f"unknown image {name!r}; choose one of {sorted(IMAGES)}")
    return _cached_image(name, bool(grayscale), int(max_side)).copy()


MAX_UPLOAD_BYTES = 10 * 1024 * 1024
UPLOAD_FORMATS = ("PNG", "JPEG")
MAX_UPLOAD_SIDE = 512


def load_upload(data: bytes, grayscale: bool = True, max_side: int = MAX_UPLOAD_SIDE) -> np.ndarray:
    """Decode an uploaded PNG/JPEG (at most 10 MB) to float32 in [0, 1], downscaled so the
    longer side is <= max_side; (H, W) if grayscale else (H, W, 3). Anything else -> ValueError
    with a message meant for the user."""
    from PIL import Image, UnidentifiedImageError
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is {len(data) / 2**20:.1f} MB; the limit is 10 MB")
    if len(data) == 0:
        raise ValueError("the file is empty")
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.format not in UPLOAD_FORMATS:
                raise ValueError(f"it is a {im.format} file; only PNG and JPEG are accepted")
            im.draft("RGB", (max_side, max_side))      # JPEG: decode at reduced size
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            rgb = np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0
    except ValueError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise ValueError("this is not a PNG or JPEG image (or it is damaged / far too large)"
                         ) from exc
    except (OSError, SyntaxError) as exc:
        raise ValueError(f"the image could not be decoded ({exc})") from exc
    return _to_gray(rgb) if grayscale else rgb
