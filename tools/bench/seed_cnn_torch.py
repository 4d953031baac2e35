#!/usr/bin/python3
"""PyTorch peer benchmark for drun's seed CNN training step.

Seed CNN: Conv2D(32, 3x3, valid, relu) -> MaxPool 2 -> Flatten -> Dense 64 relu
-> Dense 10; softmax cross-entropy; SGD lr 0.01 momentum 0.9; batch 64;
Fashion-MNIST train set (pixels / 255), read with numpy + gzip.

Best configuration on this machine (see /work/shared/REFERENCE.md): the caller
must set, before the process starts,
  OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=1
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295
(tools/bench/seed_cnn.sh does); this script calls torch.set_num_threads(N).

Prints one JSON line:
  {"framework":"pytorch","threads":N,"batch":64,"steps":S,"images_per_sec":...}
"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"
WANT_GLIBC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"


def load(data_dir):
    with gzip.open(os.path.join(data_dir, "train-images-idx3-ubyte.gz"), "rb") as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    with gzip.open(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"), "rb") as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    x = (images.reshape(-1, 1, 28, 28).astype(np.float32) / 255.0)
    return x, labels.astype(np.int64)


def check_env(threads):
    want = {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1",
            "GLIBC_TUNABLES": WANT_GLIBC}
    for k, v in want.items():
        got = os.environ.get(k)
        if got != v:
            print("warning: %s=%r, best configuration wants %r (set it before starting python)"
                  % (k, got, v), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=300, help="timed steps")
    ap.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    check_env(args.threads)

    import torch
    import torch.nn as nn
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    x_np, y_np = load(args.data)
    x_all = torch.from_numpy(x_np)
    y_all = torch.from_numpy(y_np)
    n = x_all.shape[0]
    B = args.batch

    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(32 * 13 * 13, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    perm = torch.randperm(n)
    pos = [0]

    def batch():
        if pos[0] + B > n:
            perm.copy_(torch.randperm(n))
            pos[0] = 0
        idx = perm[pos[0]:pos[0] + B]
        pos[0] += B
        return x_all[idx], y_all[idx]

    def step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step(*batch())
    # Batch gathering counts in the timed loop, as in a real epoch.
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step(*batch())
    loss = float(loss)
    dt = time.perf_counter() - t0

    print(json.dumps({"framework": "pytorch", "threads": args.threads, "batch": B,
                      "steps": args.steps, "images_per_sec": round(args.steps * B / dt, 1),
                      "seconds": round(dt, 4), "final_loss": round(loss, 4)}, separators=(",", ":")))


if __name__ == "__main__":
    main()
