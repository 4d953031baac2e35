"""Timing harness shared by the PyTorch peer benchmarks (seed_cnn_torch.py,
resnet20_torch.py): command-line options, the best-configuration check,
torch set-up, the timed training loop and the one JSON line of results.

Best configuration on this machine (see /work/shared/REFERENCE.md): the caller
must set, before the process starts,
  OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=1
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295
(tools/bench/peer.sh does); setup_torch calls torch.set_num_threads(N).
"""
import argparse
import json
import os
import sys
import time

WANT_GLIBC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"


def parse_args(steps, warmup, batch, add_options=None):
    """--threads --steps --warmup --batch, the model's own options, --seed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=steps, help="timed steps")
    ap.add_argument("--warmup", type=int, default=warmup, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=batch)
    if add_options is not None:
        add_options(ap)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def check_env(threads):
    want = {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1",
            "GLIBC_TUNABLES": WANT_GLIBC}
    for k, v in want.items():
        got = os.environ.get(k)
        if got != v:
            print("warning: %s=%r, best configuration wants %r (set it before starting python)"
                  % (k, got, v), file=sys.stderr)


def setup_torch(threads, seed):
    """Warns about a configuration other than the best, then imports torch
    with `threads` intra-op threads and seeded; returns the torch module."""
    check_env(threads)
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    return torch


def time_training(torch, model, opt, loss_fn, x_all, y_all, batch_size, warmup, steps):
    """Runs `warmup` untimed then `steps` timed SGD steps on batches gathered
    from a fresh random permutation of (x_all, y_all), reshuffled when it runs
    out; returns (seconds, final loss as a float)."""
    n = x_all.shape[0]
    B = batch_size
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

    for _ in range(warmup):
        step(*batch())
    # Batch gathering counts in the timed loop, as in a real epoch.
    t0 = time.perf_counter()
    loss = torch.zeros(())
    for _ in range(steps):
        loss = step(*batch())
    loss = float(loss)
    dt = time.perf_counter() - t0
    return dt, loss


def print_result(threads, batch, steps, seconds, loss, model=None, **extra):
    """Prints the one JSON line: framework, model (if given), threads, batch,
    steps, images_per_sec, seconds, final_loss, then `extra` in order."""
    result = {"framework": "pytorch"}
    if model is not None:
        result["model"] = model
    result.update(threads=threads, batch=batch, steps=steps,
                  images_per_sec=round(steps * batch / seconds, 1) if seconds > 0 else 0,
                  seconds=round(seconds, 4), final_loss=round(loss, 4))
    result.update(extra)
    print(json.dumps(result, separators=(",", ":")))
