#!/usr/bin/python3
"""Our TensorBoard event files and checkpoints, read by readers nobody here
wrote: TensorBoard's EventAccumulator (tensorboard_reader.py) lists
the train and eval scalar tags with the steps and values the training loop
saw and a histogram of each weight every histogram_freq epochs, and h5py reads
a checkpoint's weights and training state.
Usage: interop_test.py DRUN VENV_PYTHON SOURCE_ROOT"""
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

DRUN, PY, ROOT = sys.argv[1:4]
HERE = os.path.join(ROOT, "tests/interop")


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def default_bucket_limits():
    """TensorFlow's default histogram limits (core/lib/histogram/histogram.cc)."""
    positive, v = [], 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(sys.float_info.max)
    return set([-x for x in positive] + [0.0] + positive)


def check_histograms(d, ckpt):
    """Every weight's histograms after epochs 0, 2, 4 (steps 4, 12, 20); the
    last one's count, extremes and sum are those of the weights h5py reads
    in the checkpoint of step 20."""
    tb = run([PY, os.path.join(HERE, "tensorboard_reader.py"), d, "--histograms"], timeout=120)
    check(tb.returncode == 0, f"TensorBoard reads the histograms ({tb.stderr[-500:]})")
    hists = json.loads(tb.stdout).get(".", {}) if tb.returncode == 0 else {}
    weights = ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
    check(sorted(hists) == sorted(weights), f"one histogram tag per weight ({sorted(hists)})")
    ref = run([PY, "-c", """
import h5py, json, sys
import numpy as np
with h5py.File(sys.argv[1], "r") as f:
    out = {}
    for name in sys.argv[2:]:
        w = f["model/" + name][()].astype(np.float64).ravel()
        out[name] = [w.size, w.min(), w.max(), w.sum(), (w * w).sum()]
    print(json.dumps(out))
""", ckpt] + weights, timeout=60)
    check(ref.returncode == 0, f"h5py reads the weights of {ckpt} ({ref.stderr[-500:]})")
    ref = json.loads(ref.stdout) if ref.returncode == 0 else {}
    limits = default_bucket_limits()
    for name in weights:
        got = hists.get(name, [])
        check([h["step"] for h in got] == [4, 12, 20],
              f"'{name}' has histograms at steps 4, 12, 20 ({[h['step'] for h in got]})")
        if not got or name not in ref:
            continue
        last = got[-1]
        num, lo, hi, total, squares = ref[name]
        check(last["num"] == num and last["min"] == lo and last["max"] == hi,
              f"'{name}' at step 20: num, min, max {last['num'], last['min'], last['max']} "
              f"are the checkpoint's {num, lo, hi}")
        check(close(last["sum"], total) and close(last["sum_squares"], squares),
              f"'{name}' at step 20: sum and sum of squares {last['sum'], last['sum_squares']} "
              f"are the checkpoint's {total, squares}")
        check(set(last["bucket_limit"]) <= limits and sum(last["bucket"]) == num,
              f"'{name}': TensorFlow's default bucket limits, counts adding up to {num}")


def main():
    if not need_venv(PY):
        return summary()
    with temp_dir("interop") as d:
        p = run([DRUN, "-q", os.path.join(ROOT, "tests/lua/tb_run.lua"), "--model-dir", d], timeout=120)
        check(p.returncode == 0, f"the training run exits 0 ({p.stderr[-500:]})")
        steps = {int(m[0]): tuple(map(float, m[1:])) for m in
                 re.findall(r"^STEP (\d+) (\S+) (\S+) (\S+)$", p.stdout, re.M)}
        ev = re.search(r"^EVAL (\d+) (\S+) (\S+)$", p.stdout, re.M)
        check(len(steps) == 20 and ev is not None, f"20 steps and an evaluation recorded ({len(steps)})")

        tb = run([PY, os.path.join(HERE, "tensorboard_reader.py"), d], timeout=120)
        check(tb.returncode == 0, f"TensorBoard reads the event files ({tb.stderr[-500:]})")
        scalars = json.loads(tb.stdout) if tb.returncode == 0 else {}
        train, evals = scalars.get(".", {}), scalars.get("eval", {})
        want = {"loss", "accuracy", "learning_rate", "global_step/sec", "images/sec"}
        check(want <= set(train), f"train tags {sorted(train)} include {sorted(want)}")
        check([s for s, _ in train.get("loss", [])] == [5, 10, 15, 20],
              f"train scalars every 5 steps ({[s for s, _ in train.get('loss', [])]})")
        for tag, k in (("loss", 0), ("learning_rate", 1), ("accuracy", 2)):
            got = train.get(tag, [])
            ok = got and all(close(v, f32(steps[s][k])) for s, v in got)
            check(bool(ok), f"train '{tag}' equals what the loop saw at each step ({got})")
        if ev:
            step, loss, acc = int(ev.group(1)), float(ev.group(2)), float(ev.group(3))
            last = {t: evals.get(t, [[None, None]])[-1] for t in ("loss", "accuracy")}
            check(last["loss"][0] == step and close(last["loss"][1], f32(loss)) and
                  close(last["accuracy"][1], f32(acc)),
                  f"eval 'loss' and 'accuracy' at step {step} equal the evaluation ({last})")
            check(len(evals.get("loss", [])) == 5, f"one evaluation per epoch ({evals.get('loss')})")

        h5 = run([PY, "-c", """
import h5py, json, sys
import numpy as np
with h5py.File(sys.argv[1], "r") as f:
    names = []
    f.visititems(lambda n, o: names.append([n, list(o.shape)]) if isinstance(o, h5py.Dataset) else None)
    print(json.dumps({"datasets": names, "state": json.loads(f.attrs["drun"]),
                      "finite": bool(np.isfinite(f["model/dense/kernel"][()]).all()),
                      "kernel_abs_sum": float(np.abs(f["model/dense/kernel"][()]).sum())}))
""", os.path.join(d, "ckpt-20.h5")], timeout=60)
        check(h5.returncode == 0, f"h5py opens ckpt-20.h5 ({h5.stderr[-500:]})")
        if h5.returncode == 0:
            got = json.loads(h5.stdout)
            ds = dict((n, s) for n, s in got["datasets"])
            check(ds.get("model/dense/kernel") == [2, 8] and ds.get("model/dense_1/kernel") == [8, 2]
                  and ds.get("model/dense/bias") == [8], f"weights with their shapes ({ds})")
            st = got["state"]
            check(st.get("global_step") == 20 and st.get("epoch", 0) * 4 + st.get("batch", 0) == 20,
                  f"training state: step 20, at the end of the 5th epoch of 4 batches ({st})")
            check(got["finite"] and got["kernel_abs_sum"] > 0, "the kernel's values are finite, not all zero")
        check_histograms(d, os.path.join(d, "ckpt-20.h5"))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
