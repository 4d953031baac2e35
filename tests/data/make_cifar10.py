#!/usr/bin/env python3
"""Writes a CIFAR-10 directory in the real binary format, for tests and benchmarks.

    make_cifar10.py DIR [--train N] [--test M] [--signal] [--seed S]

Writes DIR/data_batch_1.bin .. data_batch_5.bin (N training records split over
the five files as evenly as possible, the first files taking the remainder),
DIR/test_batch.bin (M records) and DIR/batches.meta.txt (the ten class names,
one a line), as the CIFAR-10 binary version does. Each record is 1 label byte
(0..9) followed by 3072 pixel bytes: the 32x32 red plane, then green, then
blue, each row-major.

Labels cycle 0..9 in a seeded random order. Pixels are seeded uniform noise in
0..159. With --signal, each image also gets an 8x8 square, at a random
position, filled with its class's colour (the 10 colours are the corners and
edge midpoints of the RGB cube that differ in at least one channel by 255), so
a network can learn the label; random crops, flips and per-image
standardisation keep the signal. Without --signal the images carry no label
information (for throughput benchmarks).

Standard library only; the same arguments always give the same bytes.
"""
import argparse
import os
import random
import sys

SIDE = 32
PLANE = SIDE * SIDE
RECORD = 1 + 3 * PLANE
SQUARE = 8
CLASSES = ["airplane", "automobile", "bird", "cat", "deer",
           "dog", "frog", "horse", "ship", "truck"]
# One colour per class, far apart in RGB and above the noise (0..159) where bright.
PALETTE = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255),
           (0, 255, 255), (255, 255, 255), (0, 0, 0), (255, 128, 0), (128, 0, 255)]
NOISE_TABLE = bytes(v * 160 // 256 for v in range(256))


def records(count, rng, signal):
    """Yields `count` records (bytes) from the random generator `rng`."""
    labels = []
    while len(labels) < count:
        cycle = list(range(len(CLASSES)))
        rng.shuffle(cycle)
        labels.extend(cycle)
    for i in range(count):
        label = labels[i]
        rec = bytearray(1 + 3 * PLANE)
        rec[0] = label
        rec[1:] = rng.randbytes(3 * PLANE).translate(NOISE_TABLE)
        if signal:
            top = rng.randrange(SIDE - SQUARE + 1)
            left = rng.randrange(SIDE - SQUARE + 1)
            for c, value in enumerate(PALETTE[label]):
                row_fill = bytes([value]) * SQUARE
                for r in range(top, top + SQUARE):
                    start = 1 + c * PLANE + r * SIDE + left
                    rec[start:start + SQUARE] = row_fill
        yield bytes(rec)


def write(path, count, rng, signal):
    with open(path, "wb") as f:
        for rec in records(count, rng, signal):
            f.write(rec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="output directory (created if missing)")
    ap.add_argument("--train", type=int, default=500, help="training records in all (default 500)")
    ap.add_argument("--test", type=int, default=100, help="test records (default 100)")
    ap.add_argument("--signal", action="store_true",
                    help="draw a class-coloured square into each image so the label can be learnt")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.train < 0 or args.test < 0:
        ap.error("--train and --test must not be negative")
    if not hasattr(random.Random, "randbytes"):
        sys.exit("make_cifar10.py needs Python 3.9 or newer (random.randbytes)")

    os.makedirs(args.dir, exist_ok=True)
    rng = random.Random(args.seed)
    base, extra = divmod(args.train, 5)
    for i in range(5):
        write(os.path.join(args.dir, "data_batch_%d.bin" % (i + 1)),
              base + (1 if i < extra else 0), rng, args.signal)
    write(os.path.join(args.dir, "test_batch.bin"), args.test, random.Random(args.seed + 1000003),
          args.signal)
    with open(os.path.join(args.dir, "batches.meta.txt"), "w") as f:
        f.write("\n".join(CLASSES) + "\n")
    print("wrote %d training and %d test records (%s) to %s"
          % (args.train, args.test, "with signal" if args.signal else "noise only", args.dir))


if __name__ == "__main__":
    main()
