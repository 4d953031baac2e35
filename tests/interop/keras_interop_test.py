#!/usr/bin/python3
"""drun's Keras HDF5 model files against Keras 3 itself, from the
venv that tools/python_env makes (keras with the JAX CPU backend, h5py):
 (a) drun trains the seed CNN for an epoch and saves it (fashion_mnist.lua
     --save); drun (drun.load_model) and Keras (keras.models.load_model)
     predict the same 100 Fashion-MNIST test images: the logits agree;
 (b) models built and saved by Keras (keras_models.py: Sequential with batch
     norm and dropout, a functional residual block, an MLP of every
     activation and LeakyReLU, the shape and 1-D layers, int32 token ids
     through Embedding and LayerNormalization, causal self-attention, SimpleRNN,
     LSTM and GRU, Bidirectional LSTM and GRU, a U-Net-like decoder of Conv2DTranspose, a MobileNet-like
     block of depthwise and separable convolutions) load
     into drun and predict what Keras predicted; drun's re-save of them loads into Keras;
 (c) h5py sees in drun's file what Keras' loader reads: root attributes,
     model_config, model_weights with fixed-length layer_names and
     weight_names, datasets in Keras' shapes;
 (d) `drun inspect` prints the layers, the parameter count and the Keras
     version of drun's file and of Keras' own.
Usage: keras_interop_test.py DRUN VENV_PYTHON SOURCE_ROOT"""
import gzip
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, summary, temp_dir  # noqa: E402
from testlib import run as run_command  # noqa: E402

DRUN, PY, ROOT = sys.argv[1:4]
HERE = os.path.join(ROOT, "tests/interop")
PREDICT = os.path.join(HERE, "predict_h5.lua")
TOLERANCE = 1e-5
SEED_CNN = [("conv2d", "Conv2D", [(3, 3, 1, 32), (32,)]),
            ("max_pooling2d", "MaxPooling2D", []),
            ("flatten", "Flatten", []),
            ("dense", "Dense", [(5408, 64), (64,)]),
            ("dense_1", "Dense", [(64, 10), (10,)])]
SEED_CNN_PARAMS = 347146
ENV = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")

# Keras' predictions: load_model(MODEL, compile=False), the inputs from a JSON
# file (a list, or an object's "inputs"), the outputs as JSON on stdout; then
# whether the model also loads with its training configuration (compile=True).
KERAS_PREDICT = """
import os, sys, json
os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np, keras
model_path, inputs_path = sys.argv[1:3]
x = json.load(open(inputs_path))
x = x["inputs"] if isinstance(x, dict) else x
# Integers in the JSON are token ids, for an int32 Input (Embedding).
flat = x
while isinstance(flat, list) and flat:
    flat = flat[0]
x = np.asarray(x, dtype="int32" if isinstance(flat, int) else "float32")
model = keras.models.load_model(model_path, compile=False)
y = model.predict(x, batch_size=50, verbose=0).astype("float32")
try:
    compiled = keras.models.load_model(model_path)
    optimizer = type(compiled.optimizer).__name__ if compiled.optimizer is not None else None
    compile_error = None
except Exception as e:
    optimizer, compile_error = None, f"{type(e).__name__}: {e}"
print(json.dumps({"outputs": y.tolist(), "layers": [l.name for l in model.layers],
                  "params": int(model.count_params()), "optimizer": optimizer,
                  "compile_error": compile_error}))
"""

