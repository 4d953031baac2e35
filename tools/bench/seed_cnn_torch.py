#!/usr/bin/python3
"""PyTorch peer benchmark for drun's seed CNN training step.

Seed CNN: Conv2D(32, 3x3, valid, relu) -> MaxPool 2 -> Flatten -> Dense 64 relu
-> Dense 10; softmax cross-entropy; SGD lr 0.01 momentum 0.9; batch 64;
Fashion-MNIST train set (pixels / 255), read with numpy + gzip.

Run in PyTorch's best configuration on this machine (see torch_timing.py, the
timing harness shared with resnet20_torch.py; tools/bench/seed_cnn.sh sets it).
--device cuda (tools/bench/gpu.sh) trains on GPU 0 with the whole training set
copied to the GPU once; batches are gathered there.

Prints one JSON line per --variants entry (torch_timing.py; default fp32):
  {"framework":"pytorch","threads":N,"batch":64,"steps":S,"images_per_sec":...,
   "seconds":...,"step_ms":...,"step_ms_median":...,"final_loss":...,
   "variant":"fp32","device":"cpu"}
(on cuda also gpu_name, torch, cuda, cudnn, tf32, cudnn_benchmark)
"""
import gzip
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_timing  # noqa: E402

# Where drun reads it (DRUN_DATA_DIR, as on the lent GPU machine), else Debian's
# dataset-fashion-mnist.
DATA = os.environ.get("DRUN_DATA_DIR") or "/usr/share/datasets/fashion-mnist"


def load(data_dir):
    with gzip.open(os.path.join(data_dir, "train-images-idx3-ubyte.gz"), "rb") as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    with gzip.open(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"), "rb") as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    x = (images.reshape(-1, 1, 28, 28).astype(np.float32) / 255.0)
    return x, labels.astype(np.int64)


def main():
    args = torch_timing.parse_args(
        steps=300, warmup=20, batch=64,
        add_options=lambda ap: ap.add_argument("--data", default=DATA))
    torch = torch_timing.setup_torch(args.threads, args.seed, args.device,
                                     args.tf32, bool(args.cudnn_benchmark))
    import torch.nn as nn

    x_np, y_np = load(args.data)
    x_all = torch.from_numpy(x_np).to(args.device)
    y_all = torch.from_numpy(y_np).to(args.device)
    def make_model():
        return nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(32 * 13 * 13, 64), nn.ReLU(), nn.Linear(64, 10)).to(args.device)

    torch_timing.run_variants(
        torch, args, make_model, lambda m: torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9),
        nn.CrossEntropyLoss(), x_all, y_all)

if __name__ == "__main__":
    main()
