#!/usr/bin/python3
"""drun's callbacks against Keras 3's on the same values, from the venv that
tools/python_env makes: drun fits a small model whose validation loss
stalls, with EarlyStopping, ReduceLROnPlateau, ModelCheckpoint
(save_best_only) and CSVLogger; Keras' own callbacks are then fed the
val_loss sequence drun's CSV holds, and
 (a) Keras' EarlyStopping stops at the epoch where drun stopped;
 (b) Keras' ReduceLROnPlateau gives the learning rates drun trained with
     (the CSV's learning_rate column), float for float;
 (c) Keras' ModelCheckpoint(save_best_only, on val_accuracy, which
     stalls sooner) saves at exactly the epochs whose files drun kept, and
     Keras loads drun's best file.
Usage: keras_callbacks_test.py DRUN VENV_PYTHON"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

DRUN, PY = sys.argv[1:3]
ENV = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")
EARLY = {"patience": 3, "min_delta": 0.002}
PLATEAU = {"patience": 1, "factor": 0.5, "min_delta": 0.002, "cooldown": 1}

DRUN_FIT = """
local drun = require 'drun'
local cb, out = drun.callbacks, arg[1]
local x, y = {{}}, {{}}
for i = 1, 64 do
  local a, b = (i % 8) / 4 - 1, math.floor(i / 8) / 4 - 1
  x[i], y[i] = {{a, b}}, (a + 0.5 * b > 0.1) and 1 or 0
end
local ds = drun.data.arrays{{x = x, y = y}}
local model = drun.nn.Sequential{{drun.nn.Dense{{units = 8, activation = 'tanh', input_shape = {{2}}}},
                                  drun.nn.Dense{{units = 2}}, seed = 5}}
model:compile{{optimizer = drun.optim.SGD{{learning_rate = 0.2}}, metrics = {{'accuracy'}},
  loss = drun.losses.SparseCategoricalCrossentropy{{from_logits = true}}}}
local r = model:fit{{x = ds:batch(16), validation_data = ds:batch(64), epochs = 60, callbacks = {{
  cb.EarlyStopping{early},
  cb.ReduceLROnPlateau{plateau},
  cb.ModelCheckpoint{{filepath = out .. '/best-{{epoch:02d}}.h5', save_best_only = true,
                     monitor = 'val_accuracy', mode = 'max'}},
  cb.CSVLogger(out .. '/log.csv'),
}}}}
print('EPOCHS ' .. r.epochs)
"""

KERAS = """
import csv, glob, json, os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import keras
out, early, plateau = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
rows = list(csv.DictReader(open(os.path.join(out, "log.csv"))))
val = [float(r["val_loss"]) for r in rows]
def model():
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    m.compile(optimizer=keras.optimizers.SGD(0.2), loss="mse")
    return m
m, stop = model(), None
es = keras.callbacks.EarlyStopping(**early); es.set_model(m); es.on_train_begin()
for e, v in enumerate(val):
    es.on_epoch_end(e, {"val_loss": v})
    if m.stop_training:
        stop = e
        break
m = model()
rl = keras.callbacks.ReduceLROnPlateau(**plateau); rl.set_model(m); rl.on_train_begin()
rates = []
for e, v in enumerate(val):
    rates.append(float(m.optimizer.learning_rate))
    rl.on_epoch_end(e, {"val_loss": v})
m = model()
mc = keras.callbacks.ModelCheckpoint(os.path.join(out, "keras-{epoch:02d}.weights.h5"),
                                     save_best_only=True, save_weights_only=True,
                                     monitor="val_accuracy", mode="max")
mc.set_model(m); mc.on_train_begin()
for e, r in enumerate(rows):
    mc.on_epoch_begin(e); mc.on_epoch_end(e, {"val_accuracy": float(r["val_accuracy"])})
saved = sorted(os.path.basename(p)[6:8] for p in glob.glob(os.path.join(out, "keras-*.weights.h5")))
best = keras.models.load_model(os.path.join(out, "best-%s.h5" % saved[-1]), compile=False)
print(json.dumps({"stop": stop, "rates": rates, "saved": saved,
                  "drun_rates": [float(r["learning_rate"]) for r in rows],
                  "loaded": len(best.get_weights())}))
"""


def main():
    if not need_venv(PY):
        return summary()
    with temp_dir("keras_callbacks") as out:
        script = os.path.join(out, "fit.lua")
        with open(script, "w") as f:
            f.write(DRUN_FIT.format(
                early="{" + ", ".join(f"{k} = {v}" for k, v in EARLY.items()) + "}",
                plateau="{" + ", ".join(f"{k} = {v}" for k, v in PLATEAU.items()) + "}"))
        p = run([DRUN, "-q", script, out], timeout=300)
        if not check(p.returncode == 0, "drun fits with the callbacks", p.stderr[-1500:]):
            return summary()
        epochs = int(p.stdout.split("EPOCHS ")[-1].split()[0])
        check(epochs < 60, f"drun's EarlyStopping stopped the fit (after {epochs} epochs)")
        p = run([PY, "-c", KERAS, out, json.dumps(EARLY), json.dumps(PLATEAU)], timeout=300,
                env=ENV)
        if not check(p.returncode == 0, "Keras replays the callbacks", p.stderr[-1500:]):
            return summary()
        k = json.loads(p.stdout.strip().splitlines()[-1])
        check(k["stop"] == epochs - 1,
              f"(a) Keras' EarlyStopping stops at drun's epoch ({k['stop']} against {epochs - 1})")
        check(len(set(k["drun_rates"])) >= 3, "(b) drun reduced the rate more than once",
              str(k["drun_rates"]))
        check(k["rates"] == k["drun_rates"], "(b) Keras' ReduceLROnPlateau gives drun's rates",
              f"Keras {k['rates']}\ndrun  {k['drun_rates']}")
        ours = sorted(f[5:7] for f in os.listdir(out) if f.startswith("best-"))
        check(len(ours) >= 2 and len(ours) < epochs, "(c) some epochs saved, not all", str(ours))
        check(ours == k["saved"], "(c) ModelCheckpoint(save_best_only) keeps Keras' epochs",
              f"drun {ours}, Keras {k['saved']}")
        check(k["loaded"] == 4, "(c) Keras loads drun's best checkpoint")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