# What Keras' legacy HDF5 loader reads, as h5py sees it.
H5_FACTS = """
import h5py, json, sys
import numpy as np
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
def strings(a):
    a = np.asarray(a)
    return {"kind": a.dtype.kind, "values": [text(v) for v in a.reshape(-1)]}
with h5py.File(sys.argv[1], "r") as f:
    out = {"root_attrs": sorted(f.attrs.keys()),
           "keras_version": text(f.attrs.get("keras_version", "")),
           "backend": text(f.attrs.get("backend", "")),
           "model_config": text(f.attrs.get("model_config", "")),
           "training_config": text(f.attrs["training_config"]) if "training_config" in f.attrs else None}
    g = f.get("model_weights")
    if g is not None:
        out["model_weights_attrs"] = sorted(g.attrs.keys())
        out["layer_names"] = strings(g.attrs["layer_names"]) if "layer_names" in g.attrs else None
        layers = {}
        for name in (out["layer_names"] or {"values": []})["values"]:
            lg = g.get(name)
            if lg is None or "weight_names" not in lg.attrs:
                layers[name] = None
                continue
            wn = np.asarray(lg.attrs["weight_names"])
            names = [text(v) for v in wn.reshape(-1)]
            layers[name] = {"kind": wn.dtype.kind if wn.size else "empty", "weights": [
                [n, list(lg[n].shape) if n in lg else None, str(lg[n].dtype) if n in lg else None,
                 bool(np.isfinite(lg[n][()]).all()) if n in lg else None] for n in names]}
        out["layers"] = layers
    print(json.dumps(out))
"""


