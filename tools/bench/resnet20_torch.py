#!/usr/bin/python3
"""PyTorch peer benchmark for drun's ResNet-20 (CIFAR-10) training step.

ResNet-20 as models/resnet_cifar.lua builds it (He et al. 2015, section 4.2,
shortcut option B): 3x3 conv 16 - BN - ReLU; three stages of 3 basic blocks
(16, 32, 64 filters, the first block of stages 2 and 3 with stride 2), each
conv3x3-BN-ReLU-conv3x3-BN + shortcut, ReLU; the shortcut a 1x1 conv stride 2
+ BN where the shape changes; global average pooling; Linear(64, 10).
Convolutions without bias, BN momentum 0.1 (PyTorch's convention) eps 1e-5;
272,474 trainable parameters. Softmax cross-entropy; SGD lr 0.1 momentum 0.9
weight decay 2e-4 (PyTorch's weight_decay decays every parameter, drun's
only kernels: the same arithmetic cost); batch 128; float32; NCHW (PyTorch's
native CPU layout; drun runs NHWC).

Data: a pool of random 32x32x3 images (uniform 0..1, float32) and random
labels, built once; each step gathers a batch of random indices, as a real
epoch would (the gather is timed, as drun's input pipeline is).

Best configuration on this machine (see /work/shared/REFERENCE.md): the caller
must set, before the process starts,
  OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=1
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295
(tools/bench/resnet20.sh does); this script calls torch.set_num_threads(N).

Prints one JSON line:
  {"framework":"pytorch","model":"resnet20","threads":N,"batch":128,"steps":S,
   "images_per_sec":...,"seconds":...,"final_loss":...,"params":274042,
   "trainable_params":272474}
"""
import argparse
import json
import os
import sys
import time

WANT_GLIBC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"


def check_env(threads):
    want = {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1",
            "GLIBC_TUNABLES": WANT_GLIBC}
    for k, v in want.items():
        got = os.environ.get(k)
        if got != v:
            print("warning: %s=%r, best configuration wants %r (set it before starting python)"
                  % (k, got, v), file=sys.stderr)


def resnet_cifar(n=3, classes=10):
    import torch.nn as nn

    def conv_bn(cin, cout, k, stride):
        return [nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
                nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)]

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(inplace=True),
                                      *conv_bn(cout, cout, 3, 1))
            self.shortcut = (nn.Sequential(*conv_bn(cin, cout, 1, stride))
                             if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.body(x) + self.shortcut(x))

    layers = [*conv_bn(3, 16, 3, 1), nn.ReLU(inplace=True)]
    cin = 16
    for stage, cout in enumerate((16, 32, 64)):
        for b in range(n):
            layers.append(Block(cin, cout, 2 if stage > 0 and b == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes)]
    model = nn.Sequential(*layers)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--pool", type=int, default=2560, help="random images to draw batches from")
    ap.add_argument("--n", type=int, default=3, help="blocks per stage (3: ResNet-20)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    check_env(args.threads)

    import torch
    import torch.nn as nn
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    B = args.batch
    pool = max(args.pool, B)
    x_all = torch.rand(pool, 3, 32, 32)
    y_all = torch.randint(0, 10, (pool,))

    model = resnet_cifar(args.n)
    model.train()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    # Keras' count (drun's): weights plus the batch-norm moving means and variances.
    params = trainable + sum(b.numel() for name, b in model.named_buffers()
                             if name.endswith(("running_mean", "running_var")))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-4)
    loss_fn = nn.CrossEntropyLoss()

    perm = torch.randperm(pool)
    pos = [0]

    def batch():
        if pos[0] + B > pool:
            perm.copy_(torch.randperm(pool))
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
    t0 = time.perf_counter()
    loss = torch.zeros(())
    for _ in range(args.steps):
        loss = step(*batch())
    loss = float(loss)
    dt = time.perf_counter() - t0

    print(json.dumps({"framework": "pytorch", "model": "resnet%d" % (6 * args.n + 2),
                      "threads": args.threads, "batch": B, "steps": args.steps,
                      "images_per_sec": round(args.steps * B / dt, 1) if dt > 0 else 0,
                      "seconds": round(dt, 4), "final_loss": round(loss, 4), "params": params,
                      "trainable_params": trainable},
                     separators=(",", ":")))


if __name__ == "__main__":
    main()
