"""Writes N JPEG photos-like images (smooth colour fields, edges and grain,
about 500x375, quality 90) into DIR/class_<k>/ for tools/bench/input.sh.
Usage: make_jpeg_folder.py DIR [--count 2000] [--classes 10]"""
import argparse
import os

import numpy as np
from PIL import Image


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--count", type=int, default=2000)
    p.add_argument("--classes", type=int, default=10)
    a = p.parse_args()
    rng = np.random.default_rng(2026)
    for i in range(a.count):
        w, h = (500, 375) if i % 4 else (375, 500)
        w, h = w + int(rng.integers(-20, 21)), h + int(rng.integers(-20, 21))
        low = rng.uniform(0, 255, size=(6, 8, 3)).astype(np.uint8)
        img = np.asarray(Image.fromarray(low).resize((w, h), Image.BICUBIC), dtype=np.float32)
        img += rng.normal(0, 12, size=img.shape)  # grain: gives the file realistic entropy
        d = os.path.join(a.dir, f"class_{i % a.classes}")
        os.makedirs(d, exist_ok=True)
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(os.path.join(d, f"{i:05d}.jpg"),
                                                                    quality=90)


if __name__ == "__main__":
    main()
