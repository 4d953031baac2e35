#!/usr/bin/python3
"""drun's top-k, precision, recall, AUC and F1 against Keras 3 computing the
reference, from the venv that tools/python_env makes (keras with the JAX CPU
backend): the same predictions and targets, fed in the same batches (Keras'
update_state per batch, drun's evaluate of a model that passes its input
through), give every metric equal to 1e-6, over several thresholds, curves,
summation methods and averages; and the same evaluation under `-np 2`
(each worker its share of the batches, the counts summed) prints exactly
what one process prints; and Keras compiles a model file drun saved with
such metrics, from its training_config.
Usage: keras_metrics_test.py DRUN VENV_PYTHON"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

DRUN, PY = sys.argv[1:3]
ENV = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")
TOLERANCE = 1e-6
BATCH = 64

# The data sets: predictions (x) and targets (y), their columns, drun's loss.
DATA = {
    "binary": ("probs", "multi", 3, "mse"),   # probabilities against multi-label 0/1 targets
    "onehot": ("soft", "onehot", 6, "mse"),   # softmax rows against one-hot targets
    "sparse": ("soft", "labels", 6, "sparse_categorical_crossentropy"),  # against labels
}
# name: (Keras class, its config, data set).
CASES = {
    "precision": ("Precision", {}, "binary"),
    "precision_3": ("Precision", {"thresholds": [0.2, 0.5, 0.8]}, "binary"),
    "recall": ("Recall", {}, "binary"),
    "recall_2": ("Recall", {"thresholds": [0.35, 0.9]}, "onehot"),
    "auc": ("AUC", {}, "binary"),
    "auc_pr": ("AUC", {"curve": "PR"}, "binary"),
    "auc_pr_minoring": ("AUC", {"curve": "PR", "summation_method": "minoring"}, "binary"),
    "auc_majoring_50": ("AUC", {"num_thresholds": 50, "summation_method": "majoring"}, "binary"),
    "auc_onehot": ("AUC", {}, "onehot"),
    "f1": ("F1Score", {}, "onehot"),
    "f1_micro": ("F1Score", {"average": "micro"}, "onehot"),
    "f1_macro": ("F1Score", {"average": "macro"}, "binary"),
    "f1_weighted_04": ("F1Score", {"average": "weighted", "threshold": 0.4}, "binary"),
    "f1_threshold": ("F1Score", {"threshold": 0.25}, "onehot"),
    "top_k": ("TopKCategoricalAccuracy", {}, "onehot"),
    "top_2": ("TopKCategoricalAccuracy", {"k": 2}, "onehot"),
    "sparse_top_k": ("SparseTopKCategoricalAccuracy", {}, "sparse"),
    "sparse_top_3": ("SparseTopKCategoricalAccuracy", {"k": 3}, "sparse"),
}

KERAS_REFERENCE = """
import json, os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np, keras
out, cases, data, batch = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), \\
    int(sys.argv[4])
rng = np.random.default_rng(11)
n = 301  # a last batch of fewer rows
probs = rng.random((n, 3)).astype("float32")
multi = (rng.random((n, 3)) < 0.2 + 0.6 * probs).astype("float32")  # informative, not perfect
logits = 2 * rng.normal(size=(n, 6)).astype("float32")
soft = (np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)).astype("float32")
labels = np.array([rng.choice(6, p=p / p.sum()) for p in soft.astype("float64")], "int32")
onehot = np.eye(6, dtype="float32")[labels]
arrays = dict(probs=probs, multi=multi, soft=soft, labels=labels, onehot=onehot,
              probs256=probs[:256], multi256=multi[:256])
np.savez(os.path.join(out, "data.npz"), **arrays)
result = {}
# First: Keras numbers a second metric of a name (auc_1) within a process.
saved = keras.models.load_model(sys.argv[5], compile=True)
logs = saved.evaluate(probs[:8], multi[:8], verbose=0, return_dict=True)
result["_saved"] = sorted(logs)
for name, (cls, config, which) in cases.items():
    x, y = data[which][0], data[which][1]
    m = getattr(keras.metrics, cls)(**config)
    for i in range(0, n, batch):
        m.update_state(arrays[y][i:i + batch], arrays[x][i:i + batch])
    result[name] = np.asarray(m.result(), "float64").tolist()
json.dump(result, open(os.path.join(out, "keras.json"), "w"))
"""

DRUN_EVALUATE = """
local drun = require 'drun'
local model = drun.nn.Sequential{{drun.nn.Activation{{activation = 'linear', input_shape = {{{cols}}}}}}}
model:compile{{optimizer = 'sgd', loss = '{loss}', metrics = {{{metrics}}}}}
local r = model:evaluate(drun.data.numpy{{path = arg[1], x = '{x}', y = '{y}'}}:batch({batch}))
if drun.is_chief() then
  for k, v in pairs(r) do print(string.format('METRIC %s %.17g', k, v)) end
end
"""

# A model file with metrics in its training_config, for Keras to compile.
DRUN_SAVE = """
local drun = require 'drun'
local model = drun.nn.Sequential{drun.nn.Dense{units = 3, input_shape = {3}, activation = 'sigmoid'}}
model:compile{optimizer = 'sgd', loss = 'binary_crossentropy', metrics = {'accuracy', 'auc',
  drun.metrics.AUC{curve = 'PR', name = 'pr_auc'}, drun.metrics.Recall{thresholds = {0.3, 0.6}},
  drun.metrics.F1Score{average = 'macro', threshold = 0.5}}}