def fashion_mnist_test_images(count):
    """The first `count` test images, scaled to [0, 1] as drun's reader does
    (float32(pixel) * float32(1/255), in float32), and their labels."""
    folder = os.environ.get("DRUN_DATA_DIR") or "/usr/share/datasets/fashion-mnist"

    def read(name):
        path = os.path.join(folder, name)
        if os.path.exists(path + ".gz"):
            with gzip.open(path + ".gz", "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()

    images, labels = read("t10k-images-idx3-ubyte"), read("t10k-labels-idx1-ubyte")
    magic, n, rows, cols = struct.unpack(">IIII", images[:16])
    assert magic == 2051 and rows == 28 and cols == 28, "not an idx3 image file"
    f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
    scale = f32(1 / 255)
    table = [f32(p * scale) for p in range(256)]  # p * scale is exact in a double
    x = []
    for i in range(count):
        px = images[16 + i * 784: 16 + (i + 1) * 784]
        x.append([[[table[px[r * 28 + c]]] for c in range(28)] for r in range(28)])
    return x, list(labels[8: 8 + count])


def max_abs_diff(a, b):
    if len(a) != len(b) or any(len(r) != len(s) for r, s in zip(a, b)):
        return float("inf")
    d = [abs(u - v) for r, s in zip(a, b) for u, v in zip(r, s)]
    return float("inf") if any(e != e for e in d) else max(d, default=0.0)  # NaN: never agrees


def shape_of(rows):
    return [len(rows), len(rows[0]) if rows else 0]


def main():
    if not need_venv(PY):
        return summary()

    def run(args, timeout=300):
        return run_command(args, timeout, env=ENV)

    def why(p):  # a failed command's last words
        if p.returncode == 0:
            return ""
        return f" (exit {p.returncode}: {(p.stderr or p.stdout or '')[-600:].strip()})"

    def drun_predict(model, inputs, out, save=None):
        args = [DRUN, "-q", PREDICT, "--model", model, "--inputs", inputs, "--output", out]
        p = run(args + (["--save", save] if save else []), timeout=120)
        rows = None
        if p.returncode == 0 and os.path.exists(out):
            with open(out) as f:
                rows = json.load(f)
        return p, rows

    def keras_predict(model, inputs):
        p = run([PY, "-c", KERAS_PREDICT, model, inputs], timeout=300)
        got = None
        if p.returncode == 0:
            try:
                got = json.loads(p.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                pass
        return p, got

    p = run([PY, "-c", "import keras, h5py; print(keras.__version__, keras.backend.backend())"], 120)
    if not check(p.returncode == 0, f"the venv has keras and h5py ({p.stdout.strip()}){why(p)}"):
        print("      run tools/python_env to install them")
        return summary()

    with temp_dir("keras") as d:
        m_h5 = os.path.join(d, "m.h5")
        # (a) drun trains and saves; drun and Keras predict the same images.
        train = run([DRUN, "-q", os.path.join(ROOT, "scripts/fashion_mnist.lua"), "--epochs", "1",
                     "--train-limit", "6000", "--save", m_h5, "--model-dir", os.path.join(d, "run")],
                    timeout=300)
        check(train.returncode == 0 and os.path.exists(m_h5),
              f"(a) fashion_mnist.lua --epochs 1 --train-limit 6000 --save m.h5 writes m.h5{why(train)}")

        x, labels = fashion_mnist_test_images(100)
        images = os.path.join(d, "fashion100.json")
        with open(images, "w") as f:
            json.dump({"inputs": x, "labels": labels}, f)

        if os.path.exists(m_h5):
            p, ours = drun_predict(m_h5, images, os.path.join(d, "drun_m.json"))
            check(ours is not None and shape_of(ours) == [100, 10],
                  f"(a) drun.load_model(m.h5):predict gives 100 rows of 10 logits{why(p)}")
            k, theirs = keras_predict(m_h5, images)
            check(theirs is not None and shape_of(theirs["outputs"]) == [100, 10],
                  f"(a) keras.models.load_model(m.h5, compile=False) predicts 100 rows of 10{why(k)}")
            if ours is not None and theirs is not None:
                diff = max_abs_diff(ours, theirs["outputs"])
                big = max(abs(v) for r in theirs["outputs"] for v in r)
                check(diff <= TOLERANCE, f"(a) drun and Keras logits on 100 test images agree: "
                      f"max |diff| {diff:.3g} <= {TOLERANCE} (largest |logit| {big:.3g})")
                right = sum(max(range(10), key=r.__getitem__) == y for r, y in zip(theirs["outputs"], labels))
                check(right >= 50, f"(a) the saved model is the trained one: Keras classifies {right}/100 "
                      "test images right (>= 50; an untrained one gets about 10)")
                check(theirs["params"] == SEED_CNN_PARAMS,
                      f"(a) Keras counts {theirs['params']} parameters ({SEED_CNN_PARAMS})")
                check(theirs["compile_error"] is None,
                      f"(a) Keras also loads m.h5 with its training_config (compile=True; optimizer "
                      f"{theirs['optimizer']}, {theirs['compile_error']})")

        # (b) Keras' own files into drun, and drun's re-save of them back into Keras.
        kdir = os.path.join(d, "keras")
        p = run([PY, os.path.join(HERE, "keras_models.py"), kdir], timeout=300)
        check(p.returncode == 0, "(b) keras_models.py builds and saves the Keras models "
              f"{p.stdout.split()}{why(p)}")
        # keras_models.py prints "NAME PARAMS" for each model it wrote.
        names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
        for name in names:
            src, ref = os.path.join(kdir, name + ".h5"), os.path.join(kdir, name + ".json")
            if not os.path.exists(src):
                continue
            with open(ref) as f:
                want = json.load(f)["outputs"]
            resave = os.path.join(d, name + "_drun.h5")
            p, ours = drun_predict(src, ref, os.path.join(d, name + "_drun.json"), save=resave)
            if not check(ours is not None, f"(b) drun loads Keras' {name}.h5 and predicts{why(p)}"):
                continue
            diff = max_abs_diff(ours, want)
            check(diff <= TOLERANCE, f"(b) drun's predictions from Keras' {name}.h5 {shape_of(ours)} "
                  f"equal Keras' {shape_of(want)}: max |diff| {diff:.3g} <= {TOLERANCE}")
            if os.path.exists(resave):
                k, theirs = keras_predict(resave, ref)
                if check(theirs is not None, f"(b) Keras loads drun's re-save of {name}.h5{why(k)}"):
                    diff = max_abs_diff(theirs["outputs"], want)
                    check(diff <= TOLERANCE, f"(b) Keras predicts from drun's re-save of {name}.h5 what it "
                          f"predicted from its own: max |diff| {diff:.3g} <= {TOLERANCE}")
            else:
                check(False, f"(b) drun re-saves {name}.h5 with model:save{why(p)}")

        # (c) The structure Keras' loader reads, as h5py sees it.
        if os.path.exists(m_h5):
            p = run([PY, "-c", H5_FACTS, m_h5], timeout=120)
            facts = json.loads(p.stdout) if p.returncode == 0 else None
            check(facts is not None, f"(c) h5py opens drun's m.h5{why(p)}")
            if facts:
                check({"keras_version", "backend", "model_config"} <= set(facts["root_attrs"]) and
                      facts["keras_version"] != "" and facts["backend"] != "",
                      f"(c) root attributes keras_version, backend, model_config ({facts['root_attrs']}, "
                      f"keras_version {facts['keras_version']!r}, backend {facts['backend']!r})")
                try:
                    config = json.loads(facts["model_config"])
                except ValueError:
                    config = {}
                layers = [l for l in config.get("config", {}).get("layers", [])]
                got = [(l.get("class_name"), l.get("config", {}).get("name")) for l in layers
                       if l.get("class_name") != "InputLayer"]
                check(config.get("class_name") == "Sequential" and
                      got == [(cls, name) for name, cls, _ in SEED_CNN],
                      f"(c) model_config: a Sequential of {got}")
                first = layers[0].get("config", {}) if layers else {}
                shape = first.get("batch_input_shape") or first.get("batch_shape")
                check(shape == [None, 28, 28, 1],
                      f"(c) model_config's first layer ({layers[0].get('class_name') if layers else None}) "
                      f"has the input shape [null, 28, 28, 1] ({shape})")
                if facts["training_config"] is not None:
                    try:
                        tc = json.loads(facts["training_config"])
                    except ValueError:
                        tc = {}
                    oc = tc.get("optimizer_config", {})
                    check("loss" in tc and "loss_weights" in tc and "class_name" in oc and "config" in oc,
                          f"(c) training_config has loss, loss_weights and optimizer_config "
                          f"{{class_name, config}} ({sorted(tc)})")
                check({"layer_names", "backend", "keras_version"} <= set(facts.get("model_weights_attrs", [])),
                      f"(c) model_weights has attributes layer_names, backend, keras_version "
                      f"({facts.get('model_weights_attrs')})")
                ln = facts.get("layer_names") or {"kind": None, "values": []}
                check(ln["values"] == [name for name, _, _ in SEED_CNN] and ln["kind"] == "S",
                      f"(c) layer_names are fixed-length byte strings naming every layer "
                      f"(dtype kind {ln['kind']!r}, {ln['values']})")
                for name, _, shapes in SEED_CNN:
                    info = facts.get("layers", {}).get(name)
                    if info is None:
                        check(False, f"(c) model_weights/{name} is a group with weight_names")
                        continue
                    weights = info["weights"]
                    suffixes = [re.sub(r"(:\d+)$", "", w[0]).rsplit("/", 1)[-1] for w in weights]
                    ok = (len(weights) == len(shapes) and
                          all(w[1] == list(s) and w[2] == "float32" and w[3] for w, s in zip(weights, shapes)) and
                          suffixes == ["kernel", "bias"][:len(shapes)] and
                          (info["kind"] == "S" or not shapes))
                    check(ok, f"(c) model_weights/{name}: weight_names (kind {info['kind']!r}) name float32 "
                          f"datasets of shapes {[list(s) for s in shapes]}: {weights}")

        # (d) drun inspect, of drun's file and of Keras' own.
        if os.path.exists(m_h5):
            p = run([DRUN, "inspect", m_h5], timeout=60)
            missing = [name for name, _, _ in SEED_CNN if name not in p.stdout]
            check(p.returncode == 0 and not missing and re.search(r"347,?146", p.stdout) is not None,
                  f"(d) drun inspect m.h5 prints every layer and 347,146 parameters{why(p)}",
                  f"missing {missing} in: {p.stdout[-1500:]}")
        seq = os.path.join(kdir, "sequential.h5")
        if os.path.exists(seq):
            k = run([PY, "-c", "import h5py, sys; v = h5py.File(sys.argv[1])['/'].attrs['keras_version'];"
                     "print(v.decode() if isinstance(v, bytes) else v)", seq], timeout=60)
            version = k.stdout.strip()
            p = run([DRUN, "inspect", seq], timeout=60)
            names = ["conv2d", "batch_normalization", "max_pooling2d", "dropout", "flatten", "dense", "dense_1"]
            missing = [n for n in names if n not in p.stdout]
            check(p.returncode == 0 and not missing and version and version in p.stdout and
                  re.search(r"21,?930", p.stdout) is not None,
                  f"(d) drun inspect of Keras' sequential.h5 prints its layers, 21,930 parameters and "
                  f"Keras {version}{why(p)}", f"missing {missing} in: {p.stdout[-1500:]}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
