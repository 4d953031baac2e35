#!/usr/bin/python3
"""Golden reference for the seed CNN (drun tests/golden/seed_cnn.bin).

Model: Conv2D(32, 3x3, valid, relu) on 28x28x1 -> MaxPool 2x2 -> Flatten (H,W,C)
-> Dense 64 relu -> Dense 10 (logits) -> mean softmax cross-entropy.
Deterministic inputs and parameters (float64 formulas cast to float32) are in
drun's Keras layouts (NHWC, conv HWIO, dense (in,out)); torch computes in float32.

Usage:
  /usr/bin/python3 tools/golden/seed_cnn_torch.py [--out tests/golden/seed_cnn.bin]
  /usr/bin/python3 tools/golden/seed_cnn_torch.py --check [--out ...]

File format (little-endian), a sequence of records until EOF:
  uint32 name_len, name bytes (ASCII),
  uint32 rank, int64 dims[rank] (full shape),
  uint32 stride s, float32 values at flat indices 0, s, 2s, ... (< n)
  with s = 1 if n <= 20000 else ceil(n / 20000); count = ceil(n / s).
Records: loss (rank 0), logits (8,10), then gradients named by parameter:
  conv2d/kernel (3,3,1,32), conv2d/bias (32), dense/kernel (5408,64),
  dense/bias (64), dense_1/kernel (64,10), dense_1/bias (10).
"""
import argparse
import math
import os
import struct
import sys

import numpy as np

MAX_VALUES = 20000
B = 8


def inputs():
    n, h, w = np.meshgrid(np.arange(B), np.arange(28), np.arange(28), indexing="ij")
    x = (((n * 131 + h * 29 + w * 7) % 256) / 255.0).astype(np.float64)
    x = x.reshape(B, 28, 28, 1).astype(np.float32)           # NHWC
    y = ((np.arange(B) * 3) % 10).astype(np.int64)
    return x, y


def params():
    i = np.arange(3 * 3 * 1 * 32, dtype=np.float64)
    conv_k = (0.2 * np.sin(0.37 * i + 0.1)).reshape(3, 3, 1, 32).astype(np.float32)  # HWIO
    conv_b = (0.01 * np.cos(np.arange(32, dtype=np.float64))).astype(np.float32)
    i = np.arange(5408 * 64, dtype=np.float64)
    d_k = (0.02 * np.sin(0.011 * i + 0.3)).reshape(5408, 64).astype(np.float32)      # (in,out)
    d_b = (0.01 * np.sin(np.arange(64, dtype=np.float64))).astype(np.float32)
    i = np.arange(64 * 10, dtype=np.float64)
    d1_k = (0.1 * np.cos(0.07 * i)).reshape(64, 10).astype(np.float32)
    d1_b = np.zeros(10, dtype=np.float32)
    return [("conv2d/kernel", conv_k), ("conv2d/bias", conv_b),
            ("dense/kernel", d_k), ("dense/bias", d_b),
            ("dense_1/kernel", d1_k), ("dense_1/bias", d1_b)]


def compute():
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    x_np, y_np = inputs()
    ps = params()
    # Leaf tensors in drun layouts; convert to torch layouts inside the graph so
    # .grad comes back in drun layouts directly.
    leaves = {name: torch.tensor(a, dtype=torch.float32, requires_grad=True) for name, a in ps}
    x = torch.from_numpy(x_np).permute(0, 3, 1, 2).contiguous()   # NCHW
    y = torch.from_numpy(y_np)

    w_conv = leaves["conv2d/kernel"].permute(3, 2, 0, 1)          # HWIO -> OIHW
    h = F.relu(F.conv2d(x, w_conv, leaves["conv2d/bias"]))        # (B,32,26,26)
    h = F.max_pool2d(h, 2)                                         # (B,32,13,13)
    h = h.permute(0, 2, 3, 1).reshape(B, -1)                       # NHWC flatten -> 5408
    h = F.relu(h @ leaves["dense/kernel"] + leaves["dense/bias"])
    logits = h @ leaves["dense_1/kernel"] + leaves["dense_1/bias"]
    loss = F.cross_entropy(logits, y)                              # mean over batch
    loss.backward()

    out = [("loss", loss.detach().numpy().astype(np.float32).reshape(())),
           ("logits", logits.detach().numpy().astype(np.float32))]
    for name, _ in ps:
        g = leaves[name].grad.numpy().astype(np.float32)
        assert g.shape == leaves[name].shape
        out.append((name, g))
    return out


def stride_for(n):
    return 1 if n <= MAX_VALUES else int(math.ceil(n / MAX_VALUES))


def write(path, records):
    with open(path, "wb") as f:
        for name, a in records:
            a = np.asarray(a, dtype=np.float32)  # keep rank 0 (ascontiguousarray makes it 1-d)
            nb = name.encode("ascii")
            f.write(struct.pack("<I", len(nb)))
            f.write(nb)
            f.write(struct.pack("<I", a.ndim))
            f.write(struct.pack("<%dq" % a.ndim, *a.shape))
            s = stride_for(a.size)
            f.write(struct.pack("<I", s))
            f.write(a.reshape(-1)[::s].astype("<f4").tobytes())


def read(path):
    recs = []
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        (ln,) = struct.unpack_from("<I", data, off); off += 4
        name = data[off:off + ln].decode("ascii"); off += ln
        (rank,) = struct.unpack_from("<I", data, off); off += 4
        dims = struct.unpack_from("<%dq" % rank, data, off); off += 8 * rank
        (s,) = struct.unpack_from("<I", data, off); off += 4
        n = int(np.prod(dims)) if rank else 1
        cnt = (n + s - 1) // s
        vals = np.frombuffer(data, dtype="<f4", count=cnt, offset=off); off += 4 * cnt
        recs.append((name, tuple(dims), s, vals))
    return recs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "tests", "golden", "seed_cnn.bin"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--check", action="store_true", help="read back the file and compare with a fresh computation")
    args = ap.parse_args()

    records = compute()
    if not args.check:
        write(args.out, records)
        print("wrote %s (%d bytes)" % (args.out, os.path.getsize(args.out)))
    # Verify: read back and compare with the in-memory values.
    got = read(args.out)
    ok = len(got) == len(records)
    for (name, dims, s, vals), (rname, a) in zip(got, records):
        exp = a.reshape(-1)[::s]
        same = name == rname and dims == a.shape and s == stride_for(a.size) and np.array_equal(vals, exp)
        ok = ok and same
        print("%-15s shape=%-12s stride=%-3d count=%-6d max|v|=%.6e max=% .6e min=% .6e %s" % (
            name, dims, s, vals.size, np.abs(vals).max(), vals.max(), vals.min(), "ok" if same else "MISMATCH"))
    print("check:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