model:save(arg[1])
"""
SAVED_METRICS = ["accuracy", "auc", "f1_score", "loss", "pr_auc", "recall"]

# The training metrics of one epoch over 256 rows, with one worker or two
# (AllReduce: each worker its shard, the counts summed at the epoch's end).
DRUN_FIT = """
local drun = require 'drun'
local model = drun.nn.Sequential{{drun.nn.Activation{{activation = 'linear', input_shape = {{3}}}}}}
model:compile{{optimizer = 'sgd', loss = 'mse', metrics = {{{metrics}}}}}
local r = model:fit{{x = drun.data.numpy{{path = arg[1], x = 'probs256', y = 'multi256'}}:batch(32),
                    epochs = 1, strategy = drun.strategy.AllReduce{{}}}}
if drun.is_chief() then
  for k, v in pairs(r.train) do print(string.format('METRIC %s %.17g', k, v)) end
  print(string.format('METRIC workers %d', r.workers))
end
"""


def lua_value(v):
    if isinstance(v, list):
        return "{" + ", ".join(lua_value(x) for x in v) + "}"
    return repr(v) if not isinstance(v, str) else f"'{v}'"


def lua_metric(name, cls, config):
    options = dict(config, name=name)
    return f"drun.metrics.{cls}{{" + ", ".join(f"{k} = {lua_value(v)}"
                                               for k, v in options.items()) + "}"


def metrics_of(which):
    return ", ".join(lua_metric(name, cls, config)
                     for name, (cls, config, data) in CASES.items() if data == which)


def drun_metrics(out, script_text, what, np_args=()):
    script = os.path.join(out, what.replace(" ", "_") + ".lua")
    with open(script, "w") as f:
        f.write(script_text)
    p = run([DRUN] + list(np_args) + ["-q", script, os.path.join(out, "data.npz")], timeout=300)
    if not check(p.returncode == 0, f"drun: {what} {' '.join(np_args)}", p.stderr[-2000:]):
        return None
    return {line.split()[1]: float(line.split()[2]) for line in p.stdout.splitlines()
            if line.startswith("METRIC ")}


def compare(name, want, ours):
    # Keras returns a vector for several thresholds or F1 without an average:
    # drun reports its values as name_0, name_1...
    names = [name] if not isinstance(want, list) else [f"{name}_{i}" for i in range(len(want))]
    wants = want if isinstance(want, list) else [want]
    got = [ours.get(n) for n in names]
    if not check(None not in got, f"{name}: drun reports {', '.join(names)}", sorted(ours)):
        return
    diff = max(abs(a - b) for a, b in zip(got, wants))
    check(diff <= TOLERANCE, f"{name} ({CASES[name][0]} {CASES[name][1]}) equals Keras' "
          f"(max difference {diff:.2e})", f"drun {got}, Keras {wants}")


def main():
    if not need_venv(PY):
        return summary()
    with temp_dir("keras_metrics") as out:
        saved = os.path.join(out, "saved.h5")
        script = os.path.join(out, "save.lua")
        with open(script, "w") as f:
            f.write(DRUN_SAVE)
        p = run([DRUN, "-q", script, saved], timeout=300)
        if not check(p.returncode == 0, "drun saves a model with its metrics", p.stderr[-2000:]):
            return summary()
        data = {k: (v[0], v[1]) for k, v in DATA.items()}
        p = run([PY, "-c", KERAS_REFERENCE, out, json.dumps(CASES), json.dumps(data), str(BATCH),
                 saved], timeout=600, env=ENV)
        if not check(p.returncode == 0, "Keras computes the reference", p.stderr[-3000:]):
            return summary()
        with open(os.path.join(out, "keras.json")) as f:
            reference = json.load(f)
        check(reference["_saved"] == SAVED_METRICS,
              "Keras compiles drun's saved metrics and evaluates them by the same names",
              reference["_saved"])
        for which in DATA:
            x, y, cols, loss = DATA[which]
            ours = drun_metrics(out, DRUN_EVALUATE.format(
                cols=cols, loss=loss, metrics=metrics_of(which), x=x, y=y, batch=BATCH),
                f"evaluates the {which} metrics")
            if ours is None:
                continue
            for name, (_, _, data_set) in CASES.items():
                if data_set == which:
                    compare(name, reference[name], ours)
        fit = DRUN_FIT.format(metrics=metrics_of("binary"))
        one = drun_metrics(out, fit, "trains one epoch")
        two = drun_metrics(out, fit, "trains one epoch", ["-np", "2"])
        if one is not None and two is not None:
            check((one.get("workers"), two.get("workers")) == (1, 2), "the runs have 1 and 2 workers",
                  (one.get("workers"), two.get("workers")))
            # The metrics, not the loss (a float sum) or the throughput.
            names = [k for k in one if any(k == n or k.startswith(n + "_")
                                           for n, case in CASES.items() if case[2] == "binary")]
            check(len(names) == 11 and all(two.get(k) == one[k] for k in names),
                  f"-np 2 reports exactly the {len(names)} metric values one process reports",
                  {k: (one.get(k), two.get(k)) for k in names if one.get(k) != two.get(k)})
    return summary()


if __name__ == "__main__":
    sys.exit(main())
