"""A procedural head-detection data set for the RNNPool face-4 program, generated
deterministically (numpy only) so the repository can re-create its training and test
images instead of shipping them.

Each scene is a 240x320 greyscale image: a textured background (smooth shading, fine
noise, stripes, rectangles and bars as distractors) with 1 to 5 non-overlapping
ellipse "heads" of varied size (20-110 px tall), contrast (either sign), shading and edge
blur, plus sensor noise. Pixels are bytes 0..254 minus 117, the face-4 program's declared
input range [-117, 137] (mean-subtracted camera bytes). Boxes are (x1, y1, x2, y2) pixel
coordinates of each ellipse's bounding box.

Image `i` of a set with seed `s` depends only on (s, i): sets of any size agree on their
common images. `python tools/face/generate.py OUT --count N --seed S` writes
OUT/images.npy (uint8 bytes) and OUT/boxes.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

H, W = 240, 320
MEAN = 117  # the program's input is bytes - 117, in [-117, 137]
MIN_HEAD, MAX_HEAD = 20, 110  # head heights in pixels


def _smooth(rng: np.random.Generator, gh: int, gw: int) -> np.ndarray:
    """A random field on a gh x gw grid, bilinearly upsampled to the image (in [-1, 1])."""
    grid = rng.uniform(-1, 1, size=(gh + 1, gw + 1))
    y = np.linspace(0, gh, H)
    x = np.linspace(0, gw, W)
    y0 = np.minimum(y.astype(int), gh - 1)
    x0 = np.minimum(x.astype(int), gw - 1)
    fy = (y - y0)[:, None]
    fx = (x - x0)[None, :]
    a = grid[y0][:, x0]
    b = grid[y0][:, x0 + 1]
    c = grid[y0 + 1][:, x0]
    d = grid[y0 + 1][:, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def _blur(img: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur (edges replicated); sigma < 0.3 leaves the image as is."""
    if sigma < 0.3:
        return img
    r = int(np.ceil(3 * sigma))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    out = img
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (r, r)
        p = np.pad(out, pad, mode="edge")
        n = out.shape[axis]
        out = sum(k[t] * np.take(p, np.arange(t, t + n), axis=axis) for t in range(2 * r + 1))
    return out


def background(rng: np.random.Generator) -> np.ndarray:
    img = 128 + rng.uniform(-40, 40) + 50 * _smooth(rng, 3, 4) + 25 * _smooth(rng, 12, 16)
    img += rng.uniform(0, 12) * _smooth(rng, 60, 80)
    yy, xx = np.mgrid[0:H, 0:W]
    if rng.random() < 0.5:  # stripes (wallpaper, blinds)
        theta = rng.uniform(0, np.pi)
        period = rng.uniform(6, 40)
        phase = (xx * np.cos(theta) + yy * np.sin(theta)) * 2 * np.pi / period
        img += rng.uniform(5, 25) * np.sin(phase)
    for _ in range(rng.integers(2, 8)):  # rectangles and bars: straight-edged distractors
        h = rng.integers(8, 120)
        w = rng.integers(8, 160) if rng.random() < 0.7 else rng.integers(3, 10)
        y0, x0 = rng.integers(-20, H), rng.integers(-20, W)
        mask = np.zeros((H, W))
        mask[max(y0, 0):max(y0 + h, 0), max(x0, 0):max(x0 + w, 0)] = 1.0
        img += rng.uniform(-60, 60) * _blur(mask, rng.uniform(0, 2))
    return img


def scene(seed: int, index: int) -> tuple[np.ndarray, np.ndarray]:
    """Image `index` of the set `seed`: (uint8 [240, 320], float32 boxes [k, 4])."""
    rng = np.random.default_rng([seed, index])
    img = background(rng)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    boxes: list[tuple[float, float, float, float]] = []
    for _ in range(rng.integers(1, 6)):
        for _attempt in range(20):
            hh = float(np.exp(rng.uniform(np.log(MIN_HEAD), np.log(MAX_HEAD))))
            ww = hh * rng.uniform(0.7, 0.9)
            cy = rng.uniform(hh / 2 + 1, H - hh / 2 - 1)
            cx = rng.uniform(ww / 2 + 1, W - ww / 2 - 1)
            box = (cx - ww / 2, cy - hh / 2, cx + ww / 2, cy + hh / 2)
            if all(box[2] + 4 < b[0] or b[2] + 4 < box[0] or box[3] + 4 < b[1]
                   or b[3] + 4 < box[1] for b in boxes):
                break
        else:
            continue
        boxes.append(box)
        a, b = ww / 2, hh / 2
        d = np.sqrt(((xx - cx) / a) ** 2 + ((yy - cy) / b) ** 2)
        mask = np.clip(0.5 + (1 - d) * min(a, b), 0, 1)  # about 1 px anti-aliased edge
        mask = _blur(mask, rng.uniform(0, 3))
        local = float(np.sum(img * mask) / max(np.sum(mask), 1))
        contrast = rng.choice([-1, 1]) * rng.uniform(25, 90)
        light = rng.uniform(-1, 1, size=2) * abs(contrast) * 0.35
        head = local + contrast + light[0] * (xx - cx) / a + light[1] * (yy - cy) / b
        img = img * (1 - mask) + head * mask
    img = _blur(img, rng.uniform(0, 1.0)) + rng.normal(0, rng.uniform(1, 6), size=(H, W))
    pixels = np.clip(np.rint(img), 0, 2 * MEAN + 20).astype(np.uint8)  # bytes 0..254
    return pixels, np.asarray(boxes, np.float32).reshape(-1, 4)


def dataset(seed: int, count: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """`count` scenes: (uint8 [count, 240, 320], list of boxes)."""
    pairs = [scene(seed, i) for i in range(count)]
    return np.stack([p for p, _ in pairs]), [b for _, b in pairs]


def program_inputs(pixels: np.ndarray) -> np.ndarray:
    """uint8 [n, 240, 320] -> the program's X values [n, 76800] (bytes - 117, float32)."""
    return pixels.reshape(len(pixels), H * W).astype(np.float32) - MEAN


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    pixels, boxes = dataset(args.seed, args.count)
    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / "images.npy", pixels)
    (args.out / "boxes.json").write_text(json.dumps([b.tolist() for b in boxes]) + "\n")
    print(f"{args.out}: {args.count} scenes, {sum(len(b) for b in boxes)} heads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
