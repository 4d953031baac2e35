#!/usr/bin/python3
"""drun.data.hdf5 on files h5py writes: datasets of several types
and ranks, nested paths, sharding over 2 workers (disjoint, complete), read
whole and streamed, from one file and from a list of files (contiguous,
chunked, gzip), bad inputs refused with the file and dataset named, and the
seed CNN trained from an HDF5 copy of Fashion-MNIST exactly as from its idx
files.
Usage: hdf5_reader_test.py DRUN VENV_PYTHON SOURCE_ROOT"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402
from array_checks import six_examples  # noqa: E402

DRUN, PY, ROOT = sys.argv[1:4]
LUA = os.path.join(ROOT, "tests/lua")

MAKE = r"""
import gzip, h5py, numpy as np, sys
d = sys.argv[1]
x = np.arange(6 * 2 * 3, dtype=np.uint8).reshape(6, 2, 3)      # example sums 15, 51, 87, ...
with h5py.File(d + "/data.h5", "w") as f:
    f["x_u8"] = x
    f["x_f16"] = x.astype(np.float16)
    f.create_dataset("x_i16_chunked", data=x.astype(np.int16), chunks=(2, 2, 3), compression="gzip")
    f["deep/x_f64"] = x.astype(np.float64)
    f["y_i64"] = np.array([0, 1, 2, 1, 0, 2], dtype=np.int64)
    f["y_u8_col"] = np.array([[1], [0], [1], [0], [1], [0]], dtype=np.uint8)
    f["y_f32"] = np.ones((6, 2), dtype=np.float32)
    f["y_short"] = np.zeros(5, dtype=np.int32)
    f["y_neg"] = np.array([0, 1, -1, 0, 0, 0], dtype=np.int8)
    f["names"] = np.array([b"a", b"b", b"c", b"d", b"e", b"f"])
    f["scalar"] = np.float32(3)
    f.create_group("group")
    labels = np.array([2, 0, 1, 1, 0, 2], dtype=np.uint8)
    f["onehot"] = np.eye(3, dtype=np.float32)[labels] * 5
    f["onehot_labels"] = labels
with h5py.File(d + "/part1.h5", "w") as f:
    f.create_dataset("x", data=x[:4], chunks=(3, 2, 3), compression="gzip")
    f["y"] = np.array([0, 1, 2, 1], dtype=np.int64)
with h5py.File(d + "/part2.h5", "w") as f:
    f["x"] = x[4:]
    f["y"] = np.array([0, 2], dtype=np.int64)
with h5py.File(d + "/other_shape.h5", "w") as f:
    f["x"] = np.zeros((2, 3, 2), dtype=np.uint8)
    f["y"] = np.zeros(2, dtype=np.int64)
fm = "/usr/share/datasets/fashion-mnist/"
with gzip.open(fm + "train-images-idx3-ubyte.gz") as g:
    images = np.frombuffer(g.read(), dtype=np.uint8, offset=16).reshape(-1, 28, 28, 1)
with gzip.open(fm + "train-labels-idx1-ubyte.gz") as g:
    labels = np.frombuffer(g.read(), dtype=np.uint8, offset=8)
with h5py.File(d + "/fashion.h5", "w") as f:
    f["x_train"] = images[:2000]
    f["y_train"] = labels[:2000]
with open(d + "/not.h5", "wb") as f:
    f.write(b"not an hdf5 file")
"""


def main():
    if not need_venv(PY):
        return summary()

    def drun(script, *args):
        r = run([DRUN, "-q", os.path.join(LUA, script), *args], timeout=300)
        return r.returncode, r.stdout, r.stderr

    with temp_dir("hdf5") as d:
        made = run([PY, "-c", MAKE, d], timeout=300)
        check(made.returncode == 0, f"h5py writes the files ({made.stderr[-300:]})")
        h5 = os.path.join(d, "data.h5")
        arrays = lambda x, y, *more: drun("array_reader.lua", "--reader", "hdf5", "--path", h5,
                                          "--x", x, "--y", y, *more)
        for x in ("x_u8", "x_f16", "x_i16_chunked", "deep/x_f64"):
            six_examples(x, *arrays(x, "y_i64"))
            six_examples(x + " streamed", *arrays(x, "y_i64", "--stream", "true"))
        parts = ",".join(os.path.join(d, p) for p in ("part1.h5", "part2.h5"))
        for stream in ("true", "false"):
            six_examples(f"two files, stream {stream}",
                                *drun("array_reader.lua", "--reader", "hdf5", "--path", parts,
                                      "--x", "x", "--y", "y", "--stream", stream))
        other = os.path.join(d, "other_shape.h5")
        rc, out, err = drun("array_reader.lua", "--reader", "hdf5", "--path",
                            parts + "," + other, "--x", "x", "--y", "y")
        check(rc != 0 and other + " dataset 'x' holds examples of shape (3, 2) but" in err
              and "part1.h5 holds (2, 3)" in err, f"files of other shapes refused ({err[-300:]})")
        rc, out, err = arrays("x_u8", "y_u8_col")
        check(rc == 0 and "examples 6" in out, f"labels of shape (N, 1) ({err[-300:]})")
        rc, out, err = arrays("x_u8", "y_f32")
        check(rc == 0 and "examples 6" in out, f"float targets of 2 columns ({err[-300:]})")
        rc, out, err = arrays("onehot", "onehot_labels", "--onehot")
        check(rc == 0 and "accuracy 1.0000" in out, f"labels in step with x ({out}{err[-300:]})")

        bad = [
            (("x_u8", "y_short"), [h5 + ": dataset 'x_u8' holds 6 examples but 'y_short' holds 5"]),
            (("x_u8", "y_neg"), [h5 + " dataset 'y_neg'", "label -1 of example 2"]),
            (("missing", "y_i64"), [h5 + " has no dataset 'missing'", "x_u8", "y_i64"]),
            (("group", "y_i64"), [h5 + " dataset 'group' is a group"]),
            (("names", "y_i64"), [h5 + " dataset 'names' does not hold numbers"]),
            (("scalar", "y_i64"), [h5 + " dataset 'scalar' is a single number"]),
        ]
        bad += [((x, y, "--stream", "true"), words) for (x, y), words in bad[:3]]
        for args, words in bad:
            rc, out, err = arrays(*args)
            first = err.strip().splitlines()[0] if err.strip() else ""
            check(rc != 0 and all(w in err for w in words) and "array_reader.lua:20:" in first,
                  f"refused with {words} at the script's line ({first})")
        for path in (os.path.join(d, "not.h5"), os.path.join(d, "none.h5")):
            rc, out, err = drun("array_reader.lua", "--reader", "hdf5", "--path", path, "--x", "a",
                                "--y", "b")
            check(rc != 0 and path + " is missing or not an HDF5 file" in err, f"{path} refused ({err[-200:]})")

        rc, out, err = drun("hdf5_vs_idx.lua", "--h5", os.path.join(d, "fashion.h5"), "--dir",
                            os.path.join(d, "runs"))
        m = re.search(r"^idx (\S+) hdf5 (\S+)$", out, re.M)
        check(rc == 0 and m is not None and m.group(1) == m.group(2),
              f"the seed CNN learns the same from HDF5 as from idx ({out.strip()}{err[-300:]})")

    return summary()


if __name__ == "__main__":
    sys.exit(main())
