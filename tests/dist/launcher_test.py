#!/usr/bin/python3
"""drun -np N starts the ranks itself through mpirun: a short AllReduce run
writes summary.json with "workers": 2 from the chief; an error on one rank
ends the whole job quickly, naming the rank; --device picks where a worker
computes, and asking for a GPU that is not there is a clear error. Usage: launcher_test.py DRUN SOURCE_ROOT"""
import json
import os
import subprocess
import sys
import tempfile
import time

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main():
    drun, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run(
            [drun, "-np", "2", os.path.join(root, "scripts/fashion_mnist.lua"), "--epochs", "1",
             "--train-limit", "12800", "--model-dir", tmp], capture_output=True, text=True,
            timeout=300)
        check(run.returncode == 0, f"2-worker run exits 0 (got {run.returncode}: {run.stderr[-500:]})")
        summary = json.load(open(os.path.join(tmp, "summary.json")))
        check(summary["workers"] == 2, f'summary says "workers": 2 (got {summary["workers"]})')
        check(summary["eval"]["accuracy"] > 0.6,
              f'evaluated after training (accuracy {summary["eval"]["accuracy"]:.3f} > 0.6)')

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
        start = time.time()
        run = subprocess.run([drun, "-np", "2", script], capture_output=True, text=True,
                             timeout=120)
        took = time.time() - start
        check(run.returncode != 0, f"an error on worker 1 gives a non-zero exit ({run.returncode})")
        check(took < 15, f"the whole job ends within 15 s ({took:.1f} s)")
        check("[rank 1, worker 0]" in run.stderr and "fail_on_worker_1.lua:2:" in run.stderr
              and "worker one fails" in run.stderr,
              "the message names the rank, the script line and the error")

        script = os.path.join(tmp, "device.lua")
        with open(script, "w") as f:
            f.write("print('device=' .. require('drun').context().device)\n")
        run = subprocess.run([drun, "--device", "cpu", script], capture_output=True, text=True,
                             timeout=60)
        check(run.returncode == 0 and "device=cpu" in run.stdout,
              f"--device cpu computes on the CPU ({run.returncode}: {run.stdout}{run.stderr})")
        run = subprocess.run([drun, "--device", "cuda", script], capture_output=True, text=True,
                             timeout=60)
        no_gpu = "no GPU found" in run.stderr or "built without CUDA" in run.stderr
        if no_gpu:  # CI: the request fails before the script runs, and says why
            check(run.returncode == 1 and "device=" not in run.stdout
                  and run.stderr.startswith("drun: --device cuda: "),
                  f"--device cuda without a GPU: exit 1 and the reason ({run.stderr.strip()})")
        else:
            check(run.returncode == 0 and "device=cuda" in run.stdout,
                  f"--device cuda computes on the GPU ({run.returncode}: {run.stderr[-300:]})")
        run = subprocess.run([drun, "--device", "tpu", script], capture_output=True, text=True,
                             timeout=60)
        check(run.returncode != 0 and "tpu" in run.stderr,
              f"an unknown --device is refused, naming it ({run.stderr.strip()})")
    print(f"{3 + 3 + 3 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
