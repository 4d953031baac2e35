#!/usr/bin/env bash
# ResNet-20 (CIFAR-10) training throughput: drun vs PyTorch, plus OpenBLAS SGEMM peak.
#
#   tools/bench/resnet20.sh [--threads "1 2"] [--repeats 3] [--steps 30] [--warmup 3]
#
# Model: ResNet-20, shortcut option B (models/resnet_cifar.lua; 274,042
# parameters, 272,474 trainable), batch 128, SGD lr 0.1 momentum 0.9 weight
# decay 2e-4, random 32x32x3 images, no augmentation.
# drun:    $DRUN (default build/drun) --threads N tools/bench/resnet20_bench.lua --dir D --steps S --warmup W
#          where D = build/bench/cifar10-noise, written once by tests/data/make_cifar10.py
#          (2,560 random training images in the CIFAR-10 binary format).
# PyTorch: /usr/bin/python3 tools/bench/resnet20_torch.py, in its best configuration.
# Work per image: 40.81 M multiply-adds forward (convolutions and dense);
# forward + weight gradients + input gradients (none for the first conv) =
# 2.44e8 FLOP. Fraction of SGEMM peak = drun images/s * 2.44e8 / (SGEMM GFLOP/s * 1e9).
# Table to build/bench/resnet20.md, raw JSON lines to build/bench/resnet20.jsonl;
# tools/bench/peer.sh runs it all (interleaving, medians, SGEMM peak).
exec "$(dirname "${BASH_SOURCE[0]}")/peer.sh" resnet20 "$@"
