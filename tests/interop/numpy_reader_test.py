#!/usr/bin/python3
"""drun.data.numpy on files NumPy itself writes: .npy of several
element types and byte orders (read memory-mapped), .npz members (stored and
compressed), sharding over 2 workers (disjoint, complete), and bad inputs
refused with the file named.
Usage: numpy_reader_test.py DRUN VENV_PYTHON SOURCE_ROOT"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402
from array_checks import six_examples  # noqa: E402

DRUN, PY, ROOT = sys.argv[1:4]
SCRIPT = os.path.join(ROOT, "tests/lua/array_reader.lua")

# Written by NumPy: x of example i sums to a distinct value, y are labels.
MAKE = r"""
import numpy as np, sys
d = sys.argv[1]
x = np.arange(6 * 2 * 3, dtype=np.uint8).reshape(6, 2, 3)          # sums 15, 51, 87, ...
np.save(d + "/x_u8.npy", x)
np.save(d + "/x_f16.npy", x.astype(np.float16))
np.save(d + "/x_be_i32.npy", x.astype(">i4"))
np.save(d + "/x_f32.npy", x.astype(np.float32))
np.save(d + "/x_f64_flat.npy", np.arange(6, dtype=np.float64))      # rank 1: (6, 1)
np.save(d + "/y_i64.npy", np.array([0, 1, 2, 1, 0, 2], dtype=np.int64))
np.save(d + "/y_bool.npy", np.array([1, 0, 1, 0, 1, 0], dtype=bool))
np.save(d + "/y_f32_2col.npy", np.ones((6, 2), dtype=np.float32))
np.save(d + "/y_short.npy", np.zeros(5, dtype=np.int32))
np.save(d + "/y_neg.npy", np.array([0, 1, -1, 0, 0, 0], dtype=np.int8))
np.save(d + "/x_fortran.npy", np.asfortranarray(np.ones((6, 3), dtype=np.float32)))
np.save(d + "/x_complex.npy", np.ones((6, 2), dtype=np.complex64))
labels = np.array([2, 0, 1, 1, 0, 2], dtype=np.uint8)
onehot = np.eye(3, dtype=np.float32)[labels] * 5
np.savez(d + "/stored.npz", x_train=onehot, y_train=labels)
np.savez_compressed(d + "/packed.npz", x_train=onehot.astype(np.float16), y_train=labels)
with open(d + "/x_f32.npy", "rb") as f:
    whole = f.read()
with open(d + "/x_cut.npy", "wb") as f:
    f.write(whole[:len(whole) - 7])
with open(d + "/not.npy", "wb") as f:
    f.write(b"just text, no array\n")
"""


def main():
    if not need_venv(PY):
        return summary()

    def drun(*args):
        r = run([DRUN, "-q", SCRIPT, *args], timeout=120)
        return r.returncode, r.stdout, r.stderr

    with temp_dir("numpy") as d:
        made = run([PY, "-c", MAKE, d], timeout=120)
        check(made.returncode == 0, f"NumPy writes the files ({made.stderr[-300:]})")
        f = lambda name: os.path.join(d, name)
        for x in ("x_u8.npy", "x_f16.npy", "x_be_i32.npy", "x_f32.npy"):
            six_examples(x, *drun("--x", f(x), "--y", f("y_i64.npy")))
        rc, out, err = drun("--x", f("x_f64_flat.npy"), "--y", f("y_bool.npy"))
        check(rc == 0 and "examples 6 shape 1\n" in out and "sums 0 1 2 3 4 5\n" in out,
              f"rank-1 float64 x with boolean labels ({out}{err[-300:]})")
        rc, out, err = drun("--x", f("x_u8.npy"), "--y", f("y_f32_2col.npy"))
        check(rc == 0 and "examples 6" in out, f"float targets of 2 columns ({err[-300:]})")
        for npz in ("stored.npz", "packed.npz"):
            rc, out, err = drun("--path", f(npz), "--x", "x_train", "--y", "y_train", "--onehot")
            check(rc == 0 and "examples 6 shape 3\n" in out and "accuracy 1.0000" in out,
                  f"{npz}: members x_train, y_train, labels in step with x ({out}{err[-300:]})")

        bad = [
            (["--x", f("x_u8.npy"), "--y", f("y_short.npy")],
             [f("x_u8.npy") + " holds 6 examples but " + f("y_short.npy") + " holds 5"]),
            (["--x", f("x_u8.npy"), "--y", f("y_neg.npy")], [f("y_neg.npy"), "label -1 of example 2"]),
            (["--x", f("x_fortran.npy"), "--y", f("y_i64.npy")], [f("x_fortran.npy"), "Fortran order"]),
            (["--x", f("x_complex.npy"), "--y", f("y_i64.npy")], [f("x_complex.npy"), "not supported"]),
            (["--x", f("x_cut.npy"), "--y", f("y_i64.npy")], [f("x_cut.npy"), "truncated"]),
            (["--x", f("not.npy"), "--y", f("y_i64.npy")], [f("not.npy"), "not a NumPy .npy array"]),
            (["--x", f("missing.npy"), "--y", f("y_i64.npy")], [f("missing.npy"), "cannot open"]),
            (["--path", f("stored.npz"), "--x", "images", "--y", "y_train"],
             [f("stored.npz") + " has no member 'images'", "x_train", "y_train"]),
            (["--path", f("x_u8.npy"), "--x", "x", "--y", "y"], [f("x_u8.npy"), ".npz (zip)"]),
        ]
        for args, words in bad:
            rc, out, err = drun(*args)
            first = err.strip().splitlines()[0] if err.strip() else ""
            check(rc != 0 and all(w in err for w in words) and "array_reader.lua:20:" in first,
                  f"refused with {words} at the script's line ({first})")

    return summary()


if __name__ == "__main__":
    sys.exit(main())
