#!/usr/bin/env python3
"""Describes an HDF5 file as the JSON that tools/fuzz/h5_layout.hpp writes
back (groups, attributes with their string kind, datasets with type, shape,
layout and values): the seeds of fuzz_keras_layout and fuzz_checkpoint_layout
are made from the byte-level targets' seed files by it. Needs h5py
(build/venv, made by tools/bootstrap).

  build/venv/bin/python tools/fuzz/h5_to_layout.py FILE.h5 > SEED.json"""
import json
import sys

import h5py
import numpy as np

NUMBER_TYPES = {"float32": "f4", "float64": "f8", "float16": "f2", "int32": "i4",
                "int64": "i8", "uint8": "u1"}


def describe_attr(value, kind):
    # A string attribute keeps its kind: fixed-length (bytes) or variable-length (str).
    vlen = h5py.check_string_dtype(kind.dtype)
    if vlen is not None:
        key = "V" if vlen.length is None else "S"
        if kind.shape in ((), None):
            return {key: value.decode() if isinstance(value, bytes) else str(value)}
        return {key: [v.decode() if isinstance(v, bytes) else str(v) for v in np.ravel(value)]}
    array = np.ravel(np.asarray(value))
    name = NUMBER_TYPES.get(array.dtype.name)
    if name in (None, "f2"):
        raise SystemExit(f"h5_to_layout: attribute of type {array.dtype} has no description")
    return {name: array.tolist()}


def describe_dataset(d):
    name = NUMBER_TYPES.get(d.dtype.name)
    if name is None:
        raise SystemExit(f"h5_to_layout: dataset {d.name} of type {d.dtype} has no description")
    layout = d.id.get_create_plist().get_layout()
    out = {"type": name, "shape": list(d.shape), "values": np.ravel(d[()]).tolist()}
    if layout == h5py.h5d.COMPACT:
        out["layout"] = "compact"
    elif layout == h5py.h5d.CHUNKED:
        out["layout"], out["chunks"] = "chunked", list(d.chunks)
    return out


def describe(node):
    out = {}
    attrs = {k: describe_attr(node.attrs[k], node.attrs.get_id(k)) for k in node.attrs}
    groups = {k: describe(v) for k, v in node.items() if isinstance(v, h5py.Group)}
    sets = {k: describe_dataset(v) for k, v in node.items() if isinstance(v, h5py.Dataset)}
    for key, value in (("attrs", attrs), ("groups", groups), ("datasets", sets)):
        if value:
            out[key] = value
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    with h5py.File(sys.argv[1], "r") as f:
        json.dump(describe(f), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
