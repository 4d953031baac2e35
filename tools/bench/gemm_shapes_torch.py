#!/usr/bin/python3
"""PyTorch's side of tools/bench/gemm_shapes.sh: the products of
tools/bench/gemm_shapes.txt as PyTorch's own layers compute them (nn.Linear
keeps its weight (out, in)): forward F.linear(x, w, b) (addmm against w^T),
input_grad dy @ w, weight_grad dy^T @ x (the (out, in) gradient), product
x @ b. Timed as gemm_shapes.cpp times drun's: calls in batches of at least
--batch-ms, the median batch's time per call; one JSON line per product.

    gemm_shapes_torch.py --list tools/bench/gemm_shapes.txt [--model transformer]
                         [--threads T] [--batch-ms 10] [--batches 5]
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def read_list(path, model):
    out = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith('#'):
                continue
            fields = line.split()
            if len(fields) != 7:
                sys.exit(f"error: {path}:{number}: expected 'model product count kind m n k': {line}")
            m, name, count, kind, rows, cols, inner = fields
            if not model or m == model:
                out.append((m, name, int(count), kind, int(rows), int(cols), int(inner)))
    return out


def product_call(kind, m, n, k):
    g = torch.Generator().manual_seed(3)
    r = lambda *s: torch.rand(*s, generator=g) - 0.5  # noqa: E731
    if kind == 'forward':  # y (m, n) = x (m, k) w^T + b, w (n, k)
        x, w, b = r(m, k), r(n, k), r(n)
        return lambda: F.linear(x, w, b)
    if kind == 'input_grad':  # dx (m, n) = dy (m, k) w, w (k, n) as (out, in)
        dy, w = r(m, k), r(k, n)
        return lambda: dy @ w
    if kind == 'weight_grad':  # dw (n, m) = dy^T x: dy (k, n), x (k, m)
        x, dy = r(k, m), r(k, n)
        return lambda: dy.t() @ x
    if kind == 'product':
        x, b = r(m, k), r(k, n)
        return lambda: x @ b
    sys.exit(f'error: unknown kind {kind}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--list', required=True)
    ap.add_argument('--model', default='')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--batch-ms', type=float, default=10.0)
    ap.add_argument('--batches', type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with torch.no_grad():
        for model, name, count, kind, m, n, k in read_list(args.list, args.model):
            call = product_call(kind, m, n, k)
            t0 = time.perf_counter()
            call()
            once = (time.perf_counter() - t0) * 1e3
            calls = max(1, int(args.batch_ms / max(once, 1e-3)))
            for _ in range(calls):
                call()
            per_call = []
            for _ in range(args.batches):
                start = time.perf_counter()
                for _ in range(calls):
                    call()
                per_call.append((time.perf_counter() - start) * 1e3 / calls)
            ms = statistics.median(per_call)
            print(json.dumps({'model': model, 'product': name, 'count': count, 'm': m, 'n': n,
                              'k': k, 'threads': args.threads, 'ms': round(ms, 5),
                              'gflops': round(2.0 * m * n * k / (ms * 1e6), 1)}), flush=True)


if __name__ == '__main__':
    main()
