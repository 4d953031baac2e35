#!/usr/bin/python3
"""Keras files drun must refuse, made by Keras 3 itself: a model
with a Lambda layer (its config carries Python bytecode: refused by name,
never interpreted), one with a layer class drun lacks, and one whose weights
contradict its model_config (h5py edits a Dense layer's units), one whose
int32 input (token ids) feeds a Dense, an Embedding with mask_zero and a
dilated Conv2DTranspose. Each gives
`drun inspect` and drun.load_model one error line naming the file and the
layer, and a non-zero exit.
Usage: keras_refusals_test.py DRUN VENV_PYTHON"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402

DRUN, PY = sys.argv[1:3]
ENV = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")

# The lambda would write a file if anything ever ran it.
MAKE = """
import os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import h5py, json, keras
out = sys.argv[1]
marker = os.path.join(out, "lambda_ran")
def model(middle):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="dense"), middle,
                             keras.layers.Dense(2, name="dense_out")])
model(keras.layers.Lambda(lambda x: (open(marker, "w"), x * 2)[1], name="double_it")).save(
    os.path.join(out, "lambda.h5"))
if os.path.exists(marker):  # Keras itself ran it while building the model
    os.remove(marker)
model(keras.layers.GaussianNoise(0.1, name="noisy")).save(os.path.join(out, "unknown.h5"))
m = model(keras.layers.Activation("relu", name="act"))
m.save(os.path.join(out, "contradicts.h5"))
with h5py.File(os.path.join(out, "contradicts.h5"), "r+") as f:
    config = json.loads(f.attrs["model_config"])
    for layer in config["config"]["layers"]:
        if layer["config"].get("name") == "dense_out":
            layer["config"]["units"] = 5  # the file's kernel is (3, 2)
    f.attrs["model_config"] = json.dumps(config)
# Token ids (an int32 input) into a Dense; an Embedding with masks.
keras.Sequential([keras.Input((4,), dtype="int32"), keras.layers.Dense(3, name="dense")]).save(
    os.path.join(out, "int_dense.h5"))
keras.Sequential([keras.Input((5,), dtype="int32"),
                  keras.layers.Embedding(10, 4, mask_zero=True, name="emb"),
                  keras.layers.Flatten(), keras.layers.Dense(2)]).save(os.path.join(out, "mask_zero.h5"))
# A dilated transposed convolution.
keras.Sequential([keras.Input((6, 6, 2)),
                  keras.layers.Conv2DTranspose(2, 3, dilation_rate=2, name="up")]).save(
    os.path.join(out, "dilated.h5"))
"""

LOAD = "local drun = require 'drun'\ndrun.load_model(arg[1])\n"


def main():
    with temp_dir("keras_refusals") as out:
        p = run([PY, "-c", MAKE, out], timeout=300, env=ENV)
        if not check(p.returncode == 0, "Keras makes the files", p.stderr[-1500:]):
            return summary()
        script = os.path.join(out, "load.lua")
        with open(script, "w") as f:
            f.write(LOAD)
        cases = [("lambda.h5", ["'double_it'", "Lambda", "never runs code"]),
                 ("unknown.h5", ["'noisy'", "GaussianNoise", "does not support"]),
                 ("contradicts.h5", ["'dense_out'", "(3, 2)", "(3, 5)"]),
                 ("int_dense.h5", ["'dense'", "int32", "Embedding"]),
                 ("mask_zero.h5", ["'emb'", "mask_zero"]),
                 ("dilated.h5", ["'up'", "Conv2DTranspose", "dilation_rate", "[2,2]"])]
        for name, parts in cases:
            path = os.path.join(out, name)
            for how, args in [("drun inspect", [DRUN, "inspect", path]),
                              ("drun.load_model", [DRUN, "-q", script, path])]:
                p = run(args, timeout=120, env=ENV)
                lines = [l for l in p.stderr.splitlines() if l.strip()]
                error = "\n".join(lines)
                # load_model's Lua error line may be followed by the script's traceback.
                first = lines[0] if lines else ""
                one_line = len(lines) == 1 if how == "drun inspect" else bool(first)
                check(p.returncode != 0 and one_line and path in first and
                      all(s in first for s in parts),
                      f"{how} {name}: exit {p.returncode}, one line naming the file and {parts}",
                      error[-1500:])
        check(not os.path.exists(os.path.join(out, "lambda_ran")),
              "the Lambda's Python function never ran")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
