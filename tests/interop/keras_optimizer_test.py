#!/usr/bin/python3
"""drun's optimizers and losses against Keras 3 computing the reference, from
the venv that tools/python_env makes (keras with the JAX CPU backend):
 (a) the same model (Keras' initial weights, saved as .h5), the same 20
     batches in the same order: after 20 steps of AdamW, SGD with clipnorm,
     Adam with global_clipnorm, SGD with momentum and clipvalue, SGD with
     weight_decay, and SGD on label-smoothed losses, drun's weights equal
     Keras' to 1e-6; also AdamW with global_clipnorm on a smoothed loss, and
     AdamW with gradient_accumulation_steps = 4, each stopped after 9 steps
     and resumed from its checkpoint;
 (b) label smoothing: the loss of the initial model on those examples equals
     Keras' CategoricalCrossentropy(label_smoothing=...) to 1e-6, for one-hot
     targets and for integer labels (SparseCategoricalCrossentropy, whose
     Keras class has no label_smoothing: Keras' categorical loss on the
     labels' one-hot rows is the reference);
 (c) drun's saved training_config loads in Keras (compile=True) with the same
     optimizer class, weight_decay, clip and gradient_accumulation_steps.
Usage: keras_optimizer_test.py DRUN VENV_PYTHON"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

DRUN, PY = sys.argv[1:3]
ENV = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")
TOLERANCE = 1e-6
STEPS, BATCH, CLASSES = 20, 8, 4

# name: (optimizer class, its config, the loss's label_smoothing, sparse labels).
# The limits clip some gradients and leave others: at the first step the
# variables' gradient norms are 1.27, 0.30, 0.88 and 0.27 (1.60 together),
# their largest values 0.56, 0.17, 0.26 and 0.22.
CASES = {
    "adamw": ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1}, 0.0, False),
    "adamw_default_decay": ("AdamW", {"learning_rate": 0.01}, 0.0, False),
    "sgd_clipnorm": ("SGD", {"learning_rate": 0.1, "clipnorm": 0.5}, 0.0, False),
    "adam_global_clipnorm": ("Adam", {"learning_rate": 0.01, "global_clipnorm": 1.0}, 0.0, False),
    "sgd_momentum_clipvalue": ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "clipvalue": 0.1},
                               0.0, False),
    "sgd_weight_decay": ("SGD", {"learning_rate": 0.1, "weight_decay": 0.05}, 0.0, False),
    "sgd_label_smoothing": ("SGD", {"learning_rate": 0.1}, 0.2, False),
    "sgd_sparse_label_smoothing": ("SGD", {"learning_rate": 0.1}, 0.2, True),
    "adamw_global_clipnorm": ("AdamW", {"learning_rate": 0.01, "global_clipnorm": 1.0}, 0.1,
                              False),
    "adamw_accumulation": ("AdamW", {"learning_rate": 0.01, "global_clipnorm": 1.0,
                                     "gradient_accumulation_steps": 4}, 0.0, False),
}
# Trained in two runs: stopped after 9 steps (a checkpoint), then resumed to
# the end; adamw_accumulation's 9th batch is the first of a cycle of 4.
RESUMED = {"adamw_global_clipnorm", "adamw_accumulation"}
SMOOTHING = [0.0, 0.1, 0.3]

# Keras' reference: the initial model and the data, then each case trained by
# Keras' own fit (no shuffle) from the same weights, and the losses.
KERAS_REFERENCE = """
import json, os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np, keras
out, cases, smoothing, steps, batch, classes = sys.argv[1], json.loads(sys.argv[2]), \\
    json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
keras.utils.set_random_seed(7)
def model():
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="tanh"),
                             keras.layers.Dense(classes)])
init = model()
init.save(os.path.join(out, "init.h5"))
rng = np.random.default_rng(3)
x = rng.normal(size=(steps * batch, 6)).astype("float32")
labels = rng.integers(0, classes, size=steps * batch).astype("int32")
y = np.eye(classes, dtype="float32")[labels]
np.savez(os.path.join(out, "data.npz"), x=x, y=y, labels=labels)
result = {"weights": {}, "loss": {}}
for name, (cls, config, ls, sparse) in cases.items():
    m = model()
    m.set_weights(init.get_weights())
    m.compile(optimizer=keras.optimizers.deserialize({"class_name": cls, "config": config}),
              loss=keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=ls))
    m.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
    result["weights"][name] = [w.tolist() for w in m.get_weights()]
logits = init.predict(x, batch_size=len(x), verbose=0)
for s in smoothing:
    loss = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=s)
    result["loss"][str(s)] = float(loss(y, logits))
json.dump(result, open(os.path.join(out, "keras.json"), "w"))
"""

# drun's side of a case: load Keras' initial model, train on the same batches, save.
DRUN_TRAIN = """
local drun = require 'drun'
local model = drun.load_model(arg[1])
model:compile{{optimizer = drun.optim.{cls}{optimizer}, loss = drun.losses.{loss}{{from_logits = true,
  label_smoothing = {smoothing}}}}}
model:fit{{x = drun.data.numpy{{path = arg[2], x = 'x', y = '{y}'}}:batch({batch}), epochs = 1,
  steps = tonumber(arg[4]), model_dir = arg[5]}}
