#!/usr/bin/env bash
# Seed CNN training throughput: drun vs PyTorch, plus OpenBLAS SGEMM peak.
#
#   tools/bench/seed_cnn.sh [--threads "1 2"] [--repeats 5] [--steps 300] [--warmup 20]
#
# Model: Conv2D 32 3x3 relu, MaxPool 2, Flatten, Dense 64 relu, Dense 10;
# SGD lr 0.01 momentum 0.9, batch 64, Fashion-MNIST.
# drun:    $DRUN (default build/drun) --threads N tools/bench/seed_cnn_bench.lua --steps S --warmup W
# PyTorch: /usr/bin/python3 tools/bench/seed_cnn_torch.py, in its best configuration.
# Fraction of SGEMM peak = drun images/s * 2.86e6 FLOP / (SGEMM GFLOP/s * 1e9).
# Table to build/bench/seed_cnn.md, raw JSON lines to build/bench/seed_cnn.jsonl;
# tools/bench/peer.sh runs it all (interleaving, medians, SGEMM peak).
exec "$(dirname "${BASH_SOURCE[0]}")/peer.sh" seed_cnn "$@"
