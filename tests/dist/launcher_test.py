#!/usr/bin/python3
"""drun -np N starts the ranks itself through mpirun: a short AllReduce run
writes summary.json with "workers": 2 from the chief; an error on one rank
ends the whole job quickly, naming the rank; --device picks where a worker
computes, and asking for a GPU that is not there is a clear error. Usage: launcher_test.py DRUN SOURCE_ROOT"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402

# An error on one rank must end the job this many seconds after a 2-rank job
# that does nothing would have ended: measured against that job here, so a
# busy machine's slow start-up is not counted against the launcher.
MARGIN = 15


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def main():
    drun, root = sys.argv[1], sys.argv[2]
    with temp_dir("launcher") as tmp:
        p = run([drun, "-np", "2", os.path.join(root, "scripts/fashion_mnist.lua"), "--epochs", "1",
                 "--train-limit", "12800", "--model-dir", tmp], timeout=300)
        check(p.returncode == 0, f"2-worker run exits 0 (got {p.returncode}: {p.stderr[-500:]})")
        s = read_json(os.path.join(tmp, "summary.json"))
        check(s.get("workers") == 2, f'summary says "workers": 2 (got {s.get("workers")})')
        accuracy = s.get("eval", {}).get("accuracy", 0)
        check(accuracy > 0.6, f'evaluated after training (accuracy {accuracy:.3f} > 0.6)')

        nothing = os.path.join(tmp, "nothing.lua")
        with open(nothing, "w") as f:
            f.write("local drun = require 'drun'\n")
        start = time.monotonic()
        p = run([drun, "-np", "2", nothing], timeout=120)
        baseline = time.monotonic() - start
        check(p.returncode == 0, f"a 2-rank job that does nothing exits 0 after {baseline:.1f} s "
              f"({p.returncode}: {p.stderr[-300:]})")

        script = os.path.join(tmp, "fail_on_worker_1.lua")
        with open(script, "w") as f:
            f.write("local drun = require 'drun'\n"
                    "if drun.cluster().index == 1 then error('worker one fails') end\n"
                    "-- the chief trains and would wait for worker 1 in every exchange\n"
                    "local nn = drun.nn\n"
                    "local xs, ys = {}, {}\n"
                    "for i = 1, 64 do xs[i] = {i % 7, i % 5}; ys[i] = i % 2 end\n"
                    "local m = nn.Sequential{nn.Dense{units = 2, input_shape = {2}}}\n"
                    "m:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'}\n"
                    "m:fit{x = drun.data.arrays{x = xs, y = ys}:batch(8), epochs = 100000}\n")
        start = time.monotonic()
        p = run([drun, "-np", "2", script], timeout=120)
        took = time.monotonic() - start
        check(p.returncode != 0, f"an error on worker 1 gives a non-zero exit ({p.returncode})")
        check(took < baseline + MARGIN, f"the whole job ends within {MARGIN} s of a job that does "
              f"nothing ({took:.1f} s, that one {baseline:.1f} s)")
        check("[rank 1, worker 0]" in p.stderr and "fail_on_worker_1.lua:2:" in p.stderr
              and "worker one fails" in p.stderr,
              "the message names the rank, the script line and the error")

        script = os.path.join(tmp, "device.lua")
        with open(script, "w") as f:
            f.write("print('device=' .. require('drun').context().device)\n")
        p = run([drun, "--device", "cpu", script], timeout=60)
        check(p.returncode == 0 and "device=cpu" in p.stdout,
              f"--device cpu computes on the CPU ({p.returncode}: {p.stdout}{p.stderr})")
        p = run([drun, "--device", "cuda", script], timeout=60)
        no_gpu = "no GPU found" in p.stderr or "built without CUDA" in p.stderr
        if no_gpu:  # CI: the request fails before the script runs, and says why
            check(p.returncode == 1 and "device=" not in p.stdout
                  and p.stderr.startswith("drun: --device cuda: "),
                  f"--device cuda without a GPU: exit 1 and the reason ({p.stderr.strip()})")
        else:
            check(p.returncode == 0 and "device=cuda" in p.stdout,
                  f"--device cuda computes on the GPU ({p.returncode}: {p.stderr[-300:]})")
        p = run([drun, "--device", "tpu", script], timeout=60)
        check(p.returncode != 0 and "tpu" in p.stderr,
              f"an unknown --device is refused, naming it ({p.stderr.strip()})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