model:save(arg[3])
"""

DRUN_LOSS = """
local drun = require 'drun'
local model = drun.load_model(arg[1])
model:compile{{optimizer = 'sgd', loss = drun.losses.{loss}{{from_logits = true,
  label_smoothing = {smoothing}}}}}
local r = model:evaluate(drun.data.numpy{{path = arg[2], x = 'x', y = '{y}'}}:batch({batch}))
print(string.format('LOSS %.9g', r.loss))
"""

# drun's saved model as Keras reads it: the weights, and the compiled optimizer.
KERAS_READ = """
import json, os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import keras
compiled = sys.argv[2] == "compiled"
m = keras.models.load_model(sys.argv[1], compile=compiled)
opt = m.optimizer if compiled else None
print(json.dumps({"weights": [w.tolist() for w in m.get_weights()],
                  "optimizer": type(opt).__name__,
                  "config": opt and {k: opt.get_config().get(k) for k in
                                     ("weight_decay", "clipnorm", "clipvalue", "global_clipnorm",
                                      "gradient_accumulation_steps")}}))
"""


def lua_table(config):
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v)
    return "{" + ", ".join(f"{k} = {value(v)}" for k, v in config.items()) + "}"


def max_difference(a, b):
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return float("inf")
        return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def train_case(out, name, case, reference):
    cls, config, smoothing, sparse = case
    script = write(os.path.join(out, f"{name}.lua"), DRUN_TRAIN.format(
        cls=cls, optimizer=lua_table(config),
        loss="SparseCategoricalCrossentropy" if sparse else "CategoricalCrossentropy",
        smoothing=smoothing, y="labels" if sparse else "y", batch=BATCH))
    saved = os.path.join(out, f"{name}.h5")
    command = [DRUN, "-q", script, os.path.join(out, "init.h5"), os.path.join(out, "data.npz"),
               saved]
    runs = [[]]
    if name in RESUMED:
        model_dir = os.path.join(out, f"{name}_run")
        runs = [["9", model_dir], [str(STEPS), model_dir]]
    for extra in runs:
        p = run(command + extra, timeout=300)
        if not check(p.returncode == 0, f"(a) drun trains {name} {' '.join(extra[:1])}",
                     p.stderr[-1500:]):
            return
    # Keras' SparseCategoricalCrossentropy takes no label_smoothing: Keras
    # refuses to compile that training_config, and loads the model without it.
    how = "plain" if sparse and smoothing else "compiled"
    p = run([PY, "-c", KERAS_READ, saved, how], timeout=300, env=ENV)
    if not check(p.returncode == 0, f"(c) Keras loads drun's {name}.h5, {how}", p.stderr[-1500:]):
        return
    theirs = json.loads(p.stdout.strip().splitlines()[-1])
    diff = max_difference(theirs["weights"], reference["weights"][name])
    check(diff <= TOLERANCE, f"(a) {name}: drun's weights after {STEPS} steps equal Keras' "
          f"(max difference {diff:.2e})")
    if how == "plain":
        return
    want = {k: config.get(k) for k in ("clipnorm", "clipvalue", "global_clipnorm",
                                       "gradient_accumulation_steps")}
    want["weight_decay"] = config.get("weight_decay", 0.004 if cls == "AdamW" else None)
    got = theirs["config"]
    same = theirs["optimizer"] == cls and all(
        (got[k] is None) == (want[k] is None) and
        (want[k] is None or abs(got[k] - want[k]) <= 1e-9) for k in want)
    check(same, f"(c) {name}: Keras reads drun's optimizer config",
          f"{theirs['optimizer']} {got}, wanted {cls} {want}")


def loss_case(out, smoothing, sparse, reference):
    loss = "SparseCategoricalCrossentropy" if sparse else "CategoricalCrossentropy"
    script = write(os.path.join(out, f"loss_{smoothing}_{sparse}.lua"), DRUN_LOSS.format(
        loss=loss, smoothing=smoothing, y="labels" if sparse else "y", batch=BATCH))
    p = run([DRUN, "-q", script, os.path.join(out, "init.h5"), os.path.join(out, "data.npz")],
            timeout=300)
    if not check(p.returncode == 0, f"(b) drun evaluates {loss}", p.stderr[-1500:]):
        return
    ours = float(p.stdout.split("LOSS ")[-1].split()[0])
    want = reference["loss"][str(smoothing)]
    check(abs(ours - want) <= TOLERANCE,
          f"(b) {loss}(label_smoothing={smoothing}) equals Keras' "
          f"({ours:.9g} against {want:.9g})")


def main():
    if not need_venv(PY):
        return summary()
    with temp_dir("keras_optimizer") as out:
        p = run([PY, "-c", KERAS_REFERENCE, out, json.dumps(CASES), json.dumps(SMOOTHING),
                 str(STEPS), str(BATCH), str(CLASSES)], timeout=600, env=ENV)
        if not check(p.returncode == 0, "Keras trains the reference", p.stderr[-3000:]):
            return summary()
        with open(os.path.join(out, "keras.json")) as f:
            reference = json.load(f)
        for name, case in CASES.items():
            train_case(out, name, case, reference)
        for smoothing in SMOOTHING:
            for sparse in (False, True):
                loss_case(out, smoothing, sparse, reference)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
