#!/usr/bin/python3
"""drun's float16 and bfloat16 conversions (the cast op on the CPU,
kernels/half.hpp) against numpy's float16 and ml_dtypes' bfloat16 (Keras'
and JAX's), bit for bit: every 16-bit pattern widened to float32, and
float32 values narrowed: a stride through all 2^32 patterns, every exact
midpoint between neighbouring float16 and bfloat16 values (the ties) and the
floats next to them. NaNs need only stay NaNs.
Usage: half_reference_test.py HALF_CONVERT VENV_PYTHON"""
import subprocess
import sys
import tempfile

CONVERT, PY = sys.argv[1:3]

CHECK = r"""
import sys, subprocess
import numpy as np, ml_dtypes
convert, d = sys.argv[1:3]
bf16 = ml_dtypes.bfloat16
failures = []

def compare(what, got, want):
    got_nan, want_nan = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    bad = (got_nan != want_nan) | (~want_nan & (got.view(np.uint16 if got.itemsize == 2 else np.uint32)
                                               != want.view(np.uint16 if want.itemsize == 2 else np.uint32)))
    n = int(bad.sum())
    print(f"{what}: {len(got)} values, {n} differ")
    if n:
        i = int(np.flatnonzero(bad)[0])
        failures.append(f"{what}: first difference at {i}: drun {got[i]!r} vs {want[i]!r}")

# Widening: every pattern.
patterns = np.arange(65536, dtype=np.uint32).astype(np.uint16)
patterns.tofile(d + "/u16")
subprocess.run([convert, "widen", d + "/u16", d + "/from_f16", d + "/from_bf16"], check=True)
compare("float16 -> float32", np.fromfile(d + "/from_f16", np.float32), patterns.view(np.float16).astype(np.float32))
compare("bfloat16 -> float32", np.fromfile(d + "/from_bf16", np.float32), patterns.view(bf16).astype(np.float32))

# Narrowing: a stride through every float32 pattern, then the ties of each type and their neighbours.
stride = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
finite16 = patterns.view(np.float16).astype(np.float64)
finite16 = np.unique(finite16[np.isfinite(finite16)])
ties16 = ((finite16[:-1] + finite16[1:]) / 2).astype(np.float32)  # exact in float32
finite_b = patterns.view(bf16).astype(np.float64)
finite_b = np.unique(finite_b[np.isfinite(finite_b)])
ties_b = ((finite_b[:-1] + finite_b[1:]) / 2).astype(np.float32)
edges = np.array([65504, 65519.996, 65520, 65536, 3.0e38, np.inf, -np.inf, np.nan], np.float32)
ties = np.concatenate([ties16, ties_b, edges])
x = np.concatenate([stride, ties, np.nextafter(ties, np.float32(np.inf)), np.nextafter(ties, np.float32(-np.inf))])
x.tofile(d + "/f32")
subprocess.run([convert, "narrow", d + "/f32", d + "/f16", d + "/bf16"], check=True)
with np.errstate(over="ignore", invalid="ignore"):
    compare("float32 -> float16", np.fromfile(d + "/f16", np.float16), x.astype(np.float16))
    compare("float32 -> bfloat16", np.fromfile(d + "/bf16", bf16), x.astype(bf16))
if failures:
    sys.exit("\n".join(failures))
"""

with tempfile.TemporaryDirectory() as d:
    sys.exit(subprocess.run([PY, "-c", CHECK, CONVERT, d]).returncode)
